"""Turn categories and loss weights from the turn features (the `turn_labels` asset).

`load_policy()` reads quality/policy.toml (or another policy file): thresholds and a loss weight
per category, the rules' ids and meanings, the ambiguity margin, plus the file's short sha256,
which `label_turns` writes into every row and into the Parquet metadata, so a table labelled
under another policy is visibly different. `label_turns(features_path, out_path, policy)` runs
quality/rules.sql under the policy's thresholds and under thresholds moved by the margin (see
quality/rules.py; the three in one scan, `rules.variants_sql`), then quality/labels.sql, in
DuckDB.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from quality.rules import (
    RULE_IDS,
    Ambiguity,
    features_json_sql,
    moved_thresholds,
    parse_ambiguity,
    variants_sql,
)
from sources.duckdb_cursors import duckdb_cursor
from sources.markdown import markdown_cell, markdown_table
from sources.storage import (
    Files,
    file_list,
    load_sql,
    parquet_view,
    query_arrow,
    write_parquet,
)

# The turns a world model can be judged on: the bench's targets and SFT / RL's (the others
# restate the action or say nothing new; turn-categories.md).
JUDGEABLE: tuple[str, ...] = ("informative", "error")
CATEGORIES: tuple[str, ...] = ("empty", "error", "unchanged", "echo", "boilerplate",
                               "informative")
DEFAULT_POLICY = Path(__file__).with_name("policy.toml")
POLICY_HASH_CHARS = 12

_THRESHOLDS: dict[str, tuple[str, ...]] = {
    "empty": ("max_content_chars",),
    "error": (),
    "unchanged": ("max_novel_shingles", "min_jaccard_prev", "min_jaccard_max_prev",
                  "min_seen_line_share", "min_view_shingles", "min_view_jaccard",
                  "max_view_novelty", "min_screen_jaccard_prev",
                  "min_screen_prev_line_share"),
    "echo": ("min_overlap_action", "max_novelty", "min_overlap_action_with_context",
             "min_new_words_in_action", "max_novelty_new_words", "max_own_words",
             "min_arg_chars", "max_ack_words", "min_action_line_share",
             "max_novel_shingles_new_words", "min_fields_mirrored", "min_mirrored_share",
             "max_novel_shingles_mirrored"),
    "boilerplate": ("min_trajectories", "min_trajectory_share", "max_ack_words",
                    "max_ack_lines"),
    "informative": (),
}

@dataclass(frozen=True)
class Policy:
    """A parsed policy file: thresholds per category, a loss weight per category, its hash."""

    version: int
    hash: str
    thresholds: dict[str, dict[str, float]]
    loss_weights: dict[str, float]
    rules: dict[str, str]  # rule id -> what it means, in the order the rules are tried
    ambiguity: Ambiguity
    path: str = ""

    def __str__(self) -> str:
        return f"policy_v{self.version}_{self.hash}"

    def rule_params(self, thresholds: dict[str, dict[str, float]] | None = None
                    ) -> dict[str, Any]:
        """The named parameters of rules.sql: the policy's thresholds, or `thresholds`."""
        return {f"{category}_{key}": value
                for category, values in (thresholds or self.thresholds).items()
                for key, value in values.items()}

    def label_params(self) -> dict[str, Any]:
        """The named parameters of labels.sql."""
        params: dict[str, Any] = {"policy_version": self.version, "policy_hash": self.hash}
        params.update({f"{c}_loss_weight": float(w) for c, w in self.loss_weights.items()})
        return params | self.ambiguity.weight_params()

    def variants(self) -> dict[str, dict[str, float]]:
        """rules.sql's parameters per variant: the policy's, and moved by the margin."""
        return {"policy": self.rule_params(),
                **{name: self.rule_params(moved_thresholds(self.thresholds, self.ambiguity,
                                                           easier))
                   for name, easier in (("easier", True), ("harder", False))}}


def policy_hash(data: bytes) -> str:
    """Short sha256 of a policy file's bytes."""
    return hashlib.sha256(data).hexdigest()[:POLICY_HASH_CHARS]


def load_policy(path: Path = DEFAULT_POLICY) -> Policy:
    """Parse and check a policy TOML: every category, every threshold, weights in [0, 1],
    every rule of rules.sql documented in its order, the ambiguity margin."""
    data = Path(path).read_bytes()
    document = tomllib.loads(data.decode("utf-8"))
    missing = [c for c in CATEGORIES if not isinstance(document.get(c), dict)]
    if missing or not isinstance(document.get("version"), int):
        raise ValueError(f"{path}: needs an integer `version` and tables {', '.join(CATEGORIES)}"
                         f" (missing: {', '.join(missing) or 'version'})")
    thresholds: dict[str, dict[str, float]] = {}
    weights: dict[str, float] = {}
    for category in CATEGORIES:
        section = document[category]
        expected = set(_THRESHOLDS[category]) | {"loss_weight"}
        if set(section) != expected:
            raise ValueError(f"{path} [{category}]: expected keys {sorted(expected)}, "
                             f"got {sorted(section)}")
        weight = section["loss_weight"]
        if not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
            raise ValueError(f"{path} [{category}]: loss_weight must be in [0, 1], got {weight!r}")
        weights[category] = float(weight)
        thresholds[category] = {k: section[k] for k in _THRESHOLDS[category]}
    rules = document.get("rules")
    if not isinstance(rules, dict) or tuple(rules) != RULE_IDS:
        got = tuple(rules) if isinstance(rules, dict) else rules
        raise ValueError(f"{path} [rules]: expected one line per rule of quality/rules.sql, in "
                         f"its order: {', '.join(RULE_IDS)}; got {got}")
    if not all(isinstance(doc, str) and doc.strip() for doc in rules.values()):
        raise ValueError(f"{path} [rules]: every rule needs a non-empty description")
    ambiguity = parse_ambiguity(document.get("ambiguous"), str(path))
    return Policy(document["version"], policy_hash(data), thresholds, weights, dict(rules),
                  ambiguity, str(path))


