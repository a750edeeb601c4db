"""The bench assets on a real Dagster instance over a small generated corpus with a real split."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from assets.bench import agentworldbench, bench_predictions, bench_scores, leaderboard
from assets.quality import trajectory_dedup
from assets.resources import WorldtraceStorage
from assets.splits import trajectory_split
from bench.official import read_official
from bench.store import official_dir, read_samples
from bench.tables import AGENTWORLDBENCH, BENCH_PREDICTIONS, BENCH_SCORES
from quality.split import SplitConfig, split_trajectories
from quality.tables import TRAJECTORY_SPLIT
from sources.schema import DOMAINS
from tests.tiny_lm import build_tiny_model


def test_bench_assets_build_predict_score_and_rank(bench_corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(bench_corpus, data)
    split_trajectories(data, DOMAINS, SplitConfig(bench_share=0.5))
    # model folders as the training assets leave them (tiny, random: the rows must exist)
    build_tiny_model(data / "models" / "untrained_model", seed=1)
    build_tiny_model(data / "models" / "sft_model", seed=2)
    storage = WorldtraceStorage(data_dir=str(data))
    result = dg.materialize(
        [agentworldbench, bench_predictions, bench_scores, leaderboard],
        resources={"storage": storage},
        run_config={"ops": {"agentworldbench": {"config": {"per_domain": 5,
                                                            "counts": {"os": 3}}},
                            "bench_predictions": {"config": {"model_samples_per_domain": 2,
                                                             "max_new_tokens": 8,
                                                             "model_max_prompt_tokens": 0}}}},
    )
    assert result.success
    failed = [c.check_name for c in result.get_asset_check_evaluations() if not c.passed]
    assert failed == []

    samples = read_samples(data)
    assert samples and {s.domain for s in samples} <= set(DOMAINS)
    assert sum(s.domain == "os" for s in samples) == 3
    back, problems = read_official(official_dir(data))
    assert problems == [] and sorted(back, key=lambda s: s.id) == sorted(samples,
                                                                           key=lambda s: s.id)
    scores = pq.read_table(BENCH_SCORES.path(data, samples[0].domain)).to_pylist()
    models = {"hf_local:sft_model", "hf_local:untrained_model"}
    assert {row["predictor"] for row in scores} == {"copy_last", "empty", "retrieval", *models}
    assert all(row["failed"] or 0.0 <= row["score"] <= 100.0 for row in scores)
    assert sum(row["predictor"] == "hf_local:sft_model" for row in scores) == 2  # the subset

    with (data / "leaderboard" / "leaderboard.csv").open(encoding="utf-8") as handle:
        rows = {row["predictor"]: row for row in csv.DictReader(handle)}
    assert {"copy_last", "empty", "retrieval", *models, "Qwen-AgentWorld-35B-A3B"} <= rows.keys()
    assert int(rows["hf_local:untrained_model"]["samples"]) == 2 * len(
        {s.domain for s in samples})
    assert rows["Qwen-AgentWorld-35B-A3B"]["kind"] == "published"
    assert float(rows["empty"]["overall_macro"]) < float(rows["copy_last"]["overall_macro"])
    assert (data / "leaderboard" / "leaderboard.png").stat().st_size > 1000
    events = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    metadata = events["leaderboard"].materialization.metadata
    assert "| ours |" in metadata["leaderboard"].value
    comparison = metadata["models_vs_baselines"].value
    assert "sft_model format" in comparison and "untrained_model" in comparison
    assert "sft_model_minus_untrained" in metadata and "sft_model_minus_copy_last" in metadata
    assert (data / "leaderboard" / "models_vs_baselines.md").read_text().startswith("Scores")


def test_a_run_over_some_domains_benches_those_and_names_the_others(bench_corpus: Path,
                                                                   tmp_path: Path) -> None:
    """`worldtrace run --domains search,terminal` ingests those two only: dedup, the split and
    the bench follow the domains present, and the bench's metadata names the domains left out
    (it wanted every domain's split and failed)."""
    kept = ("search", "terminal")
    data = tmp_path / "data"
    shutil.copytree(bench_corpus, data, ignore=lambda _, names: [
        name for name in names if name.startswith("domain=") and name[7:] not in kept])
    result = dg.materialize(
        [trajectory_dedup, trajectory_split, agentworldbench, bench_predictions, bench_scores,
         leaderboard],
        resources={"storage": WorldtraceStorage(data_dir=str(data))},
        run_config={"ops": {"trajectory_split": {"config": {"bench_share": 0.5}},
                            "agentworldbench": {"config": {"per_domain": 3}},
                            "bench_predictions": {"config": {"include_models": False}}}})
    assert result.success
    assert all(c.passed for c in result.get_asset_check_evaluations())
    events = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
    metadata = events["agentworldbench"].materialization.metadata
    assert metadata["domains"].value == "search, terminal"
    assert metadata["domains_left_out"].value == "mcp, swe, android, web, os"
    samples = read_samples(data)
    assert {s.domain for s in samples} == set(kept) and len(samples) == 6
    assert sorted(path.name for path in official_dir(data).iterdir()) == [
        "search_test.jsonl", "terminal_test.jsonl"]
    with (data / "leaderboard" / "leaderboard.csv").open(encoding="utf-8") as handle:
        rows = {row["predictor"]: row for row in csv.DictReader(handle)}
    assert (rows["copy_last"]["domains"], rows["copy_last"]["samples"]) == ("2", "6")
    # the per-domain bench tables hold the run's domains only: no empty file for the others
    for table in (BENCH_PREDICTIONS, BENCH_SCORES):
        assert table.domains_present(data) == list(kept), table.name


def test_trained_model_folders_join_the_predictors(tmp_path: Path) -> None:
    from assets.bench import PredictorSettings, predictor_specs
    from bench.compare import model_specs
    from training.tables import model_folders

    for name, has_config in (("sft_model", True), ("rl_model", True), ("notes", False),
                             ("untrained_model", True)):
        (tmp_path / "models" / name).mkdir(parents=True)
        if has_config:
            (tmp_path / "models" / name / "config.json").write_text("{}", "utf-8")
    specs = predictor_specs(PredictorSettings(), tmp_path)
    assert specs == ["copy_last", "empty", "retrieval",
                     f"hf_local:{tmp_path / 'models' / 'rl_model'}",
                     f"hf_local:{tmp_path / 'models' / 'sft_model'}",
                     f"hf_local:{tmp_path / 'models' / 'untrained_model'}"]
    assert predictor_specs(PredictorSettings(include_models=False), tmp_path) == [
        "copy_last", "empty", "retrieval"]
    # bench_rollout names its models: in the order given, only folders that hold a model
    assert model_specs(model_folders(tmp_path, ["untrained_model", "cpt_model", "rl_model"])) == [
        f"hf_local:{tmp_path / 'models' / 'untrained_model'}",
        f"hf_local:{tmp_path / 'models' / 'rl_model'}"]


def test_a_domain_no_longer_split_loses_its_earlier_samples(bench_corpus: Path,
                                                            tmp_path: Path) -> None:
    """A domain whose trajectory_split is gone (removed, or left out of a later run) kept its
    earlier agentworldbench partition and official file, which bench_predictions then read as
    this build's; the bench removes them (no hidden folder left) and its metadata says so."""
    data = tmp_path / "data"
    shutil.copytree(bench_corpus, data)
    split_trajectories(data, DOMAINS, SplitConfig(bench_share=0.5))
    storage = WorldtraceStorage(data_dir=str(data))

    def build(**counts: int) -> dg.ExecuteInProcessResult:
        return dg.materialize([agentworldbench], resources={"storage": storage}, run_config={
            "ops": {"agentworldbench": {"config": {"per_domain": 2, "counts": counts}}}})

    assert build().success and AGENTWORLDBENCH.domains_present(data) == list(DOMAINS)
    gone = ("mcp", "web")
    for domain in gone:
        shutil.rmtree(TRAJECTORY_SPLIT.path(data, domain).parent)
    result = build()
    assert result.success
    kept = [domain for domain in DOMAINS if domain not in gone]
    assert AGENTWORLDBENCH.domains_present(data) == kept
    assert {s.domain for s in read_samples(data)} == set(kept)
    assert sorted(path.name for path in official_dir(data).iterdir()) == sorted(
        f"{domain}_test.jsonl" for domain in kept)
    assert list(AGENTWORLDBENCH.dir(data).glob(".*")) == []
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert metadata["domains_left_out"].value == metadata["domains_removed"].value == "mcp, web"
    assert build().get_asset_materialization_events()[0].materialization.metadata[
        "domains_removed"].value == "none"
    # a domain built with no sample: its earlier official file goes (its partition is empty)
    assert build(search=0).success and "search" not in {s.domain for s in read_samples(data)}
    assert not (official_dir(data) / "search_test.jsonl").exists()
