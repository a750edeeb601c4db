"""Benchmark ingest: turns/second and peak memory of readers + Parquet sinks, and streaming.

    python benchmarks/perf_ingest.py [--turns 200000] [--big-jsonl-mb 500] [--workers 2]
                                     [--corpus DIR]

1. Generates about --turns turns with the scale generator (all seven domains, native formats),
   or takes the corpus a `perf_generate.py --keep DIR` run left in --corpus (the same files
   for every run of an A/B comparison), and ingests them with `sources.ingest.write_tables`
   (inputs read in --workers processes), in one run, printing turns per source, turns/s, CPU
   seconds (with the workers', and this process's alone), the load average and peak RSS.
2. Writes one large chat JSONL file of --big-jsonl-mb MB (many trajectories in one file) and
   ingests it, printing the peak RSS growth: streaming readers keep it far below the file size.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import (  # noqa: E402
    calibration_seconds,
    load_average,
    peak_rss_mb,
    result_line,
    stopwatch,
)
from benchmarks.corpus import generated_folder, generated_work  # noqa: E402
from sources.catalog import make_spec  # noqa: E402
from sources.ingest import write_tables  # noqa: E402
from sources.schema import DOMAINS  # noqa: E402


def write_big_chat_jsonl(path: Path, megabytes: int) -> int:
    """A chat JSONL file of about `megabytes` MB; returns the number of conversations."""
    conversations = 0
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < megabytes * 1_000_000:
            messages = [{"role": "user", "content": f"task {conversations}: list the files"}]
            for step in range(20):
                call_id = f"c{conversations}-{step}"
                messages.append({"role": "assistant", "content": None, "tool_calls": [{
                    "id": call_id, "type": "function",
                    "function": {"name": "fs-list", "arguments": json.dumps({"dir": f"/d{step}"})},
                }]})
                listing = "\n".join(f"file_{conversations}_{step}_{k}.txt" for k in range(60))
                messages.append({"role": "tool", "tool_call_id": call_id, "content": listing})
            handle.write(json.dumps({"messages": messages}) + "\n")
            conversations += 1
    return conversations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--big-jsonl-mb", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=None,
                        help="a corpus kept by perf_generate.py --keep, instead of a new one")
    args = parser.parse_args()
    with generated_work(args.turns, args.seed, "worldtrace-perf-ingest-",
                        corpus=args.corpus) as work:
        calibration_before = calibration_seconds()
        print(f"load average before: {load_average()}; {args.workers} reading processes; "
              f"calibration {calibration_before:.3f} CPU s")
        # One run over the seven sources, as `worldtrace ingest` runs a catalog: one pool.
        corpus = args.corpus or work / "corpus"
        specs = [make_spec(f"{d}-generated", generated_folder(corpus, d), d) for d in DOMAINS]
        with stopwatch() as all_domains:
            stats = write_tables(specs, work / "data", workers=args.workers)
        assert stats.total("quarantined") == 0
        print(f"{'source':<20}{'trajs':>8}{'turns':>10}")
        for row in stats.as_table():
            print(f"{row['source']:<20}{row['trajectories']:>8}{row['turns']:>10}")
        total_turns = stats.total("turns")
        print(f"{'all':<20}{stats.total('trajectories'):>8}{total_turns:>10}")
        print(f"wall {all_domains.wall:.1f} s, cpu {all_domains.cpu:.1f} s (with the workers'; "
              f"this process {all_domains.own_cpu:.1f} s)")
        wall, cpu = all_domains.wall, all_domains.cpu
        print(f"turns/s: {total_turns / wall:,.0f} (wall), {total_turns / cpu:,.0f} a CPU second")
        rss = max(peak_rss_mb(), peak_rss_mb(children=True))
        print(f"peak RSS after corpus ingest: {peak_rss_mb():,.0f} MB (largest worker "
              f"{peak_rss_mb(children=True):,.0f} MB); load average after: {load_average()}")
        # the mean of before and after: the machine's speed can move during a minute's run
        calibration = (calibration_before + calibration_seconds()) / 2
        print(f"calibration (before and after, mean): {calibration:.3f} CPU s")
        figures = {"turns": total_turns, "turns_per_s": total_turns / wall, "wall_s": wall,
                   "cpu_s": cpu, "parent_cpu_s": all_domains.own_cpu,
                   "turns_per_cpu_s": total_turns / cpu, "peak_rss_mb": rss,
                   "workers": args.workers, "load_avg": load_average(),
                   "calibration_s": calibration}

        if args.big_jsonl_mb:
            big = work / "big.jsonl"
            conversations = write_big_chat_jsonl(big, args.big_jsonl_mb)
            before = peak_rss_mb()
            with stopwatch() as lap:
                stats = write_tables([make_spec("big", big, "mcp", "chat_jsonl")],
                                     work / "big_out")
            seconds = lap.wall
            print(f"\none {big.stat().st_size / 1e6:,.0f} MB chat JSONL file, {conversations:,} "
                  f"conversations, {stats.total('turns'):,} turns in {seconds:.1f} s "
                  f"({stats.total('turns') / seconds:,.0f} turns/s)")
            print(f"peak RSS before {before:,.0f} MB, after {peak_rss_mb():,.0f} MB "
                  f"(growth {peak_rss_mb() - before:,.0f} MB for a "
                  f"{big.stat().st_size / 1e6:,.0f} MB file)")
            figures["big_jsonl_rss_growth_mb"] = peak_rss_mb() - before
        print(result_line(**figures))

if __name__ == "__main__":  # (the guard matters: the reading processes are spawned)
    main()
