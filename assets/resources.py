"""Resources: where the data directory and the source catalog are."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from sources.catalog import DEFAULT_CATALOG, SourceSpec, load_catalog
from sources.shard_inputs import shards_of_sources
from sources.shards import DEFAULT_SHARDS, ShardConfig


class WorldtraceStorage(dg.ConfigurableResource):
    """The one data directory (Parquet, hive-partitioned by domain, the per-turn tables by
    domain and shard), the source catalog, and how many shards each domain's sources are cut
    into (sources/shards.py)."""

    data_dir: str = "data"
    catalog: str = str(DEFAULT_CATALOG)
    shards_per_domain: int = DEFAULT_SHARDS

    @property
    def sharding(self) -> ShardConfig:
        return ShardConfig(self.shards_per_domain)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).resolve()

    def sources_for(self, domain: str) -> list[SourceSpec]:
        """Catalog entries feeding one domain partition."""
        specs = load_catalog(Path(self.catalog), self.data_path)
        return [spec for spec in specs if spec.domain == domain]

    def shards_for(self, domain: str) -> list[str]:
        """The shard keys one domain's catalog files hash to (the partitions to run)."""
        return shards_of_sources(self.sources_for(domain), self.sharding)


LOCAL_CATALOG = Path("sources.toml")


def storage_from_environment() -> WorldtraceStorage:
    """$WORLDTRACE_DATA (default ./data); the catalog is $WORLDTRACE_CATALOG, else ./sources.toml
    when there is one, else the built-in default catalog (the trace factory's output); shards
    per domain $WORLDTRACE_SHARDS (default 1)."""
    catalog = os.environ.get("WORLDTRACE_CATALOG") or (
        str(LOCAL_CATALOG.resolve()) if LOCAL_CATALOG.exists() else str(DEFAULT_CATALOG)
    )
    return WorldtraceStorage(data_dir=os.environ.get("WORLDTRACE_DATA", "data"), catalog=catalog,
                             shards_per_domain=int(os.environ.get("WORLDTRACE_SHARDS")
                                                   or DEFAULT_SHARDS))
