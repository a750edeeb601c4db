"""The Dagster ingest asset on a real (ephemeral) instance, over the real fixtures."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from shard_runs import ShardRuns, materialize_domain

from assets.checks import domain_checks
from assets.ingest import raw_traces
from assets.resources import WorldtraceStorage

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_CATALOG = REPO_ROOT / "sources.example.toml"
INGEST = [raw_traces, *domain_checks([raw_traces])]  # the asset and its table checks


@pytest.mark.parametrize("domain", ["terminal", "web"])
def test_raw_traces_partition_materializes_with_passing_checks(
    traces_dir: Path, tmp_path: Path, domain: str
) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path), catalog=str(EXAMPLE_CATALOG))
    result = materialize_domain(INGEST, domain, storage)
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert len(checks) == 8
    failed = [(c.asset_key.to_user_string(), c.check_name) for c in checks if not c.passed]
    assert failed == []
    materializations = {
        event.materialization.asset_key.to_user_string(): event.materialization.metadata
        for event in result.get_asset_materialization_events()
    }
    turns_meta = materializations["raw_turns"]
    written = pq.read_metadata(
        tmp_path / "raw_turns" / f"domain={domain}" / "shard=0" / "part-0.parquet")
    assert turns_meta["dagster/row_count"].value == written.num_rows > 0
    # terminal: the fixture's terminal-bench run launched an agent that was not installed
    assert turns_meta["quarantined"].value == {"terminal": 1, "web": 0}[domain]
    assert "turn_index" in turns_meta["preview"].value
    column_names = [c.name for c in turns_meta["dagster/column_schema"].schema.columns]
    assert column_names[:3] == ["trajectory_id", "turn_index", "domain"]


def test_empty_partition_with_sources_fails_its_check(tmp_path: Path) -> None:
    catalog = tmp_path / "sources.toml"
    empty = tmp_path / "empty"
    empty.mkdir()
    catalog.write_text(f'[[source]]\nname = "nothing"\ndomain = "os"\npath = "{empty}"\n')
    storage = WorldtraceStorage(data_dir=str(tmp_path / "data"), catalog=str(catalog))
    result = materialize_domain(INGEST, "os", storage, raise_on_error=False)
    verdicts = {(c.asset_key.to_user_string(), c.check_name): c.passed
                for c in result.get_asset_check_evaluations()}
    assert verdicts[("raw_turns", "not_empty")] is False
    assert verdicts[("raw_turns", "unique_turn_keys")] is True


def test_selecting_raw_turns_alone_materializes_only_it(traces_dir: Path, tmp_path: Path) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path), catalog=str(EXAMPLE_CATALOG))
    result = materialize_domain(INGEST, "os", storage, selection="raw_turns")
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert materialized == {"raw_turns"}
    assert {c.check_name for c in result.get_asset_check_evaluations()} == {
        "schema", "unique_turn_keys", "contiguous_turn_indices", "not_empty"}
    # the sibling tables are still written with it, so their IDs agree
    assert (tmp_path / "raw_trajectories" / "domain=os" / "shard=0" / "part-0.parquet").exists()


def outside_catalog_warning(result: ShardRuns) -> str:
    """The only failed check's figures naming the sources outside the catalog (a warning)."""
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    assert [(c.check_name, c.severity) for c in failed] == [
        ("only_catalog_sources", dg.AssetCheckSeverity.WARN)]
    return failed[0].metadata["outside_catalog"].value


def test_partition_keeps_another_runs_source_and_warns_about_it(
    traces_dir: Path, tmp_path: Path
) -> None:
    """A `worldtrace ingest` of another source into the same data dir survives the asset run,
    the reconcile check counts the asset's own sources only, and only_catalog_sources warns."""
    from sources.catalog import make_spec
    from sources.ingest import write_tables

    data = tmp_path / "data"
    write_tables([make_spec("hand-copied", traces_dir / "os", "os")], data)
    storage = WorldtraceStorage(data_dir=str(data), catalog=str(EXAMPLE_CATALOG))
    result = materialize_domain(INGEST, "os", storage)
    assert result.success
    assert outside_catalog_warning(result).startswith("hand-copied (")
    rows = pq.read_table(data / "raw_trajectories" / "domain=os" / "shard=0").to_pylist()
    sources = sorted({row["source"] for row in rows})
    assert "hand-copied" in sources and len(sources) == 2
    (event,) = [e for e in result.get_asset_materialization_events()
                if e.asset_key.to_user_string() == "raw_turns"]
    metadata = event.materialization.metadata
    assert metadata["sources_in_shard"].value == ", ".join(sources)
    assert metadata["sources_in_domain"].value == ", ".join(sources)  # one shard: the same


def test_a_source_removed_from_the_catalog_is_named_by_a_warning(
    traces_dir: Path, tmp_path: Path
) -> None:
    catalog, data = tmp_path / "sources.toml", tmp_path / "data"
    example = EXAMPLE_CATALOG.read_text(encoding="utf-8").replace(
        "../shared/traces", str(traces_dir))
    catalog.write_text(example + f'\n[[source]]\nname = "retired"\ndomain = "os"\n'
                                 f'path = "{traces_dir / "os"}"\n', encoding="utf-8")
    storage = WorldtraceStorage(data_dir=str(data), catalog=str(catalog))
    first = materialize_domain(INGEST, "os", storage)
    assert all(c.passed for c in first.get_asset_check_evaluations())
    retired = pq.read_table(data / "raw_trajectories" / "domain=os" / "shard=0").to_pylist()
    count = sum(row["source"] == "retired" for row in retired)
    catalog.write_text(example, encoding="utf-8")
    second = materialize_domain(INGEST, "os", storage)
    assert second.success
    assert outside_catalog_warning(second) == f"retired ({count} trajectories)"


def test_table_checks_are_their_own_steps(traces_dir: Path, tmp_path: Path) -> None:
    """The checks that read only the tables are asset checks, each its own step after the
    asset (the run's step keys name them), declared once in assets/checks.py; only the two
    that need the run's counts are evaluated inside raw_traces."""
    storage = WorldtraceStorage(data_dir=str(tmp_path), catalog=str(EXAMPLE_CATALOG))
    result = materialize_domain(INGEST, "web", storage)
    steps = {(event.step_key, event.event_specific_data.check_name)
             for event in result.all_events
             if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION}
    assert steps == {
        ("raw_turns_schema", "schema"), ("raw_turns_unique_turn_keys", "unique_turn_keys"),
        ("raw_turns_contiguous_turn_indices", "contiguous_turn_indices"),
        ("raw_trajectories_schema", "schema"),
        ("raw_trajectories_turn_counts_match", "turn_counts_match"),
        ("raw_trajectories_only_catalog_sources", "only_catalog_sources"),
        ("raw_traces", "records_reconcile"), ("raw_traces", "not_empty")}
