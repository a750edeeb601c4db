"""Scale generator, web domain: WebArena RenderHelper HTML (`render_<id>.html`) pages.

Modeled sites (shop, forum, code host, map, admin) give accessibility trees in WebArena's text
form. The page mirrors render_16.html: the task config in a `<pre>`, then one `<h2>New Page</h2>`
block per step with the URL, the tree (`<div class='state_obv'><pre>`), the previous action,
the model's prediction, the action object and the parsed action; the last block's action is
`stop [answer]`. The screenshots of the real helper are left out (there are none). The reader
(sources/readers/webarena.py) pairs parsed action k with the tree of block k + 1; the task is the
config's `intent`.
"""

from __future__ import annotations

import html
import random

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn

DOMAIN = "web"
SUFFIX = ".render.html"
MEAN_TURNS = 14.0
WEIGHTS = {"informative": 0.55, "echo": 0.04, "unchanged": 0.14, "boilerplate": 0.12,
           "error": 0.10, "empty": 0.05}
PREFIX: tuple[str, ...] = ()
LAST: str | None = None

SITES = {
    "shopping": ("http://localhost:7770", "One Stop Market", (
        "My Account", "My Wish List", "Sign Out", "Compare Products", "Beauty & Personal Care",
        "Sports & Outdoors", "Home & Kitchen", "Electronics", "Grocery & Gourmet Food")),
    "reddit": ("http://localhost:9999", "Postmill", (
        "Home", "Forums", "Wiki", "Notifications (0)", "Submit", "MarvelsGrinch")),
    "gitlab": ("http://localhost:8023", "GitLab", (
        "Projects", "Groups", "Issues", "Merge requests", "To-Do List", "Help")),
    "map": ("http://localhost:3000", "OpenStreetMap", (
        "Edit", "History", "Export", "GPS Traces", "User Diaries", "Communities", "Help")),
    "shopping_admin": ("http://localhost:7780/admin", "Magento Admin", (
        "Dashboard", "Sales", "Catalog", "Customers", "Marketing", "Content", "Reports")),
}
SITE_NAMES = tuple(SITES)
INTENTS = (
    "What is the price range of {w} products in the {t} category?",
    "Post a comment in the {w} forum saying that {t} is {w2}.",
    "Open an issue in the {w}-{w2} project titled '{t}'.",
    "Compare the time for walking and driving route from {c} to {c2}.",
    "How many orders did {p} place in {y}?",
    "Change the shipping address of my latest order to {c}.",
)


STATUSES = ("Pending", "Complete", "Canceled")


def _header(title: str) -> list[str]:
    return [f"Tab 0 (current): {title}", "", f"[1] RootWebArea '{title}' focused: True"]


def _fixed_tree(site: str, kind: str) -> str:
    """Pages identical in every run (planted boilerplate): login, cookie notice, welcome."""
    base, name, nav = SITES[site]
    if kind == "login":
        lines = _header(f"Sign In - {name}") + [
            "\t[12] heading 'Customer Login'", "\t[15] StaticText 'Registered Customers'",
            "\t[18] textbox 'Email' required: True", "\t[20] textbox 'Password' required: True",
            "\t[22] button 'Sign In'", "\t[24] link 'Forgot Your Password?'",
            "\t[27] heading 'New Customers'", "\t[29] link 'Create an Account'"]
    elif kind == "cookies":
        lines = _header(name) + [
            "\t[40] dialog 'Cookie consent' modal: True",
            "\t\t[41] StaticText 'We use cookies to improve your experience on our site. By "
            "continuing to browse you agree to our use of cookies.'",
            "\t\t[43] button 'Accept all'", "\t\t[44] button 'Reject all'",
            "\t\t[45] link 'Cookie settings'"]
    else:
        lines = _header(name) + [f"\t[{100 + k}] link '{item}'" for k, item in enumerate(nav)] + [
            f"\t[200] heading 'Welcome to {name}!'", "\t[201] button 'Close'",
            "\t[202] StaticText 'Use the menu to browse, or search for what you need.'"]
    return "\n".join(lines)


BOILER_KINDS = ("login", "cookies", "welcome")
BOILERPLATE = {(s, k): _fixed_tree(s, k) for s in SITE_NAMES for k in BOILER_KINDS}


def make_task(rng: random.Random) -> GenTask:
    site = rng.choice(SITE_NAMES)
    cities = rng.sample(tx.CITIES, 2)
    intent = rng.choice(INTENTS).format(
        w=rng.choice(tx.WORDS), w2=rng.choice(tx.WORDS), t=tx.words(rng, tx.ri(rng, 2, 5)),
        c=cities[0], c2=cities[1], p=tx.person(rng), y=tx.ri(rng, 2019, 2024))
    return GenTask(intent, {"site": site, "task_id": tx.ri(rng, 0, 811)})


