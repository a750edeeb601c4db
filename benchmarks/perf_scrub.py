"""Benchmark scrubbing: turns/second of quality.scrub over generated traces, per domain.

    python benchmarks/perf_scrub.py [--turns 100000] [--plant-every 50]

Generates about --turns turns with the scale generator (all seven domains), ingests them, puts
a credential or personal datum into every --plant-every-th observation (so the replace path is
measured too, not only the gates), then scrubs each domain partition and prints turns/s, MB/s
of text, values replaced, the CPU seconds of scrubbing (what to compare on a shared machine),
and the second pass (the blocking check) separately.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402
from benchmarks.corpus import generated_work, ingest_generated  # noqa: E402
from quality.checks import nothing_left_to_scrub  # noqa: E402
from quality.sharded import scrub_domain  # noqa: E402
from quality.tables import SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS  # noqa: E402
from sources.schema import DOMAINS  # noqa: E402
from sources.tables import RAW_TURNS  # noqa: E402

PLANTS = ("contact ops-team@corp-mail.com", "export GITHUB_TOKEN=ghp_" + "aB3" * 12,
          "ssh deploy@198.51.100.23", "call +1 415-555-0134")


def plant(turns_path: Path, every: int) -> None:
    """Append a sensitive value to every `every`-th observation (in place)."""
    table = pq.read_table(turns_path)
    observations = table["observation"].to_pylist()
    for i in range(0, len(observations), every):
        observations[i] += "\n" + PLANTS[(i // every) % len(PLANTS)]
    column = table.schema.get_field_index("observation")
    table = table.set_column(column, table.schema.field(column),
                             pa.array(observations, type=pa.large_string()))
    pq.write_table(table, turns_path)


def text_mb(turns_path: Path) -> float:
    table = pq.read_table(turns_path, columns=["action", "observation"])
    return sum(pc.sum(pc.utf8_length(table[c])).as_py() or 0 for c in table.column_names) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--plant-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with generated_work(args.turns, args.seed, "worldtrace-perf-scrub-") as work:
        data, out = work / "data", work / "scrubbed"
        for domain in DOMAINS:
            ingest_generated(work, domain, data)
            for path in RAW_TURNS.domain_files(data, domain):
                plant(path, args.plant_every)
        print(f"{'domain':<10}{'turns':>9}{'MB':>7}{'replaced':>10}{'seconds':>9}{'cpu s':>7}"
              f"{'turns/s':>9}{'MB/s':>7}{'check s':>9}")
        total_turns = total_mb = total_seconds = total_cpu = total_check = 0.0
        for domain in DOMAINS:
            with stopwatch() as scrubbing:
                stats = scrub_domain(data, out, domain)
            with stopwatch() as lap:
                outcome = nothing_left_to_scrub(SCRUBBED_TRAJECTORIES.domain_files(out, domain),
                                                SCRUBBED_TURNS.domain_files(out, domain))
            check_seconds = lap.wall
            assert outcome.passed, outcome.figures
            megabytes = sum(text_mb(path) for path in RAW_TURNS.domain_files(data, domain))
            total_turns += stats.turns
            total_mb += megabytes
            total_seconds += stats.seconds
            total_cpu += scrubbing.cpu
            total_check += check_seconds
            print(f"{domain:<10}{stats.turns:>9,}{megabytes:>7.1f}{stats.replaced:>10,}"
                  f"{stats.seconds:>9.1f}{scrubbing.cpu:>7.1f}{stats.turns_per_second:>9,.0f}"
                  f"{megabytes / stats.seconds:>7.1f}{check_seconds:>9.1f}")
        print(f"{'all':<10}{int(total_turns):>9,}{total_mb:>7.1f}{'':>10}{total_seconds:>9.1f}"
              f"{total_cpu:>7.1f}{total_turns / total_seconds:>9,.0f}"
              f"{total_mb / total_seconds:>7.1f}{total_check:>9.1f}")
        print(result_line(turns=int(total_turns), turns_per_s=total_turns / total_seconds,
                          wall_s=total_seconds, cpu_s=total_cpu,
                          mb_per_s=total_mb / total_seconds,
                          peak_rss_mb=peak_rss_mb(), load_avg=load_average()))


if __name__ == "__main__":
    main()
