"""One way to run a stage: checkpoints to resume from, the training log, the final model folder.

Checkpoints go to {models}/_checkpoints/<name>/checkpoint-<step> (the Trainer's own layout, with
optimizer and RNG state); a rerun after an interruption resumes from the last one. The finished
model is written atomically to {models}/<name>/ as a Hugging Face folder (config.json,
model.safetensors, tokenizer files) with training_log.json and loss_curve.png beside it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, PreTrainedTokenizerFast, Trainer, TrainerCallback
from transformers.trainer_utils import get_last_checkpoint

from sources.storage import atomic_path
from training.model_config import (
    ModelConfig,
    load_tokenizer,
    merged,
    new_model,
    parameter_count,
)
from training.training_log import LOG_FILE, PLOT_FILE, TrainingLog, TrainingLogCallback, plot_curves

CHECKPOINTS = "_checkpoints"


@dataclass(frozen=True)
class StepConfig:
    """Optimisation settings shared by the stages (defaults sized for two CPU cores)."""

    max_steps: int = 60
    batch_size: int = 8
    gradient_accumulation: int = 1
    learning_rate: float = 1e-3
    warmup_steps: int = 5
    logging_steps: int = 5
    save_steps: int = 20
    seed: int = 0


def checkpoint_dir(out_dir: Path) -> Path:
    return Path(out_dir).parent / CHECKPOINTS / Path(out_dir).name


def trainer_arguments(out_dir: Path, steps: StepConfig, model: ModelConfig) -> dict[str, Any]:
    """TrainingArguments fields common to CPT, SFT and GRPO (each stage adds its own)."""
    on_cpu = model.torch_device == "cpu"
    return dict(
        output_dir=str(checkpoint_dir(out_dir)),
        max_steps=steps.max_steps,
        per_device_train_batch_size=steps.batch_size,
        gradient_accumulation_steps=steps.gradient_accumulation,
        learning_rate=steps.learning_rate,
        warmup_steps=steps.warmup_steps,
        lr_scheduler_type="cosine",
        logging_steps=min(steps.logging_steps, steps.max_steps),  # a short run logs its end
        save_strategy="steps",
        save_steps=steps.save_steps,
        save_total_limit=1,
        seed=steps.seed,
        data_seed=steps.seed,
        use_cpu=on_cpu,
        bf16=model.dtype == "bfloat16" and not on_cpu,
        report_to="none",
        dataloader_num_workers=0,
        include_num_input_tokens_seen="non_padding",
    )


def start_log(stage: str, out_dir: Path, model: PreTrainedModel, model_config: ModelConfig,
              config: Any) -> tuple[TrainingLog, str | None]:
    """A fresh log, or the last checkpoint's log and path when the run is being resumed."""
    folder = checkpoint_dir(out_dir)
    last = get_last_checkpoint(str(folder)) if folder.is_dir() else None
    if last and (Path(last) / LOG_FILE).exists():
        return TrainingLog.read(Path(last)), last
    log = TrainingLog(stage=stage, model=str(model_config), parameters=parameter_count(model),
                      config=_plain(replace(config, model=model_config)))
    if model_config.lora_rank:
        print(f"{stage}: LoRA rank {model_config.lora_rank}, "
              f"{parameter_count(model, trainable=True):,} of {log.parameters:,} parameters "
              "train", flush=True)
    return log, last


def continue_from(start_dir: Path, model: ModelConfig
                  ) -> tuple[PreTrainedTokenizerFast, ModelConfig, PreTrainedModel]:
    """Tokenizer and model of the previous stage's folder, or of the checkpoint the config
    names (e.g. SFT straight from a real model, skipping CPT), and the config that says so."""
    if not model.checkpoint:
        model = replace(model, checkpoint=str(start_dir))
    tokenizer = load_tokenizer(Path(model.checkpoint))
    return tokenizer, model, new_model(model, tokenizer)


def train_and_save(trainer: Trainer, log: TrainingLog, resume_from: str | None,
                   tokenizer: PreTrainedTokenizerFast, out_dir: Path,
                   callbacks: Sequence[TrainerCallback] = ()) -> TrainingLog:
    """Train (resuming when a checkpoint exists), evaluate once on the trainer's eval_dataset
    when it has one (cheap: once, not at every logging step), then write the model folder
    atomically."""
    for callback in (TrainingLogCallback(log), *callbacks):
        trainer.add_callback(callback)
    if resume_from:
        print(f"{log.stage}: resuming from {resume_from}", flush=True)
    trainer.train(resume_from_checkpoint=resume_from)
    if trainer.eval_dataset is not None and len(trainer.eval_dataset):
        log.eval_loss = float(trainer.evaluate()["eval_loss"])
        log.validation_samples = len(trainer.eval_dataset)
    with atomic_path(out_dir) as tmp:
        if hasattr(trainer.model, "merge_and_unload"):  # LoRA: save plain merged weights
            merged(trainer.model).save_pretrained(str(tmp))
        else:
            trainer.save_model(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        log.write(tmp)
        plot_curves(log, tmp / PLOT_FILE)
    shutil.rmtree(checkpoint_dir(out_dir), ignore_errors=True)  # finished: nothing to resume
    print(log.summary(), flush=True)
    return log


def _plain(config: Any) -> dict[str, Any]:
    """A config dataclass as JSON-ready values (paths as text)."""
    return json.loads(json.dumps(asdict(config), default=str))
