"""Scale curve: generate -> ingest (sharded) -> quality stage at 1M, 3M and 10M turns, the cost
per million turns at each size, and whether it grows linearly.

    python benchmarks/perf_scale.py [--sizes 1000000,3000000,10000000] [--shards 4]
        [--workers 2] [--seed 0] [--work-dir DIR] [--keep-data]
        [--stages generate,ingest,quality] [--drop-corpus] [--record FILE]

For each size: native-format trace files of about that many turns over the seven domains
(sources/factory/scale.py; cached in WORK/<size>/corpus and reused when size and seed match),
then `worldtrace ingest`'s writer (sources.ingest.write_tables) with --shards shards a domain
and --workers reader processes, then the quality stage (quality/stage.py: features and labels
per shard in --workers processes, dedup across all shards, scrubbing). Every stage runs in its
own child process, sampled every 0.2 s (psutil) for the peak RSS of its largest process and of
its whole process tree. Printed per stage: turns, wall and CPU seconds (user and system, and the
stage's own process), turns/s, the two peaks, the bytes read from storage (a corpus larger than
the page cache is read from disk), disk used; then per stage the cost per million turns (wall
and CPU seconds) at every size and the ratio of the largest size's cost to the smallest's (about
1 is linear; the curve must not bend up). Before each stage, the CPU seconds of a fixed
calibration workload (benchmarks/_measure.py; recorded as `calibration_s`) say how fast the
machine was then. The data of a size is deleted after it is measured unless --keep-data (10M
turns need tens of GB).
Ends with one `result:` line. Not a test: a measurement on whatever machine runs it (it prints
the load average; CPU seconds are the figure to compare on a shared machine).

At 10M turns on one small disk: `--drop-corpus` deletes a size's native files once they are
ingested (the quality stage reads only the Parquet), and `--stages` runs part of the chain (the
quality stage alone reuses the data an earlier `--stages generate,ingest --keep-data` left).
`--record FILE` appends each stage's figures as a JSON line and prints the cost table over every
run recorded there, so sizes measured in separate runs make one curve.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import calibration_seconds, load_average, result_line  # noqa: E402

STAGES = ("generate", "ingest", "quality")
SAMPLE_SECONDS = 0.2
LINEAR_SLACK = 1.15  # cost per million at the largest size at most this times the smallest's


# ---------------------------------------------------------------------------- children

def child(stage: str, work: Path, size: int, shards: int, workers: int, seed: int,
          result: Path) -> None:
    """One stage of one size, in this (child) process; writes its turn count as JSON."""
    from sources.schema import DOMAINS

    corpus, data = work / "corpus", work / "data"
    if stage == "generate":
        from benchmarks.corpus import generate_turns

        shutil.rmtree(corpus, ignore_errors=True)
        turns = generate_turns(corpus, size, seed, workers=workers).turns
    elif stage == "ingest":
        from benchmarks.corpus import generated_folder
        from sources.catalog import make_spec
        from sources.ingest import write_tables
        from sources.shards import ShardConfig

        shutil.rmtree(data, ignore_errors=True)
        specs = [make_spec(f"{d}-generated", generated_folder(corpus, d), d) for d in DOMAINS]
        stats = write_tables(specs, data, DOMAINS, workers=workers, shards=ShardConfig(shards))
        turns = stats.total("turns")
    else:
        from quality.stage import run_quality_stage

        out = work / "quality"
        shutil.rmtree(out, ignore_errors=True)
        report = run_quality_stage(data, out, DOMAINS, workers)
        turns = sum(s.turns for s in report.features.values())
    result.write_text(json.dumps({"turns": turns}))


# ---------------------------------------------------------------------------- parent

class TreeSampler:
    """A process and its descendants, sampled in one walk every SAMPLE_SECONDS: the peak RSS
    (MB) of its largest member and of the whole tree, the tree's CPU seconds (with the children
    each member has reaped, so workers that end early count), split into user and system time,
    the root's own share, and the bytes the tree read from storage (a corpus larger than the
    page cache is read from disk: system time that a cached one does not cost)."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.largest = self.tree = self.user = self.system = self.root_cpu = 0.0
        self.read_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def cpu(self) -> float:
        return self.user + self.system

    @property
    def read_mb(self) -> float:
        return self.read_bytes / 2**20

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(SAMPLE_SECONDS):
            try:
                members = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            sizes, user, system, read = [], 0.0, 0.0, 0
            for member in members:
                try:
                    sizes.append(member.memory_info().rss / 2**20)
                    times = member.cpu_times()
                    # a reaped child's reads are added to its parent's, like its CPU times
                    read += member.io_counters().read_bytes
                except psutil.NoSuchProcess:
                    continue
                user += times.user + times.children_user
                system += times.system + times.children_system
                if member is self.root:
                    self.root_cpu = max(self.root_cpu, times.user + times.system)
            if sizes:
                self.largest = max(self.largest, max(sizes))
                self.tree = max(self.tree, sum(sizes))
                self.read_bytes = max(self.read_bytes, read)
                if user + system > self.cpu:
                    self.user, self.system = user, system

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20 \
        if folder.exists() else 0.0


