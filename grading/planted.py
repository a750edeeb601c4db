"""Grade the quality stage against the scale generator's planted truth.

    worldtrace quality grade --trajectories N --seed S [--work-dir DIR] [--domains d1,d2]

Generates N trajectories per domain (sources/factory/scale.py), ingests them with the real
readers, runs turn features, labels and dedup with the fixed policy, and compares:
- turn categories with out_dir/_truth/turn_truth.parquet, joined on (source, file, turn_index):
  a confusion matrix and per-category precision and recall;
- duplicate pairs with _truth/duplicate_pairs.parquet: a planted pair with Jaccard >= 0.8 must
  end in one cluster (recall); a pair we put in one cluster is correct if it is planted or its
  exact Jaccard, recomputed with the generator's own definition, is >= 0.8 (precision).
The last line printed is the worst precision and recall over the graded categories.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from grading.confusion import Confusion
from quality.stage import run_quality_stage
from quality.tables import TRAJECTORY_DEDUP, TURN_LABELS
from sources.storage import load_sql
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

GRADED = ("empty", "error", "unchanged", "echo", "boilerplate")  # the floors
DUP_THRESHOLD = 0.8
# The hand-labelled real dev set names files relative to the shared trace folder beside the
# checkout (../shared), or $WORLDTRACE_SHARED.
DEFAULT_LABELS_ROOT = Path(os.environ.get(
    "WORLDTRACE_SHARED", Path(__file__).resolve().parent.parent.parent / "shared"))


@dataclass
class GradeReport:
    """Confusion counts and precision / recall per category, and for duplicate pairs."""

    turns: int = 0
    confusion: Confusion = field(default_factory=Confusion)
    unmatched_turns: int = 0
    dup_true_pairs: int = 0
    dup_found: int = 0
    dup_predicted_pairs: int = 0
    dup_correct: int = 0

    def precision(self, category: str) -> float:
        return self.confusion.precision(category)

    def recall(self, category: str) -> float:
        return self.confusion.recall(category)

    @property
    def dup_precision(self) -> float:
        return self.dup_correct / self.dup_predicted_pairs if self.dup_predicted_pairs else 1.0

    @property
    def dup_recall(self) -> float:
        return self.dup_found / self.dup_true_pairs if self.dup_true_pairs else 1.0

    def worst(self) -> tuple[tuple[float, str], tuple[float, str]]:
        """(lowest precision, its category), (lowest recall, its category) over GRADED."""
        return (min((self.precision(c), c) for c in GRADED),
                min((self.recall(c), c) for c in GRADED))

    def lines(self) -> list[str]:
        out = [f"turns graded: {self.turns} (unmatched: {self.unmatched_turns})"]
        out += self.confusion.matrix_lines()
        out.append(f"duplicate pairs (Jaccard >= {DUP_THRESHOLD}): precision "
                   f"{self.dup_precision:.3f} ({self.dup_correct}/{self.dup_predicted_pairs}), "
                   f"recall {self.dup_recall:.3f} ({self.dup_found}/{self.dup_true_pairs})")
        (p, pc), (r, rc) = self.worst()
        out.append(f"worst category precision {p:.3f} ({pc}), recall {r:.3f} ({rc}); "
                   f"duplicate pairs precision {self.dup_precision:.3f}, "
                   f"recall {self.dup_recall:.3f}")
        return out


def grade(n: int, seed: int, work_dir: Path, domains: Sequence[str] | None = None,
          workers: int = 1) -> GradeReport:
    """Generate, ingest, run the quality stage and compare with the planted truth."""
    from sources.catalog import make_spec
    from sources.factory.scale import generate_corpus, source_name
    from sources.ingest import write_tables
    from sources.schema import DOMAINS

    domains = list(domains or DOMAINS)
    corpus, data, out = work_dir / "corpus", work_dir / "data", work_dir / "quality"
    generate_corpus(corpus, domains, n, seed)
    specs = [make_spec(source_name(d), corpus / d / source_name(d), d) for d in domains]
    write_tables(specs, data, domains)
    run_quality_stage(data, out, domains, workers)
    report = GradeReport()
    _grade_turns(report, data, out, corpus / "_truth" / "turn_truth.parquet")
    _grade_pairs(report, data, out, corpus / "_truth" / "duplicate_pairs.parquet")
    return report


def _grade_turns(report: GradeReport, data: Path, out: Path, truth: Path) -> None:
    rows = duckdb.sql(load_sql(__file__, "turn_confusion.sql"), params={
        "labels": TURN_LABELS.glob(out), "truth": str(truth),
        "trajectories": RAW_TRAJECTORIES.glob(data)}).fetchall()
    for truth_category, predicted, n in rows:
        if truth_category is None:
            report.unmatched_turns += n
            continue
        report.confusion.add(truth_category, predicted, n)
        report.turns += n


def _grade_pairs(report: GradeReport, data: Path, out: Path, truth: Path) -> None:
    from sources.factory.scale_text import jaccard

    members = duckdb.sql(load_sql(__file__, "cluster_members.sql"), params={
        "decisions": str(TRAJECTORY_DEDUP.path(out)),
        "trajectories": RAW_TRAJECTORIES.glob(data)}).fetchall()
    clusters: dict[str, list[tuple[str, str]]] = {}
    for cluster, source, path in members:
        clusters.setdefault(cluster, []).append((source, path))
    predicted = {frozenset(pair) for group in clusters.values()
                 for pair in itertools.combinations(group, 2)}
    planted = duckdb.sql(load_sql(__file__, "planted_pairs.sql"),
                         params={"truth": str(truth)}).fetchall()
    positive = {frozenset({(s, a), (s, b)}) for s, a, b, j in planted if j >= DUP_THRESHOLD}
    report.dup_true_pairs = len(positive)
    report.dup_found = len(positive & predicted)
    report.dup_predicted_pairs = len(predicted)
    unplanted = [tuple(sorted(pair)) for pair in predicted - positive]
    report.dup_correct = len(predicted & positive)
    if unplanted:
        texts = _trajectory_texts(data, {member for pair in unplanted for member in pair})
        report.dup_correct += sum(
            1 for a, b in unplanted
            if a in texts and b in texts and jaccard(texts[a], texts[b]) >= DUP_THRESHOLD)


def _trajectory_texts(data: Path, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The generator's Jaccard text (task, then actions and observations) of some trajectories."""
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE wanted (source VARCHAR, source_path VARCHAR)")
    con.executemany("INSERT INTO wanted VALUES (?, ?)", sorted(wanted))
    rows = con.execute(load_sql(__file__, "trajectory_texts.sql"), {
        "trajectories": RAW_TRAJECTORIES.glob(data),
        "turns": RAW_TURNS.glob(data)}).fetchall()
    con.close()
    texts = {}
    for source, path, task, actions, observations in rows:
        parts = [task]
        for a, o in zip(actions or [], observations or [], strict=True):
            if a is not None:
                parts += [a, o]
        texts[source, path] = "\n".join(parts)
    return texts
