"""What every asset declares besides its code: owners, tags, kinds, code version, check specs.

The code version is a hash of the library code an asset runs (its modules and the SQL and TOML
files beside them) and of the files that configure it (the policy), by sources.code_version's
one rule, so Dagster marks an asset stale exactly when what would build it changed.
"""

import importlib
import warnings
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import dagster as dg

from assets.partitions import domain_partitions, shard_partitions
from sources.code_version import code_version

OWNERS = ["team:worldtrace-data"]

# Partitioned check specs are marked "preview" in Dagster 1.13; we rely on them for check
# results per domain and per domain x shard and pin the Dagster version, so the warning on
# every load is noise.
warnings.filterwarnings("ignore", category=dg.PreviewWarning,
                        message="Specifying a partitions_def on an AssetCheckSpec")
def asset_info(stage: str, kinds: Iterable[str], code: Iterable[ModuleType | Path],
               pii: str = "none") -> dict[str, Any]:
    """Keyword arguments for dg.asset / dg.AssetSpec: owners, tags (stage; pii: raw, scrubbed
    or none), kinds shown on the asset's node, and the code version."""
    return {"owners": OWNERS, "tags": {"stage": stage, "pii": pii}, "kinds": set(kinds),
            "code_version": code_version(*code)}


def domain_check(name: str, asset: str | dg.AssetKey, description: str,
                 blocking: bool = False) -> dg.AssetCheckSpec:
    """A check with the domain partitions, so its page shows one result per domain."""
    return dg.AssetCheckSpec(name, asset=asset, description=description, blocking=blocking,
                             partitions_def=domain_partitions)


def shard_check(name: str, asset: str | dg.AssetKey, description: str,
                blocking: bool = False) -> dg.AssetCheckSpec:
    """A check of a shard-local asset: one result per domain x shard partition."""
    return dg.AssetCheckSpec(name, asset=asset, description=description, blocking=blocking,
                             partitions_def=shard_partitions)


# Defaults for an asset that does not declare its own: by group, the library it runs and kinds.
GROUP_DEFAULTS: dict[str, tuple[str, set[str]]] = {
    "sources": ("sources", {"parquet"}),
    "quality": ("quality", {"parquet", "duckdb"}),
    "training": ("training", {"parquet", "torch"}),
    "bench": ("bench", {"parquet", "python"}),
    "release": ("quality", {"parquet"}),
}


def with_defaults(assets: Iterable[dg.AssetsDefinition]) -> list[dg.AssetsDefinition]:
    """Every asset with owners, kinds, a stage tag and a code version: what an asset declares
    stays; what it lacks comes from its group (the code version then hashes the asset's own
    module and its group's library package)."""
    return [asset.map_asset_specs(_spec_with_defaults(asset)) for asset in assets]


def _spec_with_defaults(asset: dg.AssetsDefinition):
    module = importlib.import_module(asset.op.compute_fn.decorated_fn.__module__)

    def fill(spec: dg.AssetSpec) -> dg.AssetSpec:
        group = spec.group_name or "default"
        library, kinds = GROUP_DEFAULTS.get(group, ("sources", {"parquet"}))
        return spec.replace_attributes(
            owners=spec.owners or OWNERS,
            kinds=spec.kinds or kinds,
            tags={"stage": group, "pii": "none", **spec.tags},
            code_version=spec.code_version
            or code_version(module, importlib.import_module(library)))
    return fill
