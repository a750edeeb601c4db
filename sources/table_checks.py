"""Integrity checks on the canonical tables, in DuckDB; plain functions usable without Dagster.

Each check returns a `CheckOutcome`: whether it passed and the numbers behind the verdict.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from sources.storage import CheckOutcome, Files, file_list, load_sql, row_count, scalar_query


def schema_matches(path: Files, expected: pa.Schema) -> CheckOutcome:
    """The file's columns and types are exactly the canonical schema's (every shard's)."""
    schemas = [pq.read_schema(file) for file in file_list(path)]
    if not schemas:
        raise FileNotFoundError(f"{path}: no file to check")
    actual = next((s for s in schemas if s != schemas[0]), schemas[0])  # one that differs
    differences = [
        f"{field_.name}: expected {field_.type}, got "
        f"{actual.field(field_.name).type if field_.name in actual.names else 'missing'}"
        for field_ in expected
        if field_.name not in actual.names or actual.field(field_.name).type != field_.type
    ]
    extra = [name for name in actual.names if name not in expected.names]
    passed = not differences and not extra
    return CheckOutcome(
        passed, "columns and types match the canonical schema",
        {"differences": "; ".join(differences) or "none",
         "extra_columns": ", ".join(extra) or "none"},
    )


def unique_turn_keys(turns_path: Files) -> CheckOutcome:
    """No (trajectory_id, turn_index) pair appears twice (across every shard given)."""
    duplicates = scalar_query(load_sql(__file__, "duplicate_turn_keys.sql"),
                              path=file_list(turns_path))
    return CheckOutcome(duplicates == 0, "(trajectory_id, turn_index) is unique",
                        {"duplicate_keys": duplicates})


def contiguous_turn_indices(turns_path: Files) -> CheckOutcome:
    """Every trajectory's turns are numbered 0..n-1 with no gap."""
    gaps = scalar_query(load_sql(__file__, "turn_index_gaps.sql"), path=file_list(turns_path))
    return CheckOutcome(gaps == 0, "turn_index runs 0..n-1 in every trajectory",
                        {"trajectories_with_gaps": gaps})


def turn_counts_match(trajectories_path: Files, turns_path: Files) -> CheckOutcome:
    """Every trajectory row's n_turns equals its number of turn rows."""
    mismatched = scalar_query(
        load_sql(__file__, "turn_counts_match.sql"), trajectories=file_list(trajectories_path),
        turns=file_list(turns_path)
    )
    return CheckOutcome(mismatched == 0, "n_turns equals the number of turn rows",
                        {"mismatched_trajectories": mismatched})


def shard_not_empty(turns_path: Files, records_read: int, sources_without_input: int = 0
                    ) -> CheckOutcome:
    """A shard whose inputs gave records (turns or quarantined ones) must have turns, and so
    must the shard that holds a domain whose configured sources have no file at all
    (`sources_without_input`): a shard of a domain with sources is empty only when none of
    its sources' files hash to it."""
    rows = row_count(turns_path)
    return CheckOutcome(rows > 0 or (records_read == 0 and sources_without_input == 0),
                        "a shard that read records, or holds sources with no file, has at "
                        "least one turn",
                        {"turns": rows, "records_read": records_read,
                         "sources_without_input": sources_without_input})


def rows_reconcile(
    turns_path: Files,
    quarantine_path: Files,
    turns_kept: int,
    quarantined: int,
    records_read: int,
    sources: list[str] | None = None,
) -> CheckOutcome:
    """Records read = turns kept + quarantined, and the files hold exactly those rows.

    With `sources`, only the rows of those sources are counted: a partition also keeps the rows
    of sources ingested by earlier runs (see `sources.source_merge`).
    """
    if sources is None:
        turn_rows = row_count(turns_path)
        quarantine_rows = row_count(quarantine_path)
    else:
        sql = load_sql(__file__, "source_rows.sql")
        turn_rows = scalar_query(sql, path=file_list(turns_path), sources=sources)
        quarantine_rows = scalar_query(sql, path=file_list(quarantine_path), sources=sources)
    passed = (records_read == turns_kept + quarantined and turn_rows == turns_kept
              and quarantine_rows == quarantined)
    return CheckOutcome(
        passed, "records read = turns kept + quarantined, all of them in the tables",
        {"records_read": records_read, "turns_kept": turns_kept, "quarantined": quarantined,
         "turn_rows_in_file": turn_rows, "quarantine_rows_in_file": quarantine_rows},
    )


def only_catalog_sources(trajectories_path: Files, catalog_sources: list[str]) -> CheckOutcome:
    """Every source with trajectories in the partition is one the catalog names. Ingest
    replaces only the sources it reads, so the rows of a source since removed from the catalog
    (or ingested by a separate run into the same data dir) stay: this names them."""
    with duckdb.connect() as connection:
        outside = connection.execute(load_sql(__file__, "sources_outside_catalog.sql"),
                                     {"path": file_list(trajectories_path),
                                      "sources": list(catalog_sources)}).fetchall()
    named = ", ".join(f"{source} ({count} trajectories)" for source, count in outside)
    description = (f"sources in the partition but not in the catalog: {named}" if outside
                   else "every source in the partition is in the catalog")
    return CheckOutcome(not outside, description,
                        {"outside_catalog": named or "none",
                         "trajectories_outside_catalog": sum(c for _, c in outside),
                         "catalog_sources": ", ".join(sorted(catalog_sources)) or "none"})
