"""Supervised fine-tuning (SFT): loss on the assistant target only, from the CPT checkpoint.

A sample is the sft_split `messages` list (system, history as user/assistant turns, the current
action, then the target "<think>...</think><predicted_observation>...</predicted_observation>").
It is rendered with the tokenizer's chat template; tokens of the prompt (everything up to the
generation prompt of the last assistant turn) get weight 0 and the target's tokens weight 1, and
the same weighted loss as CPT trains on that (transformers Trainer, masked tokens). It trains
on sft_split's "train" rows; at the end it evaluates once on the "validation" rows (whole
held-out trajectories) and records eval_loss, the mean target-token loss per sample (the prompt
tokens count for nothing). An rl_split (Echo Trap ablation) has no validation rows: no eval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from datasets import Dataset, DatasetDict
from transformers import PreTrainedTokenizerFast, TrainerCallback, TrainingArguments

from training.model_config import ModelConfig
from training.prompts import fit_prompts
from training.runner import StepConfig, continue_from, start_log, train_and_save, trainer_arguments
from training.sft_split import TINY_BUDGETS, SftSplitConfig, observation_head
from training.split_tables import by_split, read_columns, read_table
from training.tables import RL_SPLIT, SFT_SPLIT
from training.training_log import TrainingLog
from training.weighted_loss import WeightedCollator, WeightedLossTrainer


@dataclass(frozen=True)
class SftConfig:
    """SFT run: model (normally the CPT folder as checkpoint), steps, longest sample kept."""

    model: ModelConfig = field(default_factory=ModelConfig)
    # 120 steps at 3e-3 on the short targets of sft_split: the tiny model then closes its
    # <predicted_observation> in most bench answers (sampled at 0.6); after 80 steps on
    # long targets it never did.
    steps: StepConfig = field(default_factory=lambda: StepConfig(max_steps=120, batch_size=8,
                                                                 learning_rate=3e-3))
    # Tokens; a longer sample keeps its last max_length. 768 holds sft_split's 640-token prompt
    # budget and its ~80-token target, so the model sees the system prompt it is asked with.
    max_length: int = TINY_BUDGETS.sample_tokens

    def __str__(self) -> str:
        return f"sft_{self.model}_{self.steps.max_steps}st_{self.max_length}len"


def tokenize_sample(messages: Sequence[dict[str, str]], tokenizer: PreTrainedTokenizerFast,
                    max_length: int) -> dict[str, list]:
    """input_ids and loss_weights (0 on the prompt, 1 on the final assistant turn)."""
    if not messages or messages[-1]["role"] != "assistant":
        raise ValueError(f"SFT sample must end with an assistant target, got {messages[-1:]}")
    prompt_text = tokenizer.apply_chat_template(list(messages[:-1]), tokenize=False,
                                                add_generation_prompt=True)
    full_text = tokenizer.apply_chat_template(list(messages), tokenize=False)
    if not full_text.startswith(prompt_text):
        raise ValueError("chat template renders the prompt differently inside the full "
                         "conversation: cannot find where the assistant target starts")
    prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    target_ids = tokenizer(full_text[len(prompt_text):], add_special_tokens=False)["input_ids"]
    ids = (prompt_ids + target_ids)[-max_length:]
    weights = ([0.0] * len(prompt_ids) + [1.0] * len(target_ids))[-max_length:]
    return {"input_ids": ids, "loss_weights": weights}


def messages_from_rl_row(row: dict[str, Any], observation: str) -> list[dict[str, str]]:
    """An rl_split(_all_turns) row as an SFT sample: its prompt, then the observation (the
    reference, or its head) wrapped in <predicted_observation> (no reasoning) as the target."""
    target = f"<predicted_observation>{observation}</predicted_observation>"
    return [*row["prompt"], {"role": "assistant", "content": target}]


def read_sft_split(paths: Sequence[Path]) -> DatasetDict:
    """The `messages` of sft_split partitions, as "train" and "validation" (may be empty)."""
    stale = [str(p) for p in paths if "split" not in pq.read_schema(p).names]
    if stale:
        raise ValueError(f"{stale}: sft_split written before its train / validation `split` "
                         "column: materialize sft_split again")
    rows = read_table(paths, ["messages", "split"], SFT_SPLIT.name)
    return DatasetDict({name: Dataset(part) for name, part in
                        by_split(rows, f"{[str(p) for p in paths]}").items()})


def read_rl_split_as_sft(paths: Sequence[Path], tokenizer: PreTrainedTokenizerFast,
                         split: SftSplitConfig | None = None) -> Dataset:
    """rl_split(_all_turns) partitions as SFT samples under sft_split's budgets (so the Echo
    Trap ablation differs from sft_split in which turns it trains on, not in their size): the
    prompt fitted to split.max_prompt_tokens, the target the reference's head."""
    split = split or SftSplitConfig()
    rows = read_columns(paths, ["prompt", "prompt_tokens", "reference_observation"],
                        RL_SPLIT.name)
    rows, _ = fit_prompts(rows, tokenizer, split.max_prompt_tokens, f"{[str(p) for p in paths]}")
    return rows.map(
        lambda row: {"messages": messages_from_rl_row(row, observation_head(
            row["reference_observation"], tokenizer, split.max_target_observation_tokens))},
        remove_columns=rows.column_names)


def tokenize_dataset(samples: Dataset, tokenizer: PreTrainedTokenizerFast,
                     max_length: int) -> Dataset:
    return samples.map(lambda row: tokenize_sample(row["messages"], tokenizer, max_length),
                       remove_columns=samples.column_names, desc="tokenizing SFT samples")


def train_sft(samples: Dataset, start_dir: Path, out_dir: Path,
              config: SftConfig = SftConfig(),
              callbacks: Sequence[TrainerCallback] = (),
              validation: Dataset | None = None) -> TrainingLog:
    """Fine-tune the model in `start_dir` (CPT folder) on `samples` and write the SFT folder to
    `out_dir`; with `validation` samples, evaluate on them at the end (log.eval_loss)."""
    if len(samples) == 0:
        raise ValueError("no SFT training samples (is every trajectory held out for validation?)")
    tokenizer, model_config, model = continue_from(start_dir, config.model)
    log, resume_from = start_log("sft", out_dir, model, model_config, config)
    args = TrainingArguments(**trainer_arguments(out_dir, config.steps, model_config),
                             remove_unused_columns=False,
                             # evaluate() keeps only the loss: gathering the logits of the
                             # validation set would hold samples x length x vocab floats
                             prediction_loss_only=True,
                             per_device_eval_batch_size=config.steps.batch_size)
    trainer = WeightedLossTrainer(
        model=model, args=args, processing_class=tokenizer,
        train_dataset=tokenize_dataset(samples, tokenizer, config.max_length),
        eval_dataset=(tokenize_dataset(validation, tokenizer, config.max_length)
                      if validation is not None and len(validation) else None),
        data_collator=WeightedCollator(tokenizer.pad_token_id))
    return train_and_save(trainer, log, resume_from, tokenizer, out_dir, callbacks)

