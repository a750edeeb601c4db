"""Sets of a text's lines for the compiled line_shares (quality/line_shares_kernel.py): hash
tables of byte spans, each line hashed (64-bit FNV-1a) and compared byte for byte on a hash
match, so membership is exact.

A set is `items` (int64, 4 x capacity: start, end, mark, hash of each line in insertion
order) and `slots` (int64, 2 x a power of two: stamp, item), a slot being live where its
stamp is the set's: a new stamp empties the set without touching it. `mark` 1 is a line
read as "[0]" + data[start:end] (an element number masked), 0 the span as it is; the two
never hold the same text (a span kept as it is never opens with "[digits]").
"""

from __future__ import annotations

import numba
import numpy as np

from quality.kernel_cache import cached_njit
from quality.line_shares import MIN_ECHO_LINE, MIN_VALUE_CHARS
from quality.utf8_lines import (
    ALNUM,
    BLANK,
    BREAK,
    CONTENT,
    DECIMAL,
    SPACE,
    WORD,
    at,
    char_start,
    decode,
)

FNV_SEED = np.int64(0xCBF29CE484222325 - (1 << 64))  # FNV-1a's offset basis (int64 bits)
FNV_PRIME = np.int64(0x100000001B3)
MASKED_SEED = np.int64(0xDC6EDA1A20E45119 - (1 << 64))  # a line masked to "[0]" + rest
KEYS, ELEMENTS, SAID = 0, 1, 2  # read_lines' modes
OWNER_MIX = np.int64(0x9E3779B97F4A7C15 - (1 << 64))  # spreads an action's number


@cached_njit
def _stripped(data: np.ndarray, start: int, end: int, flags: np.ndarray) -> tuple[int, int]:
    """The span without str.strip's whitespace (ASCII read here: \\t-\\r, \\x1c-\\x1f and space;
    a non-ASCII end character decoded)."""
    while start < end:
        b = data[start]
        if b < 0x80:
            if not (9 <= b <= 13 or 28 <= b <= 32):
                break
            start += 1
        else:
            point, size = decode(data, start)
            if not flags[point] & SPACE:
                break
            start += size
    while end > start:
        b = data[end - 1]
        if b < 0x80:
            if not (9 <= b <= 13 or 28 <= b <= 32):
                break
            end -= 1
        else:
            last = char_start(data, end - 1)
            if not flags[decode(data, last)[0]] & SPACE:
                break
            end = last
    return start, end


@cached_njit
def _element_head(data: np.ndarray, start: int, end: int, flags: np.ndarray
                  ) -> tuple[int, int]:
    """(mark, start) of a stripped line read as an element line: LINE_HEAD's stray markup
    ([^\\w\\[]*) skipped, then an element number ("[12]") masked (mark 1) if one follows."""
    pos = start
    while pos < end:
        b = data[pos]
        if b < 0x80:
            if b == 91 or b == 95 or 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122:
                break
            pos += 1
        else:
            point, size = decode(data, pos)
            if flags[point] & ALNUM:
                break
            pos += size
    if pos < end and data[pos] == 91:  # "[": digits (str.isdecimal, re's \d) and "]"?
        close = pos + 1
        while close < end:
            if 48 <= data[close] <= 57:
                close += 1
            elif data[close] >= 0x80 and flags[decode(data, close)[0]] & DECIMAL:
                close += decode(data, close)[1]
            else:
                break
        if pos + 1 < close < end and data[close] == 93:
            return 1, close + 1
    return 0, pos


@numba.njit(inline="always")
def _hash(data: np.ndarray, s: int, e: int, mark: int) -> int:
    """FNV-1a of data[s:e] over 8-byte little-endian words, then over the bytes left, from
    the seed of its mark."""
    h, k = MASKED_SEED if mark else FNV_SEED, s
    while k + 8 <= e:
        word = np.int64(0)
        for j in range(8):  # (unsigned reads: LLVM merges them into one load)
            word |= np.int64(at(data, k + j)) << (8 * j)
        h = (h ^ word) * FNV_PRIME
        k += 8
    while k < e:
        h = (h ^ np.int64(at(data, k))) * FNV_PRIME
        k += 1
    return h


@numba.njit(inline="always")
def _probe(data: np.ndarray, s: int, e: int, mark: int, h: int, items: np.ndarray,
           slots: np.ndarray, stamp: int, mask: int) -> int:
    """The slot of the set (items, slots[:, :mask + 1] at stamp; its lines in data) that holds
    the line (data[s:e], mark, hash h), else the empty slot where it would go: hash, mark and
    length compared, then the bytes."""
    slot = h & mask
    while slots[0, slot] == stamp:
        item = slots[1, slot]
        if (items[3, item] == h and items[2, item] == mark
                and items[1, item] - items[0, item] == e - s):
            other, k = items[0, item], 0
            while k < e - s and at(data, other + k) == at(data, s + k):
                k += 1
            if k == e - s:
                return slot
        slot = (slot + 1) & mask
    return slot


