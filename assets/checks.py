"""The checks of the per-turn tables, each declared once as a Dagster asset check.

A check here reads only the tables on disk, so it is its own step: it runs after its asset in
the same run (a blocking one stops what is downstream), and it can be rerun from the UI without
recomputing the asset. Each is one row of CHECKS: the table it checks, its name, what it
verifies, and the library function that does it. Two checks need what their asset's run knew
and stay in the asset: ingest's records_reconcile (the records read) and turn_labels'
policy_hash_recorded (the configured policy); so does ingest's not_empty (the records its
shard read). A check has its asset's partitions: the shard-local tables (ingest's, scrub's) are
per domain x shard, and so are their checks: each reads its shard's files, so a shard's verdict
is known as soon as the shard is written, and a failed shard is re-run alone; their verdicts
roll up per domain on the asset's check page (one row per partition; filter by the domain
dimension). turn_features and turn_labels are per domain (counted over the whole domain), and
their checks read every shard of the domain.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from assets.ingest import raw_traces
from assets.partitions import domain_and_shard, shard_partitions
from assets.quality import turn_features, turn_labels
from assets.resources import WorldtraceStorage
from assets.scrub import scrubbed_traces
from assets.table_metadata import check_result
from quality import checks as quality_checks
from quality.tables import SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TURN_FEATURES, TURN_LABELS
from sources import table_checks
from sources.storage import CheckOutcome
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS, Table

Run = Callable[[Path, "Part", WorldtraceStorage], CheckOutcome]  # data dir, partition, storage

# A check has its asset's partitions: domain x shard for the shard-local tables (ingest's,
# scrub's), domain for turn_features and turn_labels (counted over the whole domain).
PARTITIONS: dict[str, dg.PartitionsDefinition] = {
    key.to_user_string(): asset.partitions_def
    for asset in (raw_traces, turn_features, turn_labels, scrubbed_traces) for key in asset.keys}


@dataclass(frozen=True)
class Part:
    """The partition a check runs for: a domain and one shard of it, or the whole domain
    (`shard` None)."""

    domain: str
    shard: str | None = None

    @classmethod
    def of(cls, context: dg.AssetCheckExecutionContext, partitions: dg.PartitionsDefinition
           ) -> "Part":
        if partitions == shard_partitions:
            return cls(*domain_and_shard(context))
        return cls(context.partition_key)


@dataclass(frozen=True)
class DomainCheck:
    """One check of one partition (domain x shard, or domain) of a table."""

    table: Table
    name: str
    description: str
    run: Run
    blocking: bool = False
    warn: bool = False  # a failure is a warning to look at, not an error

    @property
    def severity(self) -> dg.AssetCheckSeverity:
        return dg.AssetCheckSeverity.WARN if self.warn else dg.AssetCheckSeverity.ERROR


def _files(table: Table, data_dir: Path, part: Part) -> list[Path]:
    """The partition's files of a table (the shard's file, or every shard of the domain); none
    is an error (a check of a partition that is not on disk fails its step, it never passes on
    nothing)."""
    if part.shard is None:
        files = table.domain_files(data_dir, part.domain)
        if not files:
            raise FileNotFoundError(f"{table.domain_glob(data_dir, part.domain)}: no file of "
                                    f"{table.name} for {part.domain}")
        return files
    path = table.path(data_dir, part.domain, part.shard)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no file of {table.name} for {part.domain} shard "
                                f"{part.shard}")
    return [path]


def _catalog_sources(storage: WorldtraceStorage, domain: str) -> list[str]:
    return [spec.name for spec in storage.sources_for(domain)]


CHECKS: tuple[DomainCheck, ...] = (
    DomainCheck(RAW_TURNS, "schema", "Columns and types are exactly the canonical turn schema "
                "(sources/tables.py); blocking: every published turn table derives from it.",
                lambda d, p, s: table_checks.schema_matches(_files(RAW_TURNS, d, p),
                                                            RAW_TURNS.schema), blocking=True),
    DomainCheck(RAW_TURNS, "unique_turn_keys",
                "(trajectory_id, turn_index) is unique: no turn is read twice.",
                lambda d, p, s: table_checks.unique_turn_keys(_files(RAW_TURNS, d, p))),
    DomainCheck(RAW_TURNS, "contiguous_turn_indices",
                "turn_index runs 0..n-1 in every trajectory, with no gap.",
                lambda d, p, s: table_checks.contiguous_turn_indices(_files(RAW_TURNS, d, p))),
    DomainCheck(RAW_TRAJECTORIES, "schema", "Columns and types are exactly the canonical "
                "trajectory schema; blocking, like the turn schema.",
                lambda d, p, s: table_checks.schema_matches(_files(RAW_TRAJECTORIES, d, p),
                                                            RAW_TRAJECTORIES.schema),
                blocking=True),
    DomainCheck(RAW_TRAJECTORIES, "turn_counts_match",
                "Every trajectory's n_turns equals its number of turn rows.",
                lambda d, p, s: table_checks.turn_counts_match(_files(RAW_TRAJECTORIES, d, p),
                                                               _files(RAW_TURNS, d, p))),
    DomainCheck(RAW_TRAJECTORIES, "only_catalog_sources",
                "Every source with trajectories in the partition is in the catalog. Ingest "
                "replaces only the sources it reads, so the rows of a source removed from the "
                "catalog (or ingested into this data dir by a separate `worldtrace ingest`) "
                "stay; this warns, naming them and their trajectory counts. A warning, not "
                "blocking: rows another run put there may be wanted; delete the ones that are "
                "not and re-materialize.",
                lambda d, p, s: table_checks.only_catalog_sources(
                    _files(RAW_TRAJECTORIES, d, p), _catalog_sources(s, p.domain)), warn=True),
    DomainCheck(TURN_FEATURES, "features_in_range",
                "Shares and similarities (overlap, novelty, Jaccard) lie in [0, 1] or are null "
                "where undefined, length ratios are >= 0, and every observation occurs in at "
                "least its own trajectory (corpus_frequency >= 1).",
                lambda d, p, s: quality_checks.features_in_range(_files(TURN_FEATURES, d, p))),
    DomainCheck(TURN_LABELS, "every_turn_labelled",
                "Every raw turn has exactly one label row, and there is no extra.",
                lambda d, p, s: quality_checks.every_turn_labelled(_files(RAW_TURNS, d, p),
                                                                   _files(TURN_LABELS, d, p))),
    DomainCheck(TURN_LABELS, "weights_in_unit_interval",
                "loss_weight lies in [0, 1] and a category is set on every row; blocking: the "
                "weights are published and train the models.",
                lambda d, p, s: quality_checks.weights_in_unit_interval(
                    _files(TURN_LABELS, d, p)),
                blocking=True),
    DomainCheck(SCRUBBED_TURNS, "nothing_left_to_scrub",
                "A second scrubbing pass over scrubbed_trajectories and scrubbed_turns finds no "
                "credential, e-mail address, phone number or IP address; blocking: nothing "
                "downstream is built from a table that fails it.",
                lambda d, p, s: quality_checks.nothing_left_to_scrub(
                    _files(SCRUBBED_TRAJECTORIES, d, p), _files(SCRUBBED_TURNS, d, p)),
                blocking=True),
)


def _definition(check: DomainCheck) -> dg.AssetChecksDefinition:
    partitions = PARTITIONS[check.table.asset_name]

    @dg.asset_check(asset=check.table.asset_name, name=check.name,
                    description=check.description, blocking=check.blocking,
                    partitions_def=partitions)
    def run_check(context: dg.AssetCheckExecutionContext, storage: WorldtraceStorage
                  ) -> dg.AssetCheckResult:
        outcome = check.run(storage.data_path, Part.of(context, partitions), storage)
        return check_result(check.name, outcome, asset_key=dg.AssetKey(check.table.asset_name),
                            severity=check.severity)
    return run_check


def domain_checks(of: Sequence[dg.AssetsDefinition] | None = None
                  ) -> list[dg.AssetChecksDefinition]:
    """One asset check definition per declared check (only those of the given assets' keys,
    for a `dg.materialize` of a few assets)."""
    keys = None if of is None else {key.to_user_string() for asset in of for key in asset.keys}
    return [_definition(check) for check in CHECKS
            if keys is None or check.table.asset_name in keys]