def _content(rng: random.Random, site: str, ids: int) -> list[str]:
    lines = []
    for _ in range(tx.ri(rng, 5, 22)):
        ids += tx.ri(rng, 2, 9)
        if site == "shopping":
            lines += [f"\t[{ids}] link '{tx.words(rng, tx.ri(rng, 3, 8)).title()}'",
                      f"\t\t[{ids + 1}] StaticText '${tx.ri(rng, 2, 900)}.{tx.ri(rng, 0, 99):02d}'",
                      f"\t\t[{ids + 2}] button 'Add to Cart'"]
        elif site == "reddit":
            lines += [f"\t[{ids}] link '{tx.sentence(rng, 4, 12)[:-1]}'",
                      f"\t\t[{ids + 1}] StaticText 'Submitted by {tx.ident(rng)} "
                      f"{tx.ri(rng, 1, 23)} hours ago in {rng.choice(tx.WORDS)}'",
                      f"\t\t[{ids + 2}] link '{tx.ri(rng, 0, 400)} comments'"]
        elif site == "gitlab":
            lines += [f"\t[{ids}] link '#{tx.ri(rng, 1, 3000)} {tx.sentence(rng, 3, 9)[:-1]}'",
                      f"\t\t[{ids + 1}] StaticText 'opened {tx.ri(rng, 1, 30)} days ago by "
                      f"{tx.person(rng)}'", f"\t\t[{ids + 2}] link '{rng.choice(tx.TECH)}'"]
        elif site == "map":
            lines += [f"\t[{ids}] StaticText '{tx.ri(rng, 1, 40)}. {tx.words(rng, 3).title()} "
                      f"- {rng.uniform(0.1, 9):.1f} km'",
                      f"\t\t[{ids + 1}] link '{rng.choice(tx.CITIES)} {tx.words(rng, 2).title()}'"]
        else:
            lines += [f"\t[{ids}] row '{tx.ri(rng, 10000, 99999)} {tx.person(rng)} "
                      f"{tx.date(rng)} ${tx.ri(rng, 5, 3000)}.00 {rng.choice(STATUSES)}'",
                      f"\t\t[{ids + 1}] link 'View'"]
    return lines


def _page(rng: random.Random, site: str) -> tuple[str, str]:
    base, name, nav = SITES[site]
    title = f"{tx.words(rng, tx.ri(rng, 1, 4)).title()} - {name}"
    ids = tx.ri(rng, 30, 400)
    lines = _header(title) + [f"\t[{ids + k}] link '{item}'" for k, item in enumerate(nav)]
    lines.append(f"\t[{ids + 40}] searchbox 'Search' focused: False")
    lines += _content(rng, site, ids + 50)
    path = "/".join(rng.choices(tx.WORDS, k=tx.ri(rng, 1, 3)))
    return f"{base}/{path}", "\n".join(lines)


def _action(rng: random.Random) -> str:
    element = tx.ri(rng, 20, 2000)
    roll = rng.random()
    if roll < 0.55:
        role = rng.choice(("link", "button", "menuitem"))
        name = tx.words(rng, tx.ri(rng, 1, 4)).title()
        return f"click [{element}] where [{element}] is {role} '{name}'"
    if roll < 0.7:
        return f"scroll [{rng.choice(('down', 'up'))}]"
    if roll < 0.8:
        return "go_back"
    if roll < 0.9:
        return f"hover [{element}] where [{element}] is link '{tx.words(rng, 2).title()}'"
    return f"press [{rng.choice(('Enter', 'PageDown', 'Meta+f'))}]"


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    site = task.ctx["site"]
    base = SITES[site][0]
    if category == "unchanged" and prev is not None:
        action = rng.choice(("scroll [down]", f"hover [{tx.ri(rng, 20, 900)}] where "
                             f"[{tx.ri(rng, 20, 900)}] is StaticText ''", "press [Escape]"))
        return GenTurn(action, prev.observation, category, dict(prev.native))
    if category == "echo":
        typed = tx.words(rng, tx.ri(rng, 2, 6))
        element = tx.ri(rng, 20, 500)
        action = f"type [{element}] [{typed}] where [{element}] is searchbox 'Search'"
        tree = "\n".join(_header("Search") + [f"\t[{element}] searchbox '{typed}' focused: True"])
        return GenTurn(action, tree, category, {"url": f"{base}/search"})
    if category == "boilerplate":
        kind = BOILER_KINDS[int(rng.random() * len(BOILER_KINDS))]
        action = {"login": "click [9] where [9] is link 'Sign In'", "cookies": f"goto [{base}]",
                  "welcome": "click [3] where [3] is link 'Home'"}[kind]
        return GenTurn(action, BOILERPLATE[(site, kind)], category, {"url": base + "/"})
    if category == "error":
        path = "/".join(rng.choices(tx.WORDS, k=tx.ri(rng, 1, 3)))
        url = f"{base}/{path}"
        if rng.random() < 0.6:
            tree = "\n".join(_header("404 Not Found") + [
                "\t[8] heading 'Whoops, our bad...'",
                f"\t[10] StaticText 'The page you requested at /{path} was not found, and we "
                "have a fine guess why.'", "\t[12] link 'Go back to the previous page'"])
        else:
            tree = "\n".join(_header("Error") + [
                "\t[5] heading 'This site can't be reached'",
                f"\t[7] StaticText '{base[7:]} refused to connect.'",
                "\t[9] StaticText 'ERR_CONNECTION_REFUSED'", "\t[11] button 'Reload'"])
        return GenTurn(f"goto [{url}]", tree, category, {"url": url})
    if category == "empty":
        return GenTurn(rng.choice(("press [Enter]", "scroll [down]")), "", category,
                       {"url": f"{base}/"})
    url, tree = _page(rng, site)
    return GenTurn(_action(rng), tree, "informative", {"url": url})


