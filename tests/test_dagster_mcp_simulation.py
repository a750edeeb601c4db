"""The `mcp_simulation_report` asset on a real Dagster instance: a small generated MCP corpus
(ingested, labelled, split), two tiny model folders, bench-pool sessions replayed free-running
and anchored, the tables as bench/tables.py declares them, the metadata and the chart."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets.mcp_simulation import mcp_simulation_report
from assets.resources import WorldtraceStorage
from bench.tables import MCP_SIMULATION_REPORT, MCP_SIMULATION_STEPS
from quality.split import SplitConfig, split_trajectories
from quality.stage import run_quality_stage
from sources.catalog import make_spec
from sources.factory.scale import generate_corpus
from sources.ingest import write_tables
from tests.tiny_lm import build_tiny_model, torch_one_thread  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("torch_one_thread")
SESSIONS, CALLS = 2, 2
MODELS = ("sft_model", "rl_model")


@pytest.fixture(scope="module")
def mcp_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated MCP trajectories through ingest, the quality stage and the split, and the two
    trained-model folders the asset looks for (tiny, random: the rows must exist)."""
    root = tmp_path_factory.mktemp("mcp_simulation")
    generated, data = root / "generated", root / "data"
    generate_corpus(generated, ["mcp"], 6, 11)
    write_tables([make_spec("mcp-generated", generated / "mcp", "mcp")], data, domains=["mcp"])
    run_quality_stage(data, data, ["mcp"])
    split_trajectories(data, ["mcp"], SplitConfig(bench_share=0.5))
    for seed, name in enumerate(MODELS, start=1):
        build_tiny_model(data / "models" / name, seed=seed)
    return data


def test_the_report_replays_bench_sessions_for_each_model(mcp_data: Path) -> None:
    result = dg.materialize(
        [mcp_simulation_report], resources={"storage": WorldtraceStorage(data_dir=str(mcp_data))},
        run_config={"ops": {"mcp_simulation_report": {"config": {
            "sessions": SESSIONS, "calls": CALLS, "max_new_tokens": 8,
            "model_max_prompt_tokens": 0}}}})
    assert result.success

    steps = pq.read_table(MCP_SIMULATION_STEPS.path(mcp_data))
    report = pq.read_table(MCP_SIMULATION_REPORT.path(mcp_data))
    assert steps.schema.names == MCP_SIMULATION_STEPS.schema.names
    assert report.schema.names == MCP_SIMULATION_REPORT.schema.names
    rows = steps.to_pylist()
    names = {f"hf_local:{name}" for name in MODELS}
    # Each model, each mode, each session: its first CALLS calls (every session has that many).
    assert {r["model"] for r in rows} == names
    assert len({r["session"] for r in rows}) == SESSIONS
    assert len(rows) == len(MODELS) * 2 * SESSIONS * CALLS
    assert sorted({(r["mode"], r["depth"]) for r in rows}) == [
        (mode, depth) for mode in ("anchored", "free") for depth in range(1, CALLS + 1)]
    assert {r["answered_by"] for r in rows if r["mode"] == "free"} <= {"model", "none"}
    for row in rows:  # anchored reads are the recorded real answer; writes, the model's
        if row["mode"] == "anchored" and row["kind"] == "read":
            assert row["answered_by"] == "anchor" and row["score"] == 100.0
        assert row["failed"] or 0.0 <= row["score"] <= 100.0

    table = report.to_pylist()
    # Per model and mode: one row per depth and one over all depths (depth null).
    assert sorted((r["model"], r["mode"], r["depth"] or 0) for r in table) == sorted(
        (m, mode, d) for m in names for mode in ("anchored", "free") for d in range(CALLS + 1))
    overall = {(r["model"], r["mode"]): r for r in table if r["depth"] is None}
    for name in names:
        assert overall[(name, "free")]["calls"] == overall[(name, "anchored")]["calls"] == \
            SESSIONS * CALLS
        anchored = overall[(name, "anchored")]
        assert anchored["difference_low"] <= anchored["anchored_minus_free"] <= \
            anchored["difference_high"]
    assert (MCP_SIMULATION_REPORT.dir(mcp_data) / "fidelity.png").stat().st_size > 1000

    event = result.get_asset_materialization_events()[0]
    metadata = event.materialization.metadata
    assert metadata["dagster/row_count"].value == len(table)
    assert metadata["sessions"].value == SESSIONS
    assert metadata["calls_replayed"].value == len(rows)
    assert set(metadata["models"].value.split(", ")) == set(MODELS)
    assert "| anchored |" in metadata["overall"].value
    assert metadata["chart"].value.startswith("![fidelity](data:image/png;base64,")


def test_no_mcp_domain_gives_an_empty_report(tmp_path: Path) -> None:
    """A run that left MCP out: the asset still succeeds, with empty tables and zero counts."""
    result = dg.materialize(
        [mcp_simulation_report], resources={"storage": WorldtraceStorage(data_dir=str(tmp_path))})
    assert result.success
    assert pq.read_table(MCP_SIMULATION_REPORT.path(tmp_path)).num_rows == 0
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert metadata["sessions"].value == 0 and metadata["calls_replayed"].value == 0
