"""Jobs for the common runs, derived from the assets (so a new asset joins the right job).

The partitioned assets fall in phases (`phases`): a phase is a run per partition of one job,
and an asset opens a new phase when it reads another partition than its own (a domain's
shards, or a shard's domain, or every shard of its domain), so a job never holds two steps of
which one must wait for other partitions of the other. In order:

- `domain_job`: every asset made per domain before its shards (the native trace files).
- `main_job`: the shard-local assets that read only their own shard (ingest, scrub), for one
  domain x shard partition; launch one run per shard of each domain (`make run` runs two at a
  time).
- `shard_features_job`: the shard-local assets that read every shard of their domain
  (staged_turn_features: the heaviest per-turn work, steps 1-2 of the features), one run per
  domain x shard partition, after all of the domain's main_job runs.
- `domain_quality_job`: every per-domain asset built from all the domain's shards
  (turn_features from the staged shards, turn_labels), after the domain's shard runs.
- `corpus_job`: every asset built over all domains at once (dedup, splits, tokenizer, corpora,
  models, bench, release), after the shard runs.
- `ingest_job`, `curate_job`, `train_job`, `bench_job`, `release_job`: one stage each, for
  re-running a stage from the launchpad (a stage with assets of several partitionings gets one
  job for each: `<stage>_per_domain_job`, `<stage>_all_domains_job`).
- `shard_checks_job`, `domain_checks_job`: the asset checks of the shard-local tables and of
  the per-domain ones, alone, on the tables already written, with nothing recomputed.
"""

from collections.abc import Sequence
from typing import NamedTuple

import dagster as dg

from assets.partitions import domain_partitions, shard_partitions

# job -> (asset group, what the stage does). A job's description adds which of the group's
# assets it runs, and over what: a stage with assets of several kinds is split, and each job
# says only what it runs (curate_job scrubs a shard; curate_per_domain_job scores a domain; dedup
# is all domains).
STAGE_GROUPS = {
    "ingest_job": ("sources", "Ingest"),
    "curate_job": ("quality", "Curate"),
    "train_job": ("training", "Train"),
    "bench_job": ("bench", "Bench"),
    "release_job": ("release", "Release"),
}
# How an asset is partitioned: by domain x shard, by domain, or not at all; what a job of that
# kind runs per run, and the suffix of a stage job of that kind beside the stage's main kind.
KINDS: dict[str, tuple[dg.PartitionsDefinition | None, str, str]] = {
    "shard": (shard_partitions, "for one shard of one domain per run (domain x shard "
              "partitions)", "_job"),
    "domain": (domain_partitions, "for one domain per run (domain partitions)",
               "_per_domain_job"),
    "none": (None, "once over all domains", "_all_domains_job"),
}


def kind_of(asset: dg.AssetsDefinition) -> str:
    """`shard`, `domain` or `none`: how the asset is partitioned."""
    if asset.partitions_def is None:
        return "none"
    if asset.partitions_def == shard_partitions:
        return "shard"
    if asset.partitions_def == domain_partitions:
        return "domain"
    raise ValueError(f"{asset.keys}: partitioned by {asset.partitions_def}, neither domain nor "
                     "domain x shard")


def stage_description(stage: str, keys: Sequence[dg.AssetKey], kind: str) -> str:
    """What a stage job runs: its assets by name, and over what."""
    names = ", ".join(f"`{key.to_user_string()}`" for key in keys)
    return f"{stage}, {KINDS[kind][1]}: {names}."


def _keys(assets: Sequence[dg.AssetsDefinition], kind: str, group: str | None = None
          ) -> list[dg.AssetKey]:
    return [key for asset in assets if kind_of(asset) == kind for key in asset.keys
            if group is None or asset.group_names_by_key[key] == group]


def _groups(assets: Sequence[dg.AssetsDefinition]) -> set[str]:
    """The group names the assets use."""
    return {group for asset in assets for group in asset.group_names_by_key.values()}


def _reads_own_partition(asset: dg.AssetsDefinition, parent: dg.AssetsDefinition,
                         key: dg.AssetKey) -> bool:
    """The asset reads `parent` (its dep `key`) in its own partition only."""
    mapping = asset.get_partition_mapping_for_dep(key)
    return (parent.partitions_def == asset.partitions_def
            and isinstance(mapping, dg.IdentityPartitionMapping | None))


def phases(assets: Sequence[dg.AssetsDefinition]) -> dict[dg.AssetKey, int]:
    """The phase (0, 1, ...) of each partitioned asset's keys: after the phase of everything it
    reads, and one more when it reads another partition than its own (unpartitioned assets
    come after all phases and have none)."""
    by_key = {key: asset for asset in assets for key in asset.keys}
    found: dict[int, int] = {}  # id(asset) -> phase

    def phase(asset: dg.AssetsDefinition) -> int:
        if id(asset) not in found:
            found[id(asset)] = max(
                [phase(parent) + (0 if _reads_own_partition(asset, parent, key) else 1)
                 for key in asset.dependency_keys
                 if (parent := by_key.get(key)) is not None and parent is not asset
                 and kind_of(parent) != "none"], default=0)
        return found[id(asset)]

    return {key: phase(asset) for asset in assets if kind_of(asset) != "none"
            for key in asset.keys}


class Phase(NamedTuple):
    """One phase of `worldtrace run`: its job, the partitioning its runs go by, what it
    builds in a few words (the run's progress line) and the job's description."""

    job: str
    kind: str
    builds: str
    description: str


