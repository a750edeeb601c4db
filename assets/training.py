"""Training stage: cpt_corpus -> cpt_model -> sft_model -> rl_model (GSPO, hybrid reward).

Each asset trains one stage with the `training` library and writes a Hugging Face folder to
{data}/models/<asset name>/ (config.json, model.safetensors, tokenizer files, training_log.json,
loss_curve.png). Interrupted runs resume from their last checkpoint. The default model is a tiny
Llama trained from scratch on CPU; run config `checkpoint` / `dtype` / `device` fine-tunes a real
local model on a GPU instead (README, "Training on a GPU").
"""


import base64
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import dagster as dg
from transformers import AutoModelForCausalLM

from assets.resources import WorldtraceStorage
from assets.table_metadata import reads, records_table
from bench.tables import AGENTWORLDBENCH
from training.ablation import AblationConfig, bench_samples, configure, run_ablation
from training.ablation_report import markdown, write_report
from training.cpt import CptConfig
from training.gspo import GspoConfig
from training.model_config import ModelConfig, parameter_count
from training.reward import hybrid_scorer
from training.sft import SftConfig
from training.sft_split import budgets_named
from training.stages import run_cpt, run_rl, run_sft, save_untrained, with_steps
from training.tables import (
    ABLATION_TABLE,
    CPT_CORPUS,
    CPT_MODEL,
    RL_MODEL,
    RL_SPLIT,
    RL_SPLIT_ALL_TURNS,
    SFT_MODEL,
    SFT_SPLIT,
    TOKENIZER,
)
from training.training_log import PLOT_FILE, TrainingLog

GROUP = "training"
# A model is a Hugging Face folder (safetensors) trained with PyTorch, not a Parquet table.
MODEL_KINDS = {"pytorch", "huggingface"}
StageConfig = TypeVar("StageConfig", CptConfig, SftConfig, GspoConfig)


class TrainingSettings(dg.Config):
    """Run config of a training asset (empty = the CPU defaults of the library)."""

    max_steps: int | None = None
    batch_size: int | None = None
    checkpoint: str | None = None  # local HF folder to start from (CPT: instead of scratch)
    dtype: str = "float32"  # bfloat16 on a GPU
    device: str = "auto"  # cuda when present, else cpu
    lora_rank: int = 0  # LoRA adapters (peft) on a checkpoint; 0: full fine-tuning
    cpu_threads: int = ModelConfig.cpu_threads  # 2 for a real base: its matrices use both
    # sample / prompt / answer lengths: "tiny" or "real_base" (training.sft_split.BUDGETS)
    budgets: str = "tiny"
    learning_rate: float | None = None

    def apply(self, config: StageConfig) -> StageConfig:
        """The stage's config with these settings (`checkpoint` on SFT or RL starts that
        stage from the named folder instead of the previous stage's)."""
        model = replace(config.model, checkpoint=self.checkpoint, dtype=self.dtype,
                        device=self.device, lora_rank=self.lora_rank,
                        cpu_threads=self.cpu_threads)
        steps = with_steps(config.steps, self.max_steps, self.batch_size)
        if self.learning_rate:
            steps = replace(steps, learning_rate=self.learning_rate)
        budgets = budgets_named(self.budgets)
        if isinstance(config, SftConfig):
            config = replace(config, max_length=budgets.sample_tokens)
        elif isinstance(config, GspoConfig):
            config = replace(config, max_prompt_tokens=budgets.prompt_tokens,
                             max_completion_length=budgets.answer_tokens)
        return replace(config, model=model, steps=steps)


def training_metadata(log: TrainingLog, folder: Path) -> dict:
    """Loss curve (table and PNG), tokens seen, wall time, tokens/s of one trained folder."""
    image = base64.b64encode((folder / PLOT_FILE).read_bytes()).decode()
    curve = [{"step": p["step"], "loss": round(p["loss"], 4)} for p in log.loss_curve]
    metadata = {
        "model_dir": dg.MetadataValue.path(str(folder)),
        "model": log.model,
        "parameters": log.parameters,
        "steps": log.steps,
        "tokens_seen": log.tokens_seen,
        "wall_seconds": round(log.wall_seconds, 1),
        "tokens_per_second": round(log.tokens_per_second, 1),
        "final_loss": round(log.final_loss, 4) if log.final_loss is not None else None,
        "resumed_from_step": log.resumed_from_step,
        "loss_curve": dg.MetadataValue.md(records_table(curve)),
        "curve_plot": dg.MetadataValue.md(f"![{log.stage}](data:image/png;base64,{image})"),
    }
    if log.eval_loss is not None:  # SFT: held-out trajectories, target tokens only
        metadata["eval_loss"] = round(log.eval_loss, 4)
        metadata["validation_samples"] = log.validation_samples
    if log.reward_curve:
        metadata["reward_curve"] = dg.MetadataValue.md(records_table(
            [{"step": p["step"], "reward": round(p["reward"], 3)} for p in log.reward_curve]))
        metadata["final_reward"] = round(log.reward_curve[-1]["reward"], 3)
    return metadata


