"""Grade the turn classifier against hand-labelled turns (a JSONL labels file).

    worldtrace quality grade --labels grading/labelled/real_dev.jsonl [--root ../shared]

Each line of the labels file names one turn and its category:
    {"file": "realdev/mcp/toolathlon/x.json", "position": "$", "turn_index": 3,
     "label": "echo", "why": "...", "domain": "mcp", "source": "mcp/toolathlon"}
`file` is relative to `--root`, `position` is the trajectory's place in that file as the readers
write it into raw_trajectories.source_position (`$`, `$[3]`, `line 12`, `folder`), `source`
groups the turns for the leave-one-source-out figures (default: the file's folder).

The labelled files are ingested with the real readers into a work folder, the quality stage's
features and labels run over them, and each labelled turn is compared with its predicted
category: confusion matrix, precision / recall per category, the binary low-information view
(what the loss weight sees), and the same figures per held-out source. The last line printed
is the accuracy and the worst recall.

With `--loso` the rules are compared with a learned calibration (quality/calibration.py)
refitted for each held-out source, both pooled over the folds; with `--calibrate-on D` the
calibration is fitted on every turn of the labels file D and graded beside the rules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from grading.calibration import (
    Calibration,
    CalibrationConfig,
    Fold,
    design_matrix,
    fit,
    loso_predictions,
)
from grading.confusion import Confusion
from quality.labels import CATEGORIES, load_policy
from quality.sharded import features_for_domain, labels_for_domain
from quality.tables import TURN_FEATURES, TURN_LABELS
from sources.storage import load_sql, query_arrow
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS


class LabelsFileError(ValueError):
    """A labels file line that cannot be used, naming the file and the line."""


@dataclass(frozen=True)
class LabelledTurn:
    """One line of a labels file."""

    line: int
    file: str
    position: str
    turn_index: int
    label: str
    source: str
    why: str = ""


def load_labels(path: Path) -> list[LabelledTurn]:
    """Parse and check a labels JSONL file; every problem names the file and line."""
    turns: list[LabelledTurn] = []
    seen: set[tuple[str, str, int]] = set()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise LabelsFileError(f"{path}: cannot read the labels file ({error})") from None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            raise LabelsFileError(f"{where}: not JSON ({error})") from None
        if not isinstance(record, dict):
            raise LabelsFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
        missing = [k for k in ("file", "position", "turn_index", "label") if k not in record]
        if missing:
            raise LabelsFileError(f"{where}: missing {', '.join(missing)}")
        if record["label"] not in CATEGORIES:
            raise LabelsFileError(f"{where}: label {record['label']!r} is not one of "
                                  f"{', '.join(CATEGORIES)}")
        try:
            turn_index = int(record["turn_index"])
        except (TypeError, ValueError):
            raise LabelsFileError(f"{where}: turn_index {record['turn_index']!r} is not an "
                                  "integer") from None
        key = (record["file"], record["position"], turn_index)
        if key in seen:
            raise LabelsFileError(f"{where}: turn {key} is labelled twice")
        seen.add(key)
        source = record.get("source") or str(Path(record["file"]).parent)
        turns.append(LabelledTurn(number, record["file"], record["position"],
                                  turn_index, record["label"], source,
                                  record.get("why", "")))
    if not turns:
        raise LabelsFileError(f"{path}: no labelled turns")
    return turns


@dataclass
class LabelGrade:
    """Predicted against labelled categories, overall and per held-out source."""

    overall: Confusion = field(default_factory=Confusion)
    by_source: dict[str, Confusion] = field(default_factory=dict)
    unmatched: list[LabelledTurn] = field(default_factory=list)
    method: str = "rules"
    # the policy's loss weight per category, for the weight-level agreement line
    weights: dict[str, float] = field(default_factory=dict)
    # pooled leave-one-source-out predictions per method ("rules", "calibration"), with --loso
    loso: dict[str, Confusion] = field(default_factory=dict)
    folds: list[Fold] = field(default_factory=list)
    # rules and a calibration fitted on another labelled set (--calibrate-on), on this set
    fitted: dict[str, Confusion] = field(default_factory=dict)
    fitted_on: str = ""
    # the rules' figures on the turns they call ambiguous and on the rest (turn_labels.ambiguous)
    ambiguous: Confusion = field(default_factory=Confusion)
    clear: Confusion = field(default_factory=Confusion)

    def add(self, source: str, truth: str, predicted: str) -> None:
        self.overall.add(truth, predicted)
        self.by_source.setdefault(source, Confusion()).add(truth, predicted)

    def lines(self) -> list[str]:
        o = self.overall
        out = [f"labelled turns graded: {o.total} (unmatched: {len(self.unmatched)}); "
               f"classifier: {self.method}"]
        out += [f"  unmatched: {t.file} {t.position} turn {t.turn_index}"
                for t in self.unmatched[:10]]
        out += o.matrix_lines()
        p, r = o.low_information()
        out.append(f"low-information (empty..boilerplate vs informative): precision {p:.3f}, "
                   f"recall {r:.3f}")
        if self.weights:
            out.append(f"loss-weight level (same weight as the label's category): "
                       f"{o.weight_agreement(self.weights):.3f}")
        # Leave-one-source-out: the policy's rules are fixed, not fitted on these labels, so
        # each held-out source is graded by the same rules; the figures show how each source
        # fares on its own.
        out.append("leave-one-source-out, per held-out source: turns, accuracy, low-info "
                   "precision / recall, informative recall, worst recall")
        for source, c in sorted(self.by_source.items()):
            lp, lr = c.low_information()
            wr, wc = c.worst_recall()
            out.append(f"  {source:<24}{c.total:>5}  acc {c.accuracy:.3f}  low-info "
                       f"{lp:.3f} / {lr:.3f}  informative {c.recall('informative'):.3f}  "
                       f"worst {wr:.3f} ({wc})")
        out += self.ambiguity_lines() + self.loso_lines() + self.fitted_lines()
        worst, category = o.worst_recall()
        out.append(f"accuracy {o.accuracy:.3f}, worst recall {worst:.3f} ({category}); "
                   f"low-information precision {p:.3f}, recall {r:.3f}")
        return out

    def ambiguity_lines(self) -> list[str]:
        """Accuracy on the turns the policy calls ambiguous and on the rest."""
        a, c = self.ambiguous, self.clear
        if not a.total + c.total:
            return []
        return [f"ambiguous (a margin's move of the thresholds changes the category): "
                f"{a.total} of {a.total + c.total} turns ({a.total / (a.total + c.total):.1%}), "
                f"accuracy {a.accuracy:.3f}; the other turns: accuracy {c.accuracy:.3f}"]

    def loso_lines(self) -> list[str]:
        """The pooled leave-one-source-out tables, one per method."""
        if not self.loso:
            return []
        out = [f"leave-one-source-out, pooled over {len(self.folds)} folds (each source "
               "predicted by a model fitted on the others):"]
        for fold in self.folds:
            out.append(f"  fold {fold.held_out:<24} fitted on {fold.training_turns} turns of "
                       f"{len(fold.training_sources)} other sources ({fold.iterations} "
                       "iterations)")
        notes = {"rules": "no fitted parameters: their LOSO predictions are their predictions, "
                          "but their thresholds were read off the dev set",
                 "calibration": "quality/calibration.py: logistic regression over the features "
                                "and the rule's category, refitted per fold"}
        return out + comparison_lines("LOSO", self.loso, notes)

    def fitted_lines(self) -> list[str]:
        """The tables of a calibration fitted on another labelled set, beside the rules."""
        if not self.fitted:
            return []
        notes = {"rules": "the policy as it is",
                 "calibration": f"fitted on {self.fitted_on}; applied unchanged"}
        return ([f"calibration fitted on {self.fitted_on}, graded on this set beside the rules:"]
                + comparison_lines("calibrate-on", self.fitted, notes))


def comparison_lines(heading: str, tables: dict[str, Confusion], notes: dict[str, str]
                     ) -> list[str]:
    """One confusion matrix and one headline line per method."""
    out: list[str] = []
    for method, c in tables.items():
        out.append(f"{heading} {method} ({notes[method]})")
        out += ["  " + line for line in c.matrix_lines()]
        out.append(f"  {heading} {method}: {summary(c)}")
    return out


def summary(c: Confusion) -> str:
    """The headline figures of a confusion matrix, on one line."""
    p, r = c.low_information()
    worst, category = c.worst_recall()
    return (f"accuracy {c.accuracy:.3f}, worst recall {worst:.3f} ({category}); low-information "
            f"precision {p:.3f}, recall {r:.3f}; informative recall "
            f"{c.recall('informative'):.3f}")


def label_labelled_files(turns: Sequence[LabelledTurn], root: Path, work_dir: Path,
                         policy_path: Path | None = None) -> pa.Table:
    """Ingest the labelled files, run features and labels, and return one row per labelled
    turn: its label, source, predicted category (NULL when unmatched) and turn features."""
    from sources.catalog import SourceSpec
    from sources.ingest import write_tables

    data, out = work_dir / "data", work_dir / "quality"
    specs = []
    for file in sorted({t.file for t in turns}):
        path = Path(root) / file
        if not path.exists():
            raise LabelsFileError(f"labelled file {file} not found under {root}")
        specs.append(SourceSpec(name=str(Path(file).parent), domain=None, format="auto",
                                path=path, root=Path(root)))
    write_tables(specs, data)
    policy = load_policy(policy_path) if policy_path else load_policy()
    for domain in RAW_TURNS.domains_present(data):
        features_for_domain(data, out, domain)
        labels_for_domain(out, domain, policy, data_dir=data)
    con = duckdb.connect()
    try:
        con.execute("CREATE TEMP TABLE wanted (line INTEGER, file VARCHAR, position VARCHAR, "
                    "turn_index INTEGER, label VARCHAR, source VARCHAR)")
        con.executemany("INSERT INTO wanted VALUES (?, ?, ?, ?, ?, ?)",
                        [(t.line, t.file, t.position, t.turn_index, t.label, t.source)
                         for t in turns])
        return query_arrow(con, load_sql(__file__, "labelled_turns.sql"), {
            "trajectories": RAW_TRAJECTORIES.glob(data),
            "labels": TURN_LABELS.glob(out),
            "features": TURN_FEATURES.glob(out)})
    finally:
        con.close()


def grade_rows(turns: Sequence[LabelledTurn], rows: pa.Table, predicted: Sequence[str | None],
               method: str = "rules") -> LabelGrade:
    """A LabelGrade from labelled turns and their predictions (None: turn not found)."""
    report = LabelGrade(method=method)
    by_line = {t.line: t for t in turns}
    for line, guess in zip(rows["line"].to_pylist(), predicted, strict=True):
        turn = by_line[line]
        if guess is None:
            report.unmatched.append(turn)
        else:
            report.add(turn.source, turn.label, guess)
    return report


def _graded_rows(rows: pa.Table) -> pa.Table:
    """The labelled turns that were found (an unmatched turn has no features)."""
    return rows.filter(pc.is_valid(rows["predicted"]))


def _confusions(labels: Sequence[str], predictions: dict[str, Sequence[str]]
                ) -> dict[str, Confusion]:
    tables: dict[str, Confusion] = {}
    for method, guesses in predictions.items():
        tables[method] = Confusion()
        for truth, guess in zip(labels, guesses, strict=True):
            tables[method].add(truth, guess)
    return tables


def add_ambiguity(report: LabelGrade, rows: pa.Table) -> None:
    """The rules' confusion on the turns turn_labels calls ambiguous, and on the rest."""
    rows = _graded_rows(rows)
    for truth, guess, ambiguous in zip(rows["label"].to_pylist(), rows["predicted"].to_pylist(),
                                       rows["ambiguous"].to_pylist(), strict=True):
        (report.ambiguous if ambiguous else report.clear).add(truth, guess)


