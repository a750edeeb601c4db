"""Shards (issue 17): a domain's per-turn tables cut into shards by a hash of each source file's
path; per-turn work stays in its shard, and the cross-shard steps (dedup, decontamination in the
split) read every shard, so a corpus cut into several shards gives the rows of one shard.

Generated corpora (one file per trajectory, with planted exact and near copies) are ingested
with one shard and with three, through the library and through Dagster; hand-made trajectories
put a near-duplicate pair, and the split's leaks, over different shards.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from quality_rows import trajectory, write_partition
from shard_runs import materialize_domain
from test_split import corpus as leaky_corpus

from assets.ingest import raw_traces
from assets.partitions import register_shards
from assets.quality import (
    staged_turn_features,
    trajectory_dedup,
    turn_features,
    turn_labels,
)
from assets.resources import WorldtraceStorage
from assets.scrub import scrubbed_traces
from assets.shard_sensor import shard_registry
from assets.splits import trajectory_split
from quality.sharded import CORPUS_COLUMNS, order_of_domain
from quality.split import SplitConfig, split_trajectories
from quality.stage import dedup_across_partitions, run_quality_stage
from quality.tables import (
    DUPLICATE_PAIRS,
    SCRUB_FINDINGS,
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    STAGED_TURN_FEATURES,
    TRAJECTORY_DEDUP,
    TRAJECTORY_SPLIT,
    TURN_FEATURES,
    TURN_LABELS,
)
from sources.catalog import make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.ingest import write_tables
from sources.shards import ShardConfig, shard_of
from sources.tables import INGEST_QUARANTINE, RAW_TRAJECTORIES, RAW_TURNS, Table
from worldtrace.cli import main

DOMAINS_USED = ("terminal", "swe")
PER_DOMAIN = 24  # enough for the generator to plant exact and near copies
SHARDS = 3
ROW_KEYS = ("trajectory_id", "turn_index", "source_path", "position", "field", "placeholder")


def rows(table: Table, data: Path, domain: str, drop: tuple[str, ...] = ()) -> list[dict]:
    """Every row of a domain over all its shards, in a shard-independent order."""
    found = [{k: v for k, v in row.items() if k not in drop}
             for path in table.domain_files(data, domain)
             for row in pq.read_table(path).to_pylist()]
    return sorted(found, key=lambda r: tuple(str(r.get(k)) for k in ROW_KEYS))


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict:
    """A generated corpus ingested with 1 and with SHARDS shards, the quality stage and the
    split run on each."""
    root = tmp_path_factory.mktemp("shards")
    corpus = root / "corpus"
    generate_corpus(corpus, DOMAINS_USED, PER_DOMAIN, seed=11)
    specs = [make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS_USED]
    out = {"corpus": corpus, "specs": specs}
    for shards in (1, SHARDS):
        data = root / f"data-{shards}"
        write_tables(specs, data, shards=ShardConfig(shards))
        run_quality_stage(data, data, DOMAINS_USED)
        split_trajectories(data, list(DOMAINS_USED), SplitConfig(bench_share=0.5))
        out[shards] = data
    return out


def test_shard_of_is_stable_and_spread() -> None:
    paths = [f"run-{i:04d}/trajectory.json" for i in range(400)]
    first = [shard_of(p, 4) for p in paths]
    assert first == [shard_of(p, 4) for p in paths]  # the same on every call
    counts = {s: first.count(s) for s in "0123"}
    assert set(first) == set("0123") and min(counts.values()) > 60, counts
    assert {shard_of(p, 1) for p in paths} == {"0"}
    assert ShardConfig(3).keys == ["0", "1", "2"]
    with pytest.raises(ValueError, match="at least 1"):
        ShardConfig(0)


def test_ingest_puts_each_file_in_its_shard_and_keeps_every_row(generated) -> None:
    sharded = generated[SHARDS]
    for domain in DOMAINS_USED:
        assert RAW_TURNS.shards(sharded, domain) == ["0", "1", "2"]
        assert RAW_TURNS.shards(generated[1], domain) == ["0"]
        for shard in RAW_TRAJECTORIES.shards(sharded, domain):
            paths = pq.read_table(RAW_TRAJECTORIES.path(sharded, domain, shard),
                                  columns=["source_path"])["source_path"].to_pylist()
            assert paths and {shard_of(p, SHARDS) for p in paths} == {shard}
        for table in (RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE):
            assert rows(table, sharded, domain) == rows(table, generated[1], domain)


def test_per_turn_steps_give_the_rows_of_one_shard(generated) -> None:
    for domain in DOMAINS_USED:
        assert TURN_FEATURES.shards(generated[SHARDS], domain) == ["0", "1", "2"]
        for table in (SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, SCRUB_FINDINGS):
            assert rows(table, generated[SHARDS], domain) == rows(table, generated[1], domain)
        # every feature, the three counted over the whole domain (CORPUS_COLUMNS) too, and so
        # every label
        for table in (TURN_FEATURES, TURN_LABELS):
            assert rows(table, generated[SHARDS], domain) == rows(table, generated[1], domain)
        # and the three are counted over more than one row: not all ones or zeros
        values = {c: {r[c] for r in rows(TURN_FEATURES, generated[SHARDS], domain)}
                  for c in CORPUS_COLUMNS}
        assert all(len(v) > 2 for v in values.values()), values
        # nothing staged is left beside the outputs, nor in the staged table
        assert not list(TURN_FEATURES.dir(generated[SHARDS]).rglob(".*"))
        assert not STAGED_TURN_FEATURES.shards(generated[SHARDS], domain)


def test_domain_order_is_the_order_of_one_shard(generated) -> None:
    """The shards merged by (source, path parts) put every turn where one shard has it: the
    order the common-word sample and the corpus frequencies read (quality/domain_order.py)."""
    for domain in DOMAINS_USED:
        one = pq.read_table(RAW_TURNS.path(generated[1], domain, "0"),
                            columns=["trajectory_id", "turn_index"]).to_pylist()
        where = {(r["trajectory_id"], r["turn_index"]): i for i, r in enumerate(one)}
        order = order_of_domain(generated[SHARDS], domain)
        assert order.rows == len(one) and len(order.positions) == SHARDS
        for shard, positions in zip(RAW_TURNS.shards(generated[SHARDS], domain),
                                    order.positions, strict=True):
            local = pq.read_table(RAW_TURNS.path(generated[SHARDS], domain, shard),
                                  columns=["trajectory_id", "turn_index"]).to_pylist()
            assert [where[(r["trajectory_id"], r["turn_index"])] for r in local] == list(
                positions)
        assert order_of_domain(generated[1], domain).positions[0].tolist() == list(
            range(len(one)))


def test_cross_shard_steps_give_the_same_bytes(generated) -> None:
    """Dedup reads every shard; the split's decontamination compares stored signatures."""
    for table in (TRAJECTORY_DEDUP, DUPLICATE_PAIRS):
        assert table.path(generated[SHARDS]).read_bytes() == table.path(generated[1]).read_bytes()
    for domain in DOMAINS_USED:
        assert (TRAJECTORY_SPLIT.path(generated[SHARDS], domain).read_bytes()
                == TRAJECTORY_SPLIT.path(generated[1], domain).read_bytes())
    # and the planted copies it found lie in different shards
    shard = {r["trajectory_id"]: shard_of(r["source_path"], SHARDS)
             for d in DOMAINS_USED for r in rows(RAW_TRAJECTORIES, generated[SHARDS], d)}
    pairs = pq.read_table(DUPLICATE_PAIRS.path(generated[SHARDS])).to_pylist()
    assert any(shard[p["id_a"]] != shard[p["id_b"]] for p in pairs), pairs


