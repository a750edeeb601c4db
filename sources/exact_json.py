"""JSON decoded and encoded as the `json` module does it, at msgspec's speed.

Ingest decodes about 2.5 KB of JSON a turn (10 KB for an Android screen) and hashes every
turn's JSON text; with the `json` module that was about a third of ingest's CPU. msgspec gives
the same Python values as `json.loads` for every document both accept, which the tests check:
integers of any size stay exact ints (orjson, as fast on these files, reads those beyond 64
bits as floats, so it is not used), floats are correctly rounded as `float()` rounds them, a
repeated key keeps its first place and its last value, and invalid UTF-8 is refused where
Python's decoder refuses it. What msgspec refuses and `json` may accept (NaN and Infinity, a lone
surrogate escape, a number beyond the float range, nesting near the recursion limit) is handed
to `json`, so the value, or the error, is `json`'s. Nesting within a few levels of the
recursion limit is the one place where the two can part: there `json`'s own answer already
depends on how deep the caller's stack is.

Its encoder writes a string or None as `json.dumps(value, ensure_ascii=False)` does, in UTF-8
(tests: every character class, on random strings); a lone surrogate, which UTF-8 cannot carry,
makes it raise UnicodeEncodeError.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

_DECODER = msgspec.json.Decoder()
encode_text = msgspec.json.Encoder().encode  # a str or None -> its JSON text as UTF-8 bytes


def loads(data: bytes | str) -> Any:
    """`json.loads(data.decode("utf-8"))` for bytes, `json.loads(data)` for a str: the same
    value, or the same UnicodeDecodeError or JSONDecodeError."""
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):  # the last: a surrogate
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