@dataclass
class LabelStats:
    """Counters of one labelling run."""

    policy: str = ""
    turns: int = 0
    categories: Counter = field(default_factory=Counter)
    weight_histogram: Counter = field(default_factory=Counter)  # loss_weight -> turns
    rules: Counter = field(default_factory=Counter)  # rule id -> turns
    ambiguous_rules: Counter = field(default_factory=Counter)  # rule id -> ambiguous turns

    @property
    def ambiguous(self) -> int:
        return sum(self.ambiguous_rules.values())

    def share(self, category: str) -> float:
        return self.categories[category] / self.turns if self.turns else 0.0

    @property
    def ambiguous_share(self) -> float:
        return self.ambiguous / self.turns if self.turns else 0.0

    def rule_rows(self) -> list[dict[str, Any]]:
        """Per rule of the policy, in its order: turns, share of turns, ambiguous turns."""
        return [{"rule": rule, "turns": self.rules[rule],
                 "share": round(self.rules[rule] / self.turns, 4) if self.turns else 0.0,
                 "ambiguous": self.ambiguous_rules[rule]} for rule in RULE_IDS]


def label_turns(features_path: Path, out_path: Path, policy: Policy | None = None,
                trajectories: int | None = None) -> LabelStats:
    """Write one labelled row per turn of `features_path` to `out_path` (Parquet, atomic).
    `trajectories`: the domain's trajectory count, the boilerplate floor's base, when the file
    is one shard of it (default: the file's own)."""
    policy = policy or load_policy()
    variants = policy.variants()
    rules_sql = variants_sql(load_sql(__file__, "rules.sql"), list(variants), columns="f.*")
    labels_sql = load_sql(__file__, "labels.sql").replace("/* rules */", rules_sql).replace(
        "/* rule_features */", features_json_sql("x.rule", alias="x"))
    con = duckdb_cursor()
    try:
        parquet_view(con, "features", features_path, file_row_number=True)
        if trajectories is None:
            trajectories = distinct_trajectories(con)
        table = query_arrow(con, labels_sql, {
            f"{key}__{variant}": value for variant, params in variants.items()
            for key, value in params.items()} | {"trajectories": trajectories}
            | policy.label_params())
    finally:
        con.close()
    metadata = {b"policy_hash": policy.hash.encode(), b"policy_version": str(policy.version)
                .encode(), b"policy": str(policy).encode()}
    table = table.replace_schema_metadata(metadata)
    write_parquet(table, out_path)
    stats = LabelStats(policy=str(policy), turns=table.num_rows)
    counts = table.group_by(["category", "loss_weight", "rule", "ambiguous"]).aggregate(
        [([], "count_all")]).to_pylist()
    for row in counts:
        n = row["count_all"]
        stats.categories[row["category"]] += n
        stats.weight_histogram[row["loss_weight"]] += n
        stats.rules[row["rule"]] += n
        if row["ambiguous"]:
            stats.ambiguous_rules[row["rule"]] += n
    return stats


def distinct_trajectories(con: duckdb.DuckDBPyConnection) -> int:
    """Distinct trajectory ids of the `features` view (its result fetched whole, so that the
    connection takes the next query)."""
    return int(con.execute("SELECT count(DISTINCT trajectory_id) FROM features").fetchall()[0][0])


def examples_markdown(labels_path: Files, turns_path: Files, per_category: int = 2,
                      max_chars: int = 240) -> str:
    """A Markdown preview: the first turns of each category, action and observation cut short."""
    con = duckdb.connect()
    try:
        rows = con.execute(load_sql(__file__, "label_examples.sql"), {
            "labels": file_list(labels_path), "turns": file_list(turns_path),
            "per_category": per_category,
        }).fetchall()
    finally:
        con.close()
    return markdown_table(
        [{"category": category, "turn": markdown_cell(f"{traj}#{turn}"),
          "action": markdown_cell(action or "", max_chars),
          "observation": markdown_cell(observation or "", max_chars)}
         for category, traj, turn, action, observation in rows],
        columns=("category", "turn", "action", "observation"))


def category_shares(parquet_glob: str, categories: Sequence[str] = CATEGORIES, digits: int = 3
                    ) -> list[dict[str, Any]]:
    """Per domain of turn-labelled Parquet (`parquet_glob`), each category's share of turns,
    rounded to `digits`: rows {"domain": ..., category: share, ...}, by domain."""
    rows = duckdb.sql(load_sql(__file__, "category_shares.sql"), params={
        "path": parquet_glob, "categories": list(categories), "digits": digits}).fetchall()
    shares: dict[str, dict[str, Any]] = {}
    for domain, category, share in rows:
        shares.setdefault(domain, {"domain": domain})[category] = share
    return [{"domain": d, **{c: row[c] for c in categories}} for d, row in shares.items()]
