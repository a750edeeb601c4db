"""Turn labels: the policy file, its hash in every row, the rules on hand-built turns, and the
category of real fixture turns."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest
from quality_rows import trajectory, write_partition
from ui_markdown import rendered_table, ui_problems

import quality.labels
from quality.features import compute_turn_features
from quality.labels import (
    CATEGORIES,
    DEFAULT_POLICY,
    examples_markdown,
    label_turns,
    load_policy,
    policy_hash,
)
from quality.rules import variants_sql
from quality.stage import run_quality_stage
from sources.storage import load_sql, parquet_view

CANNED = "Welcome to the portal. Please sign in to continue with your account."


def test_policy_weights_and_hash():
    policy = load_policy()
    assert policy.loss_weights["informative"] == policy.loss_weights["error"] == 1.0
    assert policy.loss_weights["empty"] == 0.0
    assert all(0 < policy.loss_weights[c] < 0.5 for c in ("echo", "unchanged", "boilerplate"))
    assert policy.hash == policy_hash(DEFAULT_POLICY.read_bytes()) and len(policy.hash) == 12
    assert str(policy) == f"policy_v{policy.version}_{policy.hash}"


def test_policy_hash_changes_with_the_policy(tmp_path):
    edited = tmp_path / "policy.toml"
    edited.write_text(DEFAULT_POLICY.read_text() + "\n# a comment is a change too\n")
    assert load_policy(edited).hash != load_policy().hash
    retuned = tmp_path / "retuned.toml"
    retuned.write_text(DEFAULT_POLICY.read_text().replace("max_novel_shingles = 8",
                                                          "max_novel_shingles = 9"))
    assert load_policy(retuned).thresholds["unchanged"]["max_novel_shingles"] == 9


@pytest.mark.parametrize("edit, message", [
    (("loss_weight = 0.0", "loss_weight = 1.5"), "loss_weight must be in"),
    (("min_jaccard_prev = 0.8\n", ""), "expected keys"),
    (("\n[boilerplate]\n", "\n[boilerplates]\n"), "tables"),
])
def test_broken_policies_are_refused(tmp_path, edit, message):
    broken = tmp_path / "policy.toml"
    broken.write_text(DEFAULT_POLICY.read_text().replace(*edit, 1))
    with pytest.raises(ValueError, match=message):
        load_policy(broken)


@pytest.fixture(scope="module")
def hand_built(tmp_path_factory):
    """The turn features of hand-built turns (a path)."""
    root = tmp_path_factory.mktemp("labels")
    trajectories = {
        "a.json": trajectory("t", [
            ("ls", "alpha beta gamma delta epsilon zeta"),
            ("ls", "alpha beta gamma delta epsilon zeta"),
            ("python run.py", "Traceback (most recent call last):\nKeyError: 'x'"),
            ("touch f", ""),
            ("cat notes.txt", "the quick brown fox jumps over the lazy dog today"),
            ("echo hello there friend", "hello there friend"),
        ]),
    }
    for k in range(6):
        trajectories[f"login{k}.json"] = trajectory(f"task {k}", [
            (f"goto site{k}", CANNED), (f"read {k}", f"body {k} of page number {k * 13}")])
    turns, _ = write_partition(root, "web", trajectories)
    compute_turn_features(turns, root / "features.parquet")
    return root / "features.parquet"


@pytest.fixture(scope="module")
def labelled(hand_built):
    labels = hand_built.with_name("labels.parquet")
    stats = label_turns(hand_built, labels)
    return stats, pq.read_table(labels)


def test_variants_sql_is_rules_sql_per_variant(hand_built):
    policy = load_policy()
    variants = policy.variants()
    rules_sql = load_sql(quality.labels.__file__, "rules.sql")
    con = duckdb.connect()
    parquet_view(con, "features", hand_built, file_row_number=True)
    merged = con.execute(variants_sql(rules_sql, list(variants)), {
        f"{k}__{v}": value for v, params in variants.items() for k, value in params.items()}
        | {"trajectories": 3}).fetchall()
    for column, params in enumerate(variants.values(), start=1):
        alone = con.execute(f"{rules_sql} ORDER BY 1", params | {"trajectories": 3}).fetchall()
        assert sorted((row[0], row[column]) for row in merged) == alone
    assert len({row[1:] for row in merged}) > 1


def test_rules_on_hand_built_turns(labelled):
    stats, table = labelled
    rows = table.to_pylist()
    by_turn: dict[str, list[str]] = {}
    for r in rows:
        by_turn.setdefault(r["trajectory_id"], []).append(r["category"])
    a = next(cats for cats in by_turn.values() if len(cats) == 6)
    assert a == ["informative", "unchanged", "error", "empty", "informative", "echo"]
    canned = [cats[0] for cats in by_turn.values() if len(cats) == 2]
    assert canned == ["boilerplate"] * 6
    assert stats.turns == table.num_rows == 18
    assert sum(stats.categories.values()) == stats.turns
    assert stats.weight_histogram == {1.0: 9, 0.1: 8, 0.0: 1}


def test_policy_hash_in_every_row_and_in_the_file(labelled):
    _, table = labelled
    policy = load_policy()
    assert set(table["policy_hash"].to_pylist()) == {policy.hash}
    assert table.schema.metadata[b"policy_hash"] == policy.hash.encode()
    assert set(table["category"].to_pylist()) <= set(CATEGORIES)
    assert all(0.0 <= w <= 1.0 for w in table["loss_weight"].to_pylist())


def test_real_fixture_categories(traces_dir, tmp_path):
    from sources.catalog import make_spec
    from sources.ingest import write_tables
    from sources.schema import DOMAINS

    specs = [make_spec(f"{d.name}-{f.name}", f, d.name)
             for d in sorted(traces_dir.iterdir()) if d.is_dir() and d.name in DOMAINS
             for f in sorted(d.iterdir())]
    write_tables(specs, tmp_path / "data")
    run_quality_stage(tmp_path / "data", tmp_path / "quality", DOMAINS)

    def categories(domain: str, source: str) -> list[str]:
        labels = pq.read_table(tmp_path / "quality" / "turn_labels" / f"domain={domain}"
                               / "shard=0" / "part-0.parquet").to_pylist()
        return [r["category"] for r in labels if r["source"] == source]

    # WebArena: the same OpenStreetMap page three times; the two repeats did not change
    assert categories("web", "web-webarena") == ["informative", "unchanged", "unchanged"]
    # OSWorld run with screenshots only: every observation is a screenshot file name
    assert set(categories("os", "os-osworld")) == {"empty"}
    # mini-swe-agent: cat of a missing file (returncode 1), an empty output with return code 0
    # (boilerplate by the guide: "completed with return code 0 and no output"), a traceback
    miniswe = categories("swe", "swe-miniswe")
    assert miniswe[0] == "error" and miniswe[4] == "boilerplate" and miniswe[7] == "error"
    assert miniswe[5] == "unchanged"  # the file shown again after a no-op sed
    # OpenHands: the edit tool echoes back the file it was sent as a diff
    assert categories("swe", "swe-openhands") == ["echo"]
    # Terminal-Bench: the fixture's installed agent never started, so the run has no turns
    # (quarantined by the reader) and nothing of the harness's keystrokes is labelled
    assert categories("terminal", "terminal-tbench") == []
    preview = examples_markdown(
        tmp_path / "quality" / "turn_labels" / "domain=web" / "shard=0" / "part-0.parquet",
        tmp_path / "data" / "raw_turns" / "domain=web" / "shard=0" / "part-0.parquet")
    assert "| unchanged |" in preview and "OpenStreetMap" in preview
    # mini-swe observations start with <returncode>: the UI (CommonMark) shows each cell as
    # written, leading XML element included, not as an HTML tag that vanishes
    swe_preview = examples_markdown(
        tmp_path / "quality" / "turn_labels" / "domain=swe" / "shard=0" / "part-0.parquet",
        tmp_path / "data" / "raw_turns" / "domain=swe" / "shard=0" / "part-0.parquet")
    assert ui_problems(swe_preview) == []
    shown = [row[3] for row in rendered_table(swe_preview)]
    assert any(cell.startswith("<returncode>") for cell in shown), shown
    observations = {(r["trajectory_id"], r["turn_index"]): r["observation"] for r in pq.read_table(
        tmp_path / "data" / "raw_turns" / "domain=swe" / "shard=0" / "part-0.parquet").to_pylist()}
    for _, turn, _, observation in rendered_table(swe_preview):
        trajectory_id, index = turn.rsplit("#", 1)
        written = observations[(trajectory_id, int(index))].replace("\n", "⏎")
        assert observation.rstrip("…") == written[:len(observation.rstrip("…"))], turn


def test_stage_in_worker_processes_writes_the_same_bytes(traces_dir, tmp_path):
    """workers=2 overlaps dedup and scrub with the features (quality/stage.py): same files."""
    import hashlib

    from sources.catalog import make_spec
    from sources.ingest import write_tables
    from sources.schema import DOMAINS

    specs = [make_spec(f"{d.name}-{f.name}", f, d.name)
             for d in sorted(traces_dir.iterdir()) if d.is_dir() and d.name in DOMAINS
             for f in sorted(d.iterdir())]
    write_tables(specs, tmp_path / "data")
    outputs = {}
    for workers in (1, 2):
        out = tmp_path / f"quality-{workers}"
        report = run_quality_stage(tmp_path / "data", out, DOMAINS, workers=workers)
        assert set(report.features) == set(report.labels) and report.dedup is not None
        outputs[workers] = {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes())
                            .hexdigest() for p in sorted(out.rglob("*")) if p.is_file()}
    assert any(name.startswith("scrubbed_turns/") for name in outputs[1])
    assert outputs[1] == outputs[2]