def test_adding_files_never_moves_old_ones(generated, tmp_path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    shutil.copytree(generated["corpus"], corpus)
    shutil.copytree(generated[SHARDS], data)
    folder = corpus / "terminal" / source_name("terminal")
    first = sorted(folder.iterdir())[0]
    added = folder / f"added-{first.name}"
    shutil.copyfile(first, added)
    before = {s: RAW_TURNS.path(data, "terminal", s).read_bytes()
              for s in RAW_TURNS.shards(data, "terminal")}
    spec = make_spec(source_name("terminal"), folder, "terminal")
    write_tables([spec], data, shards=ShardConfig(SHARDS), replace=True)
    (added_path,) = [r["source_path"] for r in rows(RAW_TRAJECTORIES, data, "terminal")
                     if r["source_path"].endswith(added.name)]
    new_shard = shard_of(added_path, SHARDS)
    for shard, old in before.items():
        now = RAW_TURNS.path(data, "terminal", shard).read_bytes()
        assert (now == old) == (shard != new_shard), shard
    old_rows = rows(RAW_TRAJECTORIES, generated[SHARDS], "terminal")
    new_rows = rows(RAW_TRAJECTORIES, data, "terminal")
    assert len(new_rows) == len(old_rows) + 1
    assert [r for r in new_rows if r["source_path"] != added_path] == old_rows


def test_a_near_duplicate_pair_over_two_shards_is_found(tmp_path) -> None:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    observation = " ".join(rng.choice(words) for _ in range(300))
    names = [f"pair-{i}.json" for i in range(40)]
    a = names[0]
    b = next(n for n in names if shard_of(n, 2) != shard_of(a, 2))
    edited = observation.replace(observation.split()[7], "changed", 1)
    items = {a: trajectory("fix the build", [("make", observation), ("ls", "src tests")]),
             b: trajectory("fix the build again", [("make", edited), ("ls", "src tests")])}
    write_partition(tmp_path, "swe", items, shards=2)
    assert RAW_TURNS.shards(tmp_path, "swe") == ["0", "1"]
    stats = dedup_across_partitions(tmp_path, tmp_path, ["swe"])
    assert stats.near_duplicates == 1 and stats.removed == 1
    (pair,) = pq.read_table(DUPLICATE_PAIRS.path(tmp_path)).to_pylist()
    ids = {r["source_path"]: r["trajectory_id"]
           for r in rows(RAW_TRAJECTORIES, tmp_path, "swe")}
    assert {pair["id_a"], pair["id_b"]} == {ids[a], ids[b]}


def test_decontamination_holds_across_shards(tmp_path) -> None:
    """test_split's corpus of leaks (near copies under other tasks), cut into 4 shards: the
    split is the one-shard split, byte for byte, and leaks across shards were moved."""
    items = leaky_corpus()
    outputs = {}
    for shards in (1, 4):
        data = tmp_path / f"data-{shards}"
        write_partition(data, "terminal", dict(list(items.items())[:60]), shards=shards)
        write_partition(data, "swe", dict(list(items.items())[60:]), shards=shards)
        dedup_across_partitions(data, data, ["terminal", "swe"])
        split_trajectories(data, ["terminal", "swe"], SplitConfig(bench_share=0.5))
        outputs[shards] = data
    assert len(RAW_TURNS.shards(outputs[4], "swe")) == 4
    for domain in ("terminal", "swe"):
        assert (TRAJECTORY_SPLIT.path(outputs[4], domain).read_bytes()
                == TRAJECTORY_SPLIT.path(outputs[1], domain).read_bytes())
    split = [r for d in ("terminal", "swe")
             for r in pq.read_table(TRAJECTORY_SPLIT.path(outputs[4], d)).to_pylist()]
    shard = {r["trajectory_id"]: shard_of(r["source_path"], 4)
             for d in ("terminal", "swe") for r in rows(RAW_TRAJECTORIES, outputs[4], d)}
    moved = [r for r in split if r["pool"] == "contaminated"]
    assert any(shard[r["trajectory_id"]] != shard[r["nearest_bench_id"]] for r in moved), moved


def _catalog(generated: dict, folder: Path) -> Path:
    """A catalog naming the generated sources."""
    catalog = folder / "sources.toml"
    catalog.write_text("".join(
        f'[[source]]\nname = "{spec.name}"\ndomain = "{spec.domain}"\nformat = "auto"\n'
        f'path = "{spec.path}"\n\n' for spec in generated["specs"]), encoding="utf-8")
    return catalog


def test_the_sensor_registers_the_shards_the_files_hash_to(generated, tmp_path) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path / "data"),
                                catalog=str(_catalog(generated, tmp_path)),
                                shards_per_domain=SHARDS)
    instance = dg.DagsterInstance.ephemeral()
    first = shard_registry(dg.build_sensor_context(instance=instance,
                                                   resources={"storage": storage}))
    (request,) = first.dynamic_partitions_requests
    assert (request.partitions_def_name, request.partition_keys) == ("shard", ["0", "1", "2"])
    assert register_shards(instance, request.partition_keys) == ["0", "1", "2"]
    assert register_shards(instance, ["0", "2"]) == []  # known keys are not added twice
    second = shard_registry(dg.build_sensor_context(instance=instance,
                                                    resources={"storage": storage}))
    assert isinstance(second, dg.SkipReason)  # nothing new
    assert shard_registry.default_status == dg.DefaultSensorStatus.STOPPED  # off by default


