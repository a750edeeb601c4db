"""line_shares (quality/line_shares.py, its plain-Python definition) as one compiled loop
over UTF-8 bytes: no Python string per line.

A batch's observations and masked texts come as Arrow string buffers, the distinct actions'
lines and values as one more (quality/line_shares_compiled.py). The row's keys, its and the
previous row's element lines, the trajectory's seen keys and the actions' lines are exact
sets of byte spans (quality/line_sets.py); a row's sets use a part of their slot tables
sized to its text, so a short text's probes stay in cache. Echo lines and values are looked
for with str.find's own algorithm, line by line where they cannot span two lines (in the
masked text in place, in the lines where a match can still change the answer); only when a
value holds a line break are the row's keys joined by "\\n" in a scratch buffer, as the
definition joins them (sorted by bytes, which is str's order), and that value looked for
there.
"""

from __future__ import annotations

import numba
import numpy as np

from quality.kernel_cache import cached_njit
from quality.line_sets import (
    ELEMENTS,
    KEYS,
    add_items,
    find_items,
    find_said,
    grown,
    read_lines,
    said_lines,
    said_slots,
)
from quality.utf8_lines import ALNUM, at, char_start, code_points, decode, find, needle_skips


@cached_njit
def _sort_keys(lined: np.ndarray, keys: np.ndarray, order: np.ndarray, spare: np.ndarray,
               count: int) -> None:
    """order[:count] = the keys' numbers in their bytes' order (sorted(): bottom-up merges)."""
    for k in range(count):
        order[k] = k
    width = 1
    while width < count:
        for left in range(0, count, 2 * width):
            mid, right = min(left + width, count), min(left + 2 * width, count)
            a, b = left, mid
            for out in range(left, right):
                take_b = a >= mid
                if not take_b and b < right:  # keys[b] < keys[a]? (bytes, then length)
                    sa, sb = keys[0, order[a]], keys[0, order[b]]
                    la, lb = keys[1, order[a]] - sa, keys[1, order[b]] - sb
                    k = 0
                    while k < la and k < lb and at(lined, sa + k) == at(lined, sb + k):
                        k += 1
                    take_b = lined[sb + k] < lined[sa + k] if k < la and k < lb else lb < la
                spare[out] = order[b] if take_b else order[a]
                if take_b:
                    b += 1
                else:
                    a += 1
        order[:count] = spare[:count]
        width *= 2


@cached_njit
def _join(lined: np.ndarray, keys: np.ndarray, order: np.ndarray, count: int,
          joined: np.ndarray, bounds: np.ndarray) -> tuple[int, bool]:
    """"\\n".join of the keys in `order` into joined, each line's [start, end) into bounds;
    returns (the joined length, whether it is all ASCII)."""
    pos, high = 0, 0
    for line in range(count):
        start, end = keys[0, order[line]], keys[1, order[line]]
        if line:
            joined[pos] = 10
            pos += 1
        bounds[0, line] = pos
        for k in range(start, end):
            byte = at(lined, k)
            joined[np.uint64(pos + k - start)] = byte
            high |= byte
        pos += end - start
        bounds[1, line] = pos
    return pos, high < 0x80


@numba.njit(inline="always")
def _whole_word(hay: np.ndarray, low: int, high: int, found: int, size: int,
                flags: np.ndarray) -> bool:
    """No str.isalnum character right before or after the match of `size` bytes at `found`
    within hay[low:high] (outside it: a line break)."""
    after = found + size
    return not (
        found > low and flags[decode(hay, char_start(hay, found - 1))[0]] & ALNUM
        or after < high and flags[decode(hay, after)[0]] & ALNUM)