# The phases in order, as they fall out of the assets.
PHASE_JOBS = (
    Phase("domain_job", "domain", "generate", "Every asset made per domain before its shards "
          "(the native trace files); then main_job runs the domain's shards."),
    Phase("main_job", "shard", "ingest, scrub", "Every shard-local asset that reads only its "
          "own shard, for one shard of one domain: ingest, scrub. One run per domain x shard "
          "(after domain_job for the domain); then shard_features_job."),
    Phase("shard_features_job", "shard",
          "staged features (each shard with its domain's common words)",
          "Every shard-local asset that reads every shard of its domain, for one shard of one "
          "domain: staged_turn_features (the domain's common words, then the shard's features "
          "but the corpus frequencies). One run per domain x shard, after main_job has run "
          "every shard of the domain; then domain_quality_job."),
    Phase("domain_quality_job", "domain",
          "features (corpus frequencies), labels (all of a domain's shards)",
          "Every per-domain asset built from all of the domain's shards (turn_features from the "
          "staged shards, turn_labels: their corpus counts are the whole domain's), after "
          "shard_features_job has run every shard of the domain; then corpus_job."),
)

CORPUS_JOB = "corpus_job"  # every unpartitioned asset, after the phases
# The jobs `worldtrace run` launches, in order (worldtrace/launch.py rebuilds each by name).
RUN_JOBS: tuple[str, ...] = (*(phase.job for phase in PHASE_JOBS), CORPUS_JOB)


def phase_keys(assets: Sequence[dg.AssetsDefinition]) -> list[list[dg.AssetKey]]:
    """The keys of each phase, in order (the jobs of PHASE_JOBS select them); fails when the
    assets' phases are not those PHASE_JOBS names (a new phase needs a job)."""
    by_phase: dict[int, list[dg.AssetKey]] = {}
    for key, index in phases(assets).items():
        by_phase.setdefault(index, []).append(key)
    kinds = {asset_key: kind_of(asset) for asset in assets for asset_key in asset.keys}
    found = [sorted({kinds[key] for key in by_phase[index]}) for index in sorted(by_phase)]
    if found != [[phase.kind] for phase in PHASE_JOBS]:
        raise ValueError(f"the partitioned assets fall in phases of {found}, not those of "
                         f"PHASE_JOBS {[(phase.job, phase.kind) for phase in PHASE_JOBS]}")
    return [by_phase[index] for index in sorted(by_phase)]


def make_jobs(assets: Sequence[dg.AssetsDefinition]) -> list:
    """A job per phase (PHASE_JOBS), corpus_job, and a job per stage and partitioning whose
    group has assets (the stage's own name goes to its first kind in shard, domain, none
    order)."""
    jobs = [dg.define_asset_job(phase.job, selection=dg.AssetSelection.assets(*keys),
                                partitions_def=KINDS[phase.kind][0], description=phase.description)
            for phase, keys in zip(PHASE_JOBS, phase_keys(assets), strict=True)]
    if corpus_keys := _keys(assets, "none"):
        jobs.append(dg.define_asset_job(
            CORPUS_JOB, selection=dg.AssetSelection.assets(*corpus_keys),
            description="Every asset built over all domains at once (dedup, splits, models, "
                        "bench, release), after the shard and per-domain runs."))
    groups = _groups(assets)
    for name, (group, stage) in STAGE_GROUPS.items():
        if group not in groups:
            continue
        kinds = [(kind, keys) for kind in KINDS if (keys := _keys(assets, kind, group))]
        for index, (kind, keys) in enumerate(kinds):
            jobs.append(dg.define_asset_job(
                name if index == 0 else name.replace("_job", KINDS[kind][2]),
                selection=dg.AssetSelection.assets(*keys), partitions_def=KINDS[kind][0],
                description=stage_description(stage, keys, kind)))
    return jobs


# Dagster 1.13 refuses a partition key for a run that selects only checks ("There is no
# PartitionsDefinition shared by all the provided assets": the job's partitions come from its
# assets, and there are none), so the partition (`domain|shard`, or the domain) goes in the
# run's tag.
CHECK_PARTITION_TAG = "dagster/partition"
CHECKS_JOBS = {  # partitions -> (job, what its tag names, an example)
    shard_partitions: ("shard_checks_job", "the partition `domain|shard`", "terminal|0"),
    domain_partitions: ("domain_checks_job", "the domain", "terminal"),
}


def checks_jobs(checks: Sequence[dg.AssetChecksDefinition]) -> list:
    """The given asset checks alone, one job per partitioning (the checks of the shard-local
    tables, those of the per-domain ones): each reads its table on disk, nothing is
    materialized."""
    jobs = []
    for partitions, (name, tag, example) in CHECKS_JOBS.items():
        keys = [key for definition in checks for spec in definition.check_specs
                if spec.partitions_def == partitions for key in [spec.key]]
        if keys:
            jobs.append(dg.define_asset_job(
                name, selection=dg.AssetSelection.checks(*keys),
                description="Every asset check of the tables partitioned like this, alone, on "
                            "the tables already written (no asset is recomputed). Launch it "
                            f"with the run tag `{CHECK_PARTITION_TAG}` = {tag} (e.g. "
                            f"{example}); Dagster 1.13 takes no partition key for a run of "
                            "checks only."))
    return jobs
