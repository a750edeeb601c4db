"""A text browser: fetches pages over HTTP (urllib), parses the HTML, renders an accessibility tree.

The tree follows WebArena's text observation: `Tab 0 (current): <title>`, then one line per
accessible node, `[id] role 'name'` indented by depth with tabs (RootWebArea, link, button,
textbox, heading, list, listitem, table, row, cell, StaticText, ...). Ids number the nodes of the
current page in document order. Actions: click a link (navigate) or a button (submit its form
with the values typed so far), type into a textbox (optionally pressing Enter, which submits),
goto, go_back, scroll (the whole page is in the tree, so scrolling changes nothing).
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin

VOID = frozenset({"input", "br", "img", "meta", "link", "hr", "source", "wbr"})
ROLE_OF = {
    "ul": "list",
    "ol": "list",
    "li": "listitem",
    "table": "table",
    "tr": "row",
    "nav": "navigation",
    "main": "main",
    "footer": "contentinfo",
}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)
    parent: Node | None = None

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join(" ".join(parts).split())


class _DomBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.current.children.append(data)


@dataclass
class Element:
    """An accessible node of the rendered tree, with what acting on it needs."""

    node_id: int
    role: str
    name: str
    node: Node | None
    line: str  # "[id] role 'name' ..." without indentation


class TextBrowser:
    """One tab: the current page's DOM, its tree, typed values, and the history."""

    def __init__(self) -> None:
        self.url = ""
        self.title = ""
        self.dom = Node("#document", {})
        self.status = 0
        self.history: list[str] = []
        self.elements: dict[int, Element] = {}
        self.opener = urllib.request.build_opener()

    # --- loading -----------------------------------------------------------------------
    def load(self, url: str, data: dict[str, str] | None = None, record: bool = True) -> None:
        """GET (or POST `data`) and make the answer the current page; redirects are followed."""
        body = urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(
            url, data=body, method="POST" if body is not None else "GET"
        )
        try:
            with self.opener.open(request, timeout=10) as response:
                html_text, final_url, self.status = (
                    response.read().decode(),
                    response.geturl(),
                    response.status,
                )
        except urllib.error.HTTPError as error:  # 4xx pages are pages too
            html_text, final_url, self.status = error.read().decode(), error.geturl(), error.code
        if record and self.url:
            self.history.append(self.url)
        builder = _DomBuilder()
        builder.feed(html_text)
        builder.close()
        self.dom, self.url = builder.root, final_url
        title = self._find(self.dom, "title")
        self.title = title.text() if title else ""

    def _find(self, node: Node, tag: str) -> Node | None:
        for child in node.children:
            if isinstance(child, Node):
                if child.tag == tag:
                    return child
                if found := self._find(child, tag):
                    return found
        return None

    # --- rendering ---------------------------------------------------------------------
    def tree(self) -> str:
        """The accessibility tree of the current page (ids renumbered in document order)."""
        self.elements = {}
        labels = {n.attrs.get("for", ""): n.text() for n in self._all(self.dom) if n.tag == "label"}
        lines: list[str] = []
        self._emit(lines, 0, "RootWebArea", self.title, None, " focused: True")
        self._walk(self._find(self.dom, "body") or self.dom, 1, lines, labels)
        return f"Tab 0 (current): {self.title}\n\n" + "\n".join(lines)

    def _all(self, node: Node) -> list[Node]:
        out = []
        for child in node.children:
            if isinstance(child, Node):
                out.append(child)
                out.extend(self._all(child))
        return out

    def _emit(
        self, lines: list[str], depth: int, role: str, name: str, node: Node | None, props: str = ""
    ) -> int:
        node_id = len(self.elements) + 1
        line = f"[{node_id}] {role} '{name}'{props}"
        self.elements[node_id] = Element(node_id, role, name, node, line)
        lines.append("\t" * depth + line)
        return node_id

    def _walk(self, node: Node, depth: int, lines: list[str], labels: dict[str, str]) -> None:
        for child in node.children:
            if isinstance(child, str):
                self._emit(lines, depth, "StaticText", " ".join(child.split()), None)
                continue
            tag, attrs = child.tag, child.attrs
            if tag in ("script", "style", "label", "head", "title"):
                continue
            if tag == "a" and "href" in attrs:
                self._emit(lines, depth, "link", child.text(), child)
            elif re.fullmatch(r"h[1-6]", tag):
                self._emit(lines, depth, "heading", child.text(), child)
            elif tag == "button" or (tag == "input" and attrs.get("type") == "submit"):
                self._emit(lines, depth, "button", child.text() or attrs.get("value", ""), child)
            elif tag in ("input", "textarea"):
                if attrs.get("type") == "hidden":
                    continue
                name = labels.get(attrs.get("id", ""), attrs.get("placeholder", ""))
                self._emit(lines, depth, "textbox", name, child, " required: False")
                if value := attrs.get("value", ""):
                    self._emit(lines, depth + 1, "StaticText", value, None)
            elif tag == "th":
                self._emit(lines, depth, "columnheader", child.text(), child)
            elif tag == "td":
                self._emit(lines, depth, "cell", "", child)
                self._walk(child, depth + 1, lines, labels)
            elif attrs.get("role") == "alert":
                self._emit(lines, depth, "alert", "", child, " live: assertive atomic: True")
                self._walk(child, depth + 1, lines, labels)
            elif tag in ROLE_OF:
                self._emit(lines, depth, ROLE_OF[tag], "", child)
                self._walk(child, depth + 1, lines, labels)
            else:
                self._walk(child, depth, lines, labels)

    # --- acting ------------------------------------------------------------------------
    def _form_of(self, node: Node) -> Node | None:
        parent = node.parent
        while parent is not None and parent.tag != "form":
            parent = parent.parent
        return parent

    def _submit(self, form: Node) -> None:
        fields = {
            n.attrs["name"]: n.attrs.get("value", "")
            for n in self._all(form)
            if n.tag in ("input", "textarea") and n.attrs.get("name")
        }
        target = urljoin(self.url, form.attrs.get("action", ""))
        if form.attrs.get("method", "get").lower() == "post":
            self.load(target, fields)
        else:
            self.load(f"{target}?{urlencode(fields)}")

    def click(self, node_id: int) -> bool:
        """Follow a link or press a button; False when the id names nothing clickable here."""
        element = self.elements.get(node_id)
        if element is None or element.node is None:
            return False
        if element.role == "link":
            self.load(urljoin(self.url, element.node.attrs["href"]))
            return True
        if element.role == "button" and (form := self._form_of(element.node)) is not None:
            self._submit(form)
            return True
        return False

    def type(self, node_id: int, text: str, press_enter: bool) -> bool:
        """Replace a textbox's value; Enter submits its form. False when it is not a textbox."""
        element = self.elements.get(node_id)
        if element is None or element.role != "textbox" or element.node is None:
            return False
        element.node.attrs["value"] = text
        if press_enter and (form := self._form_of(element.node)) is not None:
            self._submit(form)
        return True

    def go_back(self) -> bool:
        if not self.history:
            return False
        self.load(self.history.pop(), record=False)
        return True

    def find(self, role: str, name: str | None = None, contains: str | None = None) -> int | None:
        """Id of the first element of `role` whose name equals `name` / contains `contains`."""
        for element in self.elements.values():
            if element.role != role:
                continue
            if name is not None and element.name != name:
                continue
            if contains is not None and contains.lower() not in element.name.lower():
                continue
            return element.node_id
        return None

    def texts(self) -> list[str]:
        """Names of the StaticText nodes of the current tree (what the page says)."""
        return [e.name for e in self.elements.values() if e.role == "StaticText"]
