"""html.parser for WebArena's RenderHelper pages, with the steps that make it fast.

`RenderParser` collects the task config and, for each "New Page" step, its URL, accessibility
tree, raw prediction, action object and parsed action (sources/readers/webarena.py pairs them
into turns). html.parser's own loop reads a tag in several regex steps; `parse_plain` reads a
whole page with one step a tag, and a whole step of the helper's usual markup with one match,
giving the handlers what feed() + close() give them; a page it cannot read that way is fed to
html.parser as before.
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

# div class -> step field its <pre> fills
FIELDS = {
    "state_obv": "tree",
    "raw_parsed_prediction": "raw_prediction",
    "action_object": "action_object",
    "parsed_action": "action",
}
# The tags RenderHelper writes: a name, then ` name='value'` or ` name=bare-value` attributes.
# For these, html.parser's tolerant tag grammar (several regexes a tag) gives the same tag and
# attributes as one match here; anything else (quotes or entities in a value, `/>`, spacing,
# an unfinished tag) goes to html.parser itself.
_NAME = r"[a-zA-Z][a-zA-Z0-9]*"
_ATTRIBUTES = r"((?: [a-zA-Z][a-zA-Z-]*=(?:'[^'&<>]*'|[^\s'\"&<>=`]+))*)"
_PLAIN_START_TAG = re.compile(f"<({_NAME}){_ATTRIBUTES}>")
_PLAIN_ATTRIBUTE = re.compile(r" ([a-zA-Z][a-zA-Z-]*)=(?:'([^']*)'|(\S+))")
_PLAIN_END_TAG = re.compile(f"</({_NAME})>")
# Every "<" of a page: groups 1-2 a plain start tag, group 3 a plain end tag, neither: another
# construct (a declaration, a comment, a tag html.parser's own grammar reads, a bare "<").
_TOKEN = re.compile(f"<(?:({_NAME}){_ATTRIBUTES}>|/({_NAME})>)?")
_TAG_OPEN = re.compile(r"<[a-zA-Z]")
# One step of RenderHelper's page as it writes it (the generated pages and the real ones here):
# its text pieces in groups (URL text, tree, prediction, action object, parsed action) free of
# "<" but for the action object's `<ActionTypes.CLICK: 6>`, which html.parser reads as a tag and
# a captured <pre> keeps as written. Between the groups only tags whose handling does nothing
# outside a capture, and text that is dropped there.
_HELPER_STEP = re.compile(
    r"<h2>New Page</h2>[^<]*"
    r"<h3 class='url'><a href=[^\s'\"<>`]+>([^<]*)</a></h3>[^<]*"
    r"<div class='state_obv'><pre>([^<]*)</pre>[^<]*<div>[^<]*"
    r"(?:<img src='[^'<>]*' style='[^'<>]*'/>[^<]*)?"
    r"<div class='prev_action' style='[^'<>]*'>[^<]*</div>[^<]*"
    r"<div class='predict_action'><div class='raw_parsed_prediction' style='[^'<>]*'>"
    r"<pre>([^<]*)</pre></div>"
    r"<div class='action_object' style='[^'<>]*'><pre>((?:[^<]|<ActionTypes\.[A-Z_]+: \d+>)*)"
    r"</pre></div>"
    r"<div class='parsed_action' style='[^'<>]*'><pre>([^<]*)</pre></div></div>")


class RenderParser(HTMLParser):
    """Collects the config text and, per New Page, url / tree / prediction / parsed action."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.config: str | None = None
        self.steps: list[dict[str, str]] = []
        self._heading: list[str] | None = None
        self._url: list[str] | None = None
        self._field: str | None = None  # set by a known div, consumed by the next <pre>
        self._capture: list[str] | None = None
        self._target = ""
        self._depth = 0  # <pre> nested inside a captured <pre> (raw, unescaped trees)

    def parse_plain(self, text: str) -> bool:
        """Parse a whole page as feed(text) + close() do, one regex step a tag: the same calls
        of the handlers below with the same values, for a page whose every construct goahead
        (html.parser's loop) would read in one piece. False, with this parser's state spent,
        at anything else (a "<" that starts no tag, an unfinished tag or comment, a <script>
        or <style> not closed): the caller then feeds the page to a fresh parser."""
        self.rawdata = text  # what the html.parser steps called below read
        find, match, position = text.find, _TOKEN.match, 0
        while True:
            if self.cdata_elem is not None:  # <script> / <style>: raw text up to its end tag
                close = self.interesting.search(text, position)
                if close is None:
                    return False
                if close.start() > position:
                    self.handle_data(text[position:close.start()])
                position = self.parse_endtag(close.start())
                if position < 0:
                    return False
                continue
            start = find("<", position)  # str.find: several times faster than a regex search
            if start < 0:
                break
            token = match(text, start)
            if start > position and self._collecting() is not None:  # else text is dropped
                self.handle_data(unescape(text[position:start]))
            if token.group(1) == "h2" and (step := self._helper_step(text, start)) is not None:
                position = step
            elif token.group(1) is not None:
                position = self._plain_starttag(token)
            elif token.group(3) is not None:
                self.handle_endtag(token.group(3).lower())
                position = token.end()
            else:
                position = self._other_construct(text, start)
                if position < 0:
                    return False
        if position < len(text):
            self.handle_data(unescape(text[position:]))
        self.rawdata = ""
        return True

    def _helper_step(self, text: str, start: int) -> int | None:
        """A whole helper step at `start` in one match, with the effect its tags' handlers
        have from a state between steps (nothing collected, no field pending); None where the
        step is not written as _HELPER_STEP has it or the state is another."""
        if self._collecting() is not None or self._field is not None or self._depth:
            return None
        step = _HELPER_STEP.match(text, start)
        if step is None:
            return None
        url, tree, prediction, action_object, action = step.groups()
        self.steps.append({
            "url": unescape(url).strip().removeprefix("URL:").strip(),
            "tree": unescape(tree),
            "raw_prediction": unescape(prediction),
            # the tags kept as written and the text between them unescaped: one unescape,
            # since no character reference runs into or out of a tag ("<" ends every one)
            "action_object": unescape(action_object),
            "action": unescape(action),
        })
        return step.end()

    def _other_construct(self, text: str, start: int) -> int:
        """goahead's step for a "<" that is no plain tag; -1 where it would wait or take the
        "<" as text."""
        if _TAG_OPEN.match(text, start):
            return self.parse_starttag(start)
        if text.startswith("</", start):
            return self.parse_endtag(start)
        if text.startswith("<!--", start):
            return self.parse_comment(start)
        if text.startswith("<!", start):
            return self.parse_html_declaration(start)
        return -1

    def parse_starttag(self, i: int) -> int:
        """html.parser's start tag step, one regex for RenderHelper's plain tags (a page has
        hundreds; html.parser's tag grammar was most of the reader's time)."""
        match = _PLAIN_START_TAG.match(self.rawdata, i)
        if match is None:
            return super().parse_starttag(i)  # type: ignore[misc]
        return self._plain_starttag(match)

    def _plain_starttag(self, match: re.Match[str]) -> int:
        """The start tag `match` found (its name and attributes in groups 1 and 2)."""
        self._HTMLParser__starttag_text = match.group(0)  # what get_starttag_text() returns
        self.lasttag = tag = match.group(1).lower()
        # An empty quoted value stays "" (findall gives "" for the alternative not taken).
        attributes = match.group(2)
        attrs: list[tuple[str, str | None]] = [
            (name.lower(), quoted or bare)
            for name, quoted, bare in _PLAIN_ATTRIBUTE.findall(attributes)] if attributes else []
        self.handle_starttag(tag, attrs)
        if tag in self.CDATA_CONTENT_ELEMENTS:
            self.set_cdata_mode(tag)
        return match.end()

    def updatepos(self, i: int, j: int) -> int:
        """html.parser's position step without its line count: `lineno` and `offset` serve
        only getpos() (error positions), which this reader never reads, and counting the line
        breaks of every piece of text was a sixth of the reader's time."""
        return j

    def parse_endtag(self, i: int) -> int:
        """html.parser's end tag step, one regex for a plain `</name>` outside <script>/<style>."""
        match = _PLAIN_END_TAG.match(self.rawdata, i)
        if match is None or self.cdata_elem is not None:
            return super().parse_endtag(i)  # type: ignore[misc]
        self.handle_endtag(match.group(1).lower())
        self.clear_cdata_mode()
        return match.end()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._capture is not None:  # a tag inside the tree text: keep it as text
            self._depth += tag == "pre"
            self._capture.append(self.get_starttag_text() or "")
            return
        if tag in ("h1", "h2"):
            self._heading = []
        elif tag == "h3" or tag == "div":
            css = dict(attrs).get("class") or ""
            if tag == "h3":
                if css == "url":
                    self._url = []
            elif css in FIELDS:
                self._field = FIELDS[css]
        elif tag == "pre":
            target = self._field
            if target is None and not self.steps and self.config is None:
                target = "config"
            if target is not None:
                self._capture, self._target, self._field = [], target, None

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._capture is not None:
            self._capture.append(self.get_starttag_text() or "")
        else:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self._capture is not None:
            if tag != "pre" or self._depth:
                self._depth -= tag == "pre"
                self._capture.append(f"</{tag}>")
                return
            text, self._capture = "".join(self._capture), None
            if self._target == "config":
                self.config = text
            elif self.steps:
                self.steps[-1][self._target] = text
        elif tag in ("h1", "h2") and self._heading is not None:
            if "".join(self._heading).strip() == "New Page":
                self.steps.append({})
            self._heading = None
        elif tag == "h3" and self._url is not None:
            if self.steps:
                self.steps[-1]["url"] = "".join(self._url).strip().removeprefix("URL:").strip()
            self._url = None

    def handle_data(self, data: str) -> None:
        sink = self._collecting()
        if sink is not None:
            sink.append(data)

    def _collecting(self) -> list[str] | None:
        """Where text goes now: the captured <pre>, the heading, the URL, or nowhere."""
        if self._capture is not None:
            return self._capture
        return self._heading if self._heading is not None else self._url
