"""The real-base chain, timed: sft_split with the base's tokenizer -> SFT -> bench with intervals.

    python benchmarks/perf_real_base.py --data DIR --base DIR --work DIR [--per-domain 10]
        [--sft-steps 30] [--batch-size 4] [--lora-rank 0] [--threads 2]
        [--stages split,sft,bench] [--predictors copy_last,retrieval,base,sft]
        [--compare sft_a-sft_b,sft_a-base]

DIR (--data) is a data directory after `make run` (trajectory_split, the scrubbed tables,
agentworldbench); --base a converted base (`worldtrace base-model smollm2`). The work folder
links DIR's tables and gets its own sft_split (built with the base's tokenizer under
training.sft_split.REAL_BASE_BUDGETS) and models/<name>, so DIR is never written. Each stage
prints wall time, tokens/s and the process's peak RSS; `bench` scores every predictor on the
same first --per-domain samples of each domain (sampled at the official 0.6, seeded) and
prints per-domain scores and Overall with stratified bootstrap 95 % intervals, plus the paired
difference of the SFT model against the untrained base and copy-last. Finished stages are
reused (a model folder with its training log, a predictor's score rows; the SFT model's under
its --name), so an interrupted run resumes. Not a test: a measurement on whatever machine
runs it (say how loaded it was).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402

OWN_TABLES = {"sft_split", "rl_split", "rl_split_all_turns", "cpt_corpus", "models", "ablation",
              "bench_cache", "real_base"}


def work_dir(data: Path, work: Path) -> Path:
    """The work folder with links to every table of `data` it does not build itself."""
    work.mkdir(parents=True, exist_ok=True)
    for entry in sorted(data.iterdir()):
        link = work / entry.name
        if entry.name not in OWN_TABLES and not link.exists():
            link.symlink_to(entry.resolve())
    return work


def build_split(work: Path, base: Path) -> None:
    from sources.schema import DOMAINS
    from training.model_config import load_tokenizer
    from training.sft_split import REAL_BASE_BUDGETS, SftSplitConfig, build_sft_split

    config = SftSplitConfig.with_budgets(REAL_BASE_BUDGETS)
    with stopwatch() as lap:
        stats = build_sft_split(work, load_tokenizer(base), DOMAINS, config)
    print(f"split: sft_split {config}: {sum(stats.samples.values())} samples "
          f"({sum(stats.validation.values())} validation) in {lap.wall:.0f} s, "
          f"peak RSS {peak_rss_mb():.0f} MiB", flush=True)


def train(work: Path, base: Path, args: argparse.Namespace) -> Path:
    from training.model_config import ModelConfig
    from training.runner import StepConfig
    from training.sft import SftConfig, read_sft_split, train_sft
    from training.sft_split import REAL_BASE_BUDGETS
    from training.stages import partitions
    from training.tables import SFT_SPLIT, model_dir
    from training.training_log import LOG_FILE, TrainingLog

    folder = model_dir(work, args.name)
    if (folder / LOG_FILE).exists():
        print(f"sft: reusing {folder}: {TrainingLog.read(folder).summary()}", flush=True)
        return folder
    model = ModelConfig(checkpoint=str(base), cpu_threads=args.threads, lora_rank=args.lora_rank)
    # LoRA trains a few adapters from scratch: they take a larger step than full fine-tuning
    learning_rate = args.learning_rate or (3e-4 if args.lora_rank else 1e-4)
    config = SftConfig(model=model, max_length=REAL_BASE_BUDGETS.sample_tokens,
                       steps=StepConfig(max_steps=args.sft_steps, batch_size=args.batch_size,
                                        learning_rate=learning_rate, warmup_steps=2,
                                        logging_steps=5, save_steps=10))
    splits = read_sft_split(partitions(work, SFT_SPLIT))
    with stopwatch() as lap:  # evaluating 50 validation samples costs minutes on a busy CPU
        log = train_sft(splits["train"], base, folder, config,
                        validation=None if args.skip_eval else splits["validation"])
    print(f"sft: {log.summary()}; wall {lap.wall:.0f} s, peak RSS {peak_rss_mb():.0f} MiB",
          flush=True)
    return folder


def score(work: Path, base: Path, sft: Path, args: argparse.Namespace) -> int:
    """Score the predictors on the bench; returns the predictions made now (the rest were
    scored by an earlier run)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.bootstrap import paired_difference, score_intervals
    from bench.evaluate import run_predictor, summarize
    from bench.official import REFERENCE_TEMPERATURE, read_official
    from bench.predictors.base import PredictorContext, build_predictor
    from bench.predictors.hf_local import HfLocalConfig, HfLocalPredictor
    from bench.sample import first_per_domain
    from sources.storage import write_parquet
    from training.sft_split import REAL_BASE_BUDGETS

    samples, _ = read_official(work / "agentworldbench" / "official")
    samples = first_per_domain(samples, args.per_domain)
    context = PredictorContext(data_dir=work, temperature=REFERENCE_TEMPERATURE,
                               max_new_tokens=REAL_BASE_BUDGETS.answer_tokens,
                               max_prompt_tokens=REAL_BASE_BUDGETS.prompt_tokens)
    folders = {"base": base, "sft": sft}
    out = work / "real_base"
    rows: dict[str, list[dict]] = {}
    predicted = 0
    for name in args.predictors.split(","):
        # the SFT model's rows are kept under its folder's name: a longer run in the same
        # work folder must not reuse the rows of the model trained before it
        path = out / f"scores_{args.name if name == 'sft' else name}.parquet"
        scored_before = pq.read_table(path).to_pylist() if path.exists() else []
        for row in scored_before:  # scored before the bench knew failed samples: none failed
            if row.get("failed") is None:
                row.update(failed=False, failure_reason="")
        done = {r["id"] for r in scored_before}
        todo = [sample for sample in samples if sample.id not in done]
        wanted = {sample.id for sample in samples}
        if not todo:  # every sample scored before (maybe among more): these samples' rows
            rows[name] = [r for r in scored_before if r["id"] in wanted]
            continue
        if name in folders:
            predictor = HfLocalPredictor(HfLocalConfig(
                folders[name], batch_size=8, max_new_tokens=context.max_new_tokens,
                max_prompt_tokens=context.max_prompt_tokens, temperature=context.temperature,
                cpu_threads=args.threads))
        else:
            predictor = build_predictor(name, context)
        with stopwatch() as lap:
            _, scored, _ = run_predictor(predictor, todo, log=lambda line: print(line, flush=True))
        predicted += len(todo)
        stats = getattr(predictor, "stats", None)
        speed = (f", {stats.completion_tokens / max(stats.seconds, 1e-9):.1f} generated "
                 f"tokens/s" if stats is not None else "")
        print(f"bench: {name} on {len(todo)} samples in {lap.wall:.0f} s{speed}, peak RSS "
              f"{peak_rss_mb():.0f} MiB", flush=True)
        for row in scored:
            row["predictor"] = name
        scored = scored_before + scored  # the ones scored before are kept (a resumed run)
        write_parquet(pa.Table.from_pylist(scored), path)
        rows[name] = [r for r in scored if r["id"] in wanted]
    table = []
    for name, scored in rows.items():
        intervals = score_intervals(scored)
        (summary,) = summarize(scored)
        table.append({"predictor": name, **{k: str(v) for k, v in intervals.items()},
                      "malformed": round(summary.malformed_rate, 3),
                      "echo": round(summary.echo_rate, 3), "samples": summary.samples})
    print(json.dumps(table, indent=1))
    for a, b in (("sft", "base"), ("sft", "copy_last"), ("base", "copy_last"),
                 ("sft", "retrieval")):
        if a in rows and b in rows:
            print(f"paired {a} - {b}: {paired_difference(rows[a], rows[b])}")
    return predicted


