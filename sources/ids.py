"""Content-hash IDs: the same input gives the same ID on every run and every machine."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from sources.exact_json import encode_text
from sources.schema import Trajectory, Turn

# json.dumps(value, ensure_ascii=False), with the encoder built once, not per call
_ENCODER = json.JSONEncoder(ensure_ascii=False)
ID_HEX_CHARS = 16  # 64 bits: collision odds stay negligible well past 10^8 trajectories


def stable_hash(*parts: str) -> str:
    """SHA-256 of the parts, each length-prefixed so ("ab", "c") != ("a", "bc")."""
    return _hash_encoded(part.encode("utf-8", "surrogatepass") for part in parts)


def _hash_encoded(parts: Iterable[bytes]) -> str:
    """stable_hash of parts already encoded (UTF-8, surrogates passed)."""
    digest = hashlib.sha256()
    for encoded in parts:
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()[:ID_HEX_CHARS]


def seeded_digest(*parts: object) -> bytes:
    """SHA-256 of the parts joined by ':' (a seed, a key, an index): every seeded draw's one
    hash -- the split's pool, SFT's validation share, prompt variants, target turns, sample ids."""
    return hashlib.sha256(":".join(map(str, parts)).encode()).digest()


def seeded_fraction(*parts: object) -> float:
    """A stable number in [0, 1): the first 8 bytes of seeded_digest(*parts), scaled."""
    return int.from_bytes(seeded_digest(*parts)[:8], "big") / 2**64


def trajectory_content_hash(trajectory: Trajectory) -> str:
    """Hash of what the trajectory says (task and turns), not of where it was found."""
    parts = [trajectory.task.encode("utf-8", "surrogatepass")]
    parts += map(_turn_json, trajectory.turns)
    return _hash_encoded(parts)


def _turn_json(turn: Turn) -> bytes:
    """json.dumps([action, observation, action_kind, tool_name], ensure_ascii=False) in UTF-8
    (surrogates passed). Texts and None are written by msgspec, whose text is json's for them
    (sources/exact_json.py) at a fraction of the CPU (the hash was an eighth of ingest's CPU);
    anything else, or a lone surrogate, by json."""
    fields = (turn.action, turn.observation, turn.action_kind, turn.tool_name)
    if all(type(field) is str or field is None for field in fields):
        try:
            return b"[" + b", ".join(map(encode_text, fields)) + b"]"
        except UnicodeEncodeError:
            pass
    return _ENCODER.encode(list(fields)).encode("utf-8", "surrogatepass")


def trajectory_id(source: str, source_path: str, position: str, content_hash: str) -> str:
    """ID of one trajectory: its content plus where it came from, so copies stay distinct rows."""
    return stable_hash(source, source_path, position, content_hash)
