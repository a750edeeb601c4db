"""How many of a call's fields come back in its JSON reply: a created or updated object that
mirrors what the agent sent ("a created object returned as JSON that mirrors the fields the
agent sent" is echo, ../shared/notes/turn-categories.md).

The action's JSON arguments (`tool({...})`, or a bare JSON object) and the observation, when it
is a JSON object, are both flattened to (key, value) leaves: keys compared without case and
punctuation (`spreadsheet_id` matches `spreadsheetId`), values as JSON (a list of scalars as one
value). `fields_sent` counts the action's leaves, `fields_mirrored` those that the reply holds
under the same key with the same value, at any depth.

Why pairs and not values: a read call sends keys that come back under other names
(`get_product({"productId": 27})` -> `{"id": 27, ...}`, a ticker and a `date` -> a
`requested_date`), while a create or update call's content comes back under the name it was
sent with (`name`, `course_code`, `user_id`, `role`, `enrollment_state`).

`write_call` says whether the tool's name holds a verb that writes (create, add, update, send,
...: WRITE_VERBS), as any tool names its operation: a write whose every field comes back is a
created object mirroring the call even when it sent a single field
(`create_spreadsheet({"title": ...})` -> `{"spreadsheetId": ..., "title": ..., ...}`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa

from quality.batch_actions import BatchActions, call_arguments, distinct_strings

MAX_REPLY_CHARS = 100_000  # longer observations are pages or listings, not a created object
_KEY_NOISE = re.compile(r"[^a-z0-9]")
WRITE_VERBS = frozenset(
    "create add insert update set put patch post new write save upload submit send rename move"
    " copy delete remove edit modify append".split())
_CAMEL = re.compile(r"([a-z])([A-Z])")
_NAME_WORD = re.compile(r"[a-z]+")

MIRRORED_COLUMN_DOCS: dict[str, str] = {
    "fields_sent": "(key, value) leaves of the action's JSON arguments (0: not a JSON call)",
    "fields_mirrored": "of those, how many the observation (a JSON object) holds under the same "
                       "key with the same value (a created object mirroring the call)",
    "write_call": "the tool's name holds a writing verb (create, add, update, send, ...)",
}


@lru_cache(maxsize=65536)
def _normal_key(key: str) -> str:
    """A key without case and punctuation (keys repeat: cached)."""
    return _KEY_NOISE.sub("", key.lower())


def field_pairs(value: Any, key: str | None = None,
                keys: Container[str] | None = None) -> set[tuple[str, str]]:
    """(normalised key, JSON value) of every keyed leaf of a JSON document (json.loads'
    types); a list of scalars is one leaf, null and empty strings are none (defaults, not
    something sent). With `keys`, only the leaves whose normalised key is in it (the others'
    values are not even written out)."""
    found: set[tuple[str, str]] = set()
    _add_pairs(value, key, keys, found)
    return found


def _add_pairs(value: Any, key: str | None, keys: Container[str] | None,
               found: set[tuple[str, str]]) -> None:
    """field_pairs' walk, into one set (a recursion of plain calls: nested generators cost a
    resumption per level for every leaf; a dict's scalar items taken in its loop)."""
    kind = type(value)
    if kind is dict:
        for name, item in value.items():
            if type(item) is dict or type(item) is list:
                _add_pairs(item, name, keys, found)
            elif item is not None and item != "":
                normal = _normal_key(name)
                if keys is None or normal in keys:
                    found.add((normal, item.strip() if type(item) is str else _scalar_json(item)))
    elif kind is list:
        if key is not None and value and not any(
                type(v) is dict or type(v) is list for v in value):
            normal = _normal_key(key)
            if keys is None or normal in keys:
                found.add((normal, json.dumps(value, sort_keys=True)))
        else:
            for item in value:
                _add_pairs(item, key, keys, found)
    elif key is not None and value is not None and value != "":
        normal = _normal_key(key)
        if keys is None or normal in keys:
            found.add((normal, value.strip() if kind is str else _scalar_json(value)))


