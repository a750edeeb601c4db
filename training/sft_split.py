"""sft_split: next-observation samples in the conversational `messages` format.

Per train episode, `turns_per_trajectory` judgeable turns (seeded) become samples: the system
message is one of the 10 prompt variants (stable hash of trajectory and turn), the history is
replayed under `max_prompt_tokens` (oldest turns dropped), then the current action, then the
target `<think>reasoning</think><predicted_observation>observation</predicted_observation>`.
The reasoning comes from teacher.py (deterministic by default, or a judged teacher model).
`max_trajectories_per_domain` bounds the split (episodes in trajectory_id order).
Whole trajectories are held out for validation: a trajectory's samples are all in split
"validation" when stable_fraction("validation:<trajectory id>", seed) < `validation_share`, else
all in "train" (the `split` column), so no trajectory is on both sides.

Output: {data}/sft_split/domain={d}/part-0.parquet and {data}/sft_split/hf (CONTRACTS; the
DatasetDict has "train" and "validation").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from transformers import PreTrainedTokenizerFast

from quality.split import stable_fraction
from quality.tables import TRAJECTORY_SPLIT
from sources.storage import ParquetSink
from training.export import export_dataset_dict
from training.prompt_variants import prompts_version, system_prompt, variant_for
from training.prompts import PromptBuilder, pick_turns
from training.render import first_episodes
from training.sample_stats import SampleStats
from training.tables import SFT_SPLIT
from training.teacher import OpenAITeacher, Query, deterministic_rationale


@dataclass(frozen=True)
class TokenBudgets:
    """How long prompts and targets are for one kind of model: sft_split builds them, SFT trains
    on samples of `sample_tokens`, GSPO and the bench ask with `prompt_tokens` and let the model
    write `answer_tokens`."""

    prompt_tokens: int
    target_observation_tokens: int | None  # the observation's head in the target (None: all)
    rationale: str  # "brief" | "full" (deterministic rationale only)
    sample_tokens: int
    answer_tokens: int


# The default tiny CPU model, trained on 768-token samples: the system message (~370 tokens) and
# the last turns, then a target it can finish (a brief rationale and the observation's first 48
# tokens). A model trained on 300-1,800-token targets never learned where
# </predicted_observation> goes and was 100 % malformed on the bench.
TINY_BUDGETS = TokenBudgets(prompt_tokens=640, target_observation_tokens=48, rationale="brief",
                            sample_tokens=768, answer_tokens=128)
# A real pretrained base on two CPU cores (SmolLM2-135M, 8,192-token context): observations up
# to 128 tokens (cut at a line end; 2.7x the tiny model's heads, most terminal / search / SWE
# observations whole), prompts of 640 tokens like the tiny model's. Sized by time, not by the
# model: full fine-tuning measured 4-5 tokens/s on this shared machine under load 10 (about 160
# on a quiet one), so a sample of the 8K context it could read would cost half an hour a step.
# On a GPU: prompt_tokens 8192 or more, target_observation_tokens None, rationale "full".
REAL_BASE_BUDGETS = TokenBudgets(prompt_tokens=TINY_BUDGETS.prompt_tokens,
                                 target_observation_tokens=128,
                                 rationale="brief", sample_tokens=896, answer_tokens=192)


BUDGETS = {"tiny": TINY_BUDGETS, "real_base": REAL_BASE_BUDGETS}


def budgets_named(name: str) -> TokenBudgets:
    if name not in BUDGETS:
        raise ValueError(f"unknown token budgets {name!r}; known: {sorted(BUDGETS)}")
    return BUDGETS[name]


@dataclass(frozen=True)
class SftSplitConfig:
    """Targets per trajectory, prompt token budget, trajectory budget, seed."""

    turns_per_trajectory: int = 2
    # Budgets of the model trained on it (TokenBudgets above: the tiny model's by default).
    max_prompt_tokens: int = TINY_BUDGETS.prompt_tokens
    max_target_observation_tokens: int | None = TINY_BUDGETS.target_observation_tokens
    rationale: str = TINY_BUDGETS.rationale
    max_trajectories_per_domain: int | None = 40
    validation_share: float = 0.1  # of the trajectories, held out whole (SFT's eval_loss)
    seed: int = 0

    @classmethod
    def with_budgets(cls, budgets: TokenBudgets, **fields: object) -> SftSplitConfig:
        return cls(max_prompt_tokens=budgets.prompt_tokens,
                   max_target_observation_tokens=budgets.target_observation_tokens,
                   rationale=budgets.rationale, **fields)

    def __post_init__(self) -> None:
        if not 0.0 <= self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in [0, 1), got {self.validation_share}")

    def __str__(self) -> str:
        return (f"k{self.turns_per_trajectory}_p{self.max_prompt_tokens}"
                f"_o{self.max_target_observation_tokens or 'all'}_{self.rationale}"
                f"_t{self.max_trajectories_per_domain or 'all'}_val{self.validation_share:g}"
                f"_seed{self.seed}_prompts{prompts_version()}")

    def split_of(self, trajectory_id: str) -> str:
        """'validation' or 'train' for every sample of a trajectory (stable, seeded)."""
        held_out = stable_fraction(f"validation:{trajectory_id}", self.seed) < self.validation_share
        return "validation" if held_out else "train"


def target_text(reasoning: str, observation: str) -> str:
    """The assistant target of a sample."""
    return (f"<think>{reasoning}</think>"
            f"<predicted_observation>{observation}</predicted_observation>")


def observation_head(observation: str, tokenizer: PreTrainedTokenizerFast,
                     max_tokens: int | None) -> str:
    """The observation, or its first max_tokens tokens ended at the last whole line inside
    them (at the token boundary when the first line alone is longer)."""
    if max_tokens is None:
        return observation
    offsets = tokenizer(observation, add_special_tokens=False,
                        return_offsets_mapping=True)["offset_mapping"]
    if len(offsets) <= max_tokens:
        return observation
    end = offsets[max_tokens - 1][1]
    line_end = observation.rfind("\n", 0, end)
    return observation[:line_end if line_end > 0 else end]


def build_sft_split(data_dir: Path, tokenizer: PreTrainedTokenizerFast, domains: Sequence[str],
                    config: SftSplitConfig = SftSplitConfig(), teacher: OpenAITeacher | None = None
                    ) -> SampleStats:
    """Write sft_split (Parquet per domain, then the DatasetDict); return the counts."""
    stats = SampleStats(config=str(config), validation=Counter())
    source = teacher.source if teacher else "deterministic"
    written = []
    for domain in domains:
        if not TRAJECTORY_SPLIT.path(data_dir, domain).exists():
            continue
        written.append(domain)
        with ParquetSink(SFT_SPLIT.path(data_dir, domain), SFT_SPLIT.schema,
                         rows_per_batch=256) as sink:
            for episode in first_episodes(data_dir, domain, config.max_trajectories_per_domain):
                stats.trajectories[domain] += 1
                split = config.split_of(episode.trajectory_id)
                builder = PromptBuilder(tokenizer, episode, config.max_prompt_tokens)
                for step in pick_turns(episode, config.turns_per_trajectory, config.seed):
                    position = episode.steps.index(step)
                    variant = variant_for(f"{episode.trajectory_id}:{step.turn_index}",
                                          config.seed)
                    system = system_prompt(variant, domain, episode.task, episode.formats())
                    prompt = builder.build(position, system)
                    if prompt is None:
                        stats.skipped[domain, "over_budget"] += 1
                        continue
                    previous = episode.steps[position - 1].observation if position else ""
                    query = Query(domain, previous, step, tuple(
                        (s.action, s.observation) for s in episode.steps[:position]))
                    reasoning = (teacher.rationale(query) if teacher
                                 else deterministic_rationale(query, config.rationale))
                    if reasoning is None:
                        stats.skipped[domain, "teacher_dropped"] += 1
                        continue
                    observation = observation_head(step.observation, tokenizer,
                                                   config.max_target_observation_tokens)
                    stats.targets_cut[domain] += observation != step.observation
                    target = target_text(reasoning, observation)
                    sink.write({"messages": [*prompt.messages,
                                             {"role": "assistant", "content": target}],
                                "domain": domain, "trajectory_id": episode.trajectory_id,
                                "turn_index": step.turn_index, "prompt_variant": variant,
                                "reasoning_source": source, "split": split})
                    stats.add(domain, prompt.tokens,
                              builder.answer_tokens(reasoning, observation, special=4),
                              prompt.dropped_turns, validation=split == "validation")
    export_dataset_dict(data_dir, SFT_SPLIT, written)
    return stats
