"""Why a turn got its weight: `worldtrace quality explain TRAJECTORY_ID TURN_INDEX [--data DIR]`.

Reads the turn's row of turn_labels, its text in raw_turns (the text the features were computed
on) and its row of turn_features, all under one data folder (the pipeline's layout), and prints
the action, the observation (clipped), the category, weight and rule with what the rule means
(the policy's [rules] table), the feature values it read beside the thresholds it compares them
with, whether the turn is ambiguous and what a margin's move would make it, then every feature.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from quality.labels import Policy, load_policy
from quality.rules import RULES_BY_ID
from quality.tables import TURN_FEATURES, TURN_LABELS
from sources.storage import load_sql
from sources.tables import RAW_TURNS

# turn_features columns that are keys or copies of raw_turns, not features
_NOT_FEATURES = {"trajectory_id", "turn_index", "domain", "source", "source_format",
                 "action_kind", "observation_format", "tool_name"}


class ExplainError(ValueError):
    """A turn that cannot be explained: no labels under the folder, an unknown id or index."""


@dataclass(frozen=True)
class TurnExplanation:
    """One labelled turn with its text and features."""

    label: dict[str, Any]
    action: str
    observation: str
    features: dict[str, Any]

    def lines(self, policy: Policy, max_chars: int = 1000) -> list[str]:
        label = self.label
        rule = RULES_BY_ID.get(label["rule"])
        read = json.loads(label["rule_features"] or "{}")
        out = [f"trajectory {label['trajectory_id']} turn {label['turn_index']} "
               f"(domain {label['domain']}, source {label['source']})",
               f"action ({len(self.action):,} characters):", *_indented(self.action, max_chars),
               f"observation ({len(self.observation):,} characters):",
               *_indented(self.observation, max_chars),
               f"category: {label['category']}, loss weight {label['loss_weight']:g}",
               f"rule: {label['rule']} -- "
               + policy.rules.get(label["rule"], f"(not a rule of {policy})"),
               "read: " + (", ".join(f"{k} = {_value(v)}" for k, v in read.items()) or "-")]
        if rule and rule.thresholds:
            out.append("thresholds: " + ", ".join(
                f"{name} = {_value(_threshold(policy, name))}" for name in rule.thresholds))
        if label["ambiguous"]:
            near = label["near_rule"]
            near_category = near.split(".", 1)[0]
            out.append(f"confidence: ambiguous -- with the thresholds moved by the margin "
                       f"(share {policy.ambiguity.share_margin:g} log-odds, count "
                       f"{policy.ambiguity.count_margin:g}), {near} names it {near_category} "
                       f"(weight {policy.loss_weights.get(near_category, float('nan')):g}); "
                       f"ambiguous turns weigh: {policy.ambiguity.loss_weight}")
        else:
            out.append("confidence: clear -- the thresholds moved by the margin give the same "
                       "category")
        out.append(f"policy: labelled by policy_v{label['policy_version']}_"
                   f"{label['policy_hash']}" + (
                       "" if label["policy_hash"] == policy.hash else
                       f"; rule texts and thresholds above are from {policy} ({policy.path})"))
        out.append("features:")
        out += _packed([f"{name} = {_value(value)}" for name, value in self.features.items()])
        return out


def _packed(items: list[str], width: int = 100) -> list[str]:
    """Items joined by commas into indented lines of at most `width` characters."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(item) + 2 <= width:
            lines[-1] += ", " + item
        else:
            lines.append("  " + item)
    return lines


def _indented(text: str, max_chars: int) -> list[str]:
    shown = text if len(text) <= max_chars else (
        text[:max_chars] + f" [... {len(text) - max_chars:,} more characters]")
    return ["  | " + line for line in (shown.splitlines() or [""])]


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return str(value)


def _threshold(policy: Policy, name: str) -> float | None:
    category, key = name.split("_", 1)
    return policy.thresholds.get(category, {}).get(key)


def explain_turn(data_dir: Path, trajectory_id: str, turn_index: int) -> TurnExplanation:
    """The labelled turn `turn_index` of `trajectory_id` under `data_dir`, or ExplainError."""
    if not TURN_LABELS.paths(data_dir):
        raise ExplainError(f"no turn_labels under {data_dir}: materialize turn_labels (worldtrace "
                           "run, or the Dagster asset) with this data folder first")
    con = duckdb.connect()
    try:
        params = {"labels": TURN_LABELS.glob(data_dir), "trajectory_id": trajectory_id}
        turns = con.execute(load_sql(__file__, "explain_turns.sql"), params).fetchall()[0][0]
        if not turns:
            raise ExplainError(f"trajectory {trajectory_id!r} is not in "
                               f"{TURN_LABELS.dir(data_dir)}")
        if not 0 <= turn_index < turns:
            raise ExplainError(f"trajectory {trajectory_id!r} has turns 0 to {turns - 1}; "
                               f"there is no turn {turn_index}")
        where = {"trajectory_id": trajectory_id, "turn_index": turn_index}
        rows = {}
        for table in (TURN_LABELS, TURN_FEATURES, RAW_TURNS):
            if not table.paths(data_dir):
                raise ExplainError(f"no {table.name} under {data_dir}: the turn's labels are "
                                   f"there but not its {table.name}")
            found = con.sql("SELECT * FROM read_parquet($path, hive_partitioning = false) "
                            "WHERE trajectory_id = "
                            "$trajectory_id AND turn_index = $turn_index",
                            params={"path": table.glob(data_dir), **where}
                            ).to_arrow_table().to_pylist()
            if not found:
                raise ExplainError(f"turn {turn_index} of {trajectory_id!r} is labelled but "
                                   f"missing from {table.name} under {data_dir}: materialize "
                                   "again")
            rows[table.name] = found[0]
    finally:
        con.close()
    features = {k: v for k, v in rows[TURN_FEATURES.name].items() if k not in _NOT_FEATURES}
    turn = rows[RAW_TURNS.name]
    return TurnExplanation(rows[TURN_LABELS.name], turn["action"], turn["observation"], features)


def explain_lines(data_dir: Path, trajectory_id: str, turn_index: int,
                  policy_path: Path | None = None, max_chars: int = 1000) -> list[str]:
    """What `worldtrace quality explain` prints."""
    policy = load_policy(policy_path) if policy_path else load_policy()
    return explain_turn(data_dir, trajectory_id, turn_index).lines(policy, max_chars)
