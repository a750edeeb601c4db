"""Bench speed: samples/s of each predictor and each judge on the default bench.

    python benchmarks/perf_bench.py [--data DIR] [--predictor SPEC ...]
                                    [--judge-model DIR | --judge-url URL] [--judge-samples N]
                                    [--judge-max-tokens N] [--no-llm-judge]

Reads the built bench (the `agentworldbench` table under --data, default $WORLDTRACE_DATA or
./data; materialize it first, e.g. `dagster asset materialize -m assets.definitions --select
agentworldbench`). For every predictor (default: copy_last, empty, retrieval) it times
prediction over all samples, then times, over those outputs: output parsing, the rule
verifiers alone, the offline rubric judge (which runs the verifiers too) and the hybrid RL
reward. CPU time (process time) is printed beside wall time: on a shared machine, wall time
measures the neighbours as much as the code.

Then the LLM judge, through `worldtrace serve` of a local model folder in its own process
(--judge-model; default the data's trained model, models/rl_model or models/sft_model, else a
tiny random-init one; or any endpoint, --judge-url), on --judge-samples of the first
predictor's outputs spread over the domains: samples/s (wall: the work is in the server) and
the share of the judge's answers that parsed as a <final_evaluation> verdict; the samples it
could not judge, and why.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
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
from benchmarks._measure import (  # noqa: E402
    Lap,
    load_average,
    peak_rss_mb,
    result_line,
    stopwatch,
    timed,
)


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


def measure(predictor: Predictor, samples: list[BenchSample]) -> list[str]:
    """Print the prediction, parsing, verifier, rubric and reward speed of one predictor;
    returns its outputs."""
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
    return outputs


def spread(samples: list[BenchSample], count: int) -> list[int]:
    """The indices of `count` samples taken in turn from each domain (in bench order)."""
    by_domain: dict[str, list[int]] = {}
    for index, sample in enumerate(samples):
        by_domain.setdefault(sample.domain, []).append(index)
    chosen: list[int] = []
    for rank in range(max(map(len, by_domain.values()), default=0)):
        chosen += [indices[rank] for indices in by_domain.values() if rank < len(indices)]
    return sorted(chosen[:count])


def judge_model_dir(requested: Path | None, data: Path, scratch: Path) -> Path:
    """--judge-model, else the data's trained model, else a tiny random-init one."""
    if requested is not None:
        return requested
    for name in ("rl_model", "sft_model"):
        if (data / "models" / name / "config.json").is_file():
            return data / "models" / name
    from tests.tiny_lm import build_tiny_model
    return build_tiny_model(scratch / "tiny_lm")


def measure_llm_judge(samples: list[BenchSample], outputs: list[str], data: Path,
                      args: argparse.Namespace) -> None:
    """Print the LLM judge's speed through a served model and the share of answers parsed."""
    from bench.endpoint import EndpointConfig
    from bench.judges.llm_judge import JudgeFailure, LLMJudge, LLMJudgeConfig
    from bench.serve.run import ServeConfig
    from benchmarks.perf_serve import free_port, served_in_subprocess

    chosen = spread(samples, args.judge_samples)

    def judge_at(url: str) -> tuple[LLMJudge, list, Lap]:
        llm = LLMJudge(LLMJudgeConfig(EndpointConfig(url, concurrency=args.judge_concurrency),
                                      max_tokens=args.judge_max_tokens,
                                      max_attempts=args.judge_attempts))
        results, lap = timed(lambda: llm.judge_all([samples[i] for i in chosen],
                                                   [outputs[i] for i in chosen]))
        return llm, results, lap

    if args.judge_url:
        served = args.judge_url
        llm, results, lap = judge_at(args.judge_url)
    else:
        with tempfile.TemporaryDirectory(prefix="perf-bench-judge-") as scratch:
            model_dir = judge_model_dir(args.judge_model, data, Path(scratch))
            served = f"served {model_dir}"
            config = ServeConfig(model_dir, port=free_port(), max_batch=args.judge_concurrency,
                                 default_max_tokens=args.judge_max_tokens,
                                 threads=args.judge_threads)
            with served_in_subprocess(config) as url:
                llm, results, lap = judge_at(url)
    failures = [str(r).split(": ", 1)[-1] for r in results if isinstance(r, JudgeFailure)]
    judged = len(results) - len(failures)
    answers = judged + llm.unparseable_answers
    stats = llm.endpoint.stats
    print(f"{'llm judge ' + llm.name:34} {len(chosen):6d} samples  "
          f"{len(chosen) / max(lap.wall, 1e-9):10,.2f}/s wall  ({served}, "
          f"max {args.judge_max_tokens} tokens, {args.judge_attempts} attempts, "
          f"{args.judge_concurrency} in flight)")
    print(f"  answers parsed {judged}/{answers} ({judged / max(answers, 1):.0%}); "
          f"judged {judged}/{len(chosen)} samples; {stats.requests} requests, "
          f"{stats.prompt_tokens / max(lap.wall, 1e-9):,.0f} prompt and "
          f"{stats.completion_tokens / max(lap.wall, 1e-9):,.0f} generated tokens/s")
    for reason, count in Counter(r.split(" (last:")[0] for r in failures).most_common():
        print(f"  unjudged {count}: {reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("WORLDTRACE_DATA", "data"))
    parser.add_argument("--predictor", action="append",
                        help="predictor spec (repeatable; default copy_last, empty, retrieval)")
    parser.add_argument("--no-llm-judge", action="store_true", help="skip the LLM judge")
    parser.add_argument("--judge-model", type=Path, help="model folder to serve as the judge")
    parser.add_argument("--judge-url", help="judge at this OpenAI-compatible base URL instead "
                                            "(e.g. vLLM serving a real judge model)")
    parser.add_argument("--judge-samples", type=int, default=14)
    parser.add_argument("--judge-max-tokens", type=int, default=256)
    parser.add_argument("--judge-attempts", type=int, default=3)
    parser.add_argument("--judge-concurrency", type=int, default=4)
    parser.add_argument("--judge-threads", type=int, default=1,
                        help="torch CPU threads of the server (on a shared CPU, 1 is fastest)")
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
    specs = args.predictor or ["copy_last", "empty", "retrieval"]
    with stopwatch() as whole:
        with stopwatch() as offline:
            outputs = [measure(build_predictor(spec, context), samples) for spec in specs]
        if not args.no_llm_judge:
            measure_llm_judge(samples, outputs[0], data, args)
    # A sample is one turn to predict; turns_per_s: predicted, parsed, verified, judged and
    # rewarded by every predictor in turn (the LLM judge's rate is its own line above).
    print(result_line(turns=len(samples), predictors=len(specs),
                      turns_per_s=len(samples) * len(specs) / offline.wall, wall_s=whole.wall,
                      peak_rss_mb=peak_rss_mb(), load_avg=load_average()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
