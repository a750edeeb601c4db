"""line_shares of a batch by the compiled loop (quality/line_shares_kernel.py): the Arrow
columns' buffers as they are, the distinct actions (Arrow's dictionary encoding) and their
values in one more buffer. The same values as quality/line_shares.py's definition
(tests/test_line_shares.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from quality.line_shares import LINE_MAX_CHARS, line_shares
from quality.line_shares_kernel import line_share_rows
from quality.utf8_lines import byte_classes, code_point_flags


def _array(column: Any) -> pa.Array:
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


def string_spans(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes, (2, rows) [start, end) of each row) of a string column (a null is an
    empty string), the bytes without a copy where Arrow allows."""
    column = _array(column)
    _, offsets, data = column.buffers()
    spans = np.frombuffer(offsets, np.int64)[column.offset:column.offset + len(column) + 1]
    spans = np.stack([spans[:-1], spans[1:]])
    if column.null_count:
        nulls = column.is_null().to_numpy(zero_copy_only=False)
        spans[1, nulls] = spans[0, nulls]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return data, spans


def compiled_line_shares(actions: Any, values_of: Mapping[str, list[str]],
                         observations: Any, lined: Any, turn: np.ndarray
                         ) -> tuple[pa.Array, pa.Array, pa.Array]:
    """line_shares as three float64 Arrow arrays, by the compiled loop: the same values as
    line_shares(actions, [values_of[a or ""] for a in actions], observations, lined, turn).
    The columns are lists, Arrow or polars; values_of: each action's values (action_values)
    by its text (a null action as "")."""
    codes = pc.dictionary_encode(pc.fill_null(_array(actions), ""))
    distinct = codes.dictionary.to_pylist()
    values = [values_of[action] for action in distinct]
    if not all(all(value) for value in values):
        # (an empty value holds at every position: never from action_values, so the
        # definition answers, on Python strings)
        rows = codes.indices.to_pylist()
        shares = line_shares([distinct[k] for k in rows], [values[k] for k in rows],
                             _array(observations).to_pylist(), _array(lined).to_pylist(),
                             turn)
        return tuple(pa.array(share, pa.float64()) for share in shares)
    flat = [value for action_values in values for value in action_values]
    text, spans = string_spans(pa.array(distinct + flat, pa.large_string()))
    observation, observed = string_spans(observations)
    masked_text, masked = string_spans(lined)
    shares, valid = line_share_rows(
        observation, observed, masked_text, masked, np.asarray(turn, np.int64),
        codes.indices.to_numpy().astype(np.int64), text,
        np.ascontiguousarray(spans[:, :len(distinct)]),
        np.ascontiguousarray(spans[:, len(distinct):]),
        np.cumsum([0] + [len(action_values) for action_values in values], dtype=np.int64),
        code_point_flags(), byte_classes(), LINE_MAX_CHARS)
    return tuple(pa.array(shares[k], pa.float64(), mask=~valid[k]) for k in range(3))
