"""Seeded scale generator: millions of turns in the seven native formats, with planted truth.

`generate_corpus(out_dir, domains, n_trajectories, seed)` writes, per domain,

    out_dir/<domain>/<domain>-generated/<one trajectory per file>
    out_dir/_truth/turn_truth.parquet       source, domain, file, turn_index, category
    out_dir/_truth/duplicate_pairs.parquet  source, domain, file_a, file_b, jaccard, kind
    out_dir/_truth/manifest.json            seed, counts, sha256 of every file (sorted by path)

Every file is a function of (seed, domain, file index) only: each trajectory draws from its own
`random.Random` seeded with that string, so the same seed gives byte-identical files whatever
the number of worker processes or the order they finish in. Each turn's category (informative,
echo, unchanged, boilerplate, error, empty) is planned first and its text is built to have it.
About 3% of the files are exact copies of another file and 3% near copies (a few turns
rewritten), with the exact word-5-gram Jaccard of the pair recorded (see `scale_text.jaccard`).
The files go through the same readers as user data; the factory never writes turn Parquet.

Large runs are split into chunks of trajectories written by a process pool (fork in a
single-threaded process, spawn otherwise); small ones run inline.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import random
import shutil
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from sources.factory.scale_core import (
    CATEGORIES,
    DomainWriter,
    GenTask,
    GenTurn,
    pick_edits,
    plan_categories,
    redraw_seed,
    sample_turn_count,
    trajectory_text,
)
from sources.factory.scale_text import jaccard
from sources.factory.scale_truth import write_truth
from sources.registry import Registry
from sources.schema import DOMAINS

EXACT_RATE = 0.03
NEAR_RATE = 0.03
CHUNK = 48  # trajectories per worker job: small enough for smooth progress, big enough to amortise
INLINE_TURN_LIMIT = 40000  # below this many (expected) turns, skip the process pool
TRUTH_DIR = "_truth"

# One writer module per domain (a DomainWriter: SUFFIX, MEAN_TURNS, task(), turn(), render()).
GENERATORS: Registry[DomainWriter] = Registry("generator", {
    "mcp": "sources.factory.scale_mcp",
    "search": "sources.factory.scale_search",
    "terminal": "sources.factory.scale_terminal",
    "swe": "sources.factory.scale_swe",
    "android": "sources.factory.scale_android",
    "web": "sources.factory.scale_web",
    "os": "sources.factory.scale_os",
})


@dataclass
class DomainStats:
    """What was written for one domain."""

    trajectories: int = 0
    turns: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0  # CPU time the workers spent on this domain (plus its final move)
    categories: dict[str, int] = field(default_factory=dict)
    exact_pairs: int = 0
    near_pairs: int = 0


@dataclass
class GenerationStats:
    """Per-domain counts and the wall time of the whole call."""

    seed: int
    domains: dict[str, DomainStats]
    wall_seconds: float = 0.0

    @property
    def trajectories(self) -> int:
        return sum(s.trajectories for s in self.domains.values())

    @property
    def turns(self) -> int:
        return sum(s.turns for s in self.domains.values())

    @property
    def files(self) -> int:
        return sum(s.files for s in self.domains.values())

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.domains.values())

    def __str__(self) -> str:
        per = ", ".join(f"{d} {s.trajectories}/{s.turns}" for d, s in self.domains.items())
        return (f"{self.trajectories:,} trajectories, {self.turns:,} turns, "
                f"{self.bytes / 1e6:,.1f} MB in {self.wall_seconds:.1f} s, seed {self.seed} "
                f"(trajectories/turns: {per})")


def writer_for(domain: str) -> DomainWriter:
    """The domain's writer module (imported on first use)."""
    return GENERATORS.get(domain)


def source_name(domain: str) -> str:
    """Catalog source name of the generated files of a domain."""
    return f"{domain}-generated"


def file_name(domain: str, index: int) -> str:
    """File name of trajectory `index` of a domain."""
    return f"{domain}-{index:06d}{writer_for(domain).SUFFIX}"


def plan_duplicates(seed: int, domain: str, n: int) -> dict[int, tuple[str, int, bool]]:
    """Which file indices are copies: index -> (kind, source index, heavy edit?).

    Copies sit at random indices (not at the end), and near copies alternate between light
    edits (Jaccard above 0.8) and heavy ones (below), so the truth has pairs on both sides.
    """
    if n < 10:
        return {}
    rng = random.Random(f"{seed}:{domain}:duplicates")
    n_exact = max(1, round(n * EXACT_RATE))
    n_near = max(1, round(n * NEAR_RATE))
    copies = rng.sample(range(n), n_exact + n_near)
    originals = sorted(set(range(n)) - set(copies))
    offset = DOMAINS.index(domain)
    plan: dict[int, tuple[str, int, bool]] = {}
    # one copy per source: two copies of one source would be an unrecorded pair of their own
    sources = rng.sample(originals, len(copies))
    for k, (index, source) in enumerate(zip(copies, sources, strict=True)):
        kind = "exact" if k < n_exact else "near"
        heavy = kind == "near" and (k - n_exact + offset) % 2 == 1
        plan[index] = (kind, source, heavy)
    return plan


