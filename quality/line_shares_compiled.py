"""line_shares of a batch by the compiled loop (quality/line_shares_kernel.py): the Arrow
columns' buffers as they are, the distinct actions (Arrow's dictionary encoding) and their
values in one more buffer. The same values as quality/line_shares.py's definition
(tests/test_line_shares.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from quality.batch_actions import distinct_strings, string_array
from quality.line_shares import LINE_MAX_CHARS, line_shares
from quality.line_shares_kernel import line_share_rows
from quality.utf8_lines import byte_classes, code_point_flags


def string_spans(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes, (2, rows) [start, end) of each row) of a string column (a null is an
    empty string), the bytes without a copy where Arrow allows."""
    column = string_array(column)
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
    distinct, index = distinct_strings(actions)
    return encoded_line_shares(distinct, index, [values_of[action] for action in distinct],
                               observations, lined, turn)


def encoded_line_shares(distinct: list[str], index: np.ndarray, values: list[list[str]],
                        observations: Any, lined: Any, turn: np.ndarray
                        ) -> tuple[pa.Array, pa.Array, pa.Array]:
    """compiled_line_shares of actions already encoded (as batch_actions has them): the
    `distinct` texts, each row's position among them (`index`, int64) and each distinct
    text's `values`."""
    if not all(all(value) for value in values):
        # (an empty value holds at every position: never from action_values, so the
        # definition answers, on Python strings)
        rows = index.tolist()
        shares = line_shares([distinct[k] for k in rows], [values[k] for k in rows],
                             string_array(observations).to_pylist(),
                             string_array(lined).to_pylist(), turn)
        return tuple(pa.array(share, pa.float64()) for share in shares)
    flat = [value for action_values in values for value in action_values]
    text, spans = string_spans(pa.array(distinct + flat, pa.large_string()))
    observation, observed = string_spans(observations)
    masked_text, masked = string_spans(lined)
    shares, valid = line_share_rows(
        observation, observed, masked_text, masked, np.asarray(turn, np.int64),
        index, text,
        np.ascontiguousarray(spans[:, :len(distinct)]),
        np.ascontiguousarray(spans[:, len(distinct):]),
        np.cumsum([0] + [len(action_values) for action_values in values], dtype=np.int64),
        code_point_flags(), byte_classes(), LINE_MAX_CHARS)
    return tuple(pa.array(shares[k], pa.float64(), mask=~valid[k]) for k in range(3))
