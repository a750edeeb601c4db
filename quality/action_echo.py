"""`action_in_observation` for the rows whose action and observation are ASCII, compiled.

turn_features.sql asks whether the stripped action has 2 characters or more and appears in the
observation, case aside: `length(trim(action, ' \\t\\n\\r')) >= 2 AND
contains(lower(observation), lower(trim(action, ' \\t\\n\\r')))`. DuckDB's lower() copies every
observation whole to answer that (about 0.6 of the query's 5 CPU s per 148k turns). For a text
of ASCII characters only, lower() maps `A`-`Z` to `a`-`z` and nothing else, so a scan of the
bytes that compares them lowered on the fly gives the same answer without a copy; a row with a
non-ASCII byte (or a null) is left to the query (None here). The scan compares at most
`_WORK_PER_BYTE` bytes per observation byte (plus a constant); a row that would need more (a
long action of repeated characters in an observation of them, where a plain scan is quadratic)
is left to the query too, so the cost stays linear in the text.

    ascii_action_echoes(actions, observations) -> pa.BooleanArray  (None: not decided here)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from quality.kernel_cache import cached_njit
from quality.text_pool import non_ascii_rows, string_buffers

_WORK_PER_BYTE = 16  # byte comparisons allowed per observation byte before the query decides


def ascii_action_echoes(actions: pa.ChunkedArray | pa.Array,
                        observations: pa.ChunkedArray | pa.Array,
                        observation_other: np.ndarray | None = None) -> pa.BooleanArray:
    """Per row: whether the action, stripped of spaces, tabs and line ends at both ends, has
    2 characters or more and appears in the observation with `A`-`Z` read as `a`-`z`; None
    where either text is null or holds a non-ASCII byte (the query decides those rows).
    `observation_other`: the observations' non_ascii_rows where the caller has them."""
    action, observation = one_array(actions), one_array(observations)
    a_data, a_offsets = string_buffers(action)
    o_data, o_offsets = string_buffers(observation)
    found = np.empty(len(action), dtype=np.int8)
    if observation_other is None:
        observation_other = non_ascii_rows(o_data, o_offsets)
    other = non_ascii_rows(a_data, a_offsets) | observation_other
    _echoes(a_data, a_offsets, o_data, o_offsets, other, found)
    undecided = found < 0
    if action.null_count or observation.null_count:
        undecided |= (action.is_null().to_numpy(zero_copy_only=False)
                      | observation.is_null().to_numpy(zero_copy_only=False))
    return pa.array(found == 1, pa.bool_(), mask=undecided)


def one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The column as one array (a single chunk as it is: combine_chunks copies it)."""
    if isinstance(column, pa.ChunkedArray):
        return (column.combine_chunks() if column.num_chunks != 1 else column.chunk(0))
    return column


@cached_njit(inline="always")
def _lower(b: np.uint8) -> np.uint8:
    return b + np.uint8(32) * np.uint8(np.uint8(b - np.uint8(65)) < np.uint8(26))


@cached_njit(inline="always")
def _stripped(b: np.uint8) -> bool:
    """What trim(action, ' \\t\\n\\r') drops at either end."""
    return b == 0x20 or b == 0x09 or b == 0x0A or b == 0x0D


@cached_njit
def _echoes(a_data: np.ndarray, a_offsets: np.ndarray, o_data: np.ndarray,
            o_offsets: np.ndarray, other: np.ndarray, found: np.ndarray) -> None:
    """found[k]: 1 if row k's stripped action (2 bytes or more) is in its observation (ASCII
    case aside), 0 if not, -1 if either text has a byte over 0x7F (`other`) or the scan ran
    out of work (`_contains`)."""
    for k in range(len(found)):
        if other[k]:
            found[k] = -1
            continue
        action = a_data[a_offsets[k]:a_offsets[k + 1]]
        observation = o_data[o_offsets[k]:o_offsets[k + 1]]
        lo, hi = 0, len(action)
        while lo < hi and _stripped(action[lo]):
            lo += 1
        while hi > lo and _stripped(action[hi - 1]):
            hi -= 1
        # (an action of fewer than 2 characters echoes nothing: the query's length test)
        found[k] = _contains(observation, action[lo:hi]) if hi - lo >= 2 else 0


@cached_njit
def _contains(text: np.ndarray, needle: np.ndarray) -> int:
    """1 if `text` holds `needle` (ASCII case aside; the empty text is in every text), 0 if not,
    -1 once more than `_WORK_PER_BYTE` comparisons a byte of `text` were spent."""
    m = len(needle)
    if m == 0:
        return 1
    budget = _WORK_PER_BYTE * len(text) + 4096
    first = _lower(needle[0])
    # the first byte as either case (the same byte twice where it is no letter)
    other = first - np.uint8(32) if np.uint8(first - np.uint8(97)) < np.uint8(26) else first
    for i in range(len(text) - m + 1):
        b = text[i]
        if b != first and b != other:
            continue
        j = 1
        while j < m and _lower(text[i + j]) == _lower(needle[j]):
            j += 1
        if j == m:
            return 1
        budget -= j
        if budget < 0:
            return -1
    return 0