def build_trajectory(
    writer: DomainWriter, seed: int, domain: str, index: int, edit: tuple[int, bool] | None = None
) -> tuple[GenTask, list[GenTurn], bytes]:
    """Build trajectory `index` (task, turns, file bytes); `edit` rewrites some of its turns.

    `edit` = (edit seed, heavy): the same trajectory with some turns redrawn (same category,
    other random draws) -- a near duplicate of the unedited one. The turns to redraw hold about
    the share of the text that gives a target Jaccard of 0.82-0.97 (light) or 0.45-0.78
    (heavy): J ~ (1 - s) / (1 + s) for a redrawn share s.
    """
    rng = random.Random(f"{seed}:{domain}:{index}")
    n = sample_turn_count(rng, writer.MEAN_TURNS, minimum=len(writer.PREFIX) + 2)
    cats = plan_categories(rng, n, writer.WEIGHTS, writer.PREFIX, writer.LAST)
    task = writer.make_task(rng)
    task.ctx["n_turns"] = n
    turn_seeds = [rng.getrandbits(64) for _ in range(n)]
    render_seed = rng.getrandbits(64)
    turns = _make_turns(writer, task, cats, turn_seeds)
    if edit is not None:
        erng = random.Random(edit[0])
        for t in pick_edits(erng, edit[1], task, turns, cats, len(writer.PREFIX)):
            turn_seeds[t] = redraw_seed(erng, writer, task, turns, cats[t], t)
        turns = _make_turns(writer, task, cats, turn_seeds)
    rng.seed(render_seed)
    return task, turns, writer.render(rng, task, turns)


def _make_turns(
    writer: DomainWriter, task: GenTask, cats: list[str], turn_seeds: list[int]
) -> list[GenTurn]:
    """The turns of a trajectory, each drawn from its own seed (so one can be redrawn alone)."""
    turns: list[GenTurn] = []
    prev: GenTurn | None = None
    turn_rng = random.Random()
    for t, cat in enumerate(cats):
        turn_rng.seed(turn_seeds[t])
        prev = writer.make_turn(turn_rng, cat, task, prev, t)
        turns.append(prev)
    return turns


def regenerate(
    seed: int, domain: str, n: int, index: int,
    plan: dict[int, tuple[str, int, bool]] | None = None,
) -> tuple[GenTask, list[GenTurn], bytes]:
    """Rebuild file `index` of a domain generated with (seed, n): task, turns and file bytes.

    The turns carry the texts a reader must yield for the file (tests compare them).
    """
    writer = writer_for(domain)
    plan = plan_duplicates(seed, domain, n) if plan is None else plan
    copy = plan.get(index)
    if copy is None:
        return build_trajectory(writer, seed, domain, index)
    kind, source, heavy = copy
    if kind == "exact":
        return build_trajectory(writer, seed, domain, source)
    edit = (hash_seed(f"{seed}:{domain}:{index}:edit"), heavy)
    return build_trajectory(writer, seed, domain, source, edit)


@dataclass
class _ChunkResult:
    domain: str
    files: list[tuple[int, str, str, int, list[str]]]  # index, name, sha256, bytes, categories
    pairs: list[tuple[str, str, float, str]]  # file_a, file_b, jaccard, kind
    seconds: float


def _run_chunk(seed: int, domain: str, start: int, stop: int, n: int, folder: str) -> _ChunkResult:
    """Write trajectories [start, stop) of a domain into `folder` (runs in a worker process)."""
    began = time.process_time()
    writer = writer_for(domain)
    plan = plan_duplicates(seed, domain, n)
    out = Path(folder)
    files: list[tuple[int, str, str, int, list[str]]] = []
    pairs: list[tuple[str, str, float, str]] = []
    for index in range(start, stop):
        name = file_name(domain, index)
        copy = plan.get(index)
        if copy is None:
            _, turns, data = build_trajectory(writer, seed, domain, index)
        else:
            kind, source, _ = copy
            src_task, src_turns, src_data = build_trajectory(writer, seed, domain, source)
            if kind == "exact":
                turns, data, similarity = src_turns, src_data, 1.0
            else:
                task, turns, data = regenerate(seed, domain, n, index, plan)
                similarity = jaccard(
                    trajectory_text(src_task.text, src_turns), trajectory_text(task.text, turns)
                )
            pairs.append((file_name(domain, source), name, similarity, kind))
        (out / name).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        files.append((index, name, digest, len(data), [t.category for t in turns]))
    return _ChunkResult(domain, files, pairs, time.process_time() - began)


