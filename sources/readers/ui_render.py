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

from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

# (element key, label) for the boolean states worth showing; shown only when true.
STATE_FLAGS: tuple[tuple[str, str], ...] = (
    ("is_clickable", "clickable"),
    ("is_editable", "editable"),
    ("is_checked", "checked"),
    ("is_selected", "selected"),
    ("is_focused", "focused"),
    ("is_scrollable", "scrollable"),
)


def _first(element: Mapping[str, Any], *keys: str) -> Any:
    """The first of `keys` that the element has with a non-empty value."""
    for key in keys:
        value = element.get(key)
        if value not in (None, ""):
            return value
    return None


def _either(get: Callable[[str], Any], key: str, other: str) -> Any:
    """`_first(element, key, other)` given the element's `get` (the renderer's hot path)."""
    value = get(key)
    if value is None or value == "":
        value = get(other)
        if value == "":
            return None
    return value


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


def render_ui_element(index: int, element: Mapping[str, Any]) -> str:
    """One line: index, class, text, description, hint, resource id, true state flags, bounds."""
    if type(element) is not dict and not isinstance(element, Mapping):
        raise TypeError(f"ui element {index} must be an object, got {type(element).__name__}")
    # One pass of plain lookups, no helper calls: a screen has tens of elements and an
    # episode tens of screens, so this line is most of what ingesting Android costs.
    get = element.get
    cls = _either(get, "class_name", "class")
    parts = [f"[{index}]", str(cls or "element")]
    text = get("text")
    if text is not None and text != "":
        parts.append(_quote(text))
    else:
        text = None
    description = _either(get, "content_description", "content_desc")
    if description is not None:
        parts.append("desc=" + _quote(description))
    hint = get("hint_text")
    if hint is not None and hint != "" and hint != text:  # EditTexts repeat their hint as text
        parts.append("hint=" + _quote(hint))
    tooltip = get("tooltip")
    if tooltip is not None and tooltip != "":
        parts.append("tooltip=" + _quote(tooltip))
    resource = _either(get, "resource_name", "resource_id")
    if resource is not None:
        parts.append(f"id={resource}")
    flags = [label for key, label in STATE_FLAGS if get(key) is True]
    if get("is_enabled") is False:  # elements are enabled by default; flag the exception
        flags.append("disabled")
    if get("is_visible") is False:
        flags.append("hidden")
    if flags:
        parts.append("(" + ", ".join(flags) + ")")
    bounds = format_bbox(_either(get, "bbox_pixels", "bbox"))
    if bounds is not None:
        parts.append("bbox=" + bounds)
    return " ".join(parts)


def render_ui_elements(elements: Sequence[Mapping[str, Any]]) -> str:
    """The whole screen: one `render_ui_element` line per element, in source order."""
    if not isinstance(elements, Sequence) or isinstance(elements, str | bytes):
        raise TypeError(f"ui elements must be a list, got {type(elements).__name__}")
    return "\n".join(render_ui_element(index, element) for index, element in enumerate(elements))
