"""Render an Android UI element list as an indexed text hierarchy, one element a line.

The layout follows the indexed element lists of AgentWorldBench's Android prompts, e.g.::

    [2] android.widget.Button "Save" id=com.google.android.contacts:id/toolbar_button (clickable)
        bbox=(723,148,954,274)
    [7] android.widget.EditText "Adam" hint="First name" (clickable, editable)
        bbox=(137,858,933,1007)

(one line each, wrapped here).

The index is the element's position in the source list (the number AndroidWorld actions such
as `{"action_type": "click", "index": 7}` refer to), so the order is the source's order and the
rendering is deterministic. Strings are JSON-quoted so newlines and quotes stay on one line.
Both AndroidWorld key spellings are accepted (`content_description`/`content_desc`,
`class_name`/`class`, `bbox_pixels` as a dict or a 4-list, `bbox`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any

import msgspec

from sources import exact_json

# (element key, label) for the boolean states worth showing; shown only when true.
STATE_FLAGS: tuple[tuple[str, str], ...] = (
    ("is_clickable", "clickable"),
    ("is_editable", "editable"),
    ("is_checked", "checked"),
    ("is_selected", "selected"),
    ("is_focused", "focused"),
    ("is_scrollable", "scrollable"),
)


def _quote(value: Any) -> str:
    """JSON-quote a text field (keeps newlines and quotes on one line, readable Unicode):
    what json.dumps(text, ensure_ascii=False) returns, without building an encoder per call."""
    return encode_basestring(value if isinstance(value, str) else str(value))


def _number(value: Any) -> str:
    """A coordinate without a needless `.0`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def format_bbox(bbox: Any) -> str | None:
    """`(x1,y1,x2,y2)` from a {x_min, x_max, y_min, y_max} dict or a 4-item list, else None."""
    if type(bbox) is dict:
        corners = [bbox.get("x_min"), bbox.get("y_min"), bbox.get("x_max"), bbox.get("y_max")]
        if type(corners[0]) is int and type(corners[1]) is int and type(corners[2]) is int \
                and type(corners[3]) is int:  # the usual case, without the checks below
            return f"({corners[0]},{corners[1]},{corners[2]},{corners[3]})"
    elif isinstance(bbox, Mapping):
        corners = [bbox.get(key) for key in ("x_min", "y_min", "x_max", "y_max")]
    elif ((type(bbox) is list or isinstance(bbox, Sequence)) and not isinstance(bbox, str)
          and len(bbox) == 4):
        corners = list(bbox)
    else:
        return None
    if not all(isinstance(c, int | float) and not isinstance(c, bool) for c in corners):
        return None
    return "(" + ",".join(_number(c) for c in corners) + ")"


# The fields render_ui_element reads, fetched in one C call (AndroidWorld writes its element
# dataclass whole, so an element has all of them); the second spellings are looked up only
# when the first is empty.
_FIELD_NAMES = ("class_name", "text", "content_description", "hint_text", "tooltip",
                "resource_name", *(key for key, _ in STATE_FLAGS), "is_enabled", "is_visible",
                "bbox_pixels")
_FIELDS = itemgetter(*_FIELD_NAMES)
_CORNERS = itemgetter("x_min", "y_min", "x_max", "y_max")
_FLAG_LABELS = (*(label for _, label in STATE_FLAGS), "disabled", "hidden")
_FLAGS_TEXT: dict[tuple[bool, ...], str] = {}  # which flags show -> "(clickable, ...)" or ""


def _flags_text(shown: tuple[bool, ...]) -> str:
    """The flags part of an element's line, made once for each combination of flags."""
    text = _FLAGS_TEXT.get(shown)
    if text is None:
        labels = [label for label, show in zip(_FLAG_LABELS, shown, strict=True) if show]
        text = _FLAGS_TEXT[shown] = "(" + ", ".join(labels) + ")" if labels else ""
    return text