def hash_seed(text: str) -> int:
    """A 64-bit integer from a string, the same on every run (unlike `hash()`)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def generate_corpus(
    out_dir: Path,
    domains: Sequence[str],
    n_trajectories: int,
    seed: int,
    progress: bool = False,
    workers: int | None = None,
) -> GenerationStats:
    """Write `n_trajectories` generated trajectories per domain, with the truth sidecar.

    Each domain folder is built in a temporary folder inside `out_dir` and renamed into place,
    so a reader never sees half a domain. Truth and manifest rows of domains not generated in
    this call are kept (a partitioned asset generates one domain at a time).
    """
    began = time.perf_counter()
    out_dir = Path(out_dir)
    domains = list(DOMAINS) if "all" in domains else list(dict.fromkeys(domains))
    for domain in domains:
        writer_for(domain)
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = GenerationStats(seed, {d: DomainStats() for d in domains})
    tmp = {d: out_dir / f".scale-tmp-{d}" for d in domains}
    for folder in tmp.values():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    jobs = [
        (seed, d, start, min(start + CHUNK, n_trajectories), n_trajectories, str(tmp[d]))
        for d in domains
        for start in range(0, n_trajectories, CHUNK)
    ]
    results: dict[str, list[_ChunkResult]] = {d: [] for d in domains}
    remaining = {d: sum(1 for j in jobs if j[1] == d) for d in domains}
    expected_turns = sum(writer_for(d).MEAN_TURNS for d in domains) * n_trajectories
    workers = workers or min(os.cpu_count() or 1, 8)
    bar = _progress_bar(progress, len(domains) * n_trajectories)

    def collect(result: _ChunkResult) -> None:
        results[result.domain].append(result)
        bar.update(len(result.files))
        remaining[result.domain] -= 1
        if remaining[result.domain] == 0:
            _finalize_domain(out_dir, result.domain, tmp[result.domain], stats, results)

    try:
        if workers <= 1 or expected_turns < INLINE_TURN_LIMIT:
            for job in jobs:
                collect(_run_chunk(*job))
        else:
            with ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context()) as pool:
                futures = [pool.submit(_run_chunk, *job) for job in jobs]
                for future in as_completed(futures):
                    collect(future.result())
        for domain in domains:
            if n_trajectories == 0:
                _finalize_domain(out_dir, domain, tmp[domain], stats, results)
        records = {d: (sorted(f for r in results[d] for f in r.files),
                       sorted(p for r in results[d] for p in r.pairs)) for d in domains}
        summaries = {d: {"seed": seed, "n_trajectories": n_trajectories, "source": source_name(d),
                         **{k: v for k, v in vars(s).items() if k != "seconds"}}
                     for d, s in stats.domains.items()}
        write_truth(out_dir / TRUTH_DIR, records, summaries)
    finally:
        bar.close()
        for folder in tmp.values():
            shutil.rmtree(folder, ignore_errors=True)
    stats.wall_seconds = time.perf_counter() - began
    return stats


def _mp_context() -> multiprocessing.context.BaseContext:
    """fork when this process has one thread (scripts need no `__main__` guard then); spawn in
    threaded hosts such as Dagster, where forking a process with live threads can deadlock."""
    methods = multiprocessing.get_all_start_methods()
    # tqdm's idle monitor thread (started by any bar, even a disabled one) is harmless to fork
    others = [t for t in threading.enumerate()
              if t is not threading.main_thread() and t.name != "tqdm_monitor"]
    if "fork" in methods and not others:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _progress_bar(enabled: bool, total: int):  # noqa: ANN202 - tqdm or a stand-in
    from tqdm import tqdm

    return tqdm(total=total, unit="traj", desc="generate", disable=not enabled)


def _finalize_domain(
    out_dir: Path, domain: str, folder: Path, stats: GenerationStats,
    results: dict[str, list[_ChunkResult]],
) -> None:
    """Move a finished domain folder into place and fill its stats."""
    began = time.perf_counter()
    target = out_dir / domain / source_name(domain)
    target.parent.mkdir(parents=True, exist_ok=True)
    old = out_dir / f".scale-old-{domain}"
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    folder.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    s = stats.domains[domain]
    counts = dict.fromkeys(CATEGORIES, 0)
    for result in results[domain]:
        s.seconds += result.seconds
        for _, _, _, size, cats in result.files:
            s.trajectories += 1
            s.files += 1
            s.turns += len(cats)
            s.bytes += size
            for cat in cats:
                counts[cat] += 1
        for pair in result.pairs:
            if pair[3] == "exact":
                s.exact_pairs += 1
            else:
                s.near_pairs += 1
    s.categories = counts
    s.seconds += time.perf_counter() - began
