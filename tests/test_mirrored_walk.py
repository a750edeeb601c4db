"""mirrored_fields' one walk of an action's arguments (leaves_and_pairs) and its scalar JSON
text give what the plain definitions give: nested.strings_in, sent_pairs, json.dumps."""

from __future__ import annotations

import json

from quality.mirrored_fields import (
    _reply_json,
    _scalar_json,
    field_pairs,
    leaves_and_pairs,
    sent_pairs,
)
from quality.nested import strings_in

DOCUMENTS = [
    '{"path": "/w/a.md", "content": " x ", "n": 3, "f": 1.5, "ok": true, "no": false}',
    '{"a": {"b": [1, "two", 3.0], "c": [{"d": "e"}, [4, "five"]], "e": null, "g": ""}}',
    '{"big": 1e400, "small": -1e400, "nan": NaN, "inf": Infinity, "z": -0.0, "i": -12}',
    '[{"k": "v"}, "top", 7, ["x", {"y": "z"}]]', '{"l": [], "m": {}, "s": "  ", "u": "é"}',
    '{"Spreadsheet_ID": "abc", "spreadsheetId": ["abc"], "x": [null, true, 2]}',
]


def test_leaves_and_pairs_are_strings_in_and_sent_pairs() -> None:
    for text in DOCUMENTS:
        value = json.loads(text)
        leaves, pairs = leaves_and_pairs(value)
        assert leaves == list(strings_in(value))
        assert pairs == sent_pairs(value)
        if isinstance(value, dict):
            assert pairs == field_pairs(value)


def test_scalar_json_is_json_dumps() -> None:
    for value in (0, -7, 10**30, True, False, 1.5, -0.0, 1e300, 1e-300, float("nan"),
                  float("inf"), float("-inf"), 0.1 + 0.2, None, "a\"b"):
        assert _scalar_json(value) == json.dumps(value)


def test_field_pairs_with_keys_are_those_of_the_keys() -> None:
    for text in DOCUMENTS:
        value = json.loads(text)
        every = field_pairs(value)
        for keys in ({"path", "n", "ok"}, {"b", "d", "z", "nan"}, {"spreadsheetid", "x"}, set()):
            assert field_pairs(value, keys=keys) == {pair for pair in every if pair[0] in keys}


def test_reply_json_is_json_loads_or_none() -> None:
    texts = [*DOCUMENTS, "[FILE] a.md", "{'rows': 1}", "[1] RootWebArea", '{"a": 1} more',
             '{"a": 1}\n{"b": 2}', "[ ]", "[\n {\"a\": [-1, NaN, Infinity, -Infinity]}]",
             '{ "a" : tru }', "[]]", "{}", "[[[", "[\t\r\n\"x\"]", "[ nul", '{"a": "\\u0041"}',
             "[.5]", "[+1]", "{\u00a0\"a\": 1}", "[\u00a01]", "[1]\u00a0"]
    for text in texts:
        text = text.strip()
        try:
            expected = json.loads(text)
        except ValueError:
            expected = None
        assert _reply_json(text) == expected or (expected is None and _reply_json(text) is None)
