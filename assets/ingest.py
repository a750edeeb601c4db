"""Ingest stage: native-format traces -> raw_trajectories, raw_turns, ingest_quarantine.

One multi-asset writes the three tables of a domain partition in a single pass over the
catalog's sources for that domain, then checks what it wrote (DuckDB over the Parquet files).
The three files are always rewritten together, so their trajectory IDs agree; selecting one of
them (`--select raw_turns`) records a materialization and checks for the selected ones only.
The catalog's sources replace their own rows; rows another run put in the same data directory
(a `worldtrace ingest --out` of another source, or a source since removed from the catalog)
stay, are listed in `sources_in_partition`, and the `only_catalog_sources` check warns, naming
them. The reconcile check counts this run's sources only.
"""


from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

import sources
from assets.asset_info import asset_info, domain_check
from assets.partitions import domain_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, records_table, table_metadata
from sources import table_checks, tables
from sources.ingest import IngestStats, write_tables
from sources.source_merge import load_manifest

PROGRESS_EVERY = 1000  # trajectories between progress log lines
REASON_CHARS, REASON_ROWS = 60, 20  # the quarantine's reason summary: first words, top rows

TABLES = {dg.AssetKey(t.name): t
          for t in (tables.RAW_TRAJECTORIES, tables.RAW_TURNS, tables.INGEST_QUARANTINE)}
RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE = TABLES

# The checks that read only the tables are asset checks (assets/checks.py); this one needs the
# run's own count of records read.
RECONCILE = domain_check("records_reconcile", INGEST_QUARANTINE,
                         "Records read = turns kept + quarantined, and the files hold exactly "
                         "those rows: nothing was skipped silently.")
INFO = asset_info("ingest", kinds={"parquet", "duckdb"}, code=[sources], pii="raw")


def quarantine_metadata(paths: list[Path], stats: IngestStats) -> dict:
    """What the quarantine holds: how many records, from which sources, for which reasons."""
    reasons: Counter[tuple[str, str]] = Counter()
    for path in paths:  # every shard of the domain
        for batch in pq.ParquetFile(path).iter_batches(columns=["source", "reason"]):
            reasons.update((row["source"], row["reason"].split(":", 1)[0][:REASON_CHARS])
                           for row in batch.to_pylist())
    return {
        "quarantined": stats.total("quarantined"),
        "share_of_records_read": round(
            stats.total("quarantined") / max(1, stats.total("records_read")), 4),
        "reasons": dg.MetadataValue.md(records_table(
            [{"source": source, "reason": reason, "records": n}
             for (source, reason), n in reasons.most_common(REASON_ROWS)])),
    }


@dg.multi_asset(
    specs=[
        dg.AssetSpec(key, group_name="sources", deps=["generated_traces"],
                     description=table.description, **INFO)
        for key, table in TABLES.items()
    ],
    check_specs=[RECONCILE],
    partitions_def=domain_partitions,
    can_subset=True,
)
def raw_traces(
    context: dg.AssetExecutionContext, storage: WorldtraceStorage
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Read the catalog's sources for one domain into the canonical tables."""
    domain = context.partition_key
    specs = storage.sources_for(domain)
    context.log.info(f"{domain}: {len(specs)} sources: {', '.join(s.name for s in specs)}")

    def log_progress(stats: IngestStats) -> None:
        trajectories = stats.total("trajectories")
        if trajectories % PROGRESS_EVERY == 0:
            context.log.info(f"{domain}: {trajectories} trajectories, {stats.total('turns')} turns")

    # The catalog names the sources this asset owns: a path edited there is meant, so a source
    # of the same name read from its old path is replaced (other sources' rows are kept).
    stats = write_tables(specs, storage.data_path, domains=[domain], on_trajectory=log_progress,
                         replace=True, shards=storage.sharding)
    turns = stats.total("turns")
    trajectories = stats.total("trajectories")
    quarantined = stats.total("quarantined")
    context.log.info(
        f"{domain}: read {stats.total('records_read')} records = {turns} turns kept "
        f"+ {quarantined} quarantined; {trajectories} trajectories"
    )
    paths = {key: table.domain_files(storage.data_path, domain) for key, table in TABLES.items()}
    per_source = dg.MetadataValue.md(records_table(stats.as_table()))
    counts = {"turns": turns, "trajectories": trajectories, "quarantined": quarantined,
              "records_read": stats.total("records_read"), "per_source": per_source,
              "skipped_hidden_entries": stats.skipped_hidden,
              "sources_in_partition": ", ".join(sorted(load_manifest(storage.data_path, domain)))}

    previews = {
        RAW_TRAJECTORIES: ["trajectory_id", "source", "task", "n_turns", "outcome"],
        RAW_TURNS: ["trajectory_id", "turn_index", "action_kind", "action", "observation"],
        INGEST_QUARANTINE: ["source", "source_path", "position", "reason"],
    }
    for key, columns in previews.items():
        if key in context.selected_asset_keys:
            about = quarantine_metadata(paths[key], stats) if key == INGEST_QUARANTINE else counts
            yield dg.MaterializeResult(asset_key=key, metadata={
                **table_metadata(TABLES[key], storage.data_path, domain, columns), **about})

    if RECONCILE.key in context.selected_asset_check_keys:
        yield check_result(RECONCILE.name, table_checks.rows_reconcile(
            paths[RAW_TURNS], paths[INGEST_QUARANTINE], turns_kept=turns,
            quarantined=quarantined, records_read=stats.total("records_read"),
            sources=[spec.name for spec in specs]), asset_key=INGEST_QUARANTINE)
