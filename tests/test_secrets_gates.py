"""The gates (quality.secrets.GATES, run by Rust's regex in polars) never hide a finding: a text
that one of Python's patterns finds something in passes that pattern's gate, however its
classes differ between the two engines."""

from __future__ import annotations

import random
import re
import sys

import polars as pl

from quality.secrets import ALL_KINDS, PATTERNS, find_sensitive, gated_kinds
from tests.planted_secrets import terminal_session

# Where the engines could part: the characters each \s takes, non-ASCII letters (Unicode case
# folding: `ſ` is an `s`, `K` a `k`), and the characters the e-mail and URL patterns are made of.
PIECES = ("a", "Z", "k", "0", "7", ".", "-", "_", "%", "+", "@", ":", "/", "?", "#", "[", "]",
          "'", '"', "`", "<", ">", "\\", " ", "\t", "\n", "\x1c", "\x1f", "\x85", "\xa0",
          "\u2028", "\u3000", "é", "ſ", "\u212a", "://", "@db.x", "pass", "user:", "mail.com")


def test_python_whitespace_holds_every_character_rust_whitespace_does() -> None:
    """A gate's `[^\\s...]` may then let through more (in Rust) but never less than the
    pattern's (in Python)."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    rust = pl.Series(chars).str.contains(r"^\s$").to_list()
    rust_only = [c for c, yes in zip(chars, rust, strict=True)
                 if yes and not re.fullmatch(r"\s", c)]
    assert sum(rust) > 20
    assert rust_only == []


def _texts() -> list[str]:
    """The planted session line by line and whole, and random strings of the pieces above."""
    rng = random.Random(17)
    session, _ = terminal_session()
    texts = [session, *session.splitlines()]
    texts += [f"{rng.choice(PIECES)}{line}{rng.choice(PIECES)}" for line in session.splitlines()]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(3, 24)))
              for _ in range(20_000)]
    return texts


def test_a_text_a_pattern_finds_something_in_passes_its_gate() -> None:
    texts = _texts()
    gates = gated_kinds(texts)
    missed = [(kind, text) for text, kinds in zip(texts, gates, strict=True)
              for kind, patterns in PATTERNS.items()
              if kind not in kinds and any(p.search(text) for p in patterns)]
    assert missed == []
    found = {kind for kinds in gates for kind in kinds}
    assert {"email", "password_in_url"} <= found  # (the fuzz does reach the tight gates)


def test_findings_are_those_of_every_kind_tried_without_gates() -> None:
    texts = _texts()
    for text, kinds in zip(texts, gated_kinds(texts), strict=True):
        assert find_sensitive(text, kinds) == find_sensitive(text, ALL_KINDS), text