def test_dagster_materializes_shards_with_the_rows_of_one(generated, tmp_path) -> None:
    catalog = _catalog(generated, tmp_path)
    data = tmp_path / "data"
    storage = WorldtraceStorage(data_dir=str(data), catalog=str(catalog),
                                shards_per_domain=SHARDS)
    for domain in DOMAINS_USED:
        result = materialize_domain([raw_traces, staged_turn_features, turn_features, turn_labels,
                                     scrubbed_traces], domain, storage)
        # one run per shard (ingest, scrub), one per shard (staged features), then one of the
        # domain (features, labels)
        assert result.success and len(result.shard_results) == 2 * SHARDS
        assert len(result.results) == 2 * SHARDS + 1
        checks = result.get_asset_check_evaluations()
        assert all(c.passed for c in checks)
        staged = [e for e in result.get_asset_materialization_events()
                  if e.asset_key.to_user_string() == "staged_turn_features"]
        # each shard's staged features are a partition of their own, in a run of their own
        assert [e.partition for e in staged] == [f"{domain}|{s}" for s in range(SHARDS)]
        assert [e.materialization.metadata["dagster/row_count"].value for e in staged] == [
            len(pq.read_table(RAW_TURNS.path(generated[SHARDS], domain, str(shard))))
            for shard in range(SHARDS)]
        assert sorted(c.partition for c in checks if c.check_name == "one_row_per_turn") == [
            f"{domain}|{s}" for s in range(SHARDS)]
        # step 3 over the staged partitions: the bytes of the library's sharded run (which
        # stages in one process and removes what it staged), and the staged partitions stay,
        # as Dagster recorded them
        for shard in TURN_FEATURES.shards(data, domain):
            assert (TURN_FEATURES.path(data, domain, shard).read_bytes()
                    == TURN_FEATURES.path(generated[SHARDS], domain, shard).read_bytes())
        assert STAGED_TURN_FEATURES.shards(data, domain) == [str(s) for s in range(SHARDS)]
        domain_rows = len(rows(RAW_TURNS, generated[1], domain))
        for name in ("raw_turns", "turn_labels", "scrubbed_turns"):
            meta = [e.materialization.metadata for e in result.get_asset_materialization_events()
                    if e.asset_key.to_user_string() == name]
            if name == "turn_labels":  # per domain: the domain's rows, over its shards
                assert [m["dagster/row_count"].value for m in meta] == [domain_rows]
            else:
                assert [m["dagster/row_count"].value for m in meta] == [
                    len(pq.read_table(RAW_TURNS.path(generated[SHARDS], domain, str(shard))))
                    for shard in range(SHARDS)]  # each shard's own rows
                assert meta[-1]["rows_domain"].value == domain_rows  # rolled up
            last = meta[-1]  # the domain, once every shard is written
            assert last["shards"].value == SHARDS
            assert "| 2 |" in last["rows_per_shard"].value
    assert dg.materialize([trajectory_dedup, trajectory_split], resources={"storage": storage},
                          run_config={"ops": {"trajectory_split": {"config": {
                              "bench_share": 0.5}}}}).success
    for domain in DOMAINS_USED:
        for table in (RAW_TURNS, TURN_FEATURES, TURN_LABELS, SCRUBBED_TURNS):
            assert rows(table, data, domain) == rows(table, generated[1], domain)
        assert (TRAJECTORY_SPLIT.path(data, domain).read_bytes()
                == TRAJECTORY_SPLIT.path(generated[1], domain).read_bytes())


