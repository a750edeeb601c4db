"""The quality assets on a real Dagster instance, over the real fixtures."""

from __future__ import annotations

import collections
import itertools
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from shard_runs import ShardRuns, materialize_domain
from ui_markdown import rendered_table

from assets.checks import domain_checks
from assets.ingest import raw_traces
from assets.quality import staged_turn_features, trajectory_dedup, turn_features, turn_labels
from assets.resources import WorldtraceStorage

REPO_ROOT = Path(__file__).resolve().parent.parent
QUALITY_ASSETS = [raw_traces, staged_turn_features, turn_features, turn_labels, trajectory_dedup]
QUALITY_ASSETS += domain_checks(QUALITY_ASSETS)  # their table checks


def materialize_fixtures(data_dir: Path, domain: str) -> ShardRuns:
    storage = WorldtraceStorage(data_dir=str(data_dir),
                                catalog=str(REPO_ROOT / "sources.example.toml"))
    return materialize_domain(QUALITY_ASSETS, domain, storage)


@pytest.mark.parametrize("domain", ["web", "swe", "mcp", "terminal", "search", "android", "os"])
def test_quality_assets_materialize_on_fixtures_with_passing_checks(
    traces_dir: Path, tmp_path: Path, domain: str
) -> None:
    result = materialize_fixtures(tmp_path, domain)
    assert result.success
    failed = [(c.asset_key.to_user_string(), c.check_name)
              for c in result.get_asset_check_evaluations() if not c.passed]
    assert failed == []
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert {"turn_features", "turn_labels", "trajectory_dedup"} <= materialized
    dedup = result.asset_materializations_for_node("trajectory_dedup")[0].metadata
    signature_columns = {c.name: c.description for c in dedup["signatures_schema"].schema.columns}
    assert set(signature_columns) == {"trajectory_id", "kind", "n_shingles", "signature"}
    assert all(signature_columns.values())
    labels = pq.read_table(
        tmp_path / "turn_labels" / f"domain={domain}" / "shard=0" / "part-0.parquet")
    turns = pq.read_metadata(
        tmp_path / "raw_turns" / f"domain={domain}" / "shard=0" / "part-0.parquet")
    assert labels.num_rows == turns.num_rows > 0
    weights = labels["loss_weight"].to_pylist()
    assert all(0.0 <= weight <= 1.0 for weight in weights)
    # the page shows the share of turns per rule and the ambiguous count (issue 18)
    page = result.asset_materializations_for_node("turn_labels")[0].metadata
    assert page["ambiguous_turns"].value == sum(labels["ambiguous"].to_pylist())
    # as the UI shows the table (cells are Markdown-escaped)
    turns_per_rule = {row[0]: int(row[1])
                      for row in rendered_table(page["rule_distribution"].value)}
    assert sum(turns_per_rule.values()) == labels.num_rows
    assert all(turns_per_rule[rule] == n for rule, n in
               collections.Counter(labels["rule"].to_pylist()).items())
    assert page["rule_plot"].value.startswith("![plot](data:image/png;base64,")


def test_webarena_pages_that_did_not_change_are_unchanged(traces_dir: Path, tmp_path: Path) -> None:
    """render_16.html: the agent's actions failed to parse (`none`), so the OpenStreetMap page
    stayed the same after every one of them."""
    assert materialize_fixtures(tmp_path, "web").success
    turns = pq.read_table(
        tmp_path / "raw_turns" / "domain=web" / "shard=0" / "part-0.parquet").to_pylist()
    labels = pq.read_table(
        tmp_path / "turn_labels" / "domain=web" / "shard=0" / "part-0.parquet").to_pylist()
    category = {(row["trajectory_id"], row["turn_index"]): row["category"] for row in labels}
    for previous, turn in itertools.pairwise(turns):
        same_trajectory = previous["trajectory_id"] == turn["trajectory_id"]
        if same_trajectory and turn["observation"] == previous["observation"]:
            assert category[turn["trajectory_id"], turn["turn_index"]] == "unchanged"
    assert sum(c == "unchanged" for c in category.values()) >= 2


def test_turn_features_reruns_alone_from_the_staged_partitions(traces_dir: Path,
                                                              tmp_path: Path) -> None:
    """The staged_turn_features partitions Dagster records as materialized are on disk after
    turn_features read them (it removed them, and a rerun of turn_features alone, as the UI's
    Materialize button or a new corpus_frequency_threshold launches it, failed with "no
    staged_turn_features"); the rerun gives the same bytes with the same settings."""
    from quality.tables import STAGED_TURN_FEATURES, TURN_FEATURES

    assert materialize_fixtures(tmp_path, "terminal").success
    staged = STAGED_TURN_FEATURES.domain_files(tmp_path, "terminal")
    assert staged and all(path.stat().st_size for path in staged)
    before = [path.read_bytes() for path in TURN_FEATURES.domain_files(tmp_path, "terminal")]
    storage = WorldtraceStorage(data_dir=str(tmp_path),
                                catalog=str(REPO_ROOT / "sources.example.toml"))
    again = dg.materialize([turn_features], partition_key="terminal",
                           resources={"storage": storage})
    assert again.success
    assert [path.read_bytes() for path in TURN_FEATURES.domain_files(tmp_path, "terminal")
            ] == before
    metadata = again.asset_materializations_for_node("turn_features")[0].metadata
    assert metadata["staged_mb"].value == round(sum(p.stat().st_size for p in staged) / 1e6, 2)
    assert dg.materialize([turn_features], partition_key="terminal", resources={
        "storage": storage}, run_config={"ops": {"turn_features": {"config": {
            "corpus_frequency_threshold": 0.5}}}}).success
