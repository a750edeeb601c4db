"""Jobs for the common runs, derived from the assets (so a new asset joins the right job).

- `main_job`: every domain-partitioned asset (generate, ingest, curate, scrub) for one domain;
  launch one run per domain (`make run` runs them two at a time).
- `corpus_job`: every asset built over all domains at once (dedup, splits, tokenizer, corpora,
  models, bench, release), after the domain runs.
- `ingest_job`, `curate_job`, `train_job`, `bench_job`, `release_job`: one stage each, for
  re-running a stage from the launchpad.
- `domain_checks_job`: the per-domain asset checks alone, on the tables already written, with
  nothing recomputed.
"""

from collections.abc import Sequence

import dagster as dg

from assets.partitions import domain_partitions

# job -> (asset group, what the stage does). A job's description adds which of the group's
# assets it runs, and over what: a stage with assets of both kinds is split in two jobs, and
# each says only what it runs (curate_job scores and scrubs a domain; dedup is all domains).
STAGE_GROUPS = {
    "ingest_job": ("sources", "Ingest"),
    "curate_job": ("quality", "Curate"),
    "train_job": ("training", "Train"),
    "bench_job": ("bench", "Bench"),
    "release_job": ("release", "Release"),
}


def stage_description(stage: str, keys: Sequence[dg.AssetKey], partitioned: bool) -> str:
    """What a stage job runs: its assets by name, for one domain or over all domains."""
    scope = ("for one domain per run (domain partitions)" if partitioned
             else "once over all domains")
    names = ", ".join(f"`{key.to_user_string()}`" for key in keys)
    return f"{stage}, {scope}: {names}."


def _keys(assets: Sequence[dg.AssetsDefinition], partitioned: bool) -> list[dg.AssetKey]:
    return [key for asset in assets if (asset.partitions_def is not None) == partitioned
            for key in asset.keys]


def _groups(assets: Sequence[dg.AssetsDefinition]) -> set[str]:
    """The group names the assets use."""
    return {group for asset in assets for group in asset.group_names_by_key.values()}


def make_jobs(assets: Sequence[dg.AssetsDefinition]) -> list:
    """main_job, corpus_job, and a job per stage whose group has assets (a stage with assets of
    both kinds gets `<stage>_job` for the domain-partitioned ones and
    `<stage>_all_domains_job` for the others)."""
    domain_keys, corpus_keys = _keys(assets, True), _keys(assets, False)
    jobs = [dg.define_asset_job(
        "main_job", selection=dg.AssetSelection.assets(*domain_keys),
        partitions_def=domain_partitions,
        description="Every domain-partitioned asset for one domain: generate, ingest, curate, "
                    "scrub. One run per domain; then corpus_job.")]
    if corpus_keys:
        jobs.append(dg.define_asset_job(
            "corpus_job", selection=dg.AssetSelection.assets(*corpus_keys),
            description="Every asset built over all domains at once (dedup, splits, models, "
                        "bench, release), after main_job has run for the domains."))
    groups = _groups(assets)
    for name, (group, stage) in STAGE_GROUPS.items():
        if group not in groups:
            continue
        kinds = {partitioned: [key for asset in assets
                               if (asset.partitions_def is not None) == partitioned
                               for key in asset.keys if asset.group_names_by_key[key] == group]
                 for partitioned in (True, False)}
        both = all(kinds.values())
        for partitioned, keys in kinds.items():
            if keys:
                jobs.append(dg.define_asset_job(
                    name.replace("_job", "_all_domains_job") if both and not partitioned
                    else name,
                    selection=dg.AssetSelection.assets(*keys),
                    partitions_def=domain_partitions if partitioned else None,
                    description=stage_description(stage, keys, partitioned)))
    return jobs


# Dagster 1.13 refuses a partition key for a run that selects only checks ("There is no
# PartitionsDefinition shared by all the provided assets": the job's partitions come from its
# assets, and there are none), so the domain goes in the run's partition tag.
CHECK_PARTITION_TAG = "dagster/partition"


def checks_job(checks: Sequence[dg.AssetChecksDefinition]):
    """The given asset checks alone: each reads its table on disk, nothing is materialized."""
    keys = [key for definition in checks for key in definition.check_keys]
    return dg.define_asset_job(
        "domain_checks_job", selection=dg.AssetSelection.checks(*keys),
        description="Every per-domain asset check, alone, on the tables already written (no "
                    "asset is recomputed). Launch it with the run tag "
                    f"`{CHECK_PARTITION_TAG}` = the domain (e.g. terminal); Dagster 1.13 takes "
                    "no partition key for a run of checks only.")
