"""Training benchmark: the CPT -> SFT -> RL chain on a data directory's split tables, timed.

    python benchmarks/perf_training.py [--data DIR] [--cpt-steps N] [--sft-steps N]
                                       [--rl-steps N] [--keep DIR]

Reads {data}/tokenizer and the split tables (cpt_corpus, sft_split, rl_split; materialize the
splits first, e.g. `dagster asset materialize -m assets.definitions --select '+rl_split'`),
trains with the same code and defaults as the assets (training/stages.py) into a scratch
models folder (not {data}/models), and prints per stage: steps, tokens seen, wall time,
tokens/s, final loss (final reward for RL) and the process's peak RSS so far. The result
line's turns are sft_split's rows (one predicted turn each), through the whole chain.

Target (issue 9): the chain under 10 minutes on 2 CPU cores on the default data.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402

SPLIT_INPUTS = ("tokenizer", "cpt_corpus", "sft_split", "rl_split")


def scratch_data_dir(data: Path, scratch: Path) -> Path:
    """A data directory whose inputs link to `data`'s, so the models land in the scratch."""
    for name in SPLIT_INPUTS:
        if not (data / name).exists():
            sys.exit(f"{data / name} missing: materialize the splits first")
        (scratch / name).symlink_to((data / name).resolve())
    return scratch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--cpt-steps", type=int)
    parser.add_argument("--sft-steps", type=int)
    parser.add_argument("--rl-steps", type=int)
    parser.add_argument("--keep", type=Path, help="train here and keep the models")
    args = parser.parse_args()

    from training.cpt import CptConfig
    from training.gspo import GspoConfig
    from training.reward import hybrid_scorer
    from training.sft import SftConfig
    from training.stages import run_cpt, run_rl, run_sft, with_steps
    from training.tables import SFT_SPLIT

    def steps(config, count):
        return replace(config, steps=with_steps(config.steps, count, None))

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="perf_training_"))
    scratch.mkdir(parents=True, exist_ok=True)
    data = scratch_data_dir(args.data.resolve(), scratch)
    rows = []
    with stopwatch() as chain:
        for stage, run in (
            ("cpt", lambda: run_cpt(data, steps(CptConfig(), args.cpt_steps))),
            ("sft", lambda: run_sft(data, steps(SftConfig(), args.sft_steps))),
            ("rl", lambda: run_rl(data, steps(GspoConfig(), args.rl_steps), hybrid_scorer)[0]),
        ):
            log = run()
            rows.append((stage, log, peak_rss_mb()))
    total = chain.wall

    print(f"\n{'stage':<6}{'steps':>7}{'tokens':>10}{'wall s':>9}{'tokens/s':>10}"
          f"{'final':>16}{'peak RSS MB':>13}")
    for stage, log, rss in rows:
        final = (f"reward {log.reward_curve[-1]['reward']:.2f}" if log.reward_curve
                 else f"loss {log.final_loss:.3f}")
        print(f"{stage:<6}{log.steps:>7}{log.tokens_seen:>10,}{log.wall_seconds:>9.1f}"
              f"{log.tokens_per_second:>10,.0f}{final:>16}{rss:>13,.0f}")
    print(f"chain total {total:.1f} s (with loading and saving); models in {scratch}/models")
    turns = sum(pq.read_metadata(path).num_rows for path in SFT_SPLIT.paths(data))
    tokens = sum(log.tokens_seen for _, log, _ in rows)
    print(result_line(turns=turns, turns_per_s=turns / total, wall_s=total,
                      peak_rss_mb=max(rss for _, _, rss in rows),
                      tokens_per_s=tokens / total, load_avg=load_average()))


if __name__ == "__main__":
    main()
