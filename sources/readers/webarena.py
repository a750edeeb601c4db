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
from pathlib import Path
from typing import Any

from sources.readers.base import FormatError, Reader
from sources.readers.webarena_parser import RenderParser
from sources.schema import Quarantine, Trajectory, Turn

CHUNK = 1 << 16
WHOLE_PAGE_BYTES = 16 << 20  # a page up to this size is decoded whole and tried by parse_plain
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
    def _parse_whole(path: Path) -> RenderParser | None:
        """The page parsed in one piece by parse_plain; None for a large page, one that is not
        UTF-8 (the chunks name the place) or not plain."""
        if path.stat().st_size > WHOLE_PAGE_BYTES:
            return None
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return None
        parser = RenderParser()
        return parser if parser.parse_plain(text) else None

    @staticmethod
    def _parse_chunks(path: Path) -> RenderParser:
        """The page fed to html.parser in chunks (no second copy of a large page)."""
        parser = RenderParser()
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

    def _trajectory(self, path: Path, parser: RenderParser) -> Iterator[Trajectory | Quarantine]:
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
