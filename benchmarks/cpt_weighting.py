"""CPT with and without the loss weights on a real base, compared by held-out observation NLL.

    python benchmarks/cpt_weighting.py --data DIR --base DIR --work DIR [--steps 10]
        [--batch-size 4] [--learning-rate 5e-5] [--per-domain 2] [--max-tokens 512]
        [--threads 2]

Does weighting the CPT loss by turn quality make a better world model? Answered as cheaply as
a CPU allows: cpt_corpus is built in the work folder with the base's tokenizer (DIR is only
read, as in perf_real_base.py), CPT runs twice from the base with the same steps and seed,
loss-weighted and unweighted, and each model, the base too, scores the real observations of
the first --per-domain bench-pool trajectories of each domain (training/validate.py: the mean
token NLL of each observation given its history and action; held out from CPT). Prints, per
model, the macro mean NLL over domains with its stratified bootstrap 95 % interval, and the
paired differences over the same turns; lower is better. Not the bench score: no SFT follows
(the answer format is SFT's work), so this is what CPT alone changes. Finished models and
score rows (WORK/cpt_weighting/nll_<model>.parquet) are reused. Not a test: a measurement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402
from benchmarks.perf_real_base import work_dir  # noqa: E402


def build_corpus(work: Path, base: Path) -> None:
    from sources.schema import DOMAINS
    from training.cpt_corpus import build_cpt_corpus
    from training.model_config import load_tokenizer
    from training.tables import CPT_CORPUS

    if CPT_CORPUS.path(work, DOMAINS[0]).exists():
        return
    with stopwatch() as lap:
        stats = build_cpt_corpus(work, load_tokenizer(base), DOMAINS)
    print(f"cpt_corpus ({stats.config}): {sum(stats.rows.values()):,} sequences, "
          f"{sum(stats.tokens.values()):,} tokens in {lap.wall:.0f} s", flush=True)


def train(work: Path, base: Path, weighted: bool, args: argparse.Namespace) -> Path:
    from training.cpt import CptConfig
    from training.model_config import ModelConfig
    from training.runner import StepConfig
    from training.stages import run_cpt
    from training.tables import model_dir
    from training.training_log import LOG_FILE, TrainingLog

    name = "cpt_weighted" if weighted else "cpt_unweighted"
    folder = model_dir(work, name)
    if not (folder / LOG_FILE).exists():
        config = CptConfig(model=ModelConfig(checkpoint=str(base), cpu_threads=args.threads),
                           steps=StepConfig(max_steps=args.steps, batch_size=args.batch_size,
                                            learning_rate=args.learning_rate, warmup_steps=2,
                                            logging_steps=5, save_steps=args.steps),
                           use_loss_weights=weighted)
        with stopwatch() as lap:
            run_cpt(work, config, name)
        print(f"{name}: wall {lap.wall:.0f} s, peak RSS {peak_rss_mb():.0f} MiB", flush=True)
    print(f"{name}: {TrainingLog.read(folder).summary()}", flush=True)
    return folder


def observation_nll(work: Path, folder: Path, name: str, episodes: list,
                    args: argparse.Namespace) -> list[dict]:
    """One row per scored turn: id (trajectory:turn), domain, score (= mean NLL)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.local_model import LocalChatModel
    from sources.storage import write_parquet
    from training.validate import ValidateConfig, ValidateStats, validate

    path = work / "cpt_weighting" / f"nll_{name}.parquet"
    if not path.exists():
        chat = LocalChatModel.load(folder, dtype="float32", device="cpu")
        stats = ValidateStats()
        with stopwatch() as lap:
            rows = validate(chat.model, chat.tokenizer, episodes,
                            # every observation token: the CPT's NLL on whole observations
                            ValidateConfig(max_tokens=args.max_tokens, score="nll",
                                           observation_tokens=None), stats)
        print(f"{name}: {len(rows)} turns, {stats.tokens:,} tokens in {lap.wall:.0f} s "
              f"({stats.tokens / max(lap.wall, 1e-9):.0f} tokens/s)", flush=True)
        write_parquet(pa.Table.from_pylist(
            [{"id": f"{r['trajectory_id']}:{r['turn_index']}", "domain": r["domain"],
              "score": r["nll"]} for r in rows]), path)
    return pq.read_table(path).to_pylist()


def nats(interval) -> str:
    """An NLL interval to four decimals (two hide the differences CPT makes)."""
    return f"{interval.estimate:.4f} [{interval.low:.4f}, {interval.high:.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--per-domain", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    from bench.bootstrap import paired_difference, score_intervals
    from sources.schema import DOMAINS
    from training.render import first_episodes

    torch.set_num_threads(args.threads)
    work = work_dir(args.data.resolve(), args.work)
    with stopwatch() as total:
        build_corpus(work, args.base)
        folders = {"base": args.base, "cpt_weighted": train(work, args.base, True, args),
                   "cpt_unweighted": train(work, args.base, False, args)}
        episodes = [e for domain in DOMAINS
                    for e in first_episodes(work, domain, args.per_domain, pool="bench")]
        rows = {name: observation_nll(work, folder, name, episodes, args)
                for name, folder in folders.items()}
    for name, scored in rows.items():
        print(f"{name}: macro mean observation NLL {nats(score_intervals(scored)['overall'])} "
              f"over {len(scored)} turns")
    for a, b in (("cpt_weighted", "cpt_unweighted"), ("cpt_weighted", "base"),
                 ("cpt_unweighted", "base")):
        print(f"paired {a} - {b}: {nats(paired_difference(rows[a], rows[b]))}")
    print(f"total {total.wall:.0f} s wall, {total.cpu:.0f} s CPU, peak RSS "
          f"{peak_rss_mb():.0f} MiB")
    # turns: the observations each model scored, all models; turns_per_s over the whole run
    # (corpus, both CPT runs, scoring; reused models and rows count as no time); the NLLs.
    turns = sum(len(scored) for scored in rows.values())
    nll = {f"nll_{name}": score_intervals(scored)["overall"].estimate
           for name, scored in rows.items()}
    print(result_line(turns=turns, turns_per_s=turns / total.wall, wall_s=total.wall,
                      cpu_s=total.cpu, peak_rss_mb=peak_rss_mb(), **nll,
                      load_avg=load_average()))


if __name__ == "__main__":
    main()
