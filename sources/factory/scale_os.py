"""Scale generator, OS domain: OSWorld `traj.jsonl` files with accessibility trees.

Modeled, not executed: desktop windows (browser, office, mail, files, editor) rendered as
OSWorld's linearized accessibility tree (the tab-separated "tag name text class description
position size" table its agents build from `obs["accessibility_tree"]`). Each line is one
lib_run_single record (step_num, action_timestamp, pyautogui action, response, reward, done,
info, screenshot_file) plus `accessibility_tree`, the screen after the action; the first record
also carries the task as `instruction`. The reader (readers/osworld.py) takes the tree as the
observation and `instruction` as the task; a record without tree or screenshot has an empty one.
"""

from __future__ import annotations

import json
import random

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn
from sources.factory.scale_focus import planned_focus

DOMAIN = "os"
SUFFIX = ".traj.jsonl"
MEAN_TURNS = 13.0
WEIGHTS = {"informative": 0.5, "echo": 0.04, "unchanged": 0.22, "boilerplate": 0.09,
           "error": 0.08, "empty": 0.07}
PREFIX: tuple[str, ...] = ()
LAST: str | None = None

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
APPS = ("Google Chrome", "LibreOffice Calc", "LibreOffice Writer", "Thunderbird Mail",
        "Files", "Visual Studio Code", "GIMP", "VLC media player")
INSTRUCTIONS = (
    "Can you make Bing the main search engine in {a}?",
    "Rename the sheet '{w}' to '{w2}' and save the workbook.",
    "Move every .{e} file from ~/Desktop to a new folder called {w} in my home directory.",
    "Please set the font of the whole document to {w} size {n}.",
    "Create a filter in Thunderbird that moves mail from {p} to the '{w}' folder.",
    "Open {f} in VS Code and replace all occurrences of '{w}' with '{w2}'.",
)


IDLE_ACTIONS = (("pyautogui.scroll(-800)", "scroll:down"), ("WAIT", "wait"),
                ("pyautogui.moveTo(960, 540)", "move"))  # (action, response) that change nothing


def _row(tag: str, name: str, text: str, x: int, y: int, w: int, h: int, cls: str = "",
         desc: str = "") -> str:
    quoted = text if '"' not in text else '"' + text.replace('"', '""') + '"'
    return f"{tag}\t{name}\t{quoted or chr(34) * 2}\t{cls}\t{desc}\t({x}, {y})\t({w}, {h})"


DESKTOP = [
    _row("label", "Activities", "Activities", 0, 0, 100, 32),
    _row("label", "Clock", "Oct 15  15:34", 900, 0, 120, 32),
    _row("push-button", "System", "", 1800, 0, 120, 32),
] + [_row("push-button", app, "", 0, 60 + 70 * k, 70, 64) for k, app in enumerate(APPS)]


def _window(title: str, body: list[str]) -> str:
    return "\n".join([HEADER] + DESKTOP + [_row("frame", title, "", 70, 32, 1850, 1048)] + body)


BOILERPLATE = (
    _window("Desktop", [_row("label", "Home", "Home", 1800, 900, 60, 20),
                        _row("label", "Trash", "Trash", 1800, 980, 60, 20)]),
    _window("New Tab - Google Chrome", [
        _row("entry", "Address and search bar", "", 300, 80, 1200, 36),
        _row("push-button", "Google apps", "", 1750, 140, 40, 40),
        _row("entry", "Search Google or type a URL", "", 640, 420, 640, 46),
        _row("link", "Web Store", "Web Store", 700, 560, 100, 100)]),
    _window("Keep current format", [
        _row("label", "", "Use Excel 2007-365!", 760, 480, 400, 20),
        _row("push-button", "Use Excel 2007-365!", "", 760, 560, 180, 34),
        _row("push-button", "Use ODF Format!", "", 960, 560, 180, 34),
        _row("check-box", "Ask when not saving in ODF or default format", "", 760, 620, 400, 20)]),
    _window("Authentication Required", [
        _row("label", "", "Authentication is required to run this program", 700, 420, 520, 20),
        _row("password-text", "Password", "", 700, 500, 520, 34),
        _row("push-button", "Cancel", "", 700, 560, 250, 34),
        _row("push-button", "Authenticate", "", 970, 560, 250, 34)]),
)


def make_task(rng: random.Random) -> GenTask:
    text = rng.choice(INSTRUCTIONS).format(
        a=rng.choice(APPS), w=rng.choice(tx.WORDS), w2=rng.choice(tx.WORDS), e=rng.choice(tx.EXTS),
        n=tx.ri(rng, 8, 24), p=tx.person(rng), f=tx.filename(rng))
    return GenTask(text, {"app": rng.choice(APPS), "start": tx.ri(rng, 0, 86000),
                          "scene_seed": rng.getrandbits(64)})


