"""The rules of the turn policy: which one named a turn, what it read, and how near it came to
another.

quality/rules.sql names every turn by the first rule that holds, as `category.name` (the ids and
what each means are the policy's [rules] table). `RULES` is read off that SQL: for each rule, the
feature columns (`f.*`) and thresholds (`$category_key`) its condition reads, so what a labelled
row records (`rule_features`) and what `worldtrace quality explain` shows cannot drift from what
the rule does. The default rule (informative) reads nothing of its own; its row records how new
the observation is and how often it recurs (`DEFAULT_RULE_FEATURES`).

Ambiguity: a turn is ambiguous when rules.sql, run again with every threshold moved by a margin,
gives it another category -- once with every comparison made easier to hold (a `min_` threshold
lowered, a `max_` raised) and once harder. A share (a float threshold in [0, 1]) moves by
`share_margin` on the log-odds scale, so it stays inside (0, 1) and moves less near its ends
(0.8 -> 0.71 / 0.87, 0.95 -> 0.92 / 0.97 at 0.5); a count by `count_margin` of its value and at
least 1, never below 0 (8 -> 6 / 10 at 0.25). Boolean and categorical features (is_error,
ack_phrase, repeat_masked, ...) have no margin.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sources.storage import load_sql

# The default rule's record: novelty and recurrence, the quantities the low-information rules
# found too high or too low.
DEFAULT_RULE_FEATURES = ("novel_shingles", "novelty", "jaccard_prev", "jaccard_max_prev",
                         "corpus_frequency")
# `b.min_trajectories` in rules.sql is the boilerplate floor these two thresholds make.
_FLOOR_THRESHOLDS = ("boilerplate_min_trajectories", "boilerplate_min_trajectory_share")
AMBIGUOUS_WEIGHTS = ("category", "highest")  # or a number in [0, 1]

_CASE = re.compile(r"\bCASE\b(.*)\bEND\s+AS\s+rule\b", re.S)
_WHEN = re.compile(r"\bWHEN\b(.*?)\bTHEN\s+'([a-z_]+\.[a-z_]+)'", re.S)
_ELSE = re.compile(r"\bELSE\s+'([a-z_]+\.[a-z_]+)'")
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True)
class Rule:
    """One rule of rules.sql: its id and the features and thresholds its condition reads."""

    id: str
    features: tuple[str, ...]
    thresholds: tuple[str, ...]

    @property
    def category(self) -> str:
        return self.id.split(".", 1)[0]


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def parse_rules(sql: str) -> tuple[Rule, ...]:
    """The rules of a rules.sql text, in the order they are tried, the default last."""
    code = re.sub(r"--[^\n]*", "", sql)
    case = _CASE.search(code)
    default = _ELSE.search(case.group(1)) if case else None
    if not case or not default:
        raise ValueError("rules.sql: expected CASE WHEN ... THEN 'category.name' ... ELSE "
                         "'category.name' END AS rule")
    rules = []
    for condition, rule_id in _WHEN.findall(case.group(1)):
        thresholds = re.findall(r"\$(\w+)", condition)
        if "b.min_trajectories" in condition:
            thresholds += _FLOOR_THRESHOLDS
        rules.append(Rule(rule_id, _unique(re.findall(r"\bf\.(\w+)", condition)),
                          _unique(thresholds)))
    rules.append(Rule(default.group(1), DEFAULT_RULE_FEATURES, ()))
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise ValueError(f"rules.sql: a rule id is used twice: {ids}")
    return tuple(rules)


RULES: tuple[Rule, ...] = parse_rules(load_sql(__file__, "rules.sql"))
RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def features_json_sql(rule_column: str, alias: str = "f") -> str:
    """A SQL expression: a JSON object of the feature values the row's rule read."""
    branches = []
    for rule in RULES:
        names = [n for n in rule.features if _IDENTIFIER.match(n)]
        pairs = ", ".join(f"'{n}', {alias}.{n}" for n in names)
        branches.append(f"WHEN '{rule.id}' THEN json_object({pairs})")
    return f"CASE {rule_column} {' '.join(branches)} END::VARCHAR"


# rules.sql's shape, comments removed: its floor's formula and its CASE (what `variants_sql`
# writes once per variant).
_SHAPE = re.compile(r"\s*WITH\s+boilerplate_floor\s+AS\s+\(\s*SELECT\s+(.*?)\s+AS\s+"
                    r"min_trajectories\s*\)\s*SELECT\s+f\.file_row_number\s*,\s*(CASE\b.*"
                    r"\bEND)\s+AS\s+rule\s+FROM\s+features\s+AS\s+f\s*,\s*"
                    r"boilerplate_floor\s+AS\s+b\s*", re.S)


