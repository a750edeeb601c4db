"""Shards: which shard of its domain a source file's rows go to.

The per-turn tables (what ingest writes, and the features, labels and scrubbed copies built from
them row for row) are partitioned by domain and shard: {data}/{table}/domain={d}/shard={s}/.
A source file (or run folder) goes to a shard by a seeded hash of its path relative to the
source's root, so the same file lands in the same shard on every run and every machine, and
adding files never moves old ones. The number of shards per domain is configuration; the
default, one, keeps the default data as simple as an unsharded layout (one file per domain).
"""

from __future__ import annotations

from dataclasses import dataclass

from sources.ids import seeded_fraction

SHARD_SEED = "shard"  # the seed of the assignment hash (one draw, its own name)
DEFAULT_SHARDS = 1


@dataclass(frozen=True)
class ShardConfig:
    """How many shards each domain's per-turn tables are cut into."""

    shards_per_domain: int = DEFAULT_SHARDS

    def __post_init__(self) -> None:
        if self.shards_per_domain < 1:
            raise ValueError(f"shards_per_domain must be at least 1, got {self.shards_per_domain}")

    def shard_of(self, source_path: str) -> str:
        """The shard key of a source file, from its path relative to the source root."""
        return shard_of(source_path, self.shards_per_domain)

    @property
    def keys(self) -> list[str]:
        """Every shard key of a domain, in order."""
        return [str(index) for index in range(self.shards_per_domain)]


DEFAULT_SHARDING = ShardConfig()


def shard_of(source_path: str, shards: int) -> str:
    """`"0"` .. `str(shards - 1)`: a seeded hash of the relative path, cut into `shards` equal
    ranges (one shard: always "0")."""
    if shards == 1:
        return "0"
    return str(int(seeded_fraction(SHARD_SEED, source_path) * shards))
