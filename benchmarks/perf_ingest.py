"""Benchmark ingest: turns/second and peak memory of readers + Parquet sinks, and streaming.

    python benchmarks/perf_ingest.py [--turns 200000] [--big-jsonl-mb 500]

1. Generates about --turns turns with the scale generator (all seven domains, native formats)
   and ingests them with `sources.ingest.write_tables`, printing turns/s per domain and peak RSS.
2. Writes one large chat JSONL file of --big-jsonl-mb MB (many trajectories in one file) and
   ingests it, printing the peak RSS growth: streaming readers keep it far below the file size.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import peak_rss_mb, stopwatch  # noqa: E402
from benchmarks.corpus import generated_work, ingest_generated  # noqa: E402
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
    args = parser.parse_args()
    with generated_work(args.turns, args.seed, "worldtrace-perf-ingest-") as work:
        print(f"{'domain':<10}{'trajs':>8}{'turns':>10}{'seconds':>9}{'turns/s':>10}")
        total_turns = 0
        with stopwatch() as all_domains:
            for domain in DOMAINS:
                with stopwatch() as lap:
                    stats = ingest_generated(work, domain, work / "data")
                turns = stats.total("turns")
                total_turns += turns
                assert stats.total("quarantined") == 0
                print(f"{domain:<10}{stats.total('trajectories'):>8}{turns:>10}{lap.wall:>9.1f}"
                      f"{turns / lap.wall:>10,.0f}")
        wall = all_domains.wall
        print(f"all       {total_turns:>18} {wall:>8.1f} {total_turns / wall:>9,.0f}")
        print(f"peak RSS after corpus ingest: {peak_rss_mb():,.0f} MB")

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

if __name__ == "__main__":
    main()
