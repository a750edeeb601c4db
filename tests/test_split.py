"""trajectory_split: runs of one task share a pool, no near copy straddles train and bench,
deterministic output; the Dagster asset over real fixtures."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from datasets import load_from_disk
from quality_rows import trajectory, write_partition
from shard_runs import materialize_domain

from assets.ingest import raw_traces
from assets.quality import staged_turn_features, trajectory_dedup, turn_features, turn_labels
from assets.resources import WorldtraceStorage
from assets.scrub import scrubbed_traces
from assets.splits import (
    cpt_corpus,
    rl_split,
    rl_split_all_turns,
    sft_split,
    tokenizer,
    trajectory_split,
)
from quality.split import SplitConfig, group_key, split_trajectories, stable_fraction
from quality.stage import dedup_across_partitions
from sources.factory.scale_text import jaccard
from sources.tables import RAW_TURNS

REPO_ROOT = Path(__file__).resolve().parent.parent
WORDS = [f"w{i}" for i in range(4000)]


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def leak_copy(rng: random.Random, original: str) -> str:
    """A text that keeps 87 % of another's words (Jaccard about 0.7: under dedup's 0.8)."""
    words = original.split()
    cut = len(words) * 87 // 100
    return " ".join(words[:cut] + [rng.choice(WORDS) for _ in range(len(words) - cut)])


def corpus(seed: int = 1) -> dict:
    """40 tasks with 1-3 runs each, and 30 pairs of runs under different tasks that share
    most of their observations (leaks dedup does not remove: Jaccard under 0.8)."""
    rng = random.Random(seed)
    items = {}
    for t in range(40):
        task = f"task number {t}: " + text(rng, 8)
        for r in range(1 + t % 3):
            items[f"t{t:02d}_run{r}.json"] = trajectory(task, [("ls", text(rng, 80)),
                                                               ("cat f", text(rng, 80))])
    for k in range(30):
        observation = text(rng, 200)
        items[f"leak{k:02d}_a.json"] = trajectory(f"leak a {k}", [("run", observation)])
        items[f"leak{k:02d}_b.json"] = trajectory(f"leak b {k}",
                                                  [("run", leak_copy(rng, observation))])
    return items


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    data = tmp_path_factory.mktemp("split")
    items = corpus()
    write_partition(data, "terminal", dict(list(items.items())[:60]))
    write_partition(data, "swe", dict(list(items.items())[60:]))
    dedup_across_partitions(data, data, ["terminal", "swe"])
    config = SplitConfig(bench_share=0.5)
    stats = split_trajectories(data, ["terminal", "swe"], config)
    rows = [r for d in ("terminal", "swe")
            for r in pq.read_table(data / "trajectory_split" / f"domain={d}" / "part-0.parquet")
            .to_pylist()]
    names = {r["trajectory_id"]: r["source_path"] for d in ("terminal", "swe")
             for r in pq.read_table(
                 data / "raw_trajectories" / f"domain={d}" / "shard=0" / "part-0.parquet",
                 columns=["trajectory_id", "source_path"]).to_pylist()}
    texts = {names[tid]: t for tid, t in _texts(data).items()}
    return data, stats, {names[r["trajectory_id"]]: r for r in rows}, texts, names


def _texts(data: Path) -> dict[str, str]:
    import duckdb
    rows = duckdb.sql(f"""
        SELECT trajectory_id, string_agg(observation, '\n' ORDER BY turn_index)
        FROM read_parquet('{RAW_TURNS.glob(data)}') GROUP BY ALL""").fetchall()
    return dict(rows)


def test_every_kept_trajectory_is_in_one_pool(split):
    _, stats, rows, _, _ = split
    assert len(rows) == stats.trajectories == len(corpus())  # dedup removes none of them
    assert {r["pool"] for r in rows.values()} == {"train", "bench", "contaminated"}


def test_runs_of_one_task_share_a_pool(split):
    _, _, rows, _, _ = split
    for t in range(40):
        runs = [r for name, r in rows.items() if name.startswith(f"t{t:02d}_")]
        assert len({r["group_key"] for r in runs}) == 1
        assert len({r["pool"] for r in runs}) == 1


def test_no_near_copy_in_both_train_and_bench(split):
    _, stats, rows, texts, names = split
    train = [n for n, r in rows.items() if r["pool"] == "train"]
    bench = [n for n, r in rows.items() if r["pool"] == "bench"]
    worst = max(jaccard(texts[a], texts[b]) for a, b in itertools.product(train, bench))
    # the threshold is 0.5 on a 128-value MinHash estimate (standard error about 0.044)
    assert worst < 0.6
    contaminated = [r for r in rows.values() if r["pool"] == "contaminated"]
    assert contaminated and stats.count("terminal", "contaminated") + stats.count(
        "swe", "contaminated") == len(contaminated)
    for r in contaminated:
        assert rows[names[r["nearest_bench_id"]]]["pool"] == "bench"
        assert r["similarity"] >= 0.5


def test_split_is_deterministic(split, tmp_path):
    data, _, _, _, _ = split
    first = (data / "trajectory_split" / "domain=swe" / "part-0.parquet").read_bytes()
    split_trajectories(data, ["terminal", "swe"], SplitConfig(bench_share=0.5))
    assert (data / "trajectory_split" / "domain=swe" / "part-0.parquet").read_bytes() == first


def test_group_keys_and_bench_share():
    assert group_key("Fix the Bug", '{"instance_id": "a-1"}', "x") == "instance_id:a-1"
    assert group_key("Fix  the bug", "{}", "x") == group_key("fix the bug", None, "y")
    assert group_key("", "{}", "abc") == "trajectory:abc"
    share = sum(stable_fraction(f"k{i}", 0) < 0.15 for i in range(20000)) / 20000
    assert share == pytest.approx(0.15, abs=0.01)


def test_assets_on_real_fixtures(traces_dir, tmp_path):
    storage = WorldtraceStorage(data_dir=str(tmp_path),
                                catalog=str(REPO_ROOT / "sources.example.toml"))
    for domain in ("swe", "mcp"):
        assert materialize_domain([raw_traces, staged_turn_features, turn_features, turn_labels,
                                   scrubbed_traces],
                                  domain, storage).success
    result = dg.materialize(
        [trajectory_dedup, trajectory_split, tokenizer, cpt_corpus, sft_split, rl_split,
         rl_split_all_turns],
        resources={"storage": storage}, run_config={"ops": {
            "trajectory_split": {"config": {"bench_share": 0.3}},
            "tokenizer": {"config": {"vocab_size": 512}},
            "cpt_corpus": {"config": {"seq_len": 64}},
            "rl_split": {"config": {"max_prompt_tokens": 2048}}}})
    assert result.success
    assert all(c.passed for c in result.get_asset_check_evaluations())
    meta = {e.asset_key.to_user_string(): e.materialization.metadata
            for e in result.get_asset_materialization_events()}
    decisions = pq.read_table(tmp_path / "trajectory_dedup" / "trajectory_dedup.parquet")
    kept = decisions.filter(decisions["kept"])
    assert meta["trajectory_split"]["dagster/row_count"].value == kept.num_rows > 0
    assert meta["tokenizer"]["vocab_size"].value <= 512
    assert meta["cpt_corpus"]["tokens"].value > 0
    rows = pq.read_table(tmp_path / "cpt_corpus" / "domain=swe" / "part-0.parquet").to_pylist()
    assert rows and all(len(r["input_ids"]) == 64 for r in rows[:-1])
    for table in ("sft_split", "rl_split", "rl_split_all_turns"):
        assert meta[table]["samples"].value == meta[table]["dagster/row_count"].value > 0
        assert load_from_disk(str(tmp_path / table / "hf"))["train"].num_rows == (
            meta[table]["samples"].value)
    assert meta["rl_split"]["prompt_tokens_max"].value <= 2048
