"""Benchmark ingest's memory along one long partition: does a worker's peak RSS stay flat as
the partition grows?

    python benchmarks/perf_ingest_memory.py --corpus DIR [--domain android] [--limit N]

Ingests one domain of a kept corpus (`perf_generate.py --keep DIR`, or perf_scale's
WORK/<size>/corpus) as one partition in this process, with `sources.ingest.write_tables` (one
shard, one process: the loop a partition worker runs), and prints the peak RSS (the kernel's
high-water mark) at each tenth of the trajectories. A worker holds one row group of each
table at a time (4,096 rows; Android's raw_trajectories rows are the widest, ~9 KB), so its
peak should stop rising once the first full row groups are written, however long the
partition: `late_growth_mb` (peak at the end minus peak at half way) near 0 says flat.
`perf_scale.py` gives the same figure across corpus sizes, for the whole run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402
from benchmarks.corpus import generated_folder  # noqa: E402
from sources.catalog import make_spec  # noqa: E402
from sources.ingest import IngestStats, write_tables  # noqa: E402
from sources.schema import DOMAINS  # noqa: E402
from sources.shards import ShardConfig  # noqa: E402


class PeakByTenth:
    """The peak RSS when each tenth of `total` trajectories has been read (ingest's
    on_trajectory hook, called after every trajectory written)."""

    def __init__(self, total: int) -> None:
        self.marks = [max(1, total * tenth // 10) for tenth in range(1, 11)]
        self.peaks: list[tuple[int, float]] = []  # (trajectories read, peak RSS MiB)

    def __call__(self, stats: IngestStats) -> None:
        done = stats.total("trajectories")
        if len(self.peaks) < len(self.marks) and done >= self.marks[len(self.peaks)]:
            self.peaks.append((done, peak_rss_mb()))
            print(f"{done:>9,} trajectories  peak RSS {self.peaks[-1][1]:7.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True,
                        help="a corpus kept by perf_generate.py --keep (or perf_scale.py)")
    parser.add_argument("--domain", default="android", choices=DOMAINS)
    parser.add_argument("--limit", type=int, default=None, help="read only the first N files")
    args = parser.parse_args()
    folder = generated_folder(args.corpus, args.domain)
    files = sorted(path for path in folder.iterdir() if not path.name.startswith("."))
    if not files:
        raise SystemExit(f"{folder}: no trace files (generate a corpus with --keep first)")
    if args.limit is not None:
        files = files[:args.limit]
    with tempfile.TemporaryDirectory(prefix="worldtrace-perf-memory-") as scratch:
        if args.limit is not None:  # the first N files, by links in a folder of their own
            folder = Path(scratch) / "inputs"
            folder.mkdir()
            for path in files:
                (folder / path.name).symlink_to(path.resolve())
        spec = make_spec(f"{args.domain}-generated", folder, args.domain)
        peaks = PeakByTenth(len(files))  # one trajectory a file in the generated formats
        print(f"{args.domain}: {len(files):,} files in one partition; load {load_average()}; "
              f"RSS before reading {peak_rss_mb():.0f} MB", flush=True)
        with stopwatch() as lap:
            stats = write_tables([spec], Path(scratch) / "data", workers=1,
                                 shards=ShardConfig(1), on_trajectory=peaks)
    turns = stats.total("turns")
    end = peak_rss_mb()
    # (a file that is quarantined has no trajectory, so the later tenths may not be reached)
    half = next((peak for done, peak in peaks.peaks if done >= peaks.marks[4]), end)
    print(f"{turns:,} turns in {lap.wall:.1f} s ({lap.cpu:.1f} CPU s); peak RSS {end:.0f} MB, "
          f"{end - half:+.0f} MB over the second half")
    print(result_line(
        turns=turns, trajectories=stats.total("trajectories"), wall_s=round(lap.wall, 1),
        turns_per_s=round(turns / lap.wall), peak_rss_mb=round(end), peak_half_mb=round(half),
        late_growth_mb=round(end - half)))


if __name__ == "__main__":
    main()
