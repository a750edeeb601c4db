"""Bench speed: samples/s of each predictor and each judge on the default bench.

    python benchmarks/perf_bench.py [--data DIR] [--predictor SPEC ...] [--repeat N]

Reads the built bench (the `agentworldbench` table under --data, default $WORLDTRACE_DATA or
./data; materialize it first, e.g. `dagster asset materialize -m assets.definitions --select
agentworldbench`). For every predictor (default: copy_last, empty, retrieval) it times
prediction over all samples, then times, over those outputs: output parsing, the rule
verifiers alone, the offline rubric judge (which runs the verifiers too) and the hybrid RL
reward. CPU time (process time) is printed beside wall time: on a shared machine, wall time
measures the neighbours as much as the code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from bench.judges.evidence import clear_caches  # noqa: E402
from bench.judges.rubric import judge  # noqa: E402
from bench.judges.rules import verify  # noqa: E402
from bench.parsing import parse_prediction  # noqa: E402
from bench.predictors.base import Predictor, PredictorContext, build_predictor  # noqa: E402
from bench.reward import hybrid_reward  # noqa: E402
from bench.sample import BenchSample  # noqa: E402
from bench.store import read_samples  # noqa: E402
from benchmarks._measure import Lap, timed  # noqa: E402


def line(name: str, n: int, timing: tuple[object, Lap]) -> str:
    lap = timing[1]
    return (f"{name:34} {n:6d} samples  {n / max(lap.wall, 1e-9):10,.0f}/s wall  "
            f"{n / max(lap.cpu, 1e-9):10,.0f}/s cpu")


def cold(work: Callable[[], object]) -> Callable[[], object]:
    """The work with the judges' memoised text measurements cleared first."""
    def run() -> object:
        clear_caches()
        return work()
    return run


def measure(predictor: Predictor, samples: list[BenchSample]) -> None:
    """Print the prediction, parsing, verifier, rubric and reward speed of one predictor."""
    outputs: list[str] = []
    print(line(f"predict {predictor.name}", len(samples),
               timed(lambda: outputs.extend(predictor.predict(samples)))))
    parsed = [parse_prediction(o) for o in outputs]
    pairs = list(zip(samples, outputs, strict=True))
    print(line("  parse", len(samples), timed(lambda: [parse_prediction(o) for o in outputs])))
    print(line("  rule verifiers", len(samples), timed(cold(
        lambda: [verify(s, p.judged_text) for s, p in zip(samples, parsed, strict=True)]))))
    print(line("  rubric judge (+ verifiers)", len(samples), timed(cold(
        lambda: [judge(s, o) for s, o in pairs]))))
    print(line("  hybrid reward", len(samples), timed(cold(
        lambda: [hybrid_reward(s.domain, o, s.reference, s.history, s.current_action)
                 for s, o in pairs]))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("WORLDTRACE_DATA", "data"))
    parser.add_argument("--predictor", action="append",
                        help="predictor spec (repeatable; default copy_last, empty, retrieval)")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    samples = read_samples(data)
    if not samples:
        print(f"no agentworldbench table under {data}: materialize agentworldbench first",
              file=sys.stderr)
        return 1
    domains = sorted({s.domain for s in samples})
    print(f"{len(samples)} samples ({', '.join(domains)}) from {data}")
    context = PredictorContext(data_dir=data)
    for spec in args.predictor or ["copy_last", "empty", "retrieval"]:
        measure(build_predictor(spec, context), samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
