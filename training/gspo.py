"""RL with GSPO (sequence-level importance ratios) from the SFT checkpoint, via TRL GRPOTrainer.

GSPO = GRPOConfig(importance_sampling_level="sequence"): one length-normalised ratio per
completion, clipped with GSPO's small ranges. On-policy, the ratio is exactly 1 and GSPO reduces
to plain GRPO; here each generation batch feeds `steps_per_generation` optimizer steps, so later
steps see completions from an older policy and the sequence-level ratio really acts.

The reward is a plain function of (prompt row, completion text). For the world model it is the
bench's hybrid reward (`bench.reward.hybrid_reward`: rubric 5-25 plus rule verifier 5-25, 0 for
output without a well-formed <predicted_observation>). Completions are decoded from their token
ids with special tokens KEPT: TRL's own decoding drops special tokens, which would strip the
<predicted_observation> tags the reward checks for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from datasets import Dataset
from transformers import PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from training.model_config import STOP_TOKENS, ModelConfig
from training.prompts import fit_prompts
from training.runner import StepConfig, continue_from, start_log, train_and_save, trainer_arguments
from training.sft_split import TINY_BUDGETS
from training.split_tables import read_columns
from training.tables import RL_SPLIT
from training.training_log import TrainingLog

# (prompt row, completion text) -> reward. The row holds the rl_split columns.
Scorer = Callable[[dict[str, Any], str], float]
RL_COLUMNS = ["prompt", "reference_observation", "domain", "verifier", "prompt_tokens"]


@dataclass(frozen=True)
class GspoConfig:
    """GSPO run. Defaults: a few short steps that fit two CPU cores.

    epsilon / epsilon_high 3e-4 / 4e-4 are the GSPO paper's clip ranges for sequence-level ratios
    (token-level GRPO uses 0.2: a sequence ratio is a geometric mean, so it moves far less).
    """

    model: ModelConfig = field(default_factory=ModelConfig)
    steps: StepConfig = field(default_factory=lambda: StepConfig(
        max_steps=8, batch_size=4, learning_rate=5e-4, warmup_steps=0, logging_steps=1,
        save_steps=4))
    num_generations: int = 4
    steps_per_generation: int = 2  # > gradient_accumulation: the second step is off-policy
    # room for the brief <think> and an observation head; the prompt budget is sft_split's
    # (TRL does not truncate: older turns are dropped)
    max_completion_length: int = TINY_BUDGETS.answer_tokens
    max_prompt_tokens: int = TINY_BUDGETS.prompt_tokens
    temperature: float = 1.0
    epsilon: float = 3e-4
    epsilon_high: float = 4e-4
    beta: float = 0.0  # no KL term (GSPO, DAPO): no reference model to keep in memory

    def __str__(self) -> str:
        return (f"gspo_{self.model}_{self.steps.max_steps}st_{self.num_generations}g_"
                f"{self.steps_per_generation}spg_{self.max_completion_length}tok")


def grpo_config(out_dir: Path, config: GspoConfig) -> GRPOConfig:
    """TRL settings for GSPO (sequence-level importance sampling, slightly off-policy)."""
    arguments = {**trainer_arguments(out_dir, config.steps, config.model),
                 "include_num_input_tokens_seen": "no"}  # GRPOTrainer counts prompt + completion
    return GRPOConfig(
        **arguments,
        importance_sampling_level="sequence",
        loss_type="grpo",  # GSPO averages each sequence's tokens; "dapo" would re-weight by length
        num_generations=config.num_generations,
        steps_per_generation=config.steps_per_generation,
        max_completion_length=config.max_completion_length,
        temperature=config.temperature,
        epsilon=config.epsilon,
        epsilon_high=config.epsilon_high,
        beta=config.beta,
        log_completions=False,
    )


class CompletionReward:
    """TRL reward function: decodes completion ids (special tokens kept) and scores each one."""

    def __init__(self, scorer: Scorer, tokenizer: PreTrainedTokenizerFast,
                 name: str = "reward") -> None:
        self.scorer = scorer
        self.tokenizer = tokenizer
        self.__name__ = name  # TRL names the reward's metrics after it
        self.stop_texts = [*STOP_TOKENS, tokenizer.pad_token]

    def completion_text(self, ids: Sequence[int]) -> str:
        text = self.tokenizer.decode(list(ids), skip_special_tokens=False)
        for stop in self.stop_texts:
            text = text.replace(stop, "")
        return text

    def __call__(self, prompts: list, completions: list, completion_ids: list[list[int]],
                 **columns: Any) -> list[float]:
        rewards = []
        for i, ids in enumerate(completion_ids):
            row = {name: values[i] for name, values in columns.items()
                   if isinstance(values, list) and len(values) == len(completion_ids)}
            row["prompt"] = prompts[i]
            rewards.append(float(self.scorer(row, self.completion_text(ids))))
        return rewards


def read_rl_split(paths: Sequence[Path], tokenizer: PreTrainedTokenizerFast,
                  max_prompt_tokens: int) -> tuple[Dataset, int]:
    """rl_split rows with prompts fitted to the budget, and how many had turns dropped."""
    return fit_prompts(read_columns(paths, RL_COLUMNS, RL_SPLIT.name), tokenizer, max_prompt_tokens,
                       f"{[str(p) for p in paths]}")


def train_gspo(prompts: Dataset, scorer: Scorer, start_dir: Path, out_dir: Path,
               config: GspoConfig = GspoConfig(),
               callbacks: Sequence[TrainerCallback] = ()) -> TrainingLog:
    """GSPO from the model in `start_dir` (SFT folder); the RL folder goes to `out_dir`."""
    tokenizer, model_config, model = continue_from(start_dir, config.model)
    log, resume_from = start_log("rl", out_dir, model, model_config, config)
    trainer = GRPOTrainer(model=model, reward_funcs=[CompletionReward(scorer, tokenizer)],
                          args=grpo_config(out_dir, replace(config, model=model_config)),
                          train_dataset=prompts, processing_class=tokenizer)
    return train_and_save(trainer, log, resume_from, tokenizer, out_dir, callbacks)
