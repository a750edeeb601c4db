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
import polars as pl
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


def string_array(column: Any) -> pa.LargeStringArray:
    """A string column (a list, Arrow or polars) as one large_string Arrow array."""
    if isinstance(column, list):
        column = pa.array(column, pa.large_string())
    if isinstance(column, pl.Series):
        column = column.to_arrow()
    if isinstance(column, pa.ChunkedArray):  # (one chunk, the usual: no copy)
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if not pa.types.is_large_string(column.type):
        column = column.cast(pa.large_string())
    return column


def distinct_strings(column: Any) -> tuple[list[str], np.ndarray]:
    """A string column's distinct texts in order of first appearance (a null as "") and each
    row's position among them (int64), by Arrow's dictionary encoding."""
    codes = pc.dictionary_encode(pc.fill_null(string_array(column), ""))
    return codes.dictionary.to_pylist(), codes.indices.to_numpy().astype(np.int64)


def batch_actions(column: Any) -> BatchActions:
    """The BatchActions of a string column (a list, Arrow or polars)."""
    texts, index = distinct_strings(column)
    return BatchActions(texts, index, [call_arguments(text) for text in texts])
