"""`worldtrace run`'s plan and summary: the cross-domain steps in dependency order, and the
summary's tables read from a real data directory."""

from __future__ import annotations

import os
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from assets.jobs import PHASE_JOBS, RUN_JOBS
from bench.tables import BENCH_SCORES
from quality.features import compute_turn_features
from quality.labels import label_turns, load_policy
from quality.tables import TURN_FEATURES, TURN_LABELS
from sources.catalog import load_catalog
from sources.ingest import write_tables
from sources.schema import DOMAINS
from sources.storage import write_parquet
from sources.tables import RAW_TURNS
from worldtrace.launch import (
    asset_job_name,
    corpus_steps,
    prepare_instance,
    reconstructable_job,
    register_domain_shards,
)
from worldtrace.summary import summary

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_corpus_steps_run_in_dependency_order_and_end_with_the_release() -> None:
    names = [name for name, _ in corpus_steps()]
    assert names.index("trajectory_dedup") < names.index("trajectory_split")
    assert names.index("trajectory_split") < names.index("tokenizer") < names.index("cpt_corpus")
    assert names.index("leaderboard") < names.index("dataset_release")
    assert "raw_traces" not in names and "ablation_table" not in names


def test_every_job_the_run_launches_is_rebuilt_by_name_as_assets_jobs_declares_it() -> None:
    """The run's jobs come from assets/jobs.py (a new phase job joins them), each rebuilt in
    the run's process by worldtrace.launch.job_named; the asset job, whose reserved name no
    wrapper repository can hold, from the code location."""
    from assets.definitions import defs

    assert RUN_JOBS == (*(phase.job for phase in PHASE_JOBS), "corpus_job")
    for name in RUN_JOBS:
        job = reconstructable_job(name)
        pointer = job.repository.pointer
        assert (pointer.reconstructor_pointer.module, pointer.reconstructor_pointer.fn_name,
                list(pointer.reconstructable_args)) == ("worldtrace.launch", "job_named", [name])
        definition = job.get_definition()
        assert definition.name == name
        assert (set(definition.asset_layer.executable_asset_keys)
                == set(defs.get_job_def(name).asset_layer.executable_asset_keys))
    asset_job = reconstructable_job(asset_job_name())
    assert asset_job.repository.pointer.module == "assets.definitions"
    assert asset_job.get_definition().name == asset_job_name()


def test_summary_shows_rows_categories_and_where_things_are(traces_dir: Path,
                                                            tmp_path: Path) -> None:
    specs = [s for s in load_catalog(REPO_ROOT / "sources.example.toml", tmp_path)
             if s.domain == "swe"]
    write_tables(specs, tmp_path, domains=["swe"])
    compute_turn_features(RAW_TURNS.path(tmp_path, "swe", "0"),
                          TURN_FEATURES.path(tmp_path, "swe", "0"))
    label_turns(TURN_FEATURES.path(tmp_path, "swe", "0"),
                TURN_LABELS.path(tmp_path, "swe", "0"), load_policy())
    (tmp_path / "leaderboard").mkdir()
    (tmp_path / "leaderboard" / "models_vs_baselines.md").write_text(
        "Scores:\n\n| domain |\n\n- rl_model: 20.00 overall, +9.00 vs untrained_model\n")
    text = summary(tmp_path, [tmp_path / "releases" / "worldtrace-0.1.0"], 12, 0, 90.0,
                   "/home/x/.dagster_home")
    assert "- rl_model: 20.00 overall, +9.00 vs untrained_model" in text.splitlines()
    turns = next(line for line in text.splitlines() if line.startswith("raw_turns"))
    rows = pq.read_metadata(RAW_TURNS.path(tmp_path, "swe", "0")).num_rows
    assert turns.split()[-1] == f"{rows:,}" and rows > 0
    assert "12 checks passed, 0 failed" in text
    assert "Turn categories" in text and "swe" in text
    assert "http://127.0.0.1:3000" in text and "worldtrace-0.1.0" in text


def test_instance_storage_is_created_once_before_the_workers(tmp_path: Path,
                                                              monkeypatch) -> None:
    """Workers that each found no run storage created it at once and stamped its schema version
    twice (a clean clone's `make run` failed with "more than one head"); the parent makes it."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    prepare_instance()
    with sqlite3.connect(tmp_path / "history" / "runs.db") as db:
        versions = db.execute("select version_num from alembic_version").fetchall()
    assert len(versions) == 1
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        assert all(pool.map(_open_instance, [str(tmp_path)] * 4))


def _open_instance(home: str) -> bool:
    os.environ["DAGSTER_HOME"] = home
    dg.DagsterInstance.get().dispose()
    return True


def test_the_shards_the_files_hash_to_are_registered_before_the_shard_runs(
        traces_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """Between the generate and the shard phases: each domain's shard keys (the catalog's files
    hash to them), added to the instance once."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("WORLDTRACE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("WORLDTRACE_CATALOG", str(REPO_ROOT / "sources.example.toml"))
    log = tmp_path / "run.log"
    for shards, expected in (("1", ["0"]), ("4", ["0", "1", "2", "3"])):
        monkeypatch.setenv("WORLDTRACE_SHARDS", shards)
        found = register_domain_shards(["web", "terminal"], log)
        assert set(found) == {"web", "terminal"} and all(found.values())
        assert {key for keys in found.values() for key in keys} <= set(expected)
        with dg.DagsterInstance.get() as instance:
            registered = instance.get_dynamic_partitions("shard")
        assert set(registered) == {"0"} | {key for keys in found.values() for key in keys}


def test_a_subset_run_summary_counts_only_its_domains(tmp_path: Path) -> None:
    """`worldtrace run --domains terminal` after a run over every domain: the data directory
    still holds the other domains' partitions (here bench_scores, two rows each); the summary
    names those domains as not in the run instead of counting their old rows."""
    row = {name: "x" for name in ("id", "source", "category", "predictor", "judge", "scoring",
                                  "failure_reason", "evidence", "domain")}
    row.update(failed=False, malformed=False, copies_history=False)
    for domain in DOMAINS:
        write_parquet(pa.Table.from_pylist([{**row, "domain": domain}] * 2,
                                           schema=BENCH_SCORES.schema),
                      BENCH_SCORES.path(tmp_path, domain))
    text = summary(tmp_path, [], 3, 0, 60.0, "/home/x/.dagster_home", domains=["terminal"])
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("table"))
    assert header.split() == ["table", "terminal", "all"]
    assert next(line for line in lines if line.startswith("bench_scores")).split() == [
        "bench_scores", "2", "2"]
    left_out = [d for d in DOMAINS if d != "terminal"]
    assert f"Not in this run (not counted): {', '.join(left_out)}" in lines
