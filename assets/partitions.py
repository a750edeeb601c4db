"""Partitions: the seven domains, and the shard-local work by domain x shard.

- `domain_partitions`: what is made or counted per domain: the native trace files
  (generated_traces), and turn_features and turn_labels, whose corpus frequencies, common words
  and boilerplate floor count over the whole domain (quality/sharded.py), so each domain's step
  reads every shard of it.
- `shard_partitions`: the shard-local assets (ingest's three tables, the scrubbed tables and
  their findings) are cut by domain and shard, as their files are on disk
  ({data}/{table}/domain={d}/shard={s}/, sources/shards.py), so each shard is a step of its own:
  a cluster runs as many at once as it has workers, a failed shard is re-executed alone. Shard
  keys are dynamic: `register_shards` adds the shards the catalog's files hash to when sources
  arrive (`worldtrace run` before it launches the shard runs; otherwise the `shard_registry`
  sensor, off by default). The default data keeps one shard a domain: shard 0.
- `BY_DOMAIN`: the partition mapping between the two, both ways (a shard reads its domain's
  generated files; a domain's features read every shard of its raw tables: `from_shards`).
- `WHOLE_DOMAIN`: a shard step that reads every shard of its own domain (a shard's staged
  features take the domain's common words from a sample of all its shards: `whole_domain`), so
  it runs after all of them, in a job of its own (assets/jobs.py).

The assets built over every domain (dedup, splits, models) read every partition (Dagster's
default mapping of an unpartitioned asset: all partitions).
"""

from __future__ import annotations

import warnings

import dagster as dg

from sources.schema import DOMAINS

# The mappings are "beta" in Dagster 1.13; the Dagster version is pinned, so the warning on every
# load is noise.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message="Class `(MultiToSingleDimension"
                        "PartitionMapping|MultiPartitionMapping|DimensionPartitionMapping)`")

SHARD_DIMENSION = "shard"

domain_partitions = dg.StaticPartitionsDefinition(list(DOMAINS))
shards = dg.DynamicPartitionsDefinition(name=SHARD_DIMENSION)
shard_partitions = dg.MultiPartitionsDefinition({"domain": domain_partitions,
                                                 SHARD_DIMENSION: shards})
BY_DOMAIN = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="domain")
# The same domain, every shard: a dimension left out of a MultiPartitionMapping maps all to all.
WHOLE_DOMAIN = dg.MultiPartitionMapping({"domain": dg.DimensionPartitionMapping(
    dimension_name="domain", partition_mapping=dg.IdentityPartitionMapping())})


def from_shards(*asset_names: str) -> list[dg.AssetDep]:
    """The deps of a per-domain asset on shard-local assets: each domain partition reads every
    shard of its domain."""
    return [dg.AssetDep(name, partition_mapping=BY_DOMAIN) for name in asset_names]


def whole_domain(*asset_names: str) -> list[dg.AssetDep]:
    """The deps of a shard-local asset on every shard of its domain of other shard-local
    assets."""
    return [dg.AssetDep(name, partition_mapping=WHOLE_DOMAIN) for name in asset_names]


def shard_key(domain: str, shard: str) -> dg.MultiPartitionKey:
    """The partition key of one shard of one domain (its string form: `domain|shard`)."""
    return dg.MultiPartitionKey({"domain": domain, SHARD_DIMENSION: shard})


def domain_and_shard(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext
                     ) -> tuple[str, str]:
    """The domain and shard of the partition a step runs for."""
    key = context.partition_key
    dimensions = (key if isinstance(key, dg.MultiPartitionKey)
                  else shard_partitions.get_partition_key_from_str(key)).keys_by_dimension
    return dimensions["domain"], dimensions[SHARD_DIMENSION]


def unknown_shards(instance: dg.DagsterInstance, keys: list[str]) -> list[str]:
    """The shard keys (in the order given) that the instance does not know yet."""
    known = set(instance.get_dynamic_partitions(SHARD_DIMENSION))
    return [key for key in keys if key not in known]


def register_shards(instance: dg.DagsterInstance, keys: list[str]) -> list[str]:
    """Add the shard keys the instance does not know yet; returns the ones added."""
    new = unknown_shards(instance, keys)
    if new:
        instance.add_dynamic_partitions(SHARD_DIMENSION, new)
    return new
