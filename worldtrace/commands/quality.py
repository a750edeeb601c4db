"""`worldtrace quality grade`: grade the quality stage, against the generator's planted truth
(labels and dedup) or against a hand-labelled set of real turns (`--labels`).
`worldtrace quality explain TRAJECTORY_ID TURN_INDEX`: why one turn got its category and weight."""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from pathlib import Path

from grading.hand_labels import LabelsFileError
from grading.planted import DEFAULT_LABELS_ROOT
from quality.explain import ExplainError

# a broken labels file (one line naming the file and line), a turn that is not there: exit
# status 2 (worldtrace.cli)
USER_ERRORS: tuple[type[Exception], ...] = (LabelsFileError, ExplainError)


def run_grade(args: argparse.Namespace) -> int:
    """Grade in a work folder (kept with --work-dir); prints the report, headline figures last."""
    with contextlib.ExitStack() as stack:
        work = Path(args.work_dir) if args.work_dir else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="worldtrace-grade-")))
        if args.labels:
            from grading.hand_labels import grade_labels

            policy = Path(args.policy) if args.policy else None
            calibration = None
            if args.calibrate_on:
                from grading.hand_labels import fit_calibration

                model = fit_calibration(Path(args.calibrate_on), Path(args.root),
                                        work / "calibrate-on", policy)
                calibration = (model, Path(args.calibrate_on).name)
            lines = []
            # several sets (dev, held-out): one report each, in the order given, each in its
            # own work folder; a single set prints exactly as before
            several = len(args.labels) > 1
            for number, labels in enumerate(args.labels):
                if several:
                    lines.append(f"== labels {labels}")
                folder = work / f"labels-{number}" if several else work
                lines += grade_labels(Path(labels), Path(args.root), folder, policy,
                                      args.loso, calibration).lines()
        else:
            from grading.planted import grade

            domains = None if args.domains == "all" else args.domains.split(",")
            lines = grade(args.trajectories, args.seed, work, domains, args.workers).lines()
    print("\n".join(lines))
    return 0


def run_explain(args: argparse.Namespace) -> int:
    """Print one turn's action, observation, features, rule, category, weight and confidence."""
    from quality.explain import explain_lines

    if args.chars < 1:
        raise ExplainError(f"--chars must be at least 1, got {args.chars}")
    print("\n".join(explain_lines(Path(args.data), args.trajectory_id, args.turn_index,
                                   Path(args.policy) if args.policy else None, args.chars)))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    quality = commands.add_parser("quality", help="quality-stage tools (grade, explain)")
    tools = quality.add_subparsers(dest="tool", required=True)
    grade = tools.add_parser("grade", help="grade labels and dedup against planted truth, "
                             "or labels against a hand-labelled set (--labels)")
    grade.add_argument("--trajectories", type=int, default=200, help="per domain")
    grade.add_argument("--seed", type=int, default=0)
    grade.add_argument("--domains", default="all", help="comma-separated, or all")
    grade.add_argument("--work-dir", help="keep the corpus and outputs here (default: temp)")
    grade.add_argument("--workers", type=int, default=1, help="processes for the partitions")
    grade.add_argument("--labels", nargs="+", metavar="FILE",
                       help="JSONL of hand-labelled turns (grading/hand_labels.py); several "
                            "files are graded one after the other")
    grade.add_argument("--root", default=str(DEFAULT_LABELS_ROOT),
                       help="folder the labelled files are relative to (default: %(default)s)")
    grade.add_argument("--policy", help="policy TOML (default: quality/policy.toml)")
    grade.add_argument("--loso", action="store_true",
                       help="with --labels: pooled leave-one-source-out tables of the rules and "
                            "of a calibration refitted per held-out source")
    grade.add_argument("--calibrate-on", metavar="FILE",
                       help="with --labels: fit the calibration on this labelled set (e.g. the "
                            "dev set) and grade it, beside the rules, on each --labels set")
    grade.set_defaults(run=run_grade)
    explain = tools.add_parser("explain", help="why a turn got its category and loss weight: "
                               "its text, features, rule and confidence")
    explain.add_argument("trajectory_id")
    explain.add_argument("turn_index", type=int)
    explain.add_argument("--data", default=os.environ.get("WORLDTRACE_DATA", "data"),
                         help="data directory (default $WORLDTRACE_DATA or ./data)")
    explain.add_argument("--policy", help="policy TOML whose rule texts and thresholds are "
                                          "shown (default: quality/policy.toml)")
    explain.add_argument("--chars", type=int, default=1000,
                         help="characters of the action and of the observation shown")
    explain.set_defaults(run=run_explain)
