"""Benchmark the scale generator: write about 1,000,000 turns (all seven domains) and time it.

    python benchmarks/perf_generate.py [--turns 1000000] [--seed 0] [--workers N] [--keep DIR]

N trajectories per domain is chosen from the domains' mean turn counts so the expected total is
--turns. Prints turns/second, wall time, peak RSS (this process and its worker processes) and
the bytes written, per domain and in total. Output goes to a temporary folder that is deleted
afterwards unless --keep names a folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402
from sources.factory.scale import generate_corpus, writer_for  # noqa: E402
from sources.schema import DOMAINS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000_000, help="target total turns")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="processes (default: CPUs)")
    parser.add_argument("--keep", type=Path, default=None, help="write here and keep the files")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    mean_total = sum(writer_for(d).MEAN_TURNS for d in DOMAINS)
    per_domain = max(1, round(args.turns / mean_total))
    out = args.keep or Path(tempfile.mkdtemp(prefix="worldtrace-perf-"))
    print(f"generating {per_domain} trajectories per domain x {len(DOMAINS)} domains "
          f"(~{per_domain * mean_total:,.0f} turns) into {out}")
    try:
        with stopwatch() as lap:
            stats = generate_corpus(out, DOMAINS, per_domain, args.seed,
                                    progress=not args.no_progress, workers=args.workers)
        wall = lap.wall
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)

    print(f"\n{'domain':<10}{'trajs':>8}{'turns':>10}{'MB':>10}{'cpu s':>8}{'turns/cpu s':>13}")
    for domain, s in stats.domains.items():
        rate = s.turns / s.seconds if s.seconds else 0.0
        print(f"{domain:<10}{s.trajectories:>8}{s.turns:>10}{s.bytes / 1e6:>10.1f}"
              f"{s.seconds:>8.1f}{rate:>13,.0f}")
    own, children = peak_rss_mb(), peak_rss_mb(children=True)
    print(f"\nturns:        {stats.turns:,}")
    print(f"wall time:    {wall:.1f} s")
    print(f"turns/second: {stats.turns / wall:,.0f}")
    print(f"bytes:        {stats.bytes:,} ({stats.bytes / 1e9:.2f} GB, "
          f"{stats.bytes / wall / 1e6:.0f} MB/s)")
    print(f"peak RSS:     {own:.0f} MiB (main), {children:.0f} MiB (largest worker)")
    print(result_line(turns=stats.turns, turns_per_s=stats.turns / wall, wall_s=wall,
                      peak_rss_mb=max(own, children), mb=stats.bytes / 1e6,
                      load_avg=load_average()))


if __name__ == "__main__":
    main()
