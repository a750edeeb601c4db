"""Every weight explained (issue 18): the rule that named each turn, the feature values it read,
whether it is ambiguous, the optional weight of ambiguous turns, and `worldtrace quality
explain`, on the real fixture traces (../shared/traces)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from quality.labels import CATEGORIES, DEFAULT_POLICY, label_turns, load_policy
from quality.rules import RULE_IDS, RULES, RULES_BY_ID, Ambiguity, moved_threshold
from quality.stage import run_quality_stage
from quality.tables import TURN_FEATURES, TURN_LABELS
from sources.schema import DOMAINS
from sources.storage import partition_path
from worldtrace.cli import main


def test_the_policy_documents_every_rule_of_rules_sql_in_order():
    policy = load_policy()
    assert tuple(policy.rules) == RULE_IDS and len(RULE_IDS) == len(set(RULE_IDS))
    assert {r.category for r in RULES} == set(CATEGORIES)
    assert RULE_IDS[-1] == "informative.new_content"  # the default, tried last
    for rule in RULES:  # every feature a rule reads is a documented turn feature
        assert rule.features and set(rule.features) <= set(TURN_FEATURES.docs), rule
    read = {name for rule in RULES for name in rule.thresholds}
    every = {f"{c}_{k}" for c, values in policy.thresholds.items() for k in values}
    assert read == every  # no threshold of the policy is dead, none is read but undefined


def test_a_margin_moves_shares_on_the_log_odds_scale_and_counts_by_a_share():
    margin = Ambiguity(share_margin=0.5, count_margin=0.25)
    assert moved_threshold("min_x", 0.8, margin, easier=True) == pytest.approx(0.7081, abs=1e-4)
    assert moved_threshold("min_x", 0.8, margin, easier=False) == pytest.approx(0.8683, abs=1e-4)
    assert moved_threshold("max_x", 0.15, margin, easier=True) > 0.15
    assert moved_threshold("max_x", 8, margin, easier=True) == 10  # 25 % of 8
    assert moved_threshold("min_x", 3, margin, easier=True) == 2  # at least 1
    assert moved_threshold("max_x", 0, margin, easier=False) == 0  # never below 0
    assert moved_threshold("max_x", 0, margin, easier=True) == 1
    assert moved_threshold("min_x", 1.0, margin, easier=True) == 1.0  # a share's bound stays
    with pytest.raises(ValueError, match="min_ or max_"):
        moved_threshold("x", 0.5, margin, easier=True)


@pytest.mark.parametrize("edit, message", [
    (('"echo.action_lines" = ', '"echo.typed_lines" = '), r"\[rules\]: expected one line"),
    (('"empty.no_content" = "no letter', '"empty.no_content" = "'), r"\[rules\]: expected one "),
    (('loss_weight = "category"', 'loss_weight = "lowest"'), r"\[ambiguous\]: loss_weight"),
    (("share_margin = 0.5", "share_margin = -1"), r"\[ambiguous\]: share_margin"),
])
def test_policies_with_broken_rules_or_margins_are_refused(tmp_path, edit, message):
    text = DEFAULT_POLICY.read_text()
    assert edit[0] in text
    if edit[1] == '"empty.no_content" = "':  # move the first rule's line to the end
        line = next(ln for ln in text.splitlines() if ln.startswith('"empty.no_content"'))
        text = text.replace(line + "\n", "").replace("\n[ambiguous]", f"{line}\n\n[ambiguous]")
    else:
        text = text.replace(*edit, 1)
    broken = tmp_path / "policy.toml"
    broken.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_policy(broken)


@pytest.fixture(scope="module")
def stage(traces_dir, tmp_path_factory) -> Path:
    """The real fixture traces ingested and labelled, all tables in one data folder."""
    from sources.catalog import make_spec
    from sources.ingest import write_tables

    data = tmp_path_factory.mktemp("explain") / "data"
    specs = [make_spec(f"{d.name}-{f.name}", f, d.name)
             for d in sorted(traces_dir.iterdir()) if d.is_dir() and d.name in DOMAINS
             for f in sorted(d.iterdir())]
    write_tables(specs, data)
    report = run_quality_stage(data, data, DOMAINS, scrub=False)
    (data / "stats.json").write_text(json.dumps({
        d: {"turns": s.turns, "rules": dict(s.rules), "ambiguous": s.ambiguous}
        for d, s in report.labels.items()}))
    return data


def _rows(data: Path, table: str) -> list[dict]:
    return [row for domain in DOMAINS if partition_path(data, table, domain, "0").exists()
            for row in pq.read_table(partition_path(data, table, domain, "0")).to_pylist()]


def test_every_row_names_its_rule_and_the_values_it_read(stage):
    features = {(r["trajectory_id"], r["turn_index"]): r for r in _rows(stage, "turn_features")}
    labels = _rows(stage, "turn_labels")
    assert len(labels) == len(features) > 100
    for row in labels:
        rule = RULES_BY_ID[row["rule"]]
        assert row["category"] == rule.category
        read = json.loads(row["rule_features"])
        turn = features[row["trajectory_id"], row["turn_index"]]
        assert list(read) == list(rule.features)
        for name, value in read.items():
            assert value == pytest.approx(turn[name]) if isinstance(value, float) else \
                value == turn[name], (row["rule"], name)
    fired = {row["rule"] for row in labels}
    assert len(fired) >= 8  # the fixtures exercise most rules, each category at least once
    assert {RULES_BY_ID[r].category for r in fired} == set(CATEGORIES)


def test_ambiguous_rows_name_the_rule_a_margin_away_and_are_counted(stage):
    labels = _rows(stage, "turn_labels")
    policy = load_policy()
    for row in labels:
        near = row["near_rule"]
        assert row["ambiguous"] == (near is not None)
        if near:
            assert near.split(".")[0] != row["category"]
        # the default keeps today's weights: the category's, ambiguous or not
        assert row["loss_weight"] == policy.loss_weights[row["category"]]
    ambiguous = [row for row in labels if row["ambiguous"]]
    assert 0 < len(ambiguous) < len(labels) / 4
    stats = json.loads((stage / "stats.json").read_text())
    assert sum(s["ambiguous"] for s in stats.values()) == len(ambiguous)
    counted = {}
    for s in stats.values():
        for rule, n in s["rules"].items():
            counted[rule] = counted.get(rule, 0) + n
    assert counted == {r: sum(row["rule"] == r for row in labels) for r in counted}


@pytest.mark.parametrize("choice", ['"highest"', "0.5"])
def test_a_conservative_weight_for_ambiguous_turns_changes_only_them(stage, tmp_path, choice):
    text = DEFAULT_POLICY.read_text().replace('loss_weight = "category"',
                                              f"loss_weight = {choice}")
    (tmp_path / "policy.toml").write_text(text)
    policy, default = load_policy(tmp_path / "policy.toml"), load_policy()
    changed = 0
    for domain in DOMAINS:
        features = TURN_FEATURES.path(stage, domain, "0")
        if not features.exists():
            continue
        label_turns(features, tmp_path / f"{domain}.parquet", policy)
        before = pq.read_table(TURN_LABELS.path(stage, domain, "0")).to_pylist()
        after = pq.read_table(tmp_path / f"{domain}.parquet").to_pylist()
        for old, new in zip(before, after, strict=True):
            assert new["category"] == old["category"] and new["rule"] == old["rule"]
            if not old["ambiguous"]:
                assert new["loss_weight"] == old["loss_weight"]
                continue
            near = default.loss_weights[old["near_rule"].split(".")[0]]
            expected = max(old["loss_weight"], near) if choice == '"highest"' else 0.5
            assert new["loss_weight"] >= expected if choice == '"highest"' else \
                new["loss_weight"] == expected
            changed += new["loss_weight"] != old["loss_weight"]
    assert changed > 0


def test_labels_are_deterministic(stage, tmp_path):
    features = TURN_FEATURES.path(stage, "mcp", "0")
    digests = set()
    for k in range(2):
        label_turns(features, tmp_path / f"{k}.parquet")
        digests.add(hashlib.sha256((tmp_path / f"{k}.parquet").read_bytes()).hexdigest())
    assert len(digests) == 1


def test_explain_prints_the_turn_its_rule_and_confidence(stage, capsys):
    labels = _rows(stage, "turn_labels")
    turns = {(r["trajectory_id"], r["turn_index"]): r for r in _rows(stage, "raw_turns")}
    row = next(r for r in labels if r["ambiguous"])
    turn = turns[row["trajectory_id"], row["turn_index"]]
    assert main(["quality", "explain", row["trajectory_id"], str(row["turn_index"]),
                 "--data", str(stage), "--chars", "60"]) == 0
    out = capsys.readouterr().out
    assert turn["action"][:30].splitlines()[0] in out
    assert turn["observation"][:30].splitlines()[0] in out
    assert f"category: {row['category']}, loss weight {row['loss_weight']:g}" in out
    assert f"rule: {row['rule']} -- {load_policy().rules[row['rule']]}" in out
    assert "confidence: ambiguous -- " in out and row["near_rule"] in out
    for name in json.loads(row["rule_features"]):
        assert f"{name} = " in out
    clear = next(r for r in labels if not r["ambiguous"])
    assert main(["quality", "explain", clear["trajectory_id"], str(clear["turn_index"]),
                 "--data", str(stage)]) == 0
    assert "confidence: clear" in capsys.readouterr().out


def test_explain_says_clearly_what_is_not_there(stage, tmp_path, capsys):
    labels = _rows(stage, "turn_labels")
    trajectory = labels[0]["trajectory_id"]
    turns = sum(r["trajectory_id"] == trajectory for r in labels)
    assert main(["quality", "explain", trajectory, str(turns), "--data", str(stage)]) == 2
    assert f"has turns 0 to {turns - 1}; there is no turn {turns}" in capsys.readouterr().err
    assert main(["quality", "explain", "no-such-id", "0", "--data", str(stage)]) == 2
    assert "trajectory 'no-such-id' is not in" in capsys.readouterr().err
    assert main(["quality", "explain", trajectory, "0", "--data", str(tmp_path)]) == 2
    assert f"no turn_labels under {tmp_path}" in capsys.readouterr().err