@cached_njit
def read_lines(data: np.ndarray, start: int, end: int, mode: int, flags: np.ndarray,
               classes: np.ndarray, items: np.ndarray, slots: np.ndarray, stamp: int,
               mask: int, count: int) -> int:
    """Add the distinct lines of data[start:end] to the set at `stamp` (`count` items in
    it); returns its new size.
    Lines as str.splitlines breaks them (\\n \\r \\v \\f \\x1c-\\x1e \\x85 \\u2028 \\u2029;
    \\r\\n leaves an empty line, which no set keeps), stripped, kept if they hold content
    (byte_classes; mode KEYS), read as element lines first (ELEMENTS: _element_lines), or
    kept if they have MIN_VALUE_CHARS code points (SAID: lines_of_action)."""
    line, pos = start, start
    while True:
        size = 0
        while pos < end:
            b = at(data, pos)
            if at(classes, b) & BREAK:
                if b < 0x80:
                    size = 1
                elif b == 0xC2:
                    size = 2 if pos + 1 < end and at(data, pos + 1) == 0x85 else 0
                elif pos + 2 < end and at(data, pos + 1) == 0x80 and (
                        at(data, pos + 2) == 0xA8 or at(data, pos + 2) == 0xA9):
                    size = 3
                if size:
                    break
            pos += 1
        s, e = line, pos
        while s < e and at(classes, at(data, s)) & BLANK:
            s += 1
        while e > s and at(classes, at(data, e - 1)) & BLANK:
            e -= 1
        if s < e and (at(data, s) >= 0x80 or at(data, e - 1) >= 0x80):  # (Unicode space?)
            s, e = _stripped(data, s, e, flags)
        mark = 0
        if mode == ELEMENTS:  # (ASCII heads here, any other by _element_head)
            head = s
            while (head < e and at(data, head) < 0x80 and at(data, head) != 91
                   and not at(classes, at(data, head)) & WORD):
                head += 1
            close = head + 1
            if head < e and at(data, head) == 91:
                while close < e and 48 <= at(data, close) <= 57:
                    close += 1
            if head < e and (at(data, head) >= 0x80 or at(data, head) == 91 and close < e
                             and at(data, close) >= 0x80):  # (another script's digit?)
                mark, s = _element_head(data, s, e, flags)
            elif (head < e and at(data, head) == 91 and head + 1 < close < e
                  and at(data, close) == 93):
                mark, s = 1, close + 1
            else:
                s = head
        kept = mark == 1
        if mode == SAID:
            points = 0
            for k in range(s, min(e, s + 4 * MIN_VALUE_CHARS)):
                points += at(data, k) & 0xC0 != 0x80
            kept = points >= MIN_VALUE_CHARS
        else:
            for k in range(s, e):
                if kept:
                    break
                kept = at(classes, at(data, k)) & CONTENT != 0
        if kept:
            h = _hash(data, s, e, mark)
            slot = _probe(data, s, e, mark, h, items, slots, stamp, mask)
            if slots[0, slot] != stamp:
                slots[0, slot], slots[1, slot] = stamp, count
                items[0, count], items[1, count], items[2, count] = s, e, mark
                items[3, count] = h
                count += 1
        if pos >= end:
            return count
        pos += size
        line = pos


@cached_njit
def find_items(data: np.ndarray, items: np.ndarray, count: int, order: np.ndarray,
               held: np.ndarray, held_slots: np.ndarray, stamp: int, mask: int,
               found: np.ndarray) -> None:
    """found[i] |= items[:, order[i]] is in the set (held, held_slots[:, :mask + 1] at stamp)
    of lines of the same data, for i < count."""
    for i in range(count):
        if found[i]:
            continue
        item = order[i]
        slot = _probe(data, items[0, item], items[1, item], items[2, item], items[3, item],
                      held, held_slots, stamp, mask)
        found[i] = held_slots[0, slot] == stamp


@cached_njit
def add_items(items: np.ndarray, count: int, order: np.ndarray, present: np.ndarray,
              held: np.ndarray, held_slots: np.ndarray, stamp: int, held_count: int) -> int:
    """Add items[:, order[i]] for i < count to the set (held, held_slots at stamp, with room
    for them) where not present[i] (find_items: the set lacks it); returns its new size."""
    mask = held_slots.shape[1] - 1
    for i in range(count):
        if present[i]:
            continue
        item = order[i]
        slot = items[3, item] & mask
        while held_slots[0, slot] == stamp:
            slot = (slot + 1) & mask
        held_slots[0, slot], held_slots[1, slot] = stamp, held_count
        held[0, held_count], held[1, held_count] = items[0, item], items[1, item]
        held[2, held_count], held[3, held_count] = items[2, item], items[3, item]
        held_count += 1
    return held_count


