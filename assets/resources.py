"""Resources: where the data directory and the source catalog are."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from sources.catalog import DEFAULT_CATALOG, SourceSpec, load_catalog


class WorldtraceStorage(dg.ConfigurableResource):
    """The one data directory (Parquet, hive-partitioned by domain) and the source catalog."""

    data_dir: str = "data"
    catalog: str = str(DEFAULT_CATALOG)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).resolve()

    def sources_for(self, domain: str) -> list[SourceSpec]:
        """Catalog entries feeding one domain partition."""
        specs = load_catalog(Path(self.catalog), self.data_path)
        return [spec for spec in specs if spec.domain == domain]


LOCAL_CATALOG = Path("sources.toml")


def storage_from_environment() -> WorldtraceStorage:
    """$WORLDTRACE_DATA (default ./data); the catalog is $WORLDTRACE_CATALOG, else ./sources.toml
    when there is one, else the built-in default catalog (the trace factory's output)."""
    catalog = os.environ.get("WORLDTRACE_CATALOG") or (
        str(LOCAL_CATALOG.resolve()) if LOCAL_CATALOG.exists() else str(DEFAULT_CATALOG)
    )
    return WorldtraceStorage(data_dir=os.environ.get("WORLDTRACE_DATA", "data"), catalog=catalog)
