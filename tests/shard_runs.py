"""Materialize a domain's assets the way `worldtrace run` does: register the shards the domain's
catalog files hash to on the instance (the dynamic `shard` dimension), then phase by phase
(assets/jobs.py `phases`): the per-domain assets made before the shards (one run), one run per
domain x shard partition of the shard-local assets that read their own shard (ingest, scrub),
one run per shard of those that read the whole domain (staged_turn_features), one run of the
per-domain assets built from all the shards (turn_features, turn_labels), then one run of the
unpartitioned ones (over what is on disk). The results of a domain's runs read as one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from assets.jobs import phases
from assets.partitions import register_shards, shard_key, shard_partitions
from assets.resources import WorldtraceStorage


@dataclass
class ShardRuns:
    """The runs of one domain's partitions, read as one result."""

    results: list[dg.ExecuteInProcessResult]
    shard_results: list[dg.ExecuteInProcessResult]  # the runs of one shard each, phase by phase

    @property
    def success(self) -> bool:
        return all(result.success for result in self.results)

    def get_asset_check_evaluations(self) -> list[dg.AssetCheckEvaluation]:
        return [e for result in self.results for e in result.get_asset_check_evaluations()]

    @property
    def all_events(self) -> list[dg.DagsterEvent]:
        return [e for result in self.results for e in result.all_events]

    def asset_materializations_for_node(self, node: str) -> list[dg.AssetMaterialization]:
        return [m for result in self.results for m in result.asset_materializations_for_node(node)]

    def get_asset_materialization_events(self) -> list:
        return [e for result in self.results for e in result.get_asset_materialization_events()]


def _is_check(definition) -> bool:
    """An asset check definition (a subclass of AssetsDefinition) rather than an asset."""
    return isinstance(definition, dg.AssetChecksDefinition)


def _partitions(definition) -> dg.PartitionsDefinition | None:
    """An asset's partitions, or an asset check definition's."""
    if not _is_check(definition):
        return definition.partitions_def
    return next(iter(definition.check_specs)).partitions_def


def _keys(definition) -> set[dg.AssetKey]:
    """The asset keys an asset defines, or those an asset check definition checks."""
    if not _is_check(definition):
        return set(definition.keys)
    return {spec.asset_key for spec in definition.check_specs}


def materialize_domain(assets: Sequence, domain: str, storage: WorldtraceStorage,
                       instance: dg.DagsterInstance | None = None, **kwargs) -> ShardRuns:
    """`dg.materialize` of `assets` (and asset check definitions) for `domain`: its shards for
    the shard-local ones, the domain for the others, in the order `worldtrace run` runs them
    (on an ephemeral instance unless one is given); keyword arguments go to each run
    (run_config, selection, raise_on_error)."""
    instance = instance or dg.DagsterInstance.ephemeral()
    keys = storage.shards_for(domain)
    register_shards(instance, keys)
    phase_of = phases([a for a in assets if not _is_check(a)])

    def phase(definition) -> int:  # a check runs in its asset's phase
        return min(phase_of[key] for key in _keys(definition))

    partitioned = [a for a in assets if _partitions(a) is not None]
    unpartitioned = [a for a in assets if _partitions(a) is None]

    def run(members: list, partition: str | dg.MultiPartitionKey | None) -> list:
        if all(_is_check(a) for a in members):
            return []
        return [dg.materialize(members, partition_key=partition, resources={"storage": storage},
                               instance=instance, **kwargs)]

    results, shard_results = [], []
    for index in sorted({phase(a) for a in partitioned}):
        members = [a for a in partitioned if phase(a) == index]
        if _partitions(members[0]) == shard_partitions:
            ran = [r for shard in keys for r in run(members, shard_key(domain, shard))]
            shard_results += ran
        else:
            ran = run(members, domain)
        results += ran
    return ShardRuns([*results, *run(unpartitioned, None)], shard_results)