def _body(rng: random.Random, app: str) -> list[str]:
    rows = [_row("menu", m, "", 80 + 60 * k, 40, 55, 25)
            for k, m in enumerate(("File", "Edit", "View", "Insert", "Format", "Tools", "Help"))]
    y = 120
    for _ in range(tx.ri(rng, 20, 90)):
        y += tx.ri(rng, 18, 30)
        roll = rng.random()
        if roll < 0.3:
            rows.append(_row("table-cell", "", rng.choice((str(tx.ri(rng, 0, 99999)),
                                                          rng.choice(tx.CITIES), tx.words(rng, 2))),
                             100 + tx.ri(rng, 0, 12) * 120, y, 118, 22))
        elif roll < 0.55:
            rows.append(_row("label", "", tx.sentence(rng, 3, 10), 120, y, 900, 20))
        elif roll < 0.7:
            rows.append(_row("push-button", tx.words(rng, tx.ri(rng, 1, 3)).title(), "",
                             tx.ri(rng, 80, 1700), y, 90, 30))
        elif roll < 0.8:
            rows.append(_row("link", tx.words(rng, 2).title(), tx.url(rng), 130, y, 400, 20))
        elif roll < 0.9:
            rows.append(_row("list-item", tx.filename(rng), "", 130, y, 600, 24))
        else:
            rows.append(_row("check-box", tx.words(rng, tx.ri(rng, 2, 5)).capitalize(), "",
                             140, y, 300, 20))
    return rows


def _screen(rng: random.Random, ctx: dict, app: str) -> str:
    """The app's window: its document's title (the same all trajectory long) and content."""
    return _window(f"{_document(ctx, app)} - {app}", _body(rng, app))


def _document(ctx: dict, app: str) -> str:
    """The title of the document `app` has open in this trajectory."""
    titles = ctx.setdefault("documents", {})  # deterministic from the seed: safe to keep
    if app not in titles:
        rng = random.Random(f"{ctx['scene_seed']}:{app}")
        titles[app] = tx.words(rng, tx.ri(rng, 1, 3)).title()
    return titles[app]


def _open(app: str) -> tuple[str, str]:
    """Clicking the app's launcher button in the dock (DESKTOP's rows)."""
    x, y = 35, 92 + 70 * APPS.index(app)
    return f"pyautogui.click({x}, {y})", f"click:({x},{y})"


def _action(rng: random.Random) -> tuple[str, str]:
    x, y = tx.ri(rng, 10, 1910), tx.ri(rng, 10, 1070)
    roll = rng.random()
    if roll < 0.45:
        return f"pyautogui.click({x}, {y})", f"click:({x},{y})"
    if roll < 0.6:
        return f"pyautogui.doubleClick({x}, {y})", f"double_click:({x},{y})"
    if roll < 0.75:
        text = tx.words(rng, tx.ri(rng, 1, 5))
        return f'pyautogui.typewrite("{text}"); pyautogui.press("enter")', f"type:{text}"
    if roll < 0.88:
        keys = rng.choice((("ctrl", "s"), ("ctrl", "c"), ("ctrl", "v"), ("alt", "tab"),
                           ("ctrl", "shift", "t")))
        args = ", ".join(f'"{k}"' for k in keys)
        return f"pyautogui.hotkey({args})", f"hotkey:{'+'.join(keys)}"
    return "pyautogui.scroll(-800)", "scroll:down"


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    last = index == task.ctx["n_turns"] - 1
    shown = prev.native.get("app") if prev is not None else None
    app, switched = planned_focus(task.ctx, index, APPS, shown)
    if category == "unchanged" and prev is not None:
        if last:
            action, response = "DONE", "done"
        else:
            action, response = rng.choice(IDLE_ACTIONS)
        return GenTurn(action, prev.observation, category, {"response": response, "app": shown})
    if category == "echo":
        typed = tx.words(rng, tx.ri(rng, 2, 6))
        action = f'pyautogui.typewrite("{typed}")'
        tree = "\n".join([HEADER, _row("entry", "Search", typed, 640, 420, 640, 46)])
        return GenTurn(action, tree, category, {"response": f"type:{typed}"})
    if category == "boilerplate":
        k = int(rng.random() * len(BOILERPLATE))
        action = ("pyautogui.hotkey(\"super\", \"d\")", "pyautogui.hotkey(\"ctrl\", \"t\")",
                  "pyautogui.hotkey(\"ctrl\", \"s\")", "pyautogui.press(\"enter\")")[k]
        return GenTurn(action, BOILERPLATE[k], category, {"response": "hotkey"})
    if category == "error":
        name = tx.filename(rng)
        message = rng.choice((f"Could not open \u201c{name}\u201d", f"The file {name} could not "
                              "be saved.", f"Unable to find the file \u201c{name}\u201d",
                              f"Error opening file: {name} (Permission denied)"))
        tree = _window("Error", [_row("alert", "Error", "", 660, 400, 600, 200),
                                 _row("label", "", message, 700, 450, 520, 40),
                                 _row("push-button", "OK", "", 1100, 540, 100, 34)])
        action, response = _action(rng)
        return GenTurn(action, tree, category, {"response": response})
    if category == "empty" and not last:
        action, response = _action(rng)
        return GenTurn(action, "", category, {"response": response, "blank": True})
    action, response = _open(app) if switched else _action(rng)
    return GenTurn(action, _screen(rng, task.ctx, app), "informative",
                   {"response": response, "app": app})


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    seconds = task.ctx["start"]
    lines = []
    for k, turn in enumerate(turns):
        seconds = (seconds + tx.ri(rng, 2, 60)) % 86400
        stamp = f"20250828@{seconds // 3600:02d}{seconds // 60 % 60:02d}{seconds % 60:02d}"
        blank = turn.native.get("blank", False)
        record = {"step_num": k + 1, "action_timestamp": stamp, "action": turn.action,
                  "response": turn.native["response"], "reward": 0,
                  "done": k == len(turns) - 1, "info": {},
                  "screenshot_file": None if blank else f"step_{k + 1}_{stamp}.png"}
        if k == 0:
            record["instruction"] = task.text
        record["accessibility_tree"] = turn.observation
        lines.append(json.dumps(record, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")