_ACTION_TYPES = {"click": "CLICK: 6", "scroll": "SCROLL: 1", "go_back": "GO_BACK: 11",
                 "hover": "HOVER: 7", "press": "KEY_PRESS: 2", "type": "TYPE: 8",
                 "goto": "GOTO_URL: 12", "stop": "STOP: 17"}


def _block(url: str, tree: str, prev: str, raw: str, action: str) -> str:
    verb = action.split(" ", 1)[0].split("[", 1)[0]
    obj = (f"{{'action_type': <ActionTypes.{_ACTION_TYPES.get(verb, 'NONE: 0')}>, 'coords': "
           f"array([0., 0.], dtype=float32), 'element_role': 0, 'element_name': '', 'text': [], "
           f"'page_number': 0, 'url': '', 'nth': 0, 'pw_code': '', 'element_id': '', "
           f"'key_comb': '', 'direction': '', 'answer': '', 'raw_prediction': {raw!r}}}")
    e = html.escape
    return (f"\n    <h2>New Page</h2>\n<h3 class='url'><a href={url}>URL: {url}</a></h3>\n"
            f"<div class='state_obv'><pre>{e(tree, quote=False)}</pre><div>\n"
            f"<div class='prev_action' style='background-color:pink'>{e(prev, quote=False)}</div>\n"
            f"<div class='predict_action'><div class='raw_parsed_prediction' "
            f"style='background-color:grey'><pre>{e(raw, quote=False)}</pre></div>"
            f"<div class='action_object' style='background-color:grey'><pre>{obj}</pre></div>"
            f"<div class='parsed_action' style='background-color:yellow'><pre>"
            f"{e(action, quote=False)}</pre></div></div>\n")


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    site = task.ctx["site"]
    base = SITES[site][0]
    config = (f"sites: ['{site}']\ntask_id: {task.ctx['task_id']}\nrequire_login: True\n"
              f"storage_state: ./.auth/{site}_state.json\nstart_url: {base}\ngeolocation: None\n"
              f"intent: {task.text}\nrequire_reset: False\n"
              f"eval: {{'eval_types': ['string_match'], 'reference_answers': "
              f"{{'fuzzy_match': ['{tx.words(rng, 2)}']}}}}\n"
              f"intent_template_id: {tx.ri(rng, 0, 400)}\n")
    start_url, start_tree = base + "/", BOILERPLATE[(site, "welcome")]
    answer = tx.words(rng, tx.ri(rng, 1, 5))
    actions = [t.action for t in turns] + [f"stop [{answer}]"]
    urls = [start_url] + [t.native.get("url", start_url) for t in turns]
    trees = [start_tree] + [t.observation for t in turns]
    parts = ["<!DOCTYPE html>\n<head>\n    <style>\n        pre {\n            white-space: "
             "pre-wrap;\n            word-wrap: break-word;\n        }\n    </style>\n</head>\n"
             "<html>\n    <body>\n     <pre>", html.escape(config, quote=False), "</pre>\n"]
    prev = "None"
    for url, tree, action in zip(urls, trees, actions, strict=True):
        raw = (f"Let's think step-by-step. {tx.paragraph(rng, tx.ri(rng, 1, 3))} In summary, "
               f"the next action I will perform is ```{action}```")
        parts.append(_block(url, tree, prev, raw, action))
        prev = action
    parts.append("\n    </body>\n</html>\n")
    return "".join(parts).encode("utf-8")
