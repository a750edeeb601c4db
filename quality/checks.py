"""Integrity checks on the quality tables, in DuckDB; plain functions usable without Dagster."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from quality.scrub import TRAJECTORY_TEXT_FIELDS, TURN_TEXT_FIELDS, residual_findings
from sources.storage import CheckOutcome, Files, file_list, load_sql, row_count, scalar_query


def features_in_range(features_path: Files) -> CheckOutcome:
    """Shares and similarities lie in [0, 1] (or are null where undefined), ratios are >= 0,
    and an observation occurs in at least its own trajectory."""
    bad = scalar_query(load_sql(__file__, "features_out_of_range.sql"),
                       path=file_list(features_path))
    return CheckOutcome(bad == 0, "features lie in their documented ranges",
                        {"rows_out_of_range": bad})


def every_turn_labelled(turns_path: Files, labels_path: Files) -> CheckOutcome:
    """Each raw turn has a label row, and there are no extra label rows."""
    missing = scalar_query(load_sql(__file__, "unlabelled_turns.sql"), turns=file_list(turns_path),
                           labels=file_list(labels_path))
    turns, labels = row_count(turns_path), row_count(labels_path)
    return CheckOutcome(missing == 0 and turns == labels, "every turn has exactly one label",
                        {"turns": turns, "labels": labels, "unlabelled_turns": missing})


def one_staged_row_per_turn(turns_path: Files, staged_path: Files) -> CheckOutcome:
    """The staged features have one row per raw turn of their shard (none missing, no extra)."""
    turns, staged = row_count(turns_path), row_count(staged_path)
    return CheckOutcome(turns == staged, "one staged row per raw turn",
                        {"turns": turns, "staged_rows": staged})


def weights_in_unit_interval(labels_path: Files) -> CheckOutcome:
    """loss_weight in [0, 1] and a category on every row."""
    bad = scalar_query(load_sql(__file__, "weights_out_of_range.sql"),
                       labels=file_list(labels_path))
    return CheckOutcome(bad == 0, "loss_weight in [0, 1], category set",
                        {"rows_out_of_range": bad})


def policy_hash_recorded(labels_path: Files, expected_hash: str) -> CheckOutcome:
    """Every row and every file's metadata (each shard's) carry the hash of the policy that
    labelled them."""
    with duckdb.connect() as connection:
        rows = connection.execute(load_sql(__file__, "policy_hashes.sql"),
                                  {"labels": file_list(labels_path)}).fetchall()
        hashes = [row[0] for row in rows]
    in_files = sorted({(pq.read_schema(f).metadata or {}).get(b"policy_hash", b"").decode()
                       for f in file_list(labels_path)})
    in_file = ", ".join(in_files)
    rows = row_count(labels_path)
    passed = in_files == [expected_hash] and (hashes == [expected_hash] or rows == 0)
    return CheckOutcome(passed, "the policy hash is in every row and in the file metadata",
                        {"expected": expected_hash, "in_rows": ", ".join(map(str, hashes)),
                         "in_file_metadata": in_file})


def nothing_left_to_scrub(trajectories_path: Files, turns_path: Files) -> CheckOutcome:
    """A second scrubbing pass over the scrubbed tables finds no secret or personal datum."""
    left = Counter()
    for path in file_list(trajectories_path):
        left.update(residual_findings(Path(path), TRAJECTORY_TEXT_FIELDS))
    for path in file_list(turns_path):
        left.update(residual_findings(Path(path), TURN_TEXT_FIELDS))
    return CheckOutcome(not left, "a second pass finds no secret, e-mail, phone or IP address",
                        {"residual_findings": sum(left.values()),
                         "residual_kinds": ", ".join(f"{k} {n}" for k, n in sorted(left.items()))
                         or "none"})
