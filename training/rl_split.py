"""rl_split and rl_split_all_turns: prompts for RL with the reference and a verifier spec.

rl_split takes exactly one target turn per train trajectory, drawn (seeded) among its judgeable
turns (turn_labels informative or error): expanding every turn of a trajectory gives many
near-identical long prefixes and teaches the model to echo them (the Echo Trap). The prompt is
system (a prompt variant with the task) + history + current action under `max_prompt_tokens`
(default 128K, the recipe's cap; oldest turns dropped first). rl_split_all_turns has a sample
for every judgeable turn of the same trajectories, for the Echo Trap ablation. Trajectories
without a judgeable turn give no sample (counted as skipped).

Output: {data}/<table>/domain={d}/part-0.parquet and {data}/<table>/hf (CONTRACTS).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from transformers import PreTrainedTokenizerFast

from bench.judges.rules import verifier_spec
from quality.tables import TRAJECTORY_SPLIT
from sources.storage import ParquetSink
from sources.tables import Table
from training.export import export_dataset_dict
from training.prompt_variants import prompts_version, system_prompt, variant_for
from training.prompts import PromptBuilder, pick_turns
from training.render import first_episodes
from training.sample_stats import SampleStats
from training.tables import RL_SPLIT, RL_SPLIT_ALL_TURNS


@dataclass(frozen=True)
class RlConfig:
    """One turn or all, prompt token budget, trajectory budget, seed."""

    all_turns: bool = False
    max_prompt_tokens: int = 131_072
    max_trajectories_per_domain: int | None = 24
    seed: int = 0

    @property
    def table(self) -> Table:
        return RL_SPLIT_ALL_TURNS if self.all_turns else RL_SPLIT

    def __str__(self) -> str:
        return (f"{'all' if self.all_turns else 'one'}_p{self.max_prompt_tokens}"
                f"_t{self.max_trajectories_per_domain or 'all'}_seed{self.seed}"
                f"_prompts{prompts_version()}")


def build_rl_split(data_dir: Path, tokenizer: PreTrainedTokenizerFast, domains: Sequence[str],
                   config: RlConfig = RlConfig()) -> SampleStats:
    """Write rl_split or rl_split_all_turns (Parquet per domain, the DatasetDict)."""
    stats = SampleStats(config=str(config))
    written = []
    for domain in domains:
        if not TRAJECTORY_SPLIT.path(data_dir, domain).exists():
            continue
        written.append(domain)
        with ParquetSink(config.table.path(data_dir, domain), config.table.schema,
                         rows_per_batch=64) as sink:
            for episode in first_episodes(data_dir, domain, config.max_trajectories_per_domain):
                stats.trajectories[domain] += 1
                targets = pick_turns(episode, None if config.all_turns else 1, config.seed)
                if not targets:
                    stats.skipped[domain, "no_judgeable_turn"] += 1
                # one variant per trajectory: the prompts of all_turns share their prefixes
                variant = variant_for(episode.trajectory_id, config.seed)
                system = system_prompt(variant, domain, episode.task, episode.formats())
                builder = PromptBuilder(tokenizer, episode, config.max_prompt_tokens)
                if targets:
                    builder.prefetch(episode.steps.index(targets[-1]))
                for step in targets:
                    prompt = builder.build(episode.steps.index(step), system)
                    if prompt is None:
                        stats.skipped[domain, "over_budget"] += 1
                        continue
                    spec = verifier_spec(domain, step.exit_code, step.is_error)
                    sink.write({"prompt": prompt.messages,
                                "reference_observation": step.observation, "domain": domain,
                                "trajectory_id": episode.trajectory_id,
                                "turn_index": step.turn_index,
                                "verifier": json.dumps(spec, sort_keys=True),
                                "prompt_tokens": prompt.tokens})
                    stats.add(domain, prompt.tokens, builder.answer_tokens(step.observation),
                              prompt.dropped_turns)
    export_dataset_dict(data_dir, config.table, written)
    return stats