@cached_njit
def grown(held: np.ndarray, held_slots: np.ndarray, stamp: int, count: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """The set (its first `count` items) in twice the room."""
    size = 2 * held_slots.shape[1]
    items, slots = np.zeros((4, size // 2), np.int64), np.zeros((2, size), np.int64)
    items[:, :count] = held[:, :count]
    for item in range(count):
        slot = items[3, item] & (size - 1)
        while slots[0, slot] == stamp:
            slot = (slot + 1) & (size - 1)
        slots[0, slot], slots[1, slot] = stamp, item
    return items, slots


@cached_njit
def said_lines(text: np.ndarray, actions: np.ndarray, values: np.ndarray,
               act_values: np.ndarray, flags: np.ndarray, classes: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each action's lines (lines_of_action: of its text actions[:, a] and of its values
    values[:, act_values[a]:act_values[a + 1]]) as (said, act_said, act_echo): said[:, j] =
    start, end, code points, action, hash with the action mixed in; action a's lines are
    said[:, act_said[a]:act_said[a + 1]], the first act_echo[a] of them its echo lines
    (MIN_ECHO_LINE code points or more)."""
    longest, total = 0, 0  # (lines: one more than line breaks, per text)
    for action in range(actions.shape[1]):
        room = actions[1, action] - actions[0, action] + 1
        for value in range(act_values[action], act_values[action + 1]):
            room += values[1, value] - values[0, value] + 1
        longest = max(longest, room)
    for k in range(len(text)):
        total += classes[text[k]] & BREAK != 0
    total += actions.shape[1] + values.shape[1]
    size = 2
    while size < 2 * (longest + 2):
        size *= 2
    items, slots = np.zeros((4, longest + 2), np.int64), np.zeros((2, size), np.int64)
    said = np.zeros((5, total), np.int64)
    act_said = np.zeros(actions.shape[1] + 1, np.int64)
    act_echo = np.zeros(actions.shape[1], np.int64)
    out = 0
    for action in range(actions.shape[1]):
        count = read_lines(text, actions[0, action], actions[1, action], SAID, flags, classes,
                           items, slots, action + 1, size - 1, 0)
        for value in range(act_values[action], act_values[action + 1]):
            count = read_lines(text, values[0, value], values[1, value], SAID, flags,
                               classes, items, slots, action + 1, size - 1, count)
        for echo in (True, False):  # (echo lines first)
            for item in range(count):
                points = 0
                for k in range(items[0, item], items[1, item]):
                    points += text[k] & 0xC0 != 0x80
                if (points >= MIN_ECHO_LINE) == echo:
                    said[0, out], said[1, out] = items[0, item], items[1, item]
                    said[2, out], said[3, out] = points, action
                    said[4, out] = items[3, item] ^ ((action + 1) * OWNER_MIX)
                    act_echo[action] += echo
                    out += 1
        act_said[action + 1] = out
    return said[:, :out].copy(), act_said, act_echo


@cached_njit
def said_slots(said: np.ndarray) -> np.ndarray:
    """A table of the actions' lines (said_lines) by their hash: slots hold a line's number,
    or -1."""
    count = said.shape[1]
    size = 2
    while size < 2 * (count + 1):
        size *= 2
    slots = np.full(size, -1, np.int64)
    for line in range(count):
        slot = said[4, line] & (size - 1)
        while slots[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        slots[slot] = line
    return slots


@cached_njit
def find_said(lined: np.ndarray, keys: np.ndarray, count: int, order: np.ndarray,
              text: np.ndarray, said: np.ndarray, slots: np.ndarray, owner: int,
              found: np.ndarray) -> None:
    """found[i] = the key keys[:, order[i]] is a line of action `owner` (`key in said`)."""
    mask = len(slots) - 1
    mix = (owner + 1) * OWNER_MIX
    for i in range(count):
        key = order[i]
        s, e = keys[0, key], keys[1, key]
        h = keys[3, key] ^ mix
        found[i] = False
        slot = h & mask
        while slots[slot] >= 0:
            line = slots[slot]
            if (said[4, line] == h and said[3, line] == owner
                    and said[1, line] - said[0, line] == e - s):
                k = 0
                while k < e - s and at(text, said[0, line] + k) == at(lined, s + k):
                    k += 1
                if k == e - s:
                    found[i] = True
                    break
            slot = (slot + 1) & mask
