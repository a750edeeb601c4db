"""Continued pre-training (CPT): causal LM on the packed cpt_corpus, loss weighted per token.

Each cpt_corpus row is one packed sequence with a weight per token (from turn_labels through
offsets): low-information turns stay in the context and weigh less. From scratch by default
(the tiny decoder), or from a local checkpoint (ModelConfig.checkpoint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc
from datasets import Dataset
from transformers import TrainerCallback, TrainingArguments

from training.model_config import ModelConfig, load_tokenizer, new_model
from training.runner import StepConfig, start_log, train_and_save, trainer_arguments
from training.split_tables import read_columns
from training.tables import CPT_CORPUS
from training.training_log import TrainingLog
from training.weighted_loss import WeightedCollator, WeightedLossTrainer

CPT_COLUMNS = ["input_ids", "loss_weights"]


@dataclass(frozen=True)
class CptConfig:
    """CPT run: model, steps, and whether the per-token loss weights are used."""

    model: ModelConfig = field(default_factory=ModelConfig)
    steps: StepConfig = field(default_factory=lambda: StepConfig(max_steps=40, batch_size=8,
                                                                 learning_rate=2e-3))
    use_loss_weights: bool = True

    def __str__(self) -> str:
        weighting = "weighted" if self.use_loss_weights else "unweighted"
        return f"cpt_{self.model}_{self.steps.max_steps}st_{weighting}"


def read_cpt_corpus(paths: Sequence[Path]) -> Dataset:
    """The packed sequences of the given cpt_corpus partitions (only ids and weights)."""
    return read_columns(paths, CPT_COLUMNS, CPT_CORPUS.name)


def check_vocabulary(corpus: Dataset, vocab_size: int, tokenizer_dir: Path) -> None:
    """cpt_corpus holds token ids of {data}/tokenizer: a checkpoint with another vocabulary
    would train on wrong tokens, so ids past its embedding table are an error."""
    top = pc.max(pc.list_flatten(corpus.data.column("input_ids"))).as_py()
    if top >= vocab_size:
        raise ValueError(f"cpt_corpus has token id {top} but the model has {vocab_size} "
                         f"embeddings: build cpt_corpus with this model's tokenizer (it was "
                         f"tokenized with {tokenizer_dir})")


def train_cpt(corpus: Dataset, tokenizer_dir: Path, out_dir: Path,
              config: CptConfig = CptConfig(),
              callbacks: Sequence[TrainerCallback] = ()) -> TrainingLog:
    """Train on the corpus and write the model folder to `out_dir` (resumes a broken run)."""
    tokenizer = load_tokenizer(tokenizer_dir)
    model = new_model(config.model, tokenizer)
    check_vocabulary(corpus, model.get_input_embeddings().num_embeddings, tokenizer_dir)
    log, resume_from = start_log("cpt", out_dir, model, config.model, config)
    args = TrainingArguments(**trainer_arguments(out_dir, config.steps, config.model),
                             remove_unused_columns=False)
    trainer = WeightedLossTrainer(
        model=model, args=args, train_dataset=corpus, processing_class=tokenizer,
        data_collator=WeightedCollator(tokenizer.pad_token_id,
                                       uniform_weights=not config.use_loss_weights))
    return train_and_save(trainer, log, resume_from, tokenizer, out_dir, callbacks)
