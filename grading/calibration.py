"""A learned calibration of the turn categories, and its leave-one-source-out comparison with
the policy's rules.

The calibration is a multinomial logistic regression over the turn features (the columns of
`turn_features`, quality/features.py) and, as a one-hot input, the category the rules gave the
turn: a calibration on top of the rules. Counts enter as log1p, a missing value (first turn,
observation without shingles) as 0 plus a missing flag; every input is standardised on the
training turns. Classes are weighted by inverse frequency (27 boilerplate turns against 216
informative ones). The rule one-hot is not penalised and the features are (L2), so a strong
penalty shrinks the model towards the rules themselves, not towards the class prior.

Fitting is a damped Newton method from zero in float64 on a strictly convex objective (every
coefficient has some L2 penalty): no random state, the fit converges to the one optimum, and
the same turns give the same coefficients.

`loso_predictions` fits once per source on the other sources' turns and predicts the held-out
source; the pooled predictions are what `worldtrace quality grade --labels F --loso` compares
with the rules' (which have no fitted parameters: their LOSO predictions are their predictions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from quality.labels import CATEGORIES

# Turn-feature columns the calibration reads (turn_features, FEATURE_COLUMN_DOCS), by transform.
# Counts and length ratios span orders of magnitude: log1p. Shares and flags: as they are.
LOG_FEATURES: tuple[str, ...] = (
    "obs_chars", "action_chars", "content_chars", "obs_shingles", "novel_shingles", "new_words",
    "own_words", "length_ratio_prev", "length_ratio_action", "arg_chars_found", "ack_words",
    "foreign_ids", "corpus_frequency", "template_frequency", "fields_sent", "fields_mirrored")
LINEAR_FEATURES: tuple[str, ...] = (
    "new_words_in_action", "overlap_action", "overlap_context", "novelty", "jaccard_prev",
    "jaccard_max_prev", "action_in_observation", "is_error", "action_line_share",
    "seen_line_share", "ack_phrase", "confirm_prompt", "action_words")
# Categorical columns, one-hot over their known values (anything else: all zeros).
ONE_HOT_FEATURES: dict[str, tuple] = {
    "repeat_masked": (1, 2),
    "error_source": ("flag", "exit_code", "pattern"),
}
RULE_COLUMN = "predicted"  # the rules' category, as grading/labelled_turns.sql names it


@dataclass(frozen=True)
class CalibrationConfig:
    """How the calibration is fitted. Chosen before the LOSO figures were read; see README."""

    l2: float = 0.1  # on the standardised features' coefficients
    l2_rules: float = 1e-3  # on the rule one-hot's and the bias's (shrink towards the rules)
    use_rules: bool = True  # the rules' category as a one-hot input
    balanced: bool = True  # weight each class by n / (classes * its count)
    max_iterations: int = 100  # Newton steps
    tolerance: float = 1e-8  # stop when the largest gradient entry is below this


@dataclass(frozen=True)
class Calibration:
    """A fitted model: input names, standardisation, coefficients (inputs + bias, categories)."""

    inputs: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coefficients: np.ndarray
    iterations: int
    training_turns: int

    @property
    def uses_rules(self) -> bool:
        return any(name.startswith("rule=") for name in self.inputs)

    def logits(self, x: np.ndarray) -> np.ndarray:
        return _with_bias((x - self.mean) / self.scale) @ self.coefficients

    def predict(self, x: np.ndarray) -> list[str]:
        """The category of each row of a design matrix (design_matrix's columns)."""
        return [CATEGORIES[i] for i in self.logits(x).argmax(axis=1)]


def input_names(use_rules: bool = True) -> tuple[str, ...]:
    """The design matrix's column names, in order."""
    names: list[str] = []
    for column in LOG_FEATURES + LINEAR_FEATURES:
        names += [column, f"{column}_missing"]
    for column, values in ONE_HOT_FEATURES.items():
        names += [f"{column}={value}" for value in values]
    if use_rules:
        names += [f"rule={category}" for category in CATEGORIES]
    return tuple(names)


def design_matrix(rows: pa.Table, use_rules: bool = True) -> np.ndarray:
    """One row of inputs per turn (input_names' order) from turn-feature rows; with `use_rules`,
    `rows` also needs the rules' category (column `predicted`)."""
    missing = [c for c in LOG_FEATURES + LINEAR_FEATURES + tuple(ONE_HOT_FEATURES)
               if c not in rows.column_names]
    if use_rules and RULE_COLUMN not in rows.column_names:
        missing.append(RULE_COLUMN)
    if missing:
        raise ValueError(f"calibration: turn rows lack column(s) {', '.join(missing)}")
    columns: list[np.ndarray] = []
    for column in LOG_FEATURES + LINEAR_FEATURES:
        values, absent = _numeric(rows[column])
        if column in LOG_FEATURES:
            values = np.log1p(np.maximum(values, 0.0))
        columns += [values, absent]
    for column, known in ONE_HOT_FEATURES.items():
        values = rows[column].to_pylist()
        columns += [np.array([v == k for v in values], dtype=np.float64) for k in known]
    if use_rules:
        rules = rows[RULE_COLUMN].to_pylist()
        columns += [np.array([r == c for r in rules], dtype=np.float64) for c in CATEGORIES]
    return np.column_stack(columns)


def _numeric(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(values with missing as 0, missing flags) of a numeric or boolean column."""
    values = column.to_pylist()
    absent = np.array([v is None for v in values], dtype=np.float64)
    return np.array([0.0 if v is None else float(v) for v in values]), absent


def _with_bias(z: np.ndarray) -> np.ndarray:
    return np.hstack([z, np.ones((len(z), 1))])


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def fit(x: np.ndarray, labels: Sequence[str], config: CalibrationConfig = CalibrationConfig(),
        inputs: tuple[str, ...] | None = None) -> Calibration:
    """Fit the calibration on a design matrix and the turns' labelled categories."""
    inputs = inputs or input_names(config.use_rules)
    if x.shape != (len(labels), len(inputs)):
        raise ValueError(f"calibration: {x.shape} inputs for {len(labels)} labels and "
                         f"{len(inputs)} input names")
    y = np.array([CATEGORIES.index(label) for label in labels])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a constant input (a flag never set) stays 0
    is_rule = np.array([n.startswith("rule=") for n in inputs])
    # the rule one-hot is used as it is (0/1), so its coefficients read as "what the rule's
    # word is worth"; it and the bias get only a token penalty (which keeps a category the
    # rule always gets right, like empty, from pushing its coefficient to infinity)
    mean[is_rule], scale[is_rule] = 0.0, 1.0
    z = _with_bias((x - mean) / scale)
    penalty = np.where(np.append(is_rule, True), config.l2_rules, config.l2)
    counts = np.bincount(y, minlength=len(CATEGORIES)).astype(np.float64)
    class_weight = (len(y) / (len(CATEGORIES) * np.maximum(counts, 1.0)) if config.balanced
                    else np.ones(len(CATEGORIES)))
    objective = _Objective(z, np.eye(len(CATEGORIES))[y], class_weight[y] / class_weight[y].sum(),
                           penalty)
    coefficients, iterations = _newton(objective, config)
    return Calibration(inputs, mean, scale, coefficients, iterations, len(labels))


@dataclass
class _Objective:
    """Weighted softmax cross-entropy + 0.5 * sum(penalty * coefficient^2) (per input row)."""

    z: np.ndarray  # standardised inputs + bias column
    target: np.ndarray  # one-hot labels
    weight: np.ndarray  # per turn, summing to 1
    penalty: np.ndarray  # per input row of the coefficients

    @cached_property
    def outer(self) -> np.ndarray:
        """z_ia z_ib per turn, flattened (turns, inputs * inputs): the same at every step."""
        return (self.z[:, :, None] * self.z[:, None, :]).reshape(len(self.z), -1)

    def value(self, w: np.ndarray) -> float:
        logits = self.z @ w
        top = logits.max(axis=1, keepdims=True)
        log_p = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        return float(-(self.weight * (self.target * log_p).sum(axis=1)).sum()
                     + 0.5 * (self.penalty[:, None] * w * w).sum())

    def gradient_and_hessian(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient (inputs, categories) and Hessian over the flattened coefficients."""
        p = _softmax(self.z @ w)
        gradient = self.z.T @ ((p - self.target) * self.weight[:, None])
        gradient += self.penalty[:, None] * w
        # d2/dw_ak dw_bm = sum_i weight_i z_ia z_ib (p_ik [k=m] - p_ik p_im)
        curvature = self.weight[:, None, None] * (
            p[:, :, None] * np.eye(p.shape[1]) - p[:, :, None] * p[:, None, :])
        inputs, classes = w.shape
        # one matrix product: (k m, turns) x (turns, a b), then ordered (a k, b m)
        hessian = (curvature.reshape(len(self.z), -1).T @ self.outer).reshape(
            classes, classes, inputs, inputs).transpose(2, 0, 3, 1).reshape(w.size, w.size)
        hessian = hessian + np.diag(np.repeat(self.penalty, classes))
        return gradient, hessian


def _newton(objective: _Objective, config: CalibrationConfig) -> tuple[np.ndarray, int]:
    """Damped Newton from zero (step halved until the objective decreases): a strictly convex
    problem of a few hundred coefficients converges in a few dozen steps."""
    w = np.zeros((objective.z.shape[1], objective.target.shape[1]))
    value = objective.value(w)
    for iteration in range(1, config.max_iterations + 1):
        gradient, hessian = objective.gradient_and_hessian(w)
        if np.abs(gradient).max() < config.tolerance:
            return w, iteration - 1
        direction = np.linalg.solve(hessian, gradient.ravel()).reshape(w.shape)
        step = 1.0
        while objective.value(w - step * direction) > value and step > 1e-8:
            step /= 2
        w = w - step * direction
        value = objective.value(w)
    raise RuntimeError(f"calibration: no convergence in {config.max_iterations} Newton steps "
                       f"(largest gradient entry {np.abs(gradient).max():.2e})")


@dataclass(frozen=True)
class Fold:
    """One leave-one-source-out fold: the held-out source and the sources fitted on."""

    held_out: str
    training_sources: tuple[str, ...]
    training_turns: int
    iterations: int


def loso_predictions(x: np.ndarray, labels: Sequence[str], sources: Sequence[str],
                     config: CalibrationConfig = CalibrationConfig()
                     ) -> tuple[list[str], list[Fold]]:
    """For each source, fit on every other source's turns and predict the held-out ones; the
    predictions pooled in the rows' order, and the folds."""
    sources_array = np.asarray(sources, dtype=object)
    labels_array = np.asarray(labels, dtype=object)
    predicted: list[str | None] = [None] * len(labels)
    folds: list[Fold] = []
    for held_out in sorted(set(sources)):
        train = sources_array != held_out
        model = fit(x[train], list(labels_array[train]), config)
        for row, category in zip(np.flatnonzero(~train), model.predict(x[~train]), strict=True):
            predicted[row] = category
        folds.append(Fold(held_out, tuple(sorted(set(sources_array[train]))), int(train.sum()),
                          model.iterations))
    if any(p is None for p in predicted):
        raise AssertionError("a turn fell in no leave-one-source-out fold")
    return [p for p in predicted if p is not None], folds