def variants_sql(sql: str, variants: Sequence[str], columns: str = "f.file_row_number") -> str:
    """rules.sql's rule under each of several sets of thresholds, in one scan of the features:
    `columns` of the features (`f`), then one column per variant, named after it, whose
    thresholds are the parameters `$name__variant` (`$trajectories` is shared). The same rule
    ids as rules.sql run once per variant, without reading the features again for each."""
    shape = _SHAPE.fullmatch(re.sub(r"--[^\n]*", "", sql))
    if not shape:
        raise ValueError("rules.sql: expected WITH boilerplate_floor AS (SELECT ... AS "
                         "min_trajectories) SELECT f.file_row_number, CASE ... END AS rule FROM "
                         "features AS f, boilerplate_floor AS b")
    floor, case = shape.groups()
    floors = ", ".join(f"{_renamed(floor, v)} AS {v}" for v in variants)
    cases = ", ".join(f"{_renamed(case, v).replace('b.min_trajectories', f'b.{v}')} AS {v}"
                      for v in variants)
    return (f"WITH boilerplate_floor AS (SELECT {floors})\nSELECT {columns}, {cases}"
            "\nFROM features AS f, boilerplate_floor AS b")


def _renamed(sql: str, variant: str) -> str:
    """Every parameter but $trajectories renamed $name__variant."""
    return re.sub(r"\$(?!trajectories\b)(\w+)", rf"$\1__{variant}", sql)


@dataclass(frozen=True)
class Ambiguity:
    """The policy's [ambiguous] table: the margins and the weight of an ambiguous turn
    ("category": its category's weight, as if it were not ambiguous; "highest": the highest
    weight of the categories it gets within the margin; or a number)."""

    share_margin: float
    count_margin: float
    loss_weight: str | float = "category"

    def weight_params(self) -> dict[str, Any]:
        """labels.sql's parameters for the weight of an ambiguous turn."""
        fixed = not isinstance(self.loss_weight, str)
        return {"ambiguous_weight_mode": "fixed" if fixed else self.loss_weight,
                "ambiguous_loss_weight": float(self.loss_weight) if fixed else 0.0}


def parse_ambiguity(section: Any, where: str) -> Ambiguity:
    """Check and read an [ambiguous] table; errors name `where`."""
    expected = {"share_margin", "count_margin", "loss_weight"}
    if not isinstance(section, dict) or set(section) != expected:
        got = sorted(section) if isinstance(section, dict) else section
        raise ValueError(f"{where} [ambiguous]: expected keys {sorted(expected)}, got {got}")
    for key in ("share_margin", "count_margin"):
        value = section[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{where} [ambiguous]: {key} must be a number >= 0, "
                             f"got {value!r}")
    weight = section["loss_weight"]
    number = isinstance(weight, (int, float)) and not isinstance(weight, bool)
    if not (weight in AMBIGUOUS_WEIGHTS or (number and 0.0 <= weight <= 1.0)):
        raise ValueError(f"{where} [ambiguous]: loss_weight must be "
                         f"{' or '.join(repr(w) for w in AMBIGUOUS_WEIGHTS)} or a number in "
                         f"[0, 1], got {weight!r}")
    return Ambiguity(float(section["share_margin"]), float(section["count_margin"]),
                     float(weight) if number else weight)


def moved_threshold(key: str, value: float, ambiguity: Ambiguity, easier: bool) -> float:
    """A threshold moved by the margin, so that its comparison holds more easily (`easier`) or
    less easily: `min_*` thresholds are lower bounds of a feature, `max_*` upper bounds."""
    if not key.startswith(("min_", "max_")):
        raise ValueError(f"threshold {key}: expected a min_ or max_ name")
    raise_it = key.startswith("max_") == easier
    if isinstance(value, float) and 0.0 <= value <= 1.0:  # a share: log-odds
        if value in (0.0, 1.0):
            return value
        logit = math.log(value / (1.0 - value))
        logit += ambiguity.share_margin if raise_it else -ambiguity.share_margin
        return 1.0 / (1.0 + math.exp(-logit))
    step = max(1.0, ambiguity.count_margin * value) if ambiguity.count_margin else 0.0
    return value + step if raise_it else max(0.0, value - step)


def moved_thresholds(thresholds: dict[str, dict[str, float]], ambiguity: Ambiguity,
                     easier: bool) -> dict[str, dict[str, float]]:
    """Every threshold of a policy moved by the margin (see `moved_threshold`)."""
    return {category: {k: moved_threshold(k, v, ambiguity, easier) for k, v in values.items()}
            for category, values in thresholds.items()}