@cached_njit
def _mark_holders(hay: np.ndarray, length: int, ascii: bool, bounds: np.ndarray, count: int,
                  text: np.ndarray, needles: np.ndarray, blooms: np.ndarray,
                  gaps: np.ndarray, one_line: np.ndarray, first: int, last: int,
                  whole_word: bool, flags: np.ndarray, marked: np.ndarray,
                  lengths: np.ndarray) -> None:
    """marked |= the line holds one of needles[:, first:last] where a match counts
    (_lines_holding: every match, found with str.find's algorithm). Line i is
    hay[bounds[0, i]:bounds[1, i]]; `ascii`: all lines are. whole_word False: an echo line
    (said; said[2]: its code points), which counts in a line of at most twice its code points
    (lengths caches the lines' code points, -1 unknown); whole_word True: a value, as a whole
    word. An echo line or a value without "\\n" (one_line) can only match inside a line: it
    is looked for in each line not marked yet and short enough to count (its bytes bound its
    code points), within the line's bytes (so rows whose lines are not joined search the
    masked text in place); a value with "\\n" in hay[:length], the lines joined by "\\n",
    each match walked to its line."""
    line_bytes = 0
    for line in range(count):
        line_bytes = max(line_bytes, bounds[1, line] - bounds[0, line])
    for needle in range(first, last):
        start, end = needles[0, needle], needles[1, needle]
        size, points = end - start, 0 if whole_word else needles[2, needle]
        if not one_line[needle]:  # (a value: only whole_word needles span lines)
            found = find(hay, length, text, start, end, blooms[needle], gaps[needle], 0)
            line = 0
            while found >= 0:
                while bounds[1, line] < found:
                    line += 1
                if not marked[line]:
                    marked[line] = _whole_word(hay, 0, length, found, size, flags)
                found = find(hay, length, text, start, end, blooms[needle], gaps[needle],
                             found + 1)
            continue
        longest = line_bytes if whole_word else 2 * points if ascii else 8 * points
        for line in range(count):
            line_start, line_end = bounds[0, line], bounds[1, line]
            if marked[line] or not size <= line_end - line_start <= longest:
                continue
            found = find(hay, line_end, text, start, end, blooms[needle], gaps[needle],
                         line_start)
            while found >= 0 and not marked[line]:
                if whole_word:
                    marked[line] = _whole_word(hay, line_start, line_end, found, size, flags)
                else:  # (at least half the line's code points)
                    if lengths[line] < 0:
                        lengths[line] = code_points(hay, line_start, line_end,
                                                    line_end - line_start)
                    marked[line] = points * 2 >= lengths[line]
                found = find(hay, line_end, text, start, end, blooms[needle],
                             gaps[needle], found + 1)


@cached_njit
def _ascii(data: np.ndarray, start: int, end: int) -> bool:
    """data[start:end] is all ASCII (an OR over the bytes, which LLVM vectorises)."""
    high = np.uint8(0)
    for b in data[start:end]:
        high |= b
    return high < 0x80