def compare(work: Path, pairs: str, per_domain: int) -> None:
    """Paired differences between predictors scored before in this work folder (their
    `real_base/scores_<name>.parquet`: a baseline, `base`, or an SFT model's --name), on the
    same first --per-domain samples of each domain: `--compare a-b,c-d`."""
    import pyarrow.parquet as pq

    from bench.bootstrap import paired_difference, score_intervals
    from training.ablation import bench_samples

    wanted = {sample.id for sample in bench_samples(work, per_domain=per_domain)[0]}

    def scores(name: str) -> list[dict]:
        path = work / "real_base" / f"scores_{name}.parquet"
        if not path.exists():
            raise SystemExit(f"--compare: no scores for {name!r} ({path}); score it first")
        rows = [r for r in pq.read_table(path).to_pylist() if r["id"] in wanted]
        if len(rows) != len(wanted):
            raise SystemExit(f"--compare: {name!r} was scored on {len(rows)} of the "
                             f"{len(wanted)} samples; score the rest first")
        return rows

    for pair in pairs.split(","):
        a, b = pair.split("-", 1) if "-" in pair else (pair, "")
        if not b:
            raise SystemExit(f"--compare wants pairs a-b, got {pair!r}")
        rows_a, rows_b = scores(a), scores(b)
        print(f"{a}: {score_intervals(rows_a)['overall']}; {b}: "
              f"{score_intervals(rows_b)['overall']}; paired {a} - {b}: "
              f"{paired_difference(rows_a, rows_b)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--stages", default="split,sft,bench")
    parser.add_argument("--name", default="sft_real", help="model folder under WORK/models")
    parser.add_argument("--per-domain", type=int, default=10)
    parser.add_argument("--sft-steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float)
    parser.add_argument("--lora-rank", type=int, default=0)
    parser.add_argument("--skip-eval", action="store_true",
                        help="no eval_loss on sft_split's validation rows after SFT")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (2 on a quiet machine; 1 when it is shared)")
    parser.add_argument("--predictors", default="copy_last,retrieval,base,sft")
    parser.add_argument("--compare", default="",
                        help="after the stages: paired differences a-b,c-d between score "
                             "files of this work folder (baselines, base, SFT --names)")
    args = parser.parse_args()
    work = work_dir(args.data.resolve(), args.work)
    stages = args.stages.split(",")
    with stopwatch() as total:
        if "split" in stages:
            build_split(work, args.base)
        sft = train(work, args.base, args) if "sft" in stages else work / "models" / args.name
        predicted = score(work, args.base, sft, args) if "bench" in stages else 0
        if args.compare:
            compare(work, args.compare, args.per_domain)
    print(f"total {total.wall:.0f} s wall, {total.cpu:.0f} s CPU, peak RSS "
          f"{peak_rss_mb():.0f} MiB")
    # A bench sample is one turn to predict: the turns predicted now (every predictor's), per
    # wall second of the whole run (the stages asked for: split, SFT, bench).
    print(result_line(turns=predicted, turns_per_s=predicted / total.wall, wall_s=total.wall,
                      cpu_s=total.cpu, peak_rss_mb=peak_rss_mb(), stages=args.stages,
                      load_avg=load_average()))


if __name__ == "__main__":
    main()
