"""Splits-stage benchmark: dedup across partitions, trajectory_split, tokenizer, cpt_corpus,
sft_split, rl_split, rl_split_all_turns on one data directory, with the defaults the assets use.

    python benchmarks/perf_splits.py --data DIR            # a data dir after `make run`
    python benchmarks/perf_splits.py --generate 300        # scale-generated, per domain

Prints wall seconds per step, pools per domain (train / bench / contaminated), token counts
and prompt-token statistics per split, and peak RSS. Writes the split tables into the data
directory (as the assets do).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, timed  # noqa: E402


def generated_data(work: Path, per_domain: int, seed: int) -> Path:
    """Scale-generated native files, ingested and through the quality stage."""
    from quality.stage import run_quality_stage
    from sources.catalog import make_spec
    from sources.factory.scale import generate_corpus, source_name
    from sources.ingest import write_tables
    from sources.schema import DOMAINS

    corpus, data = work / "corpus", work / "data"
    generate_corpus(corpus, DOMAINS, per_domain, seed)
    write_tables([make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS],
                 data, DOMAINS)
    run_quality_stage(data, data, DOMAINS, workers=2)
    return data


def timed_step(label: str, seconds: dict[str, float], step):
    result, lap = timed(step)
    seconds[label] = lap.wall
    print(f"{label:<22} {seconds[label]:7.2f} s", flush=True)
    return result


def run(data: Path) -> None:
    from quality.split import split_trajectories
    from quality.stage import dedup_across_partitions
    from sources.schema import DOMAINS
    from training.cpt_corpus import build_cpt_corpus
    from training.rl_split import RlConfig, build_rl_split
    from training.sft_split import build_sft_split
    from training.tokenizer import load_tokenizer, train_tokenizer

    seconds: dict[str, float] = {}
    dedup = timed_step("trajectory_dedup", seconds,
                  lambda: dedup_across_partitions(data, data, DOMAINS))
    split = timed_step("trajectory_split", seconds, lambda: split_trajectories(data, DOMAINS))
    tok_stats = timed_step("tokenizer", seconds,
                      lambda: train_tokenizer(data, data / "tokenizer", DOMAINS))
    tok = load_tokenizer(data / "tokenizer")
    cpt = timed_step("cpt_corpus", seconds, lambda: build_cpt_corpus(data, tok, DOMAINS))
    sft = timed_step("sft_split", seconds, lambda: build_sft_split(data, tok, DOMAINS))
    rl = timed_step("rl_split", seconds, lambda: build_rl_split(data, tok, DOMAINS))
    rl_all = timed_step("rl_split_all_turns", seconds,
                   lambda: build_rl_split(data, tok, DOMAINS, RlConfig(all_turns=True)))
    print(f"{'total':<22} {sum(seconds.values()):7.2f} s")
    print(f"\ndedup: {dedup.trajectories} trajectories, {dedup.removed} removed "
          f"({dedup.exact_duplicates} exact, {dedup.near_duplicates} near; "
          f"{dedup.short_by_chars} short ones by characters)")
    print("\npools per domain (train / bench / contaminated):")
    for row in split.rows():
        print(f"  {row['domain']:<9} {row['train']:>5} {row['bench']:>5} {row['contaminated']:>5}")
    print(f"\ntokenizer: vocab {tok_stats.vocab_size}, trained on {tok_stats.chars:,} characters")
    print("\ncpt_corpus:")
    for row in cpt.table():
        print(f"  {row}")
    for name, stats in (("sft_split", sft), ("rl_split", rl), ("rl_split_all_turns", rl_all)):
        print(f"\n{name}:")
        for row in stats.table():
            print(f"  {row}")
    print(f"\npeak RSS {peak_rss_mb():.0f} MB")
    turns = turns_in(data)
    wall = sum(seconds.values())
    print(result_line(turns=turns, turns_per_s=turns / wall, wall_s=wall,
                      peak_rss_mb=peak_rss_mb(), trajectories=dedup.trajectories,
                      load_avg=load_average()))


def turns_in(data: Path) -> int:
    """The turns the corpora are built from: rows of scrubbed_turns over every domain."""
    import pyarrow.parquet as pq

    from quality.tables import SCRUBBED_TURNS

    return sum(pq.read_metadata(path).num_rows for path in SCRUBBED_TURNS.paths(data))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="data directory after the quality stage")
    parser.add_argument("--generate", type=int, default=300, help="trajectories per domain")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.data:
        run(args.data)
        return 0
    with tempfile.TemporaryDirectory(prefix="worldtrace-splits-") as tmp:
        run(generated_data(Path(tmp), args.generate, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