def _result(context: dg.AssetExecutionContext, log: TrainingLog, folder: Path
            ) -> dg.MaterializeResult:
    context.log.info(log.summary())
    return dg.MaterializeResult(metadata=training_metadata(log, folder))


class UntrainedSettings(dg.Config):
    """`base`: a pretrained base folder is the untrained model (empty: the tiny model)."""

    base: str = ""


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER), kinds=MODEL_KINDS)
def untrained_model(context: dg.AssetExecutionContext, config: UntrainedSettings,
                    storage: WorldtraceStorage) -> dg.MaterializeResult:
    """The model cpt_model starts from, untrained: the same architecture and tokenizer,
    randomly initialised (seeded), or the pretrained base as it is. The bench scores it beside
    the trained models, so "the trained model beats the untrained one" is measured, not
    assumed."""
    config = replace(CptConfig().model, checkpoint=config.base or None)
    folder = save_untrained(storage.data_path, config)
    parameters = parameter_count(AutoModelForCausalLM.from_pretrained(str(folder)))
    context.log.info(f"untrained {config} ({parameters:,} parameters) at {folder}")
    return dg.MaterializeResult(metadata={"model_dir": dg.MetadataValue.path(str(folder)),
                                          "model": str(config), "parameters": parameters,
                                          "seed": config.seed})


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, CPT_CORPUS), kinds=MODEL_KINDS)
def cpt_model(context: dg.AssetExecutionContext, config: TrainingSettings,
              storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Continued pre-training on the packed cpt_corpus of every domain, the causal LM loss
    weighted per token by the turn labels' loss weights (low-information turns stay in the
    context and weigh less)."""
    log = run_cpt(storage.data_path, config.apply(CptConfig()))
    return _result(context, log, CPT_MODEL.dir(storage.data_path))


@dg.asset(group_name=GROUP, deps=reads(CPT_MODEL, SFT_SPLIT), kinds=MODEL_KINDS)
def sft_model(context: dg.AssetExecutionContext, config: TrainingSettings,
              storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Supervised fine-tuning from cpt_model on sft_split's train rows: the loss is on the
    assistant target (`<think>...</think><predicted_observation>...</predicted_observation>`)
    only; eval_loss is that loss on the validation rows (held-out trajectories) at the end."""
    log = run_sft(storage.data_path, config.apply(SftConfig()))
    return _result(context, log, SFT_MODEL.dir(storage.data_path))


@dg.asset(group_name=GROUP, deps=reads(SFT_MODEL, RL_SPLIT), kinds=MODEL_KINDS)
def rl_model(context: dg.AssetExecutionContext, config: TrainingSettings,
             storage: WorldtraceStorage) -> dg.MaterializeResult:
    """GSPO (sequence-level importance ratios, slightly off-policy) from sft_model on rl_split,
    rewarded by the bench's hybrid reward: rubric 5-25 plus the rule verifier 5-25 where the
    domain has one; 0 for output without a well-formed `<predicted_observation>`."""
    log, too_long = run_rl(storage.data_path, config.apply(GspoConfig()), hybrid_scorer)
    result = _result(context, log, RL_MODEL.dir(storage.data_path))
    return dg.MaterializeResult(metadata={**result.metadata,
                                          "prompts_trimmed_to_budget": too_long})


class AblationSettings(dg.Config):
    """Run config of the ablation (empty = every variant with the library's default steps)."""

    variants: list[str] = []
    cpt_steps: int | None = None
    sft_steps: int | None = None
    rl_steps: int | None = None
    max_new_tokens: int = AblationConfig.max_new_tokens
    bench_dir: str | None = None  # default {data}/agentworldbench/official
    samples_per_domain: int = 20  # every variant generates on CPU; 0 = all samples


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, CPT_CORPUS, SFT_SPLIT, RL_SPLIT,
                                       RL_SPLIT_ALL_TURNS, AGENTWORLDBENCH))
def ablation_table(context: dg.AssetExecutionContext, config: AblationSettings,
                   storage: WorldtraceStorage) -> dg.MaterializeResult:
    """CPT only, CPT + SFT, CPT + SFT + RL, CPT without loss weighting, SFT on every turn vs one
    turn per trajectory, the untrained model and the copy-last baseline, each scored on the
    same bench samples: per-domain scores and Overall with bootstrap 95 % intervals, echo and
    malformed rates, and the paired differences (weighted - unweighted CPT after SFT, ...)."""
    data = storage.data_path
    samples, problems = bench_samples(data, Path(config.bench_dir) if config.bench_dir else None,
                                      config.samples_per_domain or None)
    settings = configure(config.variants, config.cpt_steps, config.sft_steps, config.rl_steps,
                         config.max_new_tokens)
    report = run_ablation(data, samples, settings)
    path = write_report(report, ABLATION_TABLE.dir(data))
    context.log.info("\n" + markdown(report))
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(report.rows),
        "paired_clear_of_zero": sum(p["clear_of_zero"] for p in report.paired),
        "path": dg.MetadataValue.path(str(path)),
        "bench_samples": len(samples),
        "bench_records_skipped": len(problems),
        "table": dg.MetadataValue.md(markdown(report)),
    })
