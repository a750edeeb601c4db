"""Building the bench from a pool: judgeable targets, real prefixes, stratified, seeded."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from bench_corpus import pools

from bench.allocation import allocate
from bench.build import JUDGEABLE, BuildConfig, build_domain
from bench.prompts import system_prompt
from quality.tables import TRAJECTORY_SPLIT, TURN_LABELS
from sources.schema import DOMAINS
from sources.storage import sql_path
from sources.tables import RAW_TURNS


def test_allocation_is_proportional_capped_and_redistributed() -> None:
    assert allocate(10, {"a": 30, "b": 10}, {"a": 100, "b": 100}) == {"a": 8, "b": 2}
    # b can give only 1: the rest goes to a.
    assert allocate(10, {"a": 30, "b": 30}, {"a": 100, "b": 1}) == {"a": 9, "b": 1}
    # Not enough anywhere: everything, and the caller reports the shortfall.
    assert allocate(50, {"a": 3, "b": 2}, {"a": 7, "b": 4}) == {"a": 7, "b": 4}
    assert allocate(3, {"a": 1, "b": 1, "c": 1}, {"a": 5, "b": 5, "c": 5}) == {
        "a": 1, "b": 1, "c": 1}


def _turns(data: Path, domain: str) -> dict[tuple[str, int], tuple[str, str]]:
    path = sql_path(RAW_TURNS.path(data, domain, "0"))
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT trajectory_id, turn_index, action, observation "
                           f"FROM read_parquet({path})").fetchall()
    return {(r[0], r[1]): (r[2], r[3]) for r in rows}


def _labels(data: Path, domain: str) -> dict[tuple[str, int], str]:
    path = sql_path(TURN_LABELS.path(data, domain, "0"))
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT trajectory_id, turn_index, category "
                           f"FROM read_parquet({path})").fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


@pytest.mark.parametrize("domain", ["terminal", "android"])
def test_samples_are_real_prefixes_of_bench_trajectories(bench_corpus: Path, domain: str) -> None:
    bench_ids, _ = pools(bench_corpus, domain)
    samples, stats = build_domain(bench_corpus, domain, BuildConfig(counts={domain: 12}),
                                  trajectory_ids=bench_ids)
    assert stats.built == len(samples) == 12 and stats.shortfall == 0
    turns, labels = _turns(bench_corpus, domain), _labels(bench_corpus, domain)
    for sample in samples:
        assert sample.trajectory_id in bench_ids
        target = sample.turn_idx - 1
        assert (sample.current_action, sample.reference) == turns[sample.trajectory_id, target]
        assert list(sample.history) == [turns[sample.trajectory_id, k] for k in range(target)]
        assert labels[sample.trajectory_id, target] == sample.category in JUDGEABLE
        assert sample.system_prompt == system_prompt(domain)
        assert sample.total_turns >= sample.turn_idx
    # One target per trajectory before any trajectory gets a second one (12 > 4 trajectories).
    per_trajectory = [sum(s.trajectory_id == t for s in samples) for t in bench_ids]
    assert min(per_trajectory) >= 1


def test_seeded_and_shortfall_reported(bench_corpus: Path) -> None:
    ids = pools(bench_corpus, "mcp")[0]
    first, _ = build_domain(bench_corpus, "mcp", BuildConfig(counts={"mcp": 5}, seed=1), ids)
    again, _ = build_domain(bench_corpus, "mcp", BuildConfig(counts={"mcp": 5}, seed=1), ids)
    other, _ = build_domain(bench_corpus, "mcp", BuildConfig(counts={"mcp": 5}, seed=2), ids)
    assert first == again and first != other
    everything, stats = build_domain(bench_corpus, "mcp", BuildConfig(), ids)
    assert stats.requested == 286 and stats.built == stats.eligible_turns == len(everything)
    assert stats.shortfall == 286 - stats.built > 0


def test_every_domain_builds(bench_corpus: Path) -> None:
    for domain in DOMAINS:
        samples, stats = build_domain(bench_corpus, domain, BuildConfig(counts={domain: 3}),
                                      trajectory_ids=pools(bench_corpus, domain)[0])
        assert len(samples) == 3, (domain, stats)
        if domain in ("android", "web", "os"):
            assert all(s.task for s in samples), domain


def test_checks_catch_train_trajectories(bench_corpus: Path, tmp_path: Path) -> None:
    import shutil

    from bench import checks
    from quality.split import SplitConfig, split_trajectories

    data = tmp_path / "data"
    shutil.copytree(bench_corpus, data)
    split_trajectories(data, ["terminal"], SplitConfig(bench_share=0.5))
    split = sql_path(TRAJECTORY_SPLIT.path(data, "terminal"))
    with duckdb.connect() as con:
        pools = dict(con.execute(f"SELECT trajectory_id, pool FROM read_parquet({split})"
                                 ).fetchall())
    bench = [t for t, p in pools.items() if p == "bench"]
    train = [t for t, p in pools.items() if p == "train"]
    good, _ = build_domain(data, "terminal", BuildConfig(counts={"terminal": 4}))
    assert {s.trajectory_id for s in good} <= set(bench)
    assert checks.samples_in_bench_pool(data, good).passed
    assert checks.no_near_duplicate_in_train(data, good).passed
    leaked, _ = build_domain(data, "terminal", BuildConfig(counts={"terminal": 4}), train)
    outcome = checks.samples_in_bench_pool(data, leaked)
    assert not outcome.passed and outcome.figures["outside"] == 4
    near = checks.no_near_duplicate_in_train(data, leaked)
    assert not near.passed and near.figures["max_jaccard"] == 1.0


def test_same_inputs_give_byte_identical_files(bench_corpus: Path, tmp_path: Path) -> None:
    from bench.official import write_official
    from bench.store import write_samples

    outputs = []
    for run in ("a", "b"):
        samples, _ = build_domain(bench_corpus, "swe", BuildConfig(counts={"swe": 6}),
                                  pools(bench_corpus, "swe")[0])
        parquet = write_samples(samples, tmp_path / run, "swe")
        write_official(samples, tmp_path / run / "official")
        outputs.append((parquet.read_bytes(),
                        (tmp_path / run / "official" / "swe_test.jsonl").read_bytes()))
    assert outputs[0] == outputs[1]
