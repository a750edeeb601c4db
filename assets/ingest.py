"""Ingest stage: native-format traces -> raw_trajectories, raw_turns, ingest_quarantine.

One multi-asset writes the three tables of a domain x shard partition in a single pass over the
catalog's sources for that domain, reading only the files that hash to the shard
(sources/shards.py), then checks what it wrote (DuckDB over the Parquet files). The shards of a
domain are steps of their own and may run at once: each rewrites only its shard's files and its
shard's source manifest (sources/source_manifest.py).

The three files are always rewritten together, so their trajectory IDs agree; selecting one of
them (`--select raw_turns`) records a materialization and checks for the selected ones only.
The catalog's sources replace their own rows; rows another run put in the same data directory
(a `worldtrace ingest --out` of another source, or a source since removed from the catalog)
stay, are listed in `sources_in_shard` (and `sources_in_domain`, every shard's), and the
`only_catalog_sources` check warns, naming them. The reconcile check counts this run's sources
only.
"""


from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

import sources
from assets.asset_info import asset_info, shard_check
from assets.partitions import BY_DOMAIN, domain_and_shard, shard_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, records_table, table_metadata
from sources import table_checks, tables
from sources.ingest import IngestStats, write_tables
from sources.source_manifest import load_manifest, load_shard_manifest

PROGRESS_EVERY = 1000  # trajectories between progress log lines
REASON_CHARS, REASON_ROWS = 60, 20  # the quarantine's reason summary: first words, top rows

TABLES = {dg.AssetKey(t.name): t
          for t in (tables.RAW_TRAJECTORIES, tables.RAW_TURNS, tables.INGEST_QUARANTINE)}
RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE = TABLES

# The checks that read only the tables are asset checks (assets/checks.py); these two need the
# run's own count of records read.
RECONCILE = shard_check("records_reconcile", INGEST_QUARANTINE,
                        "Records read = turns kept + quarantined, and the files hold exactly "
                        "those rows: nothing was skipped silently.")
NOT_EMPTY = shard_check("not_empty", RAW_TURNS,
                        "A shard whose files gave records has at least one turn, and a domain "
                        "with sources has turns (a shard of a domain is empty only when none "
                        "of its sources' files hash to it).")
INFO = asset_info("ingest", kinds={"parquet", "duckdb"}, code=[sources], pii="raw")


def quarantine_metadata(paths: list[Path], stats: IngestStats) -> dict:
    """What the quarantine holds: how many records, from which sources, for which reasons."""
    reasons: Counter[tuple[str, str]] = Counter()
    for path in paths:
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
        dg.AssetSpec(key, group_name="sources", description=table.description, **INFO,
                     deps=[dg.AssetDep("generated_traces", partition_mapping=BY_DOMAIN)])
        for key, table in TABLES.items()
    ],
    check_specs=[RECONCILE, NOT_EMPTY],
    partitions_def=shard_partitions,
    can_subset=True,
)
def raw_traces(
    context: dg.AssetExecutionContext, storage: WorldtraceStorage
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Read the files of the catalog's sources for one domain that hash to one shard into the
    canonical tables."""
    domain, shard = domain_and_shard(context)
    specs = storage.sources_for(domain)
    where = f"{domain} shard {shard}"
    context.log.info(f"{where}: {len(specs)} sources: {', '.join(s.name for s in specs)}")

    def log_progress(stats: IngestStats) -> None:
        trajectories = stats.total("trajectories")
        if trajectories % PROGRESS_EVERY == 0:
            context.log.info(f"{where}: {trajectories} trajectories, {stats.total('turns')} turns")

    # The catalog names the sources this asset owns: a path edited there is meant, so a source
    # of the same name read from its old path is replaced (other sources' rows are kept).
    stats = write_tables(specs, storage.data_path, domains=[domain], on_trajectory=log_progress,
                         replace=True, shards=storage.sharding, only_shard=shard)
    turns = stats.total("turns")
    trajectories = stats.total("trajectories")
    quarantined = stats.total("quarantined")
    context.log.info(
        f"{where}: read {stats.total('records_read')} records = {turns} turns kept "
        f"+ {quarantined} quarantined; {trajectories} trajectories"
    )
    paths = {key: [table.path(storage.data_path, domain, shard)] for key, table in TABLES.items()}
    per_source = dg.MetadataValue.md(records_table(stats.as_table()))
    counts = {"turns": turns, "trajectories": trajectories, "quarantined": quarantined,
              "records_read": stats.total("records_read"), "per_source": per_source,
              "skipped_hidden_entries": stats.skipped_hidden,
              "sources_in_shard": ", ".join(sorted(
                  load_shard_manifest(storage.data_path, domain, shard))),
              "sources_in_domain": ", ".join(sorted(load_manifest(storage.data_path, domain)))}

    previews = {
        RAW_TRAJECTORIES: ["trajectory_id", "source", "task", "n_turns", "outcome"],
        RAW_TURNS: ["trajectory_id", "turn_index", "action_kind", "action", "observation"],
        INGEST_QUARANTINE: ["source", "source_path", "position", "reason"],
    }
    for key, columns in previews.items():
        if key in context.selected_asset_keys:
            about = quarantine_metadata(paths[key], stats) if key == INGEST_QUARANTINE else counts
            yield dg.MaterializeResult(asset_key=key, metadata={
                **table_metadata(TABLES[key], storage.data_path, domain, columns, shard), **about})

    if RECONCILE.key in context.selected_asset_check_keys:
        yield check_result(RECONCILE.name, table_checks.rows_reconcile(
            paths[RAW_TURNS], paths[INGEST_QUARANTINE], turns_kept=turns,
            quarantined=quarantined, records_read=stats.total("records_read"),
            sources=[spec.name for spec in specs]), asset_key=INGEST_QUARANTINE)
    if NOT_EMPTY.key in context.selected_asset_check_keys:
        # a domain whose sources hold no file at all has its empty tables in one shard (its
        # first), which then fails, as the domain would have before the shards
        no_input = not stats.total("inputs") and storage.shards_for(domain) == [shard]
        yield check_result(NOT_EMPTY.name, table_checks.shard_not_empty(
            paths[RAW_TURNS], stats.total("records_read"), len(specs) if no_input else 0),
            asset_key=RAW_TURNS)
