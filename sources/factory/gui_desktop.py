"""A stateful model of an Ubuntu desktop (Files, Text Editor, Settings) - MODELED.

No desktop runs here. The model keeps windows, files and settings; pyautogui calls act on it the
way they would on GNOME: a click at (x, y) hits the topmost element under the point, a double
click opens, `typewrite` types into the focused text element, hotkeys save / go back, Delete
removes the selected file. The observation is an accessibility tree in the XML form OSWorld's
DesktopEnv returns (at-spi roles as tags, `st:` states such as checked / selected / focused,
`cp:screencoord` and `cp:size`), rendered from the state after each action.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import quoteattr

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
)
FOLDERS = ("Documents", "Downloads", "Pictures")
PANELS = ("Wi-Fi", "Bluetooth", "Appearance", "Power")


@dataclass
class Node:
    tag: str
    name: str
    box: tuple[int, int, int, int]  # x, y, w, h
    states: tuple[str, ...] = ()
    text: str = ""
    click: Callable[[], None] | None = None
    double: Callable[[], None] | None = None
    children: list[Node] = field(default_factory=list)


@dataclass
class Desktop:
    """Windows (last = focused), files, settings; `tree()` renders, the pyautogui verbs act."""

    files: dict[str, dict[str, str]]  # folder -> {name: content}
    settings: dict[str, bool]  # "Wi-Fi", "Bluetooth", "Dark style"
    windows: list[dict[str, Any]] = field(default_factory=list)
    _nodes: list[Node] = field(default_factory=list)

    # --- rendering -----------------------------------------------------------------------
    # fmt: off
    def _build(self) -> list[Node]:
        dock = [Node("push-button", app, (0, 100 + 80 * i, 70, 70), ("enabled", "visible"),
                     click=self._launcher(app))
                for i, app in enumerate(("Files", "Text Editor", "Settings"))]
        shell = Node("application", "gnome-shell", (0, 0, 1920, 1080), children=[
            Node("push-button", "Activities", (0, 0, 100, 32), ("enabled", "visible")),
            Node("label", "Mar 3 10:00", (900, 0, 120, 32), ("visible",)), *dock])
        apps = [shell]
        for depth, window in enumerate(self.windows):
            focused = depth == len(self.windows) - 1
            apps.append(getattr(self, f"_win_{window['app']}")(window, focused))
        return apps
    # fmt: on

    def tree(self) -> str:
        """The accessibility tree as XML, one element a line, indented by depth."""
        lines = [f'<desktop-frame {NS} name="main" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">']
        self._nodes = []

        def emit(node: Node, depth: int) -> None:
            self._nodes.append(node)
            states = "".join(f' st:{s}="true"' for s in node.states)
            attrs = (
                f"<{node.tag} name={quoteattr(node.name)}{states} "
                f'cp:screencoord="({node.box[0]}, {node.box[1]})" '
                f'cp:size="({node.box[2]}, {node.box[3]})"'
            )
            if node.children:
                lines.append("  " * depth + attrs + ">" + _xml_text(node.text))
                for child in node.children:
                    emit(child, depth + 1)
                lines.append("  " * depth + f"</{node.tag}>")
            elif node.text:
                lines.append("  " * depth + attrs + ">" + _xml_text(node.text) + f"</{node.tag}>")
            else:
                lines.append("  " * depth + attrs + "/>")

        for app in self._build():
            emit(app, 1)
        lines.append("</desktop-frame>")
        return "\n".join(lines)

    def _launcher(self, app: str) -> Callable[[], None]:
        def launch() -> None:
            kind = {"Files": "files", "Text Editor": "editor", "Settings": "settings"}[app]
            self.windows = [w for w in self.windows if w["app"] != kind]
            self.windows.append(
                {
                    "app": kind,
                    "folder": None,
                    "selected": None,
                    "panel": "Wi-Fi",
                    "text": "",
                    "title": "Untitled Document 1",
                    "dialog": None,
                    "rename": None,
                }
            )

        return launch

    # fmt: off
    def _win_files(self, w: dict[str, Any], focused: bool) -> Node:
        folder = w["folder"]
        title = folder or "Home"
        items = sorted(self.files[folder]) if folder else list(FOLDERS)
        icons = []
        for i, name in enumerate(items):
            if w["rename"] is not None and w["selected"] == name:
                icons.append(Node("text", "Name", (400 + 150 * i, 250, 140, 30),
                                  ("editable", "focused"), text=w["rename"]))
                continue
            icons.append(Node("icon", name, (400 + 150 * i, 200, 120, 100),
                              ("selected",) if w["selected"] == name else (),
                              click=self._select(w, name),
                              double=self._enter(w, name) if not folder else None))
        sidebar = [Node("list-item", f, (100, 150 + 40 * i, 200, 36),
                        ("selected",) if f == folder else (), click=self._enter(w, f))
                   for i, f in enumerate(("Home", *FOLDERS))]
        empty = [Node("label", "Folder is Empty", (700, 400, 200, 30))]
        return Node("application", "org.gnome.Nautilus", (100, 60, 1200, 800), children=[Node(
            "frame", title, (100, 60, 1200, 800), ("active",) if focused else (), children=[
                Node("push-button", "Back", (110, 70, 40, 40), ("enabled",),
                     click=self._enter(w, "Home")),
                Node("list", "Places", (100, 150, 200, 200), children=sidebar),
                Node("panel", title, (320, 150, 960, 600), children=icons or empty)])])
    # fmt: on

    def _select(self, w: dict[str, Any], name: str) -> Callable[[], None]:
        def select() -> None:
            w["selected"], w["rename"] = name, None

        return select

    def _enter(self, w: dict[str, Any], name: str) -> Callable[[], None]:
        def enter() -> None:
            w["folder"] = None if name == "Home" else name
            w["selected"], w["rename"] = None, None

        return enter

    # fmt: off
    def _win_editor(self, w: dict[str, Any], focused: bool) -> Node:
        typing = ("focused",) if focused and not w["dialog"] else ()
        children = [Node("text", "", (100, 120, 1200, 700), ("editable", "multi-line") + typing,
                         text=w["text"])]
        if (d := w["dialog"]) is not None:
            folders = [Node("list-item", f, (450, 320 + 40 * i, 300, 36),
                            ("selected",) if f == d["folder"] else (),
                            click=self._dialog_folder(d, f)) for i, f in enumerate(FOLDERS)]
            children.append(Node("dialog", "Save As", (400, 200, 700, 450), ("modal",), children=[
                Node("text", "Name", (450, 250, 500, 32), ("editable", "focused"), text=d["name"]),
                *folders,
                Node("push-button", "Cancel", (450, 580, 100, 36), ("enabled",),
                     click=self._dialog_close(w)),
                Node("push-button", "Save", (950, 580, 100, 36), ("enabled",),
                     click=self._save(w))]))
        return Node("application", "gedit", (100, 60, 1200, 800), children=[Node(
            "frame", f"{w['title']} - Text Editor", (100, 60, 1200, 800),
            ("active",) if focused else (), children=children)])
    # fmt: on

    def _dialog_folder(self, d: dict[str, Any], folder: str) -> Callable[[], None]:
        def pick() -> None:
            d["folder"] = folder

        return pick

    def _dialog_close(self, w: dict[str, Any]) -> Callable[[], None]:
        def close() -> None:
            w["dialog"] = None

        return close

    def _save(self, w: dict[str, Any]) -> Callable[[], None]:
        def save() -> None:
            d = w["dialog"]
            self.files[d["folder"]][d["name"]] = w["text"]
            w["title"] = f"{d['name']} (~/{d['folder']})"
            w["dialog"] = None

        return save

    # fmt: off
    def _win_settings(self, w: dict[str, Any], focused: bool) -> Node:
        panel = w["panel"]
        sidebar = [Node("list-item", p, (100, 120 + 44 * i, 260, 40),
                        ("selected",) if p == panel else (), click=self._panel(w, p))
                   for i, p in enumerate(PANELS)]
        toggles = {"Wi-Fi": ["Wi-Fi"], "Bluetooth": ["Bluetooth"], "Appearance": ["Dark style"],
                   "Power": []}[panel]
        body = [Node("toggle-button", t, (1100, 150 + 60 * i, 60, 32),
                     ("enabled", "checkable") + (("checked",) if self.settings[t] else ()),
                     click=self._flip(t)) for i, t in enumerate(toggles)]
        body += [Node("label", f"{t} is {'on' if self.settings[t] else 'off'}",
                      (420, 150 + 60 * i, 400, 32)) for i, t in enumerate(toggles)]
        if not toggles:
            body.append(Node("label", "Power Mode: Balanced", (420, 150, 400, 32)))
        return Node("application", "gnome-control-center", (100, 60, 1200, 800), children=[Node(
            "frame", panel, (100, 60, 1200, 800), ("active",) if focused else (), children=[
                Node("list", "Settings", (100, 120, 260, 600), children=sidebar),
                Node("panel", panel, (400, 120, 880, 700), children=body)])])
    # fmt: on

    def _panel(self, w: dict[str, Any], panel: str) -> Callable[[], None]:
        def show() -> None:
            w["panel"] = panel

        return show

    def _flip(self, name: str) -> Callable[[], None]:
        def flip() -> None:
            self.settings[name] = not self.settings[name]

        return flip

    # --- pyautogui -----------------------------------------------------------------------
    def _hit(self, x: int, y: int) -> Node | None:
        """The clickable element under (x, y): the shell's bar and dock first, then the topmost
        window containing the point (a window hides what lies below it)."""

        def inside(node: Node) -> bool:
            return (
                node.box[0] <= x < node.box[0] + node.box[2]
                and node.box[1] <= y < node.box[1] + node.box[3]
            )

        def clickable(node: Node) -> list[Node]:
            found = [node] if (node.click or node.double) and inside(node) else []
            for child in node.children:
                found += clickable(child)
            return found

        shell, *windows = self._build()
        if hits := clickable(shell):
            return hits[-1]
        for window in reversed(windows):
            if inside(window):
                hits = clickable(window)
                return hits[-1] if hits else None
        return None

    def run(self, code: str) -> None:
        """Execute one line of pyautogui code (the subset agents use) against the model."""
        for call in re.finditer(r"pyautogui\.(\w+)\(([^)]*)\)", code):
            verb, raw = call.group(1), call.group(2)
            args = [a.strip().strip("'\"") for a in raw.split(",")] if raw.strip() else []
            top = self.windows[-1] if self.windows else None
            if verb in ("click", "doubleClick"):
                node = self._hit(int(float(args[0])), int(float(args[1])))
                action = node and (
                    node.double if verb == "doubleClick" and node.double else node.click
                )
                if action:
                    action()
            elif verb in ("typewrite", "write") and top is not None:
                text = raw.strip()[1:-1].encode().decode("unicode_escape")
                if top["app"] == "editor":
                    if top["dialog"] is not None:
                        top["dialog"]["name"] = (
                            text  # the name field starts selected: typing replaces
                        )
                    else:
                        top["text"] += text
                elif top["app"] == "files" and top["rename"] is not None:
                    top["rename"] = text
            elif verb == "hotkey" and top is not None:
                if args == ["ctrl", "s"] and top["app"] == "editor" and top["dialog"] is None:
                    top["dialog"] = {"name": top["title"], "folder": "Documents"}
                elif args == ["alt", "left"] and top["app"] == "files":
                    self._enter(top, "Home")()
            elif verb == "press" and top is not None:
                self._press(top, args[0] if args else "")

    def _press(self, w: dict[str, Any], key: str) -> None:
        if w["app"] != "files" or w["folder"] is None or w["selected"] is None:
            return
        folder = self.files[w["folder"]]
        if key == "delete":
            folder.pop(w["selected"], None)
            w["selected"] = None
        elif key == "f2":
            w["rename"] = w["selected"]
        elif key == "enter" and w["rename"]:
            folder[w["rename"]] = folder.pop(w["selected"])
            w["selected"], w["rename"] = w["rename"], None

    def center(self, tag: str, name: str) -> tuple[int, int] | None:
        """Centre of the last-drawn element with that tag and name (what an agent reads off)."""
        self.tree()
        for node in reversed(self._nodes):
            if node.tag == tag and node.name == name:
                return node.box[0] + node.box[2] // 2, node.box[1] + node.box[3] // 2
        return None


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