def run_stage(stage: str, work: Path, size: int, args: argparse.Namespace) -> dict:
    """Run one stage in a child process; its figures."""
    result = work / f"{stage}.json"
    command = [sys.executable, __file__, "--child", stage, str(work), str(size),
               str(args.shards), str(args.workers), str(args.seed), str(result)]
    wall = time.perf_counter()
    process = subprocess.Popen(command)
    sampler = TreeSampler(process.pid)
    try:
        process.wait()
    finally:
        sampler.stop()
    cpu = sampler.cpu
    if process.returncode != 0:
        raise SystemExit(f"{stage} at {size:,} turns failed (exit {process.returncode})")
    wall = time.perf_counter() - wall
    turns = json.loads(result.read_text())["turns"]
    folder = {"generate": "corpus", "ingest": "data", "quality": "quality"}[stage]
    figures = {"stage": stage, "size": size, "turns": turns, "wall_s": round(wall, 1),
               "cpu_s": round(cpu, 1), "user_s": round(sampler.user, 1),
               "system_s": round(sampler.system, 1), "root_cpu_s": round(sampler.root_cpu, 1),
               "read_mb": round(sampler.read_mb), "turns_per_s": round(turns / wall, 1),
               "largest_process_mb": round(sampler.largest), "tree_mb": round(sampler.tree),
               "disk_mb": round(disk_mb(work / folder))}
    print(f"{size:>11,} {stage:<9} {turns:>11,} turns  {wall:8.1f} s wall  {cpu:8.1f} s CPU  "
          f"{figures['turns_per_s']:>9,.0f} turns/s  largest {figures['largest_process_mb']:>6}"
          f" MB  tree {figures['tree_mb']:>6} MB  disk {figures['disk_mb']:>7} MB", flush=True)
    print(f"{size:>11,} {stage:<9} CPU: user {sampler.user:.1f} s, system {sampler.system:.1f} s,"
          f" the stage's own process {sampler.root_cpu:.1f} s; read from storage "
          f"{sampler.read_mb:,.0f} MB", flush=True)
    return figures


def cost_table(rows: list[dict]) -> list[dict]:
    """Per stage: cost per million turns at each size, and largest / smallest."""
    table = []
    for stage in STAGES:
        runs = sorted((r for r in rows if r["stage"] == stage), key=lambda r: r["turns"])
        if not runs or runs[0]["turns"] == 0:
            continue
        cost = [(r["size"], r["wall_s"] / r["turns"] * 1e6, r["cpu_s"] / r["turns"] * 1e6)
                for r in runs]
        table.append({"stage": stage, "cost": cost,
                      "cpu_ratio": cost[-1][2] / cost[0][2] if cost[0][2] else 0.0})
    return table


def recorded(path: Path | None, new: dict | None = None) -> list[dict]:
    """The figures recorded in `path` (JSON lines), after appending `new` if given."""
    if path is None:
        return [new] if new else []
    if new:
        with path.open("a") as handle:
            handle.write(json.dumps(new, sort_keys=True) + "\n")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []


