"""Free-running mode (`--rollout K`): the model's own predictions fed back for K steps.

The benchmark is teacher-forced: every prediction sees the real history. A world model used as
a simulator sees its own earlier predictions instead, and its errors compound. A chain starts at
a bench sample and follows the trajectory's real actions for K steps; at step d the history holds
the real turns before the start, then the model's d-1 predicted observations. Each step is
judged against the real observation of that turn.

Later turns may simply be harder, so each step is also asked teacher-forced (the real history up
to that turn): the gap between the two at depth d is what feeding back predictions cost. Depth 1
is the teacher-forced bench sample itself.

A chain's future turns come from the trajectory (`raw_turns` of the data dir) or, for files in
the official layout, from a later sample of the same trajectory, whose prefix holds them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

import duckdb
import pyarrow as pa

from bench.parsing import parse_prediction
from bench.predictors.base import Predictor
from bench.sample import BenchSample
from bench.scoring import AxisScores
from quality.tables import SCRUBBED_TURNS
from sources.storage import load_sql

Turn = tuple[str, str]  # (action, observation)
# One row per (predictor, chain, depth): the stored form of RolloutStep.
STEP_SCHEMA = pa.schema([
    pa.field("predictor", pa.string(), nullable=False),
    pa.field("chain", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("depth", pa.int32(), nullable=False),
    pa.field("score", pa.float64(), nullable=False),
    pa.field("teacher_score", pa.float64(), nullable=False),
    pa.field("malformed", pa.bool_(), nullable=False),
    pa.field("prediction", pa.large_string(), nullable=False),
])
Judge = Callable[[BenchSample, str], AxisScores]


@dataclass(frozen=True)
class RolloutChain:
    """A start sample and the real turns that follow its target turn, in order."""

    start: BenchSample
    future: tuple[Turn, ...]

    def teacher_forced(self, depth: int) -> BenchSample:
        """The real-history sample of the turn `depth - 1` steps after the start."""
        if depth == 1:
            return self.start
        real = ((self.start.current_action, self.start.reference), *self.future[:depth - 2])
        action, observation = self.future[depth - 2]
        return _next_sample(self.start, real, action, observation, depth)


@dataclass(frozen=True)
class RolloutStep:
    """One chain at one depth: the free-running and the teacher-forced score of that turn."""

    chain: str
    domain: str
    depth: int
    score: float
    teacher_score: float
    malformed: bool
    prediction: str  # the free-running predicted observation (what the next step is fed)


def _next_sample(start: BenchSample, added: Sequence[Turn], action: str, observation: str,
                 depth: int, free: bool = False) -> BenchSample:
    """The sample `depth - 1` turns after the start. Its id says which: `<start>+k` (real
    history) or `<start>+k/free` (own predictions), so caches keyed by id keep both."""
    turn_idx = start.turn_idx + len(added)
    suffix = "/free" if free else ""
    return dataclasses.replace(
        start, id=f"{start.id}+{depth - 1}{suffix}", history=(*start.history, *added),
        current_action=action, reference=observation, turn_idx=turn_idx,
        total_turns=max(start.total_turns, turn_idx), category="", record=None)


def chains_from_turns(samples: Iterable[BenchSample], turns: Mapping[str, Sequence[Turn]]
                      ) -> list[RolloutChain]:
    """Chains whose future is read from each trajectory's full list of turns."""
    chains = []
    for sample in samples:
        if sample.trajectory_id not in turns:
            raise KeyError(f"sample {sample.id}: no turns for trajectory {sample.trajectory_id}")
        chains.append(RolloutChain(sample, tuple(turns[sample.trajectory_id][sample.turn_idx:])))
    return chains


def chains_from_samples(samples: Sequence[BenchSample]) -> list[RolloutChain]:
    """Chains whose future is read from the longest later sample of the same trajectory (its
    history holds the real turns in between); a sample with none has an empty future."""
    longest: dict[str, BenchSample] = {}
    for sample in samples:
        known = longest.get(sample.trajectory_id)
        if known is None or sample.turn_idx > known.turn_idx:
            longest[sample.trajectory_id] = sample
    chains = []
    for sample in samples:
        last = longest[sample.trajectory_id]
        future: tuple[Turn, ...] = ()
        if last.turn_idx > sample.turn_idx:
            future = (*last.history[sample.turn_idx:], (last.current_action, last.reference))
        chains.append(RolloutChain(sample, tuple(future)))
    return chains


