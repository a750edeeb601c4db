"""WebArena / VisualWebArena RenderHelper HTML: one page a run, accessibility trees as observations.

The render helper writes the task config, then one block per step::

    <pre>task_id: 16 ... intent: Compare the time for walking and driving route from ...</pre>
    <h2>New Page</h2>
    <h3 class='url'><a href=http://...>URL: http://...</a></h3>
    <div class='state_obv'><pre>Tab 0 (current): OpenStreetMap\\n\\n[1] RootWebArea ...</pre><div>
    <div class='predict_action'><div class='raw_parsed_prediction'><pre>Let's think ...</pre></div>
      <div class='action_object'><pre>{...}</pre></div>
      <div class='parsed_action'><pre>click [482]</pre></div></div>

Pairing: the tree shown in step k is the page BEFORE action k (the helper renders the state
together with the action chosen on it), so turn k = (parsed action k, tree of step k + 1). The
first tree is metadata["initial_observation"]; the last action (usually `stop [answer]`) has no
page after it and becomes metadata["final_action"] (and "final_answer" for a stop). The task is
the config's `intent`; the model's reasoning (`raw_parsed_prediction`) is metadata, not the action.
The page carries no evaluation score, so the outcome is "unknown". Some helper versions escape
the tree with html.escape and some insert it raw: entities are unescaped and raw tags inside the
tree are kept as text.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from sources.readers.base import FormatError, Reader
from sources.schema import Quarantine, Trajectory, Turn

CHUNK = 1 << 16
WHOLE_PAGE_BYTES = 16 << 20  # a page up to this size is decoded whole and tried by parse_plain
# div class -> step field its <pre> fills
FIELDS = {
    "state_obv": "tree",
    "raw_parsed_prediction": "raw_prediction",
    "action_object": "action_object",
    "parsed_action": "action",
}
# first word of a parsed action (browser_env action2str) -> shared action kind
ACTION_KINDS = {
    "click": "click",
    "hover": "other",
    "type": "type",
    "press": "key",
    "scroll": "scroll",
    "goto": "navigate",
    "go_back": "navigate",
    "go_forward": "navigate",
    "new_tab": "navigate",
    "tab_focus": "navigate",
    "page_focus": "navigate",
    "close_tab": "navigate",
    "stop": "submit",
    "none": "other",
}

# The task config RenderHelper writes first: "<pre>sites: [...]\ntask_id: 0\n...intent: ..."
_CONFIG = re.compile(r"<pre>[^<]*\btask_id: \S+\n[^<]*\nintent: ")
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


class _RenderParser(HTMLParser):
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
            if start > position:
                self.handle_data(unescape(text[position:start]))
            if token.group(1) is not None:
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
        attrs: list[tuple[str, str | None]] = [
            (name.lower(), quoted or bare)
            for name, quoted, bare in _PLAIN_ATTRIBUTE.findall(match.group(2))]
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
        css = dict(attrs).get("class") or ""
        if tag in ("h1", "h2"):
            self._heading = []
        elif tag == "h3" and css == "url":
            self._url = []
        elif tag == "div" and css in FIELDS:
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
        for sink in (self._capture, self._heading, self._url):
            if sink is not None:
                sink.append(data)
                return


def parse_config(text: str) -> dict[str, str]:
    """`key: value` lines of the helper's config block; a line without a key continues the last."""
    config: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            config[key], last = value, key
        elif last is not None:
            config[last] += "\n" + line
    return config


def action_kind(action: str) -> str:
    verb = action.strip().split(" ", 1)[0].lower() if action.strip() else ""
    return ACTION_KINDS.get(verb, "other")


def _stop_answer(action: str) -> str | None:
    """The answer of `stop [answer]`, else None."""
    text = action.strip()
    if not text.lower().startswith("stop"):
        return None
    rest = text[4:].strip()
    if rest.startswith("[") and rest.endswith("]"):
        return rest[1:-1]
    return rest


class WebArenaRenderReader(Reader):
    """WebArena / VisualWebArena render_<task>.html -> (parsed action, next accessibility tree)."""

    name = "webarena_render"
    domain = "web"
    description = "parsed action (click [id], type [id] [text], ...) -> accessibility tree after it"

    def sniff(self, path: Path, head: str) -> bool:
        # An HTML document (not prose that mentions the markers) with the helper's step markup.
        if not head.lstrip().startswith("<"):
            return False
        if "class='state_obv'" in head or "New Page</h" in head:
            return True
        # A run that stopped before its first step renders only the task config (read: an error
        # that says so, rather than an unknown format).
        return bool(_CONFIG.search(head))

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        parser = self._parse_whole(path)
        if parser is None:
            parser = self._parse_chunks(path)
        if not parser.steps:
            raise FormatError(path, "$", "no 'New Page' step in the render HTML: the run stopped "
                              "before its first step (the page renders only the task config)")
        yield from self._trajectory(path, parser)

    @staticmethod
    def _parse_whole(path: Path) -> _RenderParser | None:
        """The page parsed in one piece by parse_plain; None for a large page, one that is not
        UTF-8 (the chunks name the place) or not plain."""
        if path.stat().st_size > WHOLE_PAGE_BYTES:
            return None
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return None
        parser = _RenderParser()
        return parser if parser.parse_plain(text) else None

    @staticmethod
    def _parse_chunks(path: Path) -> _RenderParser:
        """The page fed to html.parser in chunks (no second copy of a large page)."""
        parser = _RenderParser()
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset = 0
        with path.open("rb") as handle:
            while True:
                chunk = handle.read(CHUNK)
                try:
                    parser.feed(decoder.decode(chunk, final=not chunk))
                except UnicodeDecodeError as error:
                    where = f"byte {offset + error.start}"
                    raise FormatError(path, where, f"invalid UTF-8: {error.reason}") from None
                if not chunk:
                    break
                offset += len(chunk)
        parser.close()
        return parser

    def _trajectory(self, path: Path, parser: _RenderParser) -> Iterator[Trajectory | Quarantine]:
        steps = parser.steps
        config = parse_config(parser.config or "")
        task = config.pop("intent", "")
        metadata: dict[str, Any] = {"config": config} if config else {}
        metadata["n_steps"] = len(steps)
        metadata["urls"] = [step.get("url") for step in steps]
        if "tree" in steps[0]:
            metadata["initial_observation"] = steps[0]["tree"]
        predictions = [step.get("raw_prediction") for step in steps]
        if any(predictions):
            metadata["raw_predictions"] = predictions

        turns: list[Turn] = []
        skipped: list[int] = []
        for index, step in enumerate(steps[:-1]):
            following = steps[index + 1]
            if "action" not in step or "tree" not in following:
                missing = "parsed action" if "action" not in step else "accessibility tree"
                at = index + 1 if "action" not in step else index + 2
                skipped.append(index + 1)
                yield Quarantine(
                    source_path=str(path), position=f"step {at}",
                    reason=f"step {at} has no {missing}; turn {index} not formed",
                )
                continue
            turns.append(Turn(action=step["action"], observation=following["tree"],
                              action_kind=action_kind(step["action"]),
                              observation_format="a11y_tree"))
        if skipped:
            metadata["quarantined_steps"] = skipped
        last = steps[-1]
        if "action" in last:
            metadata["final_action"] = last["action"]
            answer = _stop_answer(last["action"])
            if answer is not None:
                metadata["final_answer"] = answer
        else:
            metadata["truncated"] = True  # the page ends before the last step's action
        yield Trajectory(task=task, turns=turns, position="$", outcome="unknown",
                         metadata=metadata)