def _scalar_json(value: Any) -> str:
    """json.dumps of a scalar, the JSON types' own text written without the encoder's call
    (an int's and a finite float's repr, true / false)."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float and value - value == 0:  # (NaN and the infinities are json.dumps' own)
        return float.__repr__(value)
    return json.dumps(value)


def leaves_and_pairs(arguments: Any) -> tuple[list[str], set[tuple[str, str]]]:
    """An action's call_arguments (a JSON object or list, json.loads' types) walked once:
    every string in it, in order (nested.strings_in: action_values' leaves), and its
    sent_pairs."""
    strings: list[str] = []
    pairs: set[tuple[str, str]] = set()
    _add_leaves(arguments, None, strings, pairs)
    return strings, pairs if isinstance(arguments, dict) else set()


def _add_leaves(value: Any, key: str | None, strings: list[str],
                pairs: set[tuple[str, str]]) -> None:
    """leaves_and_pairs' walk: _add_pairs' (without `keys`) and strings_in's in one."""
    kind = type(value)
    if kind is str:
        strings.append(value)
        if key is not None and value != "":
            pairs.add((_normal_key(key), value.strip()))
    elif kind is dict:
        for name, item in value.items():
            _add_leaves(item, name, strings, pairs)
    elif kind is list:
        if key is not None and value and not any(
                type(v) is dict or type(v) is list for v in value):
            pairs.add((_normal_key(key), json.dumps(value, sort_keys=True)))
            strings.extend(item for item in value if type(item) is str)
        else:
            for item in value:
                _add_leaves(item, key, strings, pairs)
    elif key is not None and value is not None:
        pairs.add((_normal_key(key), _scalar_json(value)))


_UNPARSED = object()
# The opening of a JSON text that starts with a bracket, up to its first token: a reply that
# opens otherwise ("[FILE] a.md", "{'rows': 1}") is not JSON, told without json's exception.
_JSON_OPENING = re.compile(r'(?:\[[ \t\n\r]*)*(?:\{[ \t\n\r]*["}]|[\]"\-0-9tfnNI])')
_DECODER = json.JSONDecoder()  # (json.loads' own, with its defaults)


def _reply_json(text: str) -> Any:
    """json.loads of a stripped text that opens with a bracket, None where it raises: its
    opening tested first, a document followed by more text (a third of the batch's
    bracketed replies: a JSON head above a listing) told by where the parse ended, not by
    json's "Extra data" exception (an exception costs more than the parse)."""
    if _JSON_OPENING.match(text) is None:
        return None  # (json would stop at this opening: "Expecting value" or a property name)
    try:
        reply, end = _DECODER.raw_decode(text)
    except ValueError:
        return None
    # (json.loads skips JSON whitespace after the document; the stripped text ends without any)
    return reply if end == len(text) else None


def _may_be_json(observation: str | None) -> bool:
    """Whether the observation can be a JSON reply: it opens with a bracket or with
    whitespace (tested before the copy strip makes: most replies are not JSON)."""
    first = (observation or "")[:1]
    return first in ("{", "[") or first.isspace()


def sent_pairs(arguments: Any) -> set[tuple[str, str]]:
    """The field_pairs of an action's `call_arguments` (none unless they are a JSON object)."""
    return field_pairs(arguments) if isinstance(arguments, dict) else set()


def mirrored_fields(action: str, observation: str, arguments: Any = _UNPARSED,
                    sent: set[tuple[str, str]] | None = None) -> tuple[int, int]:
    """(fields_sent, fields_mirrored) of one turn; (0, 0) unless the action has JSON arguments
    with keys and the observation is a JSON object (or a list of exactly one). `arguments`:
    the action's `call_arguments`, `sent`: their sent_pairs, when the caller has them."""
    if not _may_be_json(observation):
        return 0, 0
    text = (observation or "").strip()
    if text[:1] not in ("{", "[") or len(text) > MAX_REPLY_CHARS:
        return 0, 0  # (tested first: most replies are not JSON, and then nothing is sent)
    if sent is None:
        if arguments is _UNPARSED:
            arguments = call_arguments(action or "")
        sent = sent_pairs(arguments)
    if not sent:
        return 0, 0
    if (reply := _reply_json(text)) is None:
        return 0, 0
    if isinstance(reply, list) and len(reply) == 1:
        reply = reply[0]  # a reply that wraps the one object it made in a list
    if not isinstance(reply, dict):
        return 0, 0
    wanted = {key for key, _ in sent}  # a reply's leaf under another key cannot match
    return len(sent), len(sent & field_pairs(reply, keys=wanted))


def write_call(tool_name: str | None) -> bool:
    """Whether a tool's name (`sheets-create_spreadsheet`, `createIssue`) holds a WRITE_VERBS
    word."""
    words = _NAME_WORD.findall(_CAMEL.sub(r"\1_\2", tool_name or "").lower())
    return any(word in WRITE_VERBS for word in words)


def mirrored_columns(actions: BatchActions, observations: list[str | None],
                     tool_names: list[str | None] | pa.Array | pa.ChunkedArray,
                     sent: list[set[tuple[str, str]] | None] | None = None
                     ) -> dict[str, pa.Array]:
    """The MIRRORED_COLUMN_DOCS columns, in row order (`actions`: the batch's batch_actions;
    `sent`: each distinct action's sent_pairs, when the caller has them)."""
    sent_column = np.zeros(len(observations), np.int32)
    mirrored = np.zeros(len(observations), np.int32)
    # Only the rows of an action whose arguments are a JSON object can send a field, and only
    # where the reply may be JSON: each distinct action's pairs found once (a third of the
    # JSON replies' rows have a distinct one), each distinct (action, reply) read once (a
    # sixth repeat).
    objects = np.array([isinstance(a, dict) for a in actions.arguments], bool)
    rows = np.flatnonzero(objects[actions.index])
    sent_of: dict[int, set[tuple[str, str]]] = {} if sent is None else dict(enumerate(sent))
    read: dict[tuple[int, str], tuple[int, int]] = {}
    for row, action in zip(rows.tolist(), actions.index[rows].tolist(), strict=True):
        observation = observations[row]
        if not _may_be_json(observation):
            continue
        if (pairs := sent_of.get(action)) is None:
            pairs = sent_of[action] = sent_pairs(actions.arguments[action])
        if not pairs:
            continue
        if (found := read.get((action, observation))) is None:
            found = read[action, observation] = mirrored_fields(
                actions.texts[action], observation, actions.arguments[action], pairs)
        sent_column[row], mirrored[row] = found
    return {"fields_sent": pa.array(sent_column), "fields_mirrored": pa.array(mirrored),
            "write_call": _write_calls(tool_names)}


def _write_calls(tool_names: list[str | None] | pa.Array | pa.ChunkedArray) -> pa.Array:
    """write_call of each row's tool name (a null as ""), each distinct name read once: a batch
    has a few dozen."""
    names, index = distinct_strings(tool_names)
    writes = np.array([write_call(name) for name in names], bool)
    return pa.array(writes[index], pa.bool_())
