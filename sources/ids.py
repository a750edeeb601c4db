"""Content-hash IDs: the same input gives the same ID on every run and every machine."""

from __future__ import annotations

import hashlib
import json

from sources.schema import Trajectory

# json.dumps(value, ensure_ascii=False), with the encoder built once, not per call
_ENCODER = json.JSONEncoder(ensure_ascii=False)
ID_HEX_CHARS = 16  # 64 bits: collision odds stay negligible well past 10^8 trajectories


def stable_hash(*parts: str) -> str:
    """SHA-256 of the parts, each length-prefixed so ("ab", "c") != ("a", "bc")."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8", "surrogatepass")
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
    turn_parts = [
        _ENCODER.encode([t.action, t.observation, t.action_kind, t.tool_name])
        for t in trajectory.turns
    ]
    return stable_hash(trajectory.task, *turn_parts)


def trajectory_id(source: str, source_path: str, position: str, content_hash: str) -> str:
    """ID of one trajectory: its content plus where it came from, so copies stay distinct rows."""
    return stable_hash(source, source_path, position, content_hash)