def test_the_cli_ingests_into_shards(generated, tmp_path) -> None:
    folder = generated["corpus"] / "swe" / source_name("swe")
    out = tmp_path / "out"
    assert main(["ingest", str(folder), "--domain", "swe", "--source", source_name("swe"),
                 "--out", str(out), "--quiet", "--shards", str(SHARDS)]) == 0
    assert RAW_TURNS.shards(out, "swe") == ["0", "1", "2"]
    assert rows(RAW_TURNS, out, "swe") == rows(RAW_TURNS, generated[1], "swe")


def _ingest_one_shard(specs: list, data: Path, shard: str) -> None:
    write_tables(specs, data, domains=DOMAINS_USED, shards=ShardConfig(SHARDS), only_shard=shard)


def test_shards_of_a_domain_ingested_at_once_give_the_whole_domain_run(generated, tmp_path
                                                                       ) -> None:
    """Each shard's ingest (a Dagster shard step) run at the same time, in its own process:
    each writes only its shard and its shard's source manifest, so the files equal a
    whole-domain ingest and the domain's manifest names every source, whatever the order the
    writers finish in."""
    import multiprocessing

    from sources.source_manifest import load_manifest, manifest_shards

    data = tmp_path / "data"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_ingest_one_shard, args=(generated["specs"], data, str(s)))
               for s in range(SHARDS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=600)
        assert worker.exitcode == 0
    for table in (RAW_TRAJECTORIES, RAW_TURNS, INGEST_QUARANTINE):
        for domain in DOMAINS_USED:
            assert table.shards(data, domain) == ["0", "1", "2"]
            for shard in table.shards(data, domain):
                assert (table.path(data, domain, shard).read_bytes()
                        == table.path(generated[SHARDS], domain, shard).read_bytes())
    for domain in DOMAINS_USED:
        assert manifest_shards(data, domain) == ["0", "1", "2"]
        assert load_manifest(data, domain) == load_manifest(generated[SHARDS], domain)
        assert set(load_manifest(data, domain)) == {source_name(domain)}


def test_shards_of_sources_are_the_shards_their_files_hash_to(generated, tmp_path) -> None:
    from sources.shard_inputs import shards_of_sources

    for domain in DOMAINS_USED:
        specs = [spec for spec in generated["specs"] if spec.domain == domain]
        assert shards_of_sources(specs, ShardConfig(SHARDS)) == RAW_TURNS.shards(
            generated[SHARDS], domain) == ["0", "1", "2"]
        assert shards_of_sources(specs, ShardConfig(1)) == ["0"]
    missing = make_spec("ghost", tmp_path / "nope", "web")
    assert shards_of_sources([missing], ShardConfig(SHARDS)) == [
        shard_of(str(missing.path), SHARDS)]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert shards_of_sources([make_spec("none", empty, "web")], ShardConfig(SHARDS)) == ["0"]
