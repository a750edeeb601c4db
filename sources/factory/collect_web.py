"""Web collector: a scripted shopper in a text browser against a real local shop, as WebArena HTML.

Per trajectory a fresh `web_app.ShopServer` (real HTTP on 127.0.0.1, seeded state) is started
and driven through `text_browser.TextBrowser`: every tree in the file is what the browser
rendered from the server's real answer, after the action really ran (forms really change the
server's state). The agent chooses element ids by reading the current tree (role and name), so
its choices follow what it sees. Mistakes occur naturally: a misspelled search with no results,
a quantity typed as a word (the server's error), an invalid e-mail, a scroll that changes
nothing, a stale id from the previous page. Written in WebArena's RenderHelper layout; the
server's random port is rewritten to http://shop.local so files repeat across runs.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sources.factory.collect_util import run_indexed, trajectory_rng, workers_for, write_text
from sources.factory.text_browser import TextBrowser
from sources.factory.web_app import Shop, ShopServer

SHOWN_ORIGIN = "http://shop.local"
ACTION_TYPES = {
    "click": "<ActionTypes.CLICK: 6>",
    "type": "<ActionTypes.TYPE: 7>",
    "scroll": "<ActionTypes.SCROLL: 1>",
    "goto": "<ActionTypes.GOTO_URL: 13>",
    "go_back": "<ActionTypes.GO_BACK: 11>",
    "stop": "<ActionTypes.STOP: 17>",
}
HTML_HEAD = (
    "<!DOCTYPE html>\n<head>\n    <style>\n        pre {\n            white-space: pre-wrap;\n"
    "            word-wrap: break-word;\n        }\n    </style>\n</head>\n<html>\n    <body>\n"
)


@dataclass
class Step:
    url: str
    tree: str
    reason: str
    action: str  # the action in the agent's own syntax, e.g. "click [12]"
    parsed: str  # browser_env's action2str rendering
    kind: str
    element_id: str = ""
    text: str = ""
    answer: str = ""


@dataclass
class Shopper:
    """The scripted agent: reads the tree, picks an element, acts, and records each step."""

    browser: TextBrowser
    origin: str
    rng: random.Random
    steps: list[Step] = field(default_factory=list)

    def _shown(self, url: str) -> str:
        return url.replace(self.origin, SHOWN_ORIGIN)

    def _record(self, reason: str, action: str, parsed: str, kind: str, **extra: str) -> None:
        # The tree is rendered (ids assigned) before the action: the state the agent acted on.
        self.steps.append(
            Step(self._shown(self.browser.url), self._tree, reason, action, parsed, kind, **extra)
        )

    def observe(self) -> None:
        self._tree = self.browser.tree()

    def _semantic(self, node_id: int) -> str:
        element = self.browser.elements.get(node_id)
        return element.line if element else "No match found"

    def click(self, node_id: int | None, reason: str) -> bool:
        node_id = node_id if node_id is not None else 0
        self._record(
            reason,
            f"click [{node_id}]",
            f"click [{node_id}] where [{node_id}] is {self._semantic(node_id)}",
            "click",
            element_id=str(node_id),
        )
        done = self.browser.click(node_id)
        self.observe()
        return done

    def type(self, node_id: int | None, text: str, reason: str, enter: bool = False) -> bool:
        node_id = node_id if node_id is not None else 0
        self._record(
            reason,
            f"type [{node_id}] [{text}] [{int(enter)}]",
            f"type [{node_id}] [{text}] where [{node_id}] is {self._semantic(node_id)}",
            "type",
            element_id=str(node_id),
            text=text,
        )
        done = self.browser.type(node_id, text, enter)
        self.observe()
        return done

    def scroll(self, reason: str) -> None:
        self._record(reason, "scroll [down]", "scroll [down]", "scroll")
        self.observe()

    def go_back(self, reason: str) -> None:
        self._record(reason, "go_back", "go_back", "go_back")
        self.browser.go_back()
        self.observe()

    def stop(self, answer: str, reason: str) -> None:
        self._record(reason, f"stop [{answer}]", f"stop [{answer}]", "stop", answer=answer)

    def find(self, role: str, name: str | None = None, contains: str | None = None) -> int | None:
        return self.browser.find(role, name, contains)

    def says(self, fragment: str) -> str | None:
        return next((t for t in self.browser.texts() if fragment in t), None)

    def search(self, term: str, mistype: bool) -> None:
        box = self.find("textbox", "Search products")
        if mistype:
            typo = term[:-2] + term[-1] + term[-2] if len(term) > 3 else term + "x"
            self.type(box, typo, "Search for the product by name.", enter=True)
            if not self.says("No products match"):
                return
            box = self.find("textbox", "Search products")
            self.type(box, term, "No results: the name was misspelled. Search again.", enter=True)
        else:
            self.type(box, term, "Search for the product by name.", enter=True)

    def visit_until(self, link_name: str) -> int | None:
        """Page through the product list until a link named `link_name` shows up."""
        while (found := self.find("link", link_name)) is None:
            nxt = self.find("link", "Next")
            if nxt is None:
                return None
            self.click(nxt, f"{link_name} is not on this page; go to the next page.")
        return found


def task_add_to_cart(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    product = rng.choice([p for p in shop.products.values() if p["stock"] >= 2])
    quantity = rng.randint(1, 2)
    agent.search(product["name"], rng.random() < 0.35)
    agent.click(agent.find("link", product["name"]), f"Open the page of {product['name']}.")
    box = agent.find("textbox", "Quantity")
    if rng.random() < 0.3:
        agent.type(box, "two" if quantity == 2 else "one", "Set the quantity.")
        agent.click(agent.find("button", "Add to cart"), "Add it to the cart.")
        box = agent.find("textbox", "Quantity")
        agent.type(box, str(quantity), "The shop wants a number: type it as digits.")
    else:
        agent.type(box, str(quantity), "Set the quantity.")
    agent.click(agent.find("button", "Add to cart"), "Add it to the cart.")
    if rng.random() < 0.25:
        agent.scroll("Scroll to see the whole cart.")
    total = agent.says("Total:") or "Total: unknown"
    return (
        f"Add {quantity} x {product['name']} to my cart and tell me the cart total.",
        total.split(": ", 1)[1],
    )


def task_cheapest(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    category = rng.choice(sorted({p["category"] for p in shop.products.values()}))
    agent.click(agent.find("link", "Products"), "Go to the product list.")
    agent.click(agent.find("link", category.title()), f"Filter by the {category} category.")
    prices: dict[str, float] = {}
    while True:
        for element in list(agent.browser.elements.values()):
            if element.role == "StaticText" and element.name.startswith("$"):
                link = agent.browser.elements.get(element.node_id - 1)
                if link is not None and link.role == "link":
                    prices[link.name] = float(element.name[1:])
        nxt = agent.find("link", "Next")
        if nxt is None:
            break
        agent.click(nxt, "There are more products on the next page.")
    cheapest = min(sorted(prices), key=lambda name: prices[name])
    if rng.random() < 0.4:
        agent.click(
            agent.find("link", "Previous") or agent.find("link", cheapest),
            "Check the first page again.",
        )
    return f"What is the cheapest product in the {category} category?", cheapest


def task_email(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    user = rng.choice(["alex", "robin", "kim", "jordan", "casey"])
    email = f"{user}.{rng.randint(10, 99)}@example.org"
    agent.click(agent.find("link", "Account"), "Open the account page.")
    box = agent.find("textbox", "E-mail")
    if rng.random() < 0.4:
        agent.type(box, email.replace("@", " at "), "Enter the new address.")
        agent.click(agent.find("button", "Save"), "Save it.")
        box = agent.find("textbox", "E-mail")
        agent.type(box, email, "The shop rejected it; type the address properly.")
    else:
        agent.type(box, email, "Enter the new address.")
    agent.click(agent.find("button", "Save"), "Save the account.")
    return (
        f"Change my account e-mail address to {email}.",
        "Saved" if agent.says("Saved.") else "Not saved",
    )


def task_review(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    product = rng.choice(list(shop.products.values()))
    review = rng.choice(
        [
            "Works as described.",
            "Good value for the price.",
            "Arrived quickly.",
            "Smaller than expected.",
            "Would buy again.",
        ]
    )
    agent.click(agent.find("link", "Products"), "Browse the products.")
    if rng.random() < 0.3:
        agent.click(max(agent.browser.elements) + 7, "Open the product.")  # an id not on this page
    agent.click(agent.visit_until(product["name"]), f"Open {product['name']}.")
    agent.type(
        agent.find("textbox", "Your review"), review, "Write the review and press Enter.", True
    )
    return (
        f"Post the review '{review}' on the {product['name']} page.",
        "Done" if agent.says(review) else "Failed",
    )


def task_checkout(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    agent.click(agent.find("link", contains="Cart ("), "Open the cart.")
    if agent.says("Your cart is empty."):
        agent.go_back("The cart is empty; go back and pick something.")
        product = rng.choice([p for p in shop.products.values() if p["stock"] > 0])
        agent.search(product["name"], False)
        agent.click(agent.find("link", product["name"]), f"Open {product['name']}.")
        agent.click(agent.find("button", "Add to cart"), "Add one to the cart.")
    agent.click(agent.find("button", "Checkout"), "Place the order.")
    order = agent.says("Order ") or "Order unknown"
    return (
        "Check out whatever is in my cart (add any product if it is empty) and tell me the order "
        "number.",
        order.split(":")[0],
    )


def task_count(agent: Shopper, shop: Shop, rng: random.Random) -> str:
    agent.click(agent.find("link", "Products"), "Open the product list.")
    count = 0
    while True:
        count += sum(e.role == "listitem" for e in agent.browser.elements.values())
        if rng.random() < 0.2:
            agent.scroll("Scroll down to see the rest of the page.")
        nxt = agent.find("link", "Next")
        if nxt is None:
            break
        agent.click(nxt, "Count the next page too.")
    return "How many products does the shop sell in total?", str(count)


TASKS: dict[str, Callable[[Shopper, Shop, random.Random], tuple[str, str]]] = {
    "add_to_cart": task_add_to_cart,
    "cheapest": task_cheapest,
    "email": task_email,
    "review": task_review,
    "checkout": task_checkout,
    "count": task_count,
}


def render(steps: list[Step], intent: str, kind: str, index: int) -> str:
    """WebArena RenderHelper HTML: the task config, then one New Page block per step."""
    config = {
        "sites": "['shopping']",
        "task_id": str(index),
        "require_login": "False",
        "storage_state": "None",
        "start_url": f"{SHOWN_ORIGIN}/",
        "geolocation": "None",
        "intent_template": kind,
        "instantiation_dict": "{}",
        "intent": intent,
        "require_reset": "True",
        "eval": "{'eval_types': ['string_match']}",
        "intent_template_id": str(sorted(TASKS).index(kind.split("+")[0])),
    }
    body = [
        "     <pre>"
        + "".join(f"{k}: {html.escape(v, quote=False)}\n" for k, v in config.items())
        + "</pre>\n"
    ]
    previous = "None"
    for step in steps:
        raw = (
            f"Let's think step-by-step. {step.reason} In summary, the next action I will perform "
            f"is ```{step.action}```"
        )
        obj = (
            "{'action_type': " + ACTION_TYPES[step.kind] + ", 'coords': array([0., 0.], "
            "dtype=float32), 'element_role': 0, 'element_name': '', "
            f"'text': {list(step.text)!r}, 'page_number': 0, 'url': '', 'nth': 0, 'pw_code': '', "
            f"'element_id': {step.element_id!r}, 'key_comb': '', "
            f"'direction': {'down' if step.kind == 'scroll' else ''!r}, 'answer': {step.answer!r}, "
            f"'raw_prediction': {raw!r}}}"
        )
        body.append(
            "\n    <h2>New Page</h2>\n"
            f"<h3 class='url'><a href={step.url}>URL: {step.url}</a></h3>\n"
            f"<div class='state_obv'><pre>{html.escape(step.tree, quote=False)}</pre><div>\n"
            "<div class='prev_action' style='background-color:pink'>"
            f"{html.escape(previous, quote=False)}</div>\n"
            "<div class='predict_action'>"
            "<div class='raw_parsed_prediction' style='background-color:grey'>"
            f"<pre>{html.escape(raw, quote=False)}</pre></div><div class='action_object' "
            f"style='background-color:grey'><pre>{html.escape(obj, quote=False)}</pre></div>"
            "<div class='parsed_action' style='background-color:yellow'>"
            f"<pre>{html.escape(step.parsed, quote=False)}</pre></div></div>\n"
        )
        previous = step.parsed
    return HTML_HEAD + "".join(body) + "    </body>\n</html>\n"


def collect_one(index: int, seed: int, out_dir: Path) -> int:
    """One session against a fresh shop server; writes the render HTML; returns its turns."""
    rng = trajectory_rng(seed, "web", index)
    kinds = sorted(TASKS)
    chain = [kinds[index % len(kinds)]]
    if rng.random() < 0.6:  # a second errand in the same session
        chain.append(rng.choice([k for k in kinds if k != chain[0]]))
    shop = Shop.seeded(rng)
    with ShopServer(shop) as server:
        browser = TextBrowser()
        browser.load(f"{server.origin}/")
        agent = Shopper(browser, server.origin, rng)
        agent.observe()
        intents, answers = [], []
        for number, kind in enumerate(chain):
            if number:
                agent.click(
                    agent.find("link", "Home"), "First errand done; start the next from home."
                )
            intent, answer = TASKS[kind](agent, shop, rng)
            intents.append(intent)
            answers.append(answer)
        agent.stop("; ".join(answers), "All errands are done; report the answers.")
    intent = " Then: ".join(intents)
    kind = "+".join(chain)
    text = render(agent.steps, intent, kind, index)
    text = re.sub(re.escape(server.origin), SHOWN_ORIGIN, text)
    write_text(out_dir / f"web-collected-{index:05d}.render.html", text)
    return len(agent.steps) - 1  # the closing stop has no page after it


def collect(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` web trajectories into `out_dir` (work_dir unused: state lives in the server)."""
    return run_indexed(lambda i: collect_one(i, seed, out_dir), range(n), workers_for(n))