def render_ui_element(index: int, element: Mapping[str, Any]) -> str:
    """One line: index, class, text, description, hint, resource id, true state flags, bounds."""
    if type(element) is not dict and not isinstance(element, Mapping):
        raise TypeError(f"ui element {index} must be an object, got {type(element).__name__}")
    # A screen has tens of elements and an episode tens of screens, so this function is most
    # of what ingesting Android costs: plain lookups, few calls.
    try:
        values = _FIELDS(element)
    except KeyError:  # a field missing (another writer): read as None, as .get gives it
        values = tuple(element.get(key) for key in _FIELD_NAMES)
    (cls, text, description, hint, tooltip, resource, clickable, editable, checked, selected,
     focused, scrollable, enabled, visible, bbox) = values
    get = element.get
    if cls is None or cls == "":
        cls = get("class")
    parts = [f"[{index}]", str(cls or "element")]
    if text is not None and text != "":
        parts.append(_quote(text))
    else:
        text = None
    if description is None or description == "":
        description = get("content_desc")
    if description is not None and description != "":
        parts.append("desc=" + _quote(description))
    if hint is not None and hint != "" and hint != text:  # EditTexts repeat their hint as text
        parts.append("hint=" + _quote(hint))
    if tooltip is not None and tooltip != "":
        parts.append("tooltip=" + _quote(tooltip))
    if resource is None or resource == "":
        resource = get("resource_id")
    if resource is not None and resource != "":
        parts.append(f"id={resource}")
    # A state shows when true; enabled and visible (true by default) show when false.
    flags = _flags_text((clickable is True, editable is True, checked is True,
                         selected is True, focused is True, scrollable is True,
                         enabled is False, visible is False))
    if flags:
        parts.append(flags)
    if bbox is None or bbox == "":
        bbox = get("bbox")
    if type(bbox) is dict:  # AndroidWorld's corner dict, all ints: the usual case
        try:
            x_min, y_min, x_max, y_max = _CORNERS(bbox)
        except KeyError:
            x_min = None
        if type(x_min) is int and type(y_min) is int and type(x_max) is int \
                and type(y_max) is int:
            parts.append(f"bbox=({x_min},{y_min},{x_max},{y_max})")
            return " ".join(parts)
    bounds = format_bbox(bbox)
    if bounds is not None:
        parts.append("bbox=" + bounds)
    return " ".join(parts)


def render_ui_elements(elements: Sequence[Mapping[str, Any]]) -> str:
    """The whole screen: one `render_ui_element` line per element, in source order."""
    if not isinstance(elements, Sequence) or isinstance(elements, str | bytes):
        raise TypeError(f"ui elements must be a list, got {type(elements).__name__}")
    return "\n".join(render_ui_element(index, element) for index, element in enumerate(elements))


class ElementLines:
    """Screens whose elements are still JSON text (msgspec.Raw), rendered with a cache of lines
    by the element's exact bytes: an element repeats from screen to screen (the status bar, the
    list that did not move), and equal bytes decode to equal values, so a line made once serves
    them all. Decoding and rendering each element anew was two thirds of ingesting Android."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit  # lines kept (about 1 KB each with their key); then the cache restarts
        self._lines: dict[bytes, str] = {}

    def screen(self, elements: Sequence[msgspec.Raw]) -> str:
        """What `render_ui_elements` gives for the decoded elements (its TypeError included)."""
        lines = self._lines
        out = []
        for index, raw in enumerate(elements):
            key = bytes(raw)
            body = lines.get(key)
            if body is None:
                # exact_json: the value the whole document's decoding gives this element
                line = render_ui_element(index, exact_json.loads(key))
                body = line[len(f"[{index}] "):]
                if len(lines) >= self.limit:
                    lines.clear()
                lines[key] = body
                out.append(line)
            else:
                out.append(f"[{index}] {body}")
        return "\n".join(out)
