"""Which shards a catalog's files go to: the shard keys a partitioned run must have.

A walk of each source's inputs (the same walk ingest makes, sources/ingest.py's `iter_inputs`:
file names only, nothing is read), each input's path relative to its source root hashed to its
shard (sources/shards.py). With one shard a domain there is nothing to walk: every file goes to
shard 0. A domain whose sources have no input keeps its first shard (ingest writes its empty
tables there, as for an unsharded domain).
"""

from __future__ import annotations

from collections.abc import Iterable

from sources.catalog import SourceSpec
from sources.ingest import IngestStats, iter_inputs, relative_name
from sources.shards import ShardConfig
from sources.storage import shard_order


def shards_of_sources(specs: Iterable[SourceSpec], shards: ShardConfig) -> list[str]:
    """The shard keys the inputs of `specs` (one domain's sources) hash to, in shard order;
    the first shard when there is no input."""
    if shards.shards_per_domain == 1:
        return shards.keys[:1]
    found: set[str] = set()
    for spec in specs:
        if spec.missing:
            # ingest quarantines the missing path, in the shard of the path as given
            found.add(shards.shard_of(str(spec.path)))
            continue
        found.update(shards.shard_of(relative_name(entry.path, spec.root))
                     for entry in iter_inputs(spec, IngestStats()))
    return sorted(found, key=shard_order) or shards.keys[:1]
