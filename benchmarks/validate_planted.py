"""How well `worldtrace validate` finds planted anomalies on a data directory's trajectories,
or on real trace files.

    python benchmarks/validate_planted.py (--data DIR | --traces PATH [--traces PATH2 ...])
        --model MODEL [--model MODEL2 ...] [--per-domain 20] [--skip 0] [--planted 3]
        [--max-tokens 1024] [--threads 1] [--seed 0]

Takes the first --per-domain bench-pool trajectories of each domain (content-hash order; after
the first --skip, for a set held out from the one a ranking was chosen on), or of the
trajectories the readers find in --traces (their order), swaps
the observation of --planted turns per domain for the observation of a turn of another
trajectory of the same domain (seeded), scores every turn with each model (training/validate.py)
and prints, per model and per score (--score contrast ranks by both the contrast and the plain
NLL of the same forward passes): the share of planted turns in the top 5 % by z, the share
flagged (z >= 3), their median rank percentile, turns scored, tokens, wall time and tokens/s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

from benchmarks._measure import load_average, peak_rss_mb, result_line, stopwatch  # noqa: E402


def bench_episodes(data: Path, per_domain: int, skip: int = 0) -> dict[str, list]:
    """Per domain, the first `per_domain` bench-pool trajectories with an observation after
    the first `skip` (a set the rankings were not read on)."""
    from quality.tables import TRAJECTORY_SPLIT
    from training.render import first_episodes

    return {domain: [e for e in first_episodes(data, domain, skip + per_domain, pool="bench")
                     if any(s.observation.strip() for s in e.steps)][skip:]
            for domain in TRAJECTORY_SPLIT.domains_present(data)}


def trace_file_episodes(paths: list[Path], per_domain: int, skip: int = 0) -> dict[str, list]:
    """Per domain, trajectories read from trace files or folders (any format `worldtrace
    ingest` reads), in the readers' order: at most `per_domain` after the first `skip`."""
    from training.episode_sources import EpisodeSourceStats, trace_episodes

    by_domain: dict[str, list] = {}
    for path in paths:
        stats = EpisodeSourceStats()
        for episode in trace_episodes(path, stats):
            if any(s.observation.strip() for s in episode.steps):
                by_domain.setdefault(episode.domain, []).append(episode)
        for line in stats.quarantined:
            print(f"not read: {line}", file=sys.stderr)
    return {d: found[skip:skip + per_domain] for d, found in sorted(by_domain.items())}