def add_loso(report: LabelGrade, rows: pa.Table,
             config: CalibrationConfig | None = None) -> None:
    """Pooled leave-one-source-out figures of the rules and of the calibration."""
    config = config or CalibrationConfig()
    rows = _graded_rows(rows)
    labels, sources = rows["label"].to_pylist(), rows["source"].to_pylist()
    predicted, report.folds = loso_predictions(design_matrix(rows, config.use_rules), labels,
                                               sources, config)
    report.loso = _confusions(labels, {"rules": rows["predicted"].to_pylist(),
                                       "calibration": predicted})


def add_fitted(report: LabelGrade, rows: pa.Table, model: Calibration, fitted_on: str) -> None:
    """Figures of the rules and of a calibration fitted on another labelled set."""
    rows = _graded_rows(rows)
    predicted = model.predict(design_matrix(rows, model.uses_rules))
    report.fitted = _confusions(rows["label"].to_pylist(), {
        "rules": rows["predicted"].to_pylist(), "calibration": predicted})
    report.fitted_on = f"{fitted_on}, {model.training_turns} turns"


def fit_calibration(labels_path: Path, root: Path, work_dir: Path,
                    policy_path: Path | None = None,
                    config: CalibrationConfig | None = None) -> Calibration:
    """A calibration fitted on every turn of a labels file (with the policy's rules as input)."""
    config = config or CalibrationConfig()
    rows = _graded_rows(label_labelled_files(load_labels(labels_path), root, work_dir,
                                             policy_path))
    return fit(design_matrix(rows, config.use_rules), rows["label"].to_pylist(), config)


def grade_labels(labels_path: Path, root: Path, work_dir: Path,
                 policy_path: Path | None = None, loso: bool = False,
                 calibration: tuple[Calibration, str] | None = None) -> LabelGrade:
    """Grade the policy's categories against a labels file; with `loso`, also compare the
    rules with a calibration fitted leave-one-source-out; with `calibration` (a model and the
    set it was fitted on), with that model."""
    turns = load_labels(labels_path)
    rows = label_labelled_files(turns, root, work_dir, policy_path)
    report = grade_rows(turns, rows, rows["predicted"].to_pylist())
    report.weights = dict((load_policy(policy_path) if policy_path else load_policy()).loss_weights)
    add_ambiguity(report, rows)
    if loso:
        add_loso(report, rows)
    if calibration:
        add_fitted(report, rows, *calibration)
    return report