def read_trajectory_turns(data_dir: Path | str, domain: str, trajectory_ids: Iterable[str]
                          ) -> dict[str, list[Turn]]:
    """Every turn, in order, of the given trajectories, from a domain's scrubbed_turns (the
    text the samples come from: no secret reaches a score)."""
    path = SCRUBBED_TURNS.domain_glob(data_dir, domain)
    if not SCRUBBED_TURNS.has(data_dir, domain):
        raise FileNotFoundError(f"{path}: scrubbed_turns of {domain} is needed for free-running "
                                "chains")
    wanted = pa.table({"trajectory_id": pa.array(sorted(set(trajectory_ids)), pa.string())})
    turns: dict[str, list[Turn]] = {}
    with duckdb.connect() as con:
        con.register("wanted", wanted)
        cursor = con.execute(load_sql(__file__, "rollout_turns.sql"), {"path": str(path)})
        while (row := cursor.fetchone()) is not None:
            turns.setdefault(row[0], []).append((row[1], row[2]))
    return turns


def free_run(predictor: Predictor, chains: Sequence[RolloutChain], depth: int, judge: Judge,
             on_step: Callable[[int, int], None] | None = None) -> list[RolloutStep]:
    """Run every chain for up to `depth` steps (fewer when its trajectory ends), judging each
    step free-running and teacher-forced. All chains advance together, one batch per depth."""
    if depth < 1:
        raise ValueError(f"rollout depth must be >= 1, got {depth}")
    current = [chain.start for chain in chains]
    steps: list[RolloutStep] = []
    for d in range(1, depth + 1):
        live = [i for i, chain in enumerate(chains) if len(chain.future) >= d - 1]
        if not live:
            break
        free_samples = [current[i] for i in live]
        outputs = predictor.predict(free_samples)
        teacher_samples = [chains[i].teacher_forced(d) for i in live]
        teacher_outputs = outputs if d == 1 else predictor.predict(teacher_samples)
        for i, sample, output, teacher_sample, teacher_output in zip(
                live, free_samples, outputs, teacher_samples, teacher_outputs, strict=True):
            score = judge(sample, output).score
            teacher = score if d == 1 else judge(teacher_sample, teacher_output).score
            parsed = parse_prediction(output)
            steps.append(RolloutStep(chains[i].start.id, sample.domain, d, score, teacher,
                                     parsed.malformed, parsed.judged_text))
            if d - 1 < len(chains[i].future):  # feed the prediction back for the next step
                action, observation = chains[i].future[d - 1]
                current[i] = _next_sample(chains[i].start, (
                    *current[i].history[len(chains[i].start.history):],
                    (sample.current_action, parsed.judged_text)), action, observation, d + 1,
                    free=True)
        if on_step is not None:
            on_step(d, len(live))
    return steps


def decay_table(steps: Iterable[RolloutStep]) -> list[dict[str, object]]:
    """Per domain and depth (and 'all' domains): chains, mean free-running and teacher-forced
    score, the gap (what feeding back predictions cost), and the malformed rate."""
    groups: dict[tuple[str, int], list[RolloutStep]] = {}
    for step in steps:
        groups.setdefault((step.domain, step.depth), []).append(step)
        groups.setdefault(("all", step.depth), []).append(step)
    rows = []
    for (domain, depth), group in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        free, teacher = fmean(s.score for s in group), fmean(s.teacher_score for s in group)
        rows.append({"domain": domain, "depth": depth, "chains": len(group),
                     "free_running": round(free, 2), "teacher_forced": round(teacher, 2),
                     "gap": round(teacher - free, 2),
                     "malformed_rate": round(fmean(s.malformed for s in group), 4)})
    return rows


def pick_chains(chains: Iterable[RolloutChain], per_domain: int) -> list[RolloutChain]:
    """Up to `per_domain` chains per domain that go on past their start, in id order (a
    deterministic subset: free-running costs 2K-1 predictions per chain)."""
    by_domain: dict[str, list[RolloutChain]] = {}
    for chain in sorted(chains, key=lambda c: c.start.id):
        if chain.future:
            by_domain.setdefault(chain.start.domain, []).append(chain)
    return [chain for domain in sorted(by_domain) for chain in by_domain[domain][:per_domain]]
