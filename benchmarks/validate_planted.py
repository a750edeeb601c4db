"""How well `worldtrace validate` finds planted anomalies on a data directory's trajectories.

    python benchmarks/validate_planted.py --data DIR --model MODEL [--model MODEL2 ...]
        [--per-domain 20] [--planted 3] [--max-tokens 1024] [--threads 1] [--seed 0]

Takes the first --per-domain bench-pool trajectories of each domain (content-hash order), swaps
the observation of --planted turns per domain for the observation of a turn of another
trajectory of the same domain (seeded), scores every turn with each model (training/validate.py)
and prints, per model: the share of planted turns in the top 5 % by z, the share flagged
(z >= 3), their median rank percentile, turns scored, tokens, wall time and tokens/s.
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


def planted_episodes(data: Path, per_domain: int, planted: int, seed: int):
    """The episodes with `planted` swapped observations a domain, and the planted turn keys."""
    from quality.tables import TRAJECTORY_SPLIT
    from sources.schema import DOMAINS
    from training.render import first_episodes

    rng = random.Random(seed)
    episodes, keys = [], set()
    for domain in DOMAINS:
        if not TRAJECTORY_SPLIT.path(data, domain).exists():
            continue
        mine = [e for e in first_episodes(data, domain, per_domain, pool="bench")
                if any(s.observation.strip() for s in e.steps)]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", type=Path, action="append", required=True)
    parser.add_argument("--per-domain", type=int, default=20)
    parser.add_argument("--planted", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    from bench.local_model import LocalChatModel
    from training.validate import ValidateConfig, ValidateStats, validate

    torch.set_num_threads(args.threads)
    episodes, keys = planted_episodes(args.data, args.per_domain, args.planted, args.seed)
    print(f"{len(episodes)} trajectories, {len(keys)} planted observations", flush=True)
    turns, seconds, top_share = 0, 0.0, []
    for folder in args.model:
        chat = LocalChatModel.load(folder, dtype="float32", device="cpu")
        stats = ValidateStats()
        with stopwatch() as lap:
            rows = validate(chat.model, chat.tokenizer, announced(episodes, folder.name),
                            ValidateConfig(max_tokens=args.max_tokens), stats)
        ranks = {(r["trajectory_id"], r["turn_index"]): k for k, r in enumerate(rows)}
        found = [ranks[key] / len(rows) for key in keys if key in ranks]
        top = sum(rank < 0.05 for rank in found)
        flagged = sum(r["outlier"] for r in rows if (r["trajectory_id"], r["turn_index"]) in keys)
        turns, seconds = turns + len(rows), seconds + lap.wall
        top_share.append(top / max(len(found), 1))
        print(f"{folder.name}: planted in top 5 %: {top}/{len(found)}, flagged (z >= 3): "
              f"{flagged}/{len(found)}, median rank {statistics.median(found):.3f}; "
              f"{len(rows)} turns, {stats.tokens:,} tokens in {lap.wall:.0f} s "
              f"({stats.tokens / max(lap.wall, 1e-9):.0f} tokens/s), peak RSS "
              f"{peak_rss_mb():.0f} MiB", flush=True)
    # turns: every model's scored turns; wall_s: the models' validation (loading excluded);
    # planted_top5: the share of planted observations in the top 5 %, the worst model's.
    print(result_line(turns=turns, turns_per_s=turns / max(seconds, 1e-9), wall_s=seconds,
                      peak_rss_mb=peak_rss_mb(), models=len(args.model),
                      planted_top5=min(top_share), load_avg=load_average()))


if __name__ == "__main__":
    main()
