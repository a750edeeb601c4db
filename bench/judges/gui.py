"""GUI observations as elements: Android element lists, web accessibility trees, desktop tables.

Three layouts are read (the ones our readers and AgentWorldBench use):

    [7] android.widget.EditText "Adam" (clickable, editable) bbox=(137,858,933,1007)
    \t[252] link 'View'                          (WebArena tree: the id in brackets)
    push-button\tFiles\t""\t\t\t(0, 340)\t(70, 64)   (OSWorld table: tag, name, position, size)

An element's key is its bracketed index or id, or for a table row its tag and name (with an
occurrence number for repeats). The element an action touched is read from the action: the
AndroidWorld `"index": N`, the WebArena `[id]`, or the pyautogui point hit-tested against the
screen before the action (the smallest element whose box holds it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

_BRACKET = re.compile(r"^\s*\[(\w+)\]\s")
_BBOX = re.compile(r"bbox=\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\)")
_TABLE_BOX = re.compile(r"\((-?\d+), (-?\d+)\)\t\((\d+), (\d+)\)\s*$")
_ANDROID_INDEX = re.compile(r'"index"\s*:\s*(\d+)')
_WEB_ID = re.compile(r"\[(\d+)\]")
_POINT = re.compile(r"pyautogui\.\w+\(\s*(?:x\s*=\s*)?(-?\d+)\s*,\s*(?:y\s*=\s*)?(-?\d+)")
TABLE_HEADER = "tag\tname"


@dataclass(frozen=True)
class Element:
    """One element: its key, its whole line (what must match), its box if the layout has one."""

    key: str
    line: str
    box: tuple[int, int, int, int] | None = None

    def contains(self, x: int, y: int) -> bool:
        return self.box is not None and (self.box[0] <= x <= self.box[2]
                                         and self.box[1] <= y <= self.box[3])


@dataclass(frozen=True)
class Screen:
    """The elements of an observation (by key, in order) and how many lines did not parse."""

    elements: dict[str, Element]
    other_lines: int

    @property
    def well_formed_share(self) -> float:
        """Share of the non-empty lines that are elements (1.0 for an empty screen)."""
        total = len(self.elements) + self.other_lines
        return len(self.elements) / total if total else 1.0


def _table_element(line: str, seen: dict[str, int]) -> Element | None:
    fields = line.split("\t")
    if len(fields) < 3:
        return None
    name = f"{fields[0]}|{fields[1]}"
    seen[name] = seen.get(name, 0) + 1
    box = None
    if match := _TABLE_BOX.search(line):
        x, y, w, h = (int(g) for g in match.groups())
        box = (x, y, x + w, y + h)
    return Element(f"{name}#{seen[name]}", line.strip(), box)


@lru_cache(maxsize=1024)
def parse_screen(text: str) -> Screen:
    """The elements of a GUI observation (see the module docstring for the layouts)."""
    elements: dict[str, Element] = {}
    other = 0
    seen: dict[str, int] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(TABLE_HEADER) or line.startswith("Tab "):
            continue  # blank lines, table header, browser tab bar: frame, not elements
        if match := _BRACKET.match(raw):
            bbox = _BBOX.search(line)
            box = tuple(int(g) for g in bbox.groups()) if bbox else None
            elements.setdefault(match.group(1), Element(match.group(1), line, box))
        elif "\t" in raw and (element := _table_element(raw, seen)) is not None:
            elements[element.key] = element
        else:
            other += 1
    return Screen(elements, other)


def touched_key(action: str, before: Screen) -> str | None:
    """Key of the element the action touched, when the action names one."""
    stripped = action.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("index"), int):
            return str(value["index"])
    if match := _ANDROID_INDEX.search(action):
        return match.group(1)
    if match := _POINT.search(action):
        x, y = int(match.group(1)), int(match.group(2))
        hits = [e for e in before.elements.values() if e.contains(x, y)]
        if hits:
            smallest = min(hits, key=lambda e: (e.box[2] - e.box[0]) * (e.box[3] - e.box[1]))
            return smallest.key
        return None
    if match := _WEB_ID.search(action):
        return match.group(1)
    return None


def changed_lines(before: Screen, after: Screen) -> set[str]:
    """Element lines that appeared or disappeared between two screens (the action's effect)."""
    old = {e.line for e in before.elements.values()}
    new = {e.line for e in after.elements.values()}
    return old ^ new