@cached_njit
def _skips(text: np.ndarray, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """needle_skips of every span, and whether it holds no "\\n": (blooms, gaps, one_line)."""
    blooms = np.zeros(spans.shape[1], np.uint64)
    gaps = np.zeros(spans.shape[1], np.int64)
    one_line = np.ones(spans.shape[1], np.bool_)
    for item in range(spans.shape[1]):
        blooms[item], gaps[item] = needle_skips(text, spans[0, item], spans[1, item])
        for k in range(spans[0, item], spans[1, item]):
            one_line[item] &= at(text, k) != 10
    return blooms, gaps, one_line


@cached_njit
def _same(data: np.ndarray, start: int, end: int, other: int, other_end: int) -> bool:
    """data[start:end] == data[other:other_end]."""
    if end - start != other_end - other:
        return False
    for k in range(end - start):
        if at(data, start + k) != at(data, other + k):
            return False
    return True


@cached_njit
def _room(observed: np.ndarray, masked: np.ndarray, max_bytes: int) -> tuple[int, int]:
    """(lines, slots) a row's set needs at most: a line per byte of the longest text read
    line by line, and twice that, a power of two."""
    longest = 0
    for row in range(observed.shape[1]):
        if observed[1, row] - observed[0, row] <= max_bytes:
            longest = max(longest, observed[1, row] - observed[0, row],
                          masked[1, row] - masked[0, row])
    size = 2
    while size < 2 * (longest + 2):
        size *= 2
    return longest + 2, size


@numba.njit(inline="always")
def _table_mask(most: int) -> int:
    """The slot mask of a set for a text of `most` bytes (lines: at most one more): a power of
    two, at least twice the lines. (A row's sets use only that part of their slots: a small
    text's probes stay in cache.)"""
    size = 2
    while size < 2 * (most + 2):
        size *= 2
    return size - 1


@cached_njit
def line_share_rows(observation: np.ndarray, observed: np.ndarray, lined: np.ndarray,
                    masked: np.ndarray, turn: np.ndarray, row_action: np.ndarray,
                    text: np.ndarray, actions: np.ndarray, values: np.ndarray,
                    act_values: np.ndarray, flags: np.ndarray, classes: np.ndarray,
                    max_chars: int) -> tuple[np.ndarray, np.ndarray]:
    """(shares, valid), each (3, rows): action, seen and previous line shares per row as
    line_shares computes them (valid False: NULL). observed[:, row] / masked[:, row]: the
    row's observation in `observation` / masked text in `lined` ([start, end)); row_action:
    the row's action number; action a is text[actions[0, a]:actions[1, a]], its values
    values[:, act_values[a]:act_values[a + 1]] (in text too)."""
    rows = len(turn)
    shares, valid = np.zeros((3, rows)), np.zeros((3, rows), np.bool_)
    cap, size = _room(observed, masked, 4 * max_chars)  # (a code point is 4 bytes at most)
    keys, key_slots = np.zeros((4, cap), np.int64), np.zeros((2, size), np.int64)
    now, now_slots = np.zeros((4, cap), np.int64), np.zeros((2, size), np.int64)
    before, before_slots = np.zeros((4, cap), np.int64), np.zeros((2, size), np.int64)
    seen, seen_slots = np.zeros((4, 512), np.int64), np.zeros((2, 1024), np.int64)
    order, spare = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
    joined, bounds = np.zeros(2 * cap, np.uint8), np.zeros((2, cap), np.int64)
    restating, known = np.zeros(cap, np.bool_), np.zeros(cap, np.bool_)
    present = np.zeros(cap, np.bool_)
    lengths = np.zeros(cap, np.int64)
    said, act_said, act_echo = said_lines(text, actions, values, act_values, flags, classes)
    said_table = said_slots(said)
    act_multi = np.zeros(actions.shape[1], np.bool_)  # (a value holds "\n": keys sorted)
    for action in range(actions.shape[1]):
        for value in range(act_values[action], act_values[action + 1]):
            for k in range(values[0, value], values[1, value]):
                act_multi[action] |= text[k] == 10
    said_blooms, said_gaps, said_one_line = _skips(text, said)
    value_blooms, value_gaps, value_one_line = _skips(text, values)
    stamp, trajectory, seen_count, have_before = 0, 0, 0, False
    count, elements, last_start, last_end = 0, 0, 0, -1
    now_mask, before_mask = 1, 1
    for row in range(rows):
        if turn[row] == 0:
            trajectory, seen_count, have_before = trajectory + 1, 0, False
        start, end = observed[0, row], observed[1, row]
        if _same(observation, start, end, last_start, last_end):
            # (the observation before again: the same keys and elements, the elements all
            # the previous row's; the sets stay as they are)
            if have_before and elements:
                shares[2, row], valid[2, row] = 1.0, True
        else:
            stamp += 1
            short = end - start <= max_chars or (  # (bytes: code points and more)
                end - start <= 4 * max_chars
                and code_points(observation, start, end, max_chars) <= max_chars)
            count = 0 if not short else read_lines(
                lined, masked[0, row], masked[1, row], KEYS, flags, classes, keys,
                key_slots, stamp, _table_mask(masked[1, row] - masked[0, row]), 0)
            # (a text too long to read sizes no table: its empty set keeps the smallest
            # mask, which the next row probes it with; the text's own would pass the slots)
            now_mask = _table_mask(end - start) if count else 1
            elements = 0 if not count else read_lines(
                observation, start, end, ELEMENTS, flags, classes, now, now_slots, stamp,
                now_mask, 0)
            if have_before and elements:
                for item in range(elements):
                    order[item] = item
                known[:elements] = False
                find_items(observation, now, elements, order, before, before_slots,
                           stamp - 1, before_mask, known)
                shares[2, row] = known[:elements].sum() / elements
                valid[2, row] = True
            # (this row's elements are the next one's previous; the other set is reused)
            now, now_slots, before, before_slots = before, before_slots, now, now_slots
            now_mask, before_mask = before_mask, now_mask
            last_start, last_end = start, end
        have_before = True
        if not count:
            continue
        action = row_action[row]
        multi = act_multi[action]
        length, ascii = 0, True
        if multi:  # (the keys joined in their bytes' order; else searched in place)
            _sort_keys(lined, keys, order, spare, count)
            length, ascii = _join(lined, keys, order, count, joined, bounds)
        else:
            for line in range(count):
                order[line] = line
            if act_echo[action]:
                ascii = _ascii(lined, masked[0, row], masked[1, row])
        find_said(lined, keys, count, order, text, said, said_table, action, restating)
        lengths[:count] = -1
        first = act_said[action]
        if multi:
            _mark_holders(joined, length, ascii, bounds, count, text, said, said_blooms, said_gaps,
                          said_one_line, first, first + act_echo[action], False, flags,
                          restating, lengths)
        else:
            _mark_holders(lined, length, ascii, keys, count, text, said, said_blooms, said_gaps,
                          said_one_line, first, first + act_echo[action], False, flags,
                          restating, lengths)
        present[:count] = False
        find_items(lined, keys, count, order, seen, seen_slots, trajectory,
                   seen_slots.shape[1] - 1, present)
        known[:count] = restating[:count] | present[:count]
        first, last = act_values[action], act_values[action + 1]
        if multi:
            _mark_holders(joined, length, ascii, bounds, count, text, values, value_blooms,
                          value_gaps, value_one_line, first, last, True, flags, known, lengths)
        elif last > first:
            _mark_holders(lined, length, ascii, keys, count, text, values, value_blooms, value_gaps,
                          value_one_line, first, last, True, flags, known, lengths)
        shares[0, row] = restating[:count].sum() / count
        shares[1, row] = known[:count].sum() / count
        valid[0, row] = valid[1, row] = True
        while 2 * (seen_count + count) > seen_slots.shape[1]:
            seen, seen_slots = grown(seen, seen_slots, trajectory, seen_count)
        seen_count = add_items(keys, count, order, present, seen, seen_slots, trajectory,
                               seen_count)
    return shares, valid
