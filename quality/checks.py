"""Integrity checks on the quality tables, in DuckDB; plain functions usable without Dagster."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from quality.scrub import TRAJECTORY_TEXT_FIELDS, TURN_TEXT_FIELDS, residual_findings
from sources.storage import CheckOutcome, load_sql, scalar_query


def features_in_range(features_path: Path) -> CheckOutcome:
    """Shares and similarities lie in [0, 1] (or are null where undefined), ratios are >= 0,
    and an observation occurs in at least its own trajectory."""
    bad = scalar_query(load_sql(__file__, "features_out_of_range.sql"), path=str(features_path))
    return CheckOutcome(bad == 0, "features lie in their documented ranges",
                        {"rows_out_of_range": bad})


def every_turn_labelled(turns_path: Path, labels_path: Path) -> CheckOutcome:
    """Each raw turn has a label row, and there are no extra label rows."""
    missing = scalar_query(load_sql(__file__, "unlabelled_turns.sql"), turns=str(turns_path),
                           labels=str(labels_path))
    turns = pq.read_metadata(turns_path).num_rows
    labels = pq.read_metadata(labels_path).num_rows
    return CheckOutcome(missing == 0 and turns == labels, "every turn has exactly one label",
                        {"turns": turns, "labels": labels, "unlabelled_turns": missing})


def weights_in_unit_interval(labels_path: Path) -> CheckOutcome:
    """loss_weight in [0, 1] and a category on every row."""
    bad = scalar_query(load_sql(__file__, "weights_out_of_range.sql"), labels=str(labels_path))
    return CheckOutcome(bad == 0, "loss_weight in [0, 1], category set",
                        {"rows_out_of_range": bad})


def policy_hash_recorded(labels_path: Path, expected_hash: str) -> CheckOutcome:
    """Every row and the file's metadata carry the hash of the policy that labelled them."""
    with duckdb.connect() as connection:
        rows = connection.execute(load_sql(__file__, "policy_hashes.sql"),
                                  {"labels": str(labels_path)}).fetchall()
        hashes = [row[0] for row in rows]
    file_metadata = pq.read_schema(labels_path).metadata or {}
    in_file = file_metadata.get(b"policy_hash", b"").decode()
    rows = pq.read_metadata(labels_path).num_rows
    passed = in_file == expected_hash and (hashes == [expected_hash] or rows == 0)
    return CheckOutcome(passed, "the policy hash is in every row and in the file metadata",
                        {"expected": expected_hash, "in_rows": ", ".join(map(str, hashes)),
                         "in_file_metadata": in_file})


def nothing_left_to_scrub(trajectories_path: Path, turns_path: Path) -> CheckOutcome:
    """A second scrubbing pass over the scrubbed tables finds no secret or personal datum."""
    left = residual_findings(trajectories_path, TRAJECTORY_TEXT_FIELDS)
    left.update(residual_findings(turns_path, TURN_TEXT_FIELDS))
    return CheckOutcome(not left, "a second pass finds no secret, e-mail, phone or IP address",
                        {"residual_findings": sum(left.values()),
                         "residual_kinds": ", ".join(f"{k} {n}" for k, n in sorted(left.items()))
                         or "none"})