def plant(by_domain: dict[str, list], planted: int, seed: int) -> tuple[list, set]:
    """The episodes with `planted` observations a domain swapped for the observation of a turn
    of another trajectory of the same domain (seeded), and the planted turn keys."""
    rng = random.Random(seed)
    episodes, keys = [], set()
    for mine in (list(found) for found in by_domain.values()):
        for _ in range(min(planted, len(mine) // 2)):
            target, donor = rng.sample(range(len(mine)), 2)
            steps = list(mine[target].steps)
            candidates = [k for k, s in enumerate(steps) if s.observation.strip()
                          and (mine[target].trajectory_id, s.turn_index) not in keys]
            other = [s.observation for s in mine[donor].steps if s.observation.strip()
                     and s.observation not in {t.observation for t in steps}]
            if not candidates or not other:
                continue
            k = rng.choice(candidates)
            steps[k] = replace(steps[k], observation=rng.choice(other))
            mine[target] = replace(mine[target], steps=tuple(steps))
            keys.add((mine[target].trajectory_id, steps[k].turn_index))
        episodes += mine
    return episodes, keys


def announced(episodes: list, name: str):
    """The episodes, with a progress line at most every 30 s as they are scored (a real base
    reads a few hundred tokens a second on a CPU: minutes of silence otherwise)."""
    from bench.progress import Progress

    progress = Progress(name, len(episodes), lambda line: print(line, flush=True),
                        unit="trajectories", verb="scoring", every_s=30.0)
    for episode in episodes:
        yield episode
        progress.update(1)
    progress.close()


def write_rows(rows: list[dict], keys: set, path: Path) -> None:
    """The scored rows with a `planted` column, to rank them other ways afterwards."""
    import pyarrow as pa

    from sources.storage import write_parquet
    from training.validate import SCORE_SCHEMA

    planted = [(r["trajectory_id"], r["turn_index"]) in keys for r in rows]
    table = pa.Table.from_pylist(rows, schema=SCORE_SCHEMA)
    write_parquet(table.append_column("planted", pa.array(planted)), path)


def planted_ranks(ranked: list[dict], keys: set) -> tuple[int, int, int, float]:
    """Of the planted turns in rows ranked most surprising first: how many were scored (a turn
    cut out of an over-long window is not), in the top 5 %, flagged as outliers, and their
    median rank percentile (0 = most surprising)."""
    ranks = {(r["trajectory_id"], r["turn_index"]): k / len(ranked) for k, r in enumerate(ranked)}
    found = [ranks[key] for key in keys if key in ranks]
    flagged = sum(r["outlier"] for r in ranked if (r["trajectory_id"], r["turn_index"]) in keys)
    return (len(found), sum(rank < 0.05 for rank in found), flagged,
            statistics.median(found) if found else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", type=Path, help="a data directory: its bench trajectories")
    source.add_argument("--traces", type=Path, action="append",
                        help="trace files or a folder of them (repeatable), any format "
                             "`worldtrace ingest` reads: real trajectories")
    parser.add_argument("--model", type=Path, action="append", required=True)
    parser.add_argument("--per-domain", type=int, default=20)
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out each domain's first N trajectories: a held-out set for "
                             "a ranking chosen on the first ones")
    parser.add_argument("--planted", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score", choices=("contrast", "nll"), default="contrast",
                        help="contrast: score both ways in one run and report both rankings")
    parser.add_argument("--observation-tokens", type=int, default=32,
                        help="score each observation's first N tokens (default 32, as "
                             "`worldtrace validate`; 0: every token)")
    parser.add_argument("--out", type=Path, help="a folder for each model's scored rows "
                                                 "(<model>.parquet, with a planted column)")
    args = parser.parse_args()

    import torch

    from bench.local_model import LocalChatModel
    from training.validate import ValidateConfig, ValidateStats, normalise, validate

    torch.set_num_threads(args.threads)
    by_domain = (bench_episodes(args.data, args.per_domain, args.skip) if args.data else
                 trace_file_episodes(args.traces, args.per_domain, args.skip))
    episodes, keys = plant(by_domain, args.planted, args.seed)
    print(f"{len(episodes)} trajectories, {len(keys)} planted observations", flush=True)
    turns, seconds, top_share = 0, 0.0, []
    scores = ("contrast", "nll") if args.score == "contrast" else ("nll",)
    for folder in args.model:
        chat = LocalChatModel.load(folder, dtype="float32", device="cpu")
        stats = ValidateStats()
        config = ValidateConfig(max_tokens=args.max_tokens, score=args.score,
                                observation_tokens=args.observation_tokens or None)
        with stopwatch() as lap:
            rows = validate(chat.model, chat.tokenizer, announced(episodes, folder.name),
                            config, stats)
        turns, seconds = turns + len(rows), seconds + lap.wall
        if args.out:
            write_rows(rows, keys, args.out / f"{folder.name}.parquet")
        print(f"{folder.name}: {len(rows)} turns, {stats.tokens:,} tokens ({stats.tokens_alone:,} "
              f"out of context) in {lap.wall:.0f} s ({stats.tokens / max(lap.wall, 1e-9):.0f} "
              f"tokens/s), peak RSS {peak_rss_mb():.0f} MiB", flush=True)
        for score in scores:
            ranked = normalise(rows, config.z_threshold, score)
            found, top, flagged, median = planted_ranks(ranked, keys)
            top_share.append(top / max(found, 1))
            print(f"  by {score}: planted in top 5 %: {top}/{found}, flagged (z >= "
                  f"{config.z_threshold:g}): {flagged}/{found}, median rank {median:.3f}"
                  f"{'' if found == len(keys) else f' ({len(keys) - found} planted not scored)'}",
                  flush=True)
    # turns: every model's scored turns; wall_s: the models' validation (loading excluded);
    # planted_top5: the share of planted observations in the top 5 %, the worst model's and
    # score's.
    print(result_line(turns=turns, turns_per_s=turns / max(seconds, 1e-9), wall_s=seconds,
                      peak_rss_mb=peak_rss_mb(), models=len(args.model),
                      planted_top5=min(top_share), load_avg=load_average()))


if __name__ == "__main__":
    main()
