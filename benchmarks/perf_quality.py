"""Quality-stage benchmark: 1,000,000 generated turns through features, labels and dedup, and
MinHash signature throughput against datasketch and datatrove on the same texts.

    python benchmarks/perf_quality.py [--turns 1000000] [--workers 2] [--work-dir DIR]
                                      [--datatrove-python PATH | --no-datatrove]

1. Generates the corpus with the scale generator (sources/factory/scale.py) and ingests it with
   the real readers, once (kept in --work-dir and reused when the parameters match).
2. Runs the quality stage (quality/stage.py) in a child process, so that its peak RSS is its
   own: features + labels per domain partition in `--workers` processes, then dedup across
   partitions. Prints turns/s per step, wall time and peak RSS.
3. Times MinHash signatures of the same agent texts (observations of the corpus) with the same
   parameters -- word 5-grams of the lowercased text, 128 permutations, 16 bands x 8 rows --
   in 2 processes each: datasketch with a new MinHash per text, datasketch `MinHash.bulk`,
   datatrove's `MinhashDedupSignature` (stage 1, run by its own executor in a separate
   virtualenv: its default xxhash hasher needs str encoded first with xxhash 4.x, so it is
   given one that does), and ours (quality/shingles.py + quality/minhash.py + band keys).
   Prints texts/s side by side.

Targets (issue 4): whole quality stage < 3 min for 1M turns on 2 cores, peak RSS < 4 GB, our
signatures >= 2x datatrove's.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import (  # noqa: E402
    calibration_seconds,
    load_average,
    result_line,
    stopwatch,
)

NGRAM, NUM_PERM, BANDS, ROWS = 5, 128, 16, 8


# ---------------------------------------------------------------------------- corpus

def prepare_corpus(work: Path, turns: int, seed: int) -> Path:
    """Generate and ingest about `turns` turns (cached); returns the data directory."""
    from sources.catalog import make_spec
    from sources.factory.scale import generate_corpus, source_name, writer_for
    from sources.ingest import write_tables
    from sources.schema import DOMAINS

    mean = sum(writer_for(d).MEAN_TURNS for d in DOMAINS) / len(DOMAINS)
    per_domain = math.ceil(turns / (mean * len(DOMAINS)))
    stamp = {"turns": turns, "seed": seed, "per_domain": per_domain}
    data, corpus = work / "data", work / "corpus"
    if (work / "corpus.json").exists() and json.loads((work / "corpus.json").read_text()) == stamp:
        return data
    shutil.rmtree(data, ignore_errors=True)
    with stopwatch() as lap:
        generated = generate_corpus(corpus, DOMAINS, per_domain, seed, progress=True)
    print(f"generated {generated.turns:,} turns in {lap.wall:.0f} s", flush=True)
    with stopwatch() as lap:
        specs = [make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS]
        write_tables(specs, data, DOMAINS, workers=2)
    print(f"ingested in {lap.wall:.0f} s", flush=True)
    (work / "corpus.json").write_text(json.dumps(stamp))
    return data


# ---------------------------------------------------------------------------- stage

def stage_child(data: Path, out: Path, workers: int, result: Path) -> None:
    """Run the quality stage (in a child process) and write its figures as JSON."""
    from quality.stage import run_quality_stage
    from sources.schema import DOMAINS

    shutil.rmtree(out, ignore_errors=True)
    with stopwatch() as lap:
        report = run_quality_stage(data, out, DOMAINS, workers)
    wall = lap.wall
    turns = sum(s.turns for s in report.features.values())
    steps: dict[str, float] = {}
    for stats in report.features.values():
        for step, seconds in stats.seconds.items():
            steps[f"features: {step}"] = steps.get(f"features: {step}", 0.0) + seconds
    steps["labels"] = report.wall_seconds["labels (sum over partitions)"]
    for step, seconds in report.dedup.seconds.items():
        steps[f"dedup: {step}"] = seconds
    result.write_text(json.dumps({
        "turns": turns, "trajectories": report.dedup.trajectories, "wall": wall,
        "cpu": lap.cpu, "load_average": load_average(),
        "wall_phases": report.wall_seconds, "steps": steps,
        "peak_rss_mb": report.peak_rss_mb, "worker_peak_rss_mb": report.worker_peak_rss_mb,
        "workers": workers,
        "labels": {d: dict(s.categories) for d, s in report.labels.items()},
        "dedup": {"exact": report.dedup.exact_duplicates, "near": report.dedup.near_duplicates,
                  "candidates": report.dedup.candidate_pairs,
                  "largest_cluster": report.dedup.largest_cluster},
    }))


def run_stage(data: Path, work: Path, workers: int) -> dict:
    result = work / "stage.json"
    subprocess.run([sys.executable, __file__, "--stage-child", str(data), str(work / "quality"),
                    str(workers), str(result)], check=True)
    return json.loads(result.read_text())


# ---------------------------------------------------------------------------- minhash

def sample_texts(data: Path, n: int, seed: int) -> list[str]:
    """n non-empty observations, sampled across the domains."""
    import duckdb

    from sources.tables import RAW_TURNS

    return [r[0] for r in duckdb.sql(
        f"SELECT observation FROM read_parquet('{RAW_TURNS.glob(data)}') "
        f"WHERE length(trim(observation)) > 0 USING SAMPLE reservoir({n} ROWS) "
        f"REPEATABLE ({seed})").fetchall()]


def _python_shingles(text: str) -> list[bytes]:
    words = text.lower().split()
    if len(words) < NGRAM:
        return [" ".join(words).encode()] if words else []
    return list({" ".join(words[i:i + NGRAM]).encode() for i in range(len(words) - NGRAM + 1)})


def _datasketch_naive(texts: list[str]) -> int:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
    for i, text in enumerate(texts):
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch(_python_shingles(text))
        lsh.insert(i, m)
    return len(texts)


def _datasketch_bulk(texts: list[str]) -> int:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
    with lsh.insertion_session() as session:
        for i, m in enumerate(MinHash.bulk([_python_shingles(t) for t in texts],
                                           num_perm=NUM_PERM)):
            session.insert(i, m)
    return len(texts)


def _ours(texts: list[str]) -> int:
    from quality.corpus_frequency import band_keys
    from quality.minhash import MinHashConfig, signatures
    from quality.shingles import ShingleConfig, shingle

    sig = signatures(shingle(texts, ShingleConfig(ngram=NGRAM)), MinHashConfig(NUM_PERM))
    for band in range(BANDS):
        band_keys(sig[:, band * ROWS:(band + 1) * ROWS])
    return len(texts)


def time_in_processes(function, texts: list[str], processes: int = 2) -> float:
    """texts/s of `function` over the texts split into `processes` shards run in parallel."""
    shards = [texts[k::processes] for k in range(processes)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
        list(pool.map(function, [s[:50] for s in shards]))  # start and import in every worker
        with stopwatch() as lap:
            done = sum(pool.map(function, shards))
    return done / lap.wall


DATATROVE_SCRIPT = r'''
import json, sys, time
import xxhash
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
from datatrove.pipeline.readers import JsonlReader
from datatrove.utils.text import TextNormConfig
from datatrove.utils.word_tokenizers import WordTokenizer


class WhitespaceTokenizer(WordTokenizer):
    """Words = the text split on whitespace (the definition the other contenders use)."""

    def word_tokenize(self, text):
        return text.split()

    def sent_tokenize(self, text):
        return [text]

    def span_tokenize(self, text):
        return [(0, len(text))]


class EncodingSignature(MinhashDedupSignature):
    """Stage 1 with a hasher that encodes str first (xxhash 4.x refuses str)."""

    def __init__(self, *args, whitespace=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._hash_func = lambda text: xxhash.xxh64_intdigest(text.encode("utf-8"))
        if whitespace:
            self.word_tokenizer = WhitespaceTokenizer()


def main():
    inputs, output, tasks, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    whitespace = mode == "whitespace"
    # "whitespace": lowercase, split on whitespace -- the same 5-grams as the other contenders;
    # "default": datatrove's own text normalisation and spaCy english word tokenizer.
    norm = TextNormConfig(lowercase=True, norm_whitespace=False, remove_punctuation=False,
                          norm_unicode_diacritics=False, norm_numbers=False,
                          norm_weekdays=False, norm_monthnames=False) if whitespace \
        else TextNormConfig()
    config = MinhashConfig(n_grams=5, num_buckets=16, hashes_per_bucket=8, norm_config=norm)
    executor = LocalPipelineExecutor(
        pipeline=[JsonlReader(inputs), EncodingSignature(output_folder=output, config=config,
                                                         whitespace=whitespace)],
        tasks=tasks, workers=tasks, logging_dir=output + "/logs")
    clock = time.perf_counter()
    executor.run()
    print(json.dumps({"seconds": time.perf_counter() - clock}))


if __name__ == "__main__":
    main()
'''


def datatrove_python(requested: str | None, cache: Path) -> Path | None:
    """A python with datatrove (given, or a venv created once under `cache`)."""
    if requested:
        return Path(requested)
    venv = cache / "datatrove-venv"
    python = venv / "bin" / "python"
    if python.exists():
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # datatrove's base install lacks what its JSONL reader and minhash step import:
        # orjson, regex, tokenizers, spacy (the english word tokenizer) and xxhash
        subprocess.run([str(python), "-m", "pip", "install", "-q", "datatrove", "xxhash",
                        "orjson", "regex", "tokenizers", "spacy"], check=True)
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"datatrove unavailable: {error}", file=sys.stderr)
        shutil.rmtree(venv, ignore_errors=True)
        return None
    return python


def time_datatrove(python: Path, texts: list[str], mode: str, processes: int = 2
                   ) -> float | None:
    with tempfile.TemporaryDirectory(prefix="dt-bench-") as tmp:
        inputs = Path(tmp) / "in"
        inputs.mkdir()
        for k in range(processes):
            with (inputs / f"part{k}.jsonl").open("w") as out:
                for i, text in enumerate(texts[k::processes]):
                    out.write(json.dumps({"id": f"{k}-{i}", "text": text}) + "\n")
        script = Path(tmp) / "stage1.py"
        script.write_text(DATATROVE_SCRIPT)
        done = subprocess.run([str(python), str(script), str(inputs), str(Path(tmp) / "out"),
                               str(processes), mode], capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return None
        return len(texts) / json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


# ---------------------------------------------------------------------------- report

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--work-dir", default=str(Path(tempfile.gettempdir()) / "wt-perf-quality"))
    parser.add_argument("--minhash-texts", type=int, default=200_000)
    parser.add_argument("--naive-texts", type=int, default=10_000)
    parser.add_argument("--datatrove-python")
    parser.add_argument("--no-datatrove", action="store_true")
    parser.add_argument("--skip-stage", action="store_true")
    parser.add_argument("--skip-minhash", action="store_true")
    args = parser.parse_args(argv)
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    data = prepare_corpus(work, args.turns, args.seed)
    figures: dict[str, float | int | str] = {}

    if not args.skip_stage:
        calibration = calibration_seconds()  # the machine's speed now (it drifts by the hour)
        stage = run_stage(data, work, args.workers)
        calibration = (calibration + calibration_seconds()) / 2
        print(f"\nquality stage: {stage['turns']:,} turns, {stage['trajectories']:,} trajectories,"
              f" {stage['workers']} worker processes for the partitions")
        print(f"{'step':<42}{'seconds':>10}{'turns/s':>12}")
        for step, seconds in stage["steps"].items():
            print(f"{step:<42}{seconds:>10.1f}{stage['turns'] / max(seconds, 1e-9):>12,.0f}")
        for phase, seconds in stage["wall_phases"].items():
            if "sum" not in phase:
                print(f"{'wall: ' + phase:<42}{seconds:>10.1f}"
                      f"{stage['turns'] / max(seconds, 1e-9):>12,.0f}")
        print(f"{'wall: whole quality stage':<42}{stage['wall']:>10.1f}"
              f"{stage['turns'] / stage['wall']:>12,.0f}   (target < 90 s at 1M turns)")
        print(f"{'cpu: whole stage, all processes':<42}{stage['cpu']:>10.1f}"
              f"{stage['turns'] / stage['cpu']:>12,.0f}   (load average {stage['load_average']})")
        print(f"peak RSS: stage process (dedup) {stage['peak_rss_mb']:,.0f} MB, largest worker "
              f"{stage['worker_peak_rss_mb']:,.0f} MB (target < 4,096 MB)")
        print(f"dedup: {stage['dedup']}")
        figures.update(turns=stage["turns"], turns_per_s=stage["turns"] / stage["wall"],
                       wall_s=stage["wall"], cpu_s=stage["cpu"],
                       peak_rss_mb=max(stage["peak_rss_mb"], stage["worker_peak_rss_mb"]),
                       workers=stage["workers"], load_avg=stage["load_average"],
                       calibration_s=calibration)
        print(f"calibration workload (before and after, mean): {calibration:.3f} CPU s")

    if not args.skip_minhash:
        figures.update(minhash_comparison(args, data))
    print(result_line(**figures))
    return 0


def minhash_comparison(args: argparse.Namespace, data: Path) -> dict[str, float]:
    """Part 3: signatures/s of datasketch, datatrove and ours (printed; ours returned)."""
    texts = sample_texts(data, args.minhash_texts, args.seed)
    chars = sorted(len(t) for t in texts)
    print(f"\nMinHash signatures, word {NGRAM}-grams, {NUM_PERM} permutations, {BANDS} bands x "
          f"{ROWS} rows, 2 processes, {len(texts):,} observations (median "
          f"{chars[len(chars) // 2]} chars)")
    rates: dict[str, float | None] = {
        f"datasketch, a new MinHash per text ({args.naive_texts:,} texts)":
            time_in_processes(_datasketch_naive, texts[:args.naive_texts]),
        "datasketch MinHash.bulk": time_in_processes(_datasketch_bulk, texts),
    }
    python = None if args.no_datatrove else datatrove_python(
        args.datatrove_python, Path.home() / ".cache" / "worldtrace-bench")
    dt_default = "datatrove stage 1, its defaults (spaCy words, normalised text)"
    dt_whitespace = "datatrove stage 1, whitespace words (same shingles as ours)"
    rates[dt_default] = time_datatrove(python, texts, "default") if python else None
    rates[dt_whitespace] = time_datatrove(python, texts, "whitespace") if python else None
    rates["ours (polars shingles + numpy MinHash)"] = time_in_processes(_ours, texts)
    for name, rate in rates.items():
        print(f"{name:<66}{'n/a' if rate is None else f'{rate:>10,.0f} texts/s'}")
    ours = rates["ours (polars shingles + numpy MinHash)"]
    fastest = max((r for k, r in rates.items() if k.startswith("datatrove") and r), default=None)
    if fastest:
        print(f"ours / fastest datatrove: {ours / fastest:.1f}x (target >= 2x)")
    return {"minhash_texts_per_s": ours}


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--stage-child":
        stage_child(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
    else:
        os.environ.setdefault("POLARS_MAX_THREADS", "2")
        sys.exit(main())
