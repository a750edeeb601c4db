"""A batch's distinct actions, each parsed once: the reply features read an action's arguments
per distinct text (a third of a batch's actions repeat an earlier one: the same command, the
same call), and per row only through an index into them.

Arrow's dictionary encoding finds them without a Python string per row (a null as "", as
every reader of the column takes it).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# `tool_name({...})`, the form the readers write tool calls in (reply_features.action_values).
CALL = re.compile(r"^\s*[\w.:/-]*\((.*)\)\s*$", re.DOTALL)


def call_arguments(action: str) -> Any:
    """The parsed JSON arguments of `tool({...})` or of a bare JSON document, else None."""
    call = CALL.match(action)
    text = (call.group(1) if call else action).strip()
    if text[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


class BatchActions(NamedTuple):
    """The distinct actions of a batch, in order of first appearance."""

    texts: list[str]  # each distinct action (a null as "")
    index: np.ndarray  # per row, its action's position in texts (int64)
    arguments: list[Any]  # each distinct action's call_arguments (None: not a JSON call)


def string_array(column: list[str | None] | pa.Array | pa.ChunkedArray) -> pa.Array:
    """A string column (a list, or Arrow) as one Arrow array."""
    if isinstance(column, list):
        return pa.array(column, pa.large_string())
    if isinstance(column, pa.ChunkedArray):  # (one chunk, the usual: no copy)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def batch_actions(column: list[str | None] | pa.Array | pa.ChunkedArray) -> BatchActions:
    """The BatchActions of a string column (a list, or Arrow)."""
    codes = pc.dictionary_encode(pc.fill_null(string_array(column), ""))
    texts = codes.dictionary.to_pylist()
    return BatchActions(texts, codes.indices.to_numpy().astype(np.int64),
                        [call_arguments(text) for text in texts])