def latest_per_stage_and_size(rows: list[dict]) -> list[dict]:
    """The last recorded run of each (stage, size): a rerun replaces an earlier figure."""
    return list({(r["stage"], r["size"]): r for r in rows}.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,3000000,10000000")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/worldtrace-scale"))
    parser.add_argument("--keep-data", action="store_true")
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--drop-corpus", action="store_true")
    parser.add_argument("--record", type=Path, default=None)
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        stage, work, size, shards, workers, seed, result = args.child
        child(stage, Path(work), int(size), int(shards), int(workers), int(seed), Path(result))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    stages = [s for s in STAGES if s in args.stages.split(",")]
    if unknown := set(args.stages.split(",")) - set(STAGES):
        parser.error(f"--stages: unknown {sorted(unknown)}; choose from {', '.join(STAGES)}")
    print(f"scale: sizes {sizes}, {args.shards} shards a domain, {args.workers} workers, "
          f"load {load_average()}", flush=True)
    rows = []
    started = time.perf_counter()
    for size in sizes:
        work = args.work_dir / str(size)
        work.mkdir(parents=True, exist_ok=True)
        stamp = work / "corpus.json"
        wanted = {"size": size, "seed": args.seed}
        for stage in stages:
            if stage == "generate" and stamp.exists() and json.loads(stamp.read_text()) == wanted:
                print(f"{size:>11,} generate  reusing {work / 'corpus'}", flush=True)
                continue
            if stage == "ingest" and not stamp.exists():
                raise SystemExit(f"{work / 'corpus'}: no corpus of {size:,} turns to ingest "
                                 "(it was dropped, or never generated); add generate to --stages")
            if stage == "quality" and not (work / "data").is_dir():
                raise SystemExit(f"{work / 'data'}: no ingested data of {size:,} turns; add "
                                 "ingest to --stages (with --keep-data when run apart)")
            calibration = calibration_seconds()  # the machine's speed now (it drifts by the hour)
            rows.append(run_stage(stage, work, size, args))
            rows[-1]["calibration_s"] = round(calibration, 3)
            print(f"{size:>11,} {stage:<9} calibration before the stage {calibration:.3f} CPU s",
                  flush=True)
            recorded(args.record, rows[-1])
            if stage == "generate":
                stamp.write_text(json.dumps(wanted))
            if stage == "ingest" and args.drop_corpus:
                stamp.unlink()  # (first: a half-deleted corpus is never taken as cached)
                shutil.rmtree(work / "corpus")
                print(f"{size:>11,} ingest    dropped the native files ({work / 'corpus'})",
                      flush=True)
        if not args.keep_data:
            for folder in ("data", "quality"):
                shutil.rmtree(work / folder, ignore_errors=True)
    if args.record:
        rows = latest_per_stage_and_size(recorded(args.record))
        print(f"\n(every run recorded in {args.record}: {len(rows)} stage figures)")
    print("\ncost per million turns (wall s / CPU s) by size; CPU ratio largest / smallest:")
    table = cost_table(rows)
    for entry in table:
        cells = "  ".join(f"{size:,}: {wall:.0f} / {cpu:.0f}" for size, wall, cpu in entry["cost"])
        verdict = "linear" if entry["cpu_ratio"] <= LINEAR_SLACK else "WORSE than linear"
        print(f"  {entry['stage']:<9} {cells}   ratio {entry['cpu_ratio']:.2f} ({verdict})")
    largest = [r for r in rows if r["size"] == max(sizes)]
    turns = max((r["turns"] for r in largest), default=0)
    wall = sum(r["wall_s"] for r in largest)
    by_stage = {r["stage"]: r for r in largest}
    print(result_line(
        turns=turns, turns_per_s=turns / wall if wall else 0, wall_s=wall,
        peak_rss_mb=max((r["largest_process_mb"] for r in largest), default=0),
        tree_peak_mb=max((r["tree_mb"] for r in largest), default=0),
        ingest_turns_per_s=by_stage.get("ingest", {}).get("turns_per_s", 0),
        quality_wall_s=by_stage.get("quality", {}).get("wall_s", 0),
        cpu_ratio=max((e["cpu_ratio"] for e in table), default=0),
        total_wall_s=time.perf_counter() - started, load_avg=load_average()))


if __name__ == "__main__":
    main()
