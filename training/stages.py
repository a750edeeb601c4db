"""The CPT -> SFT -> RL chain over the data directory's split tables (used by the assets, the
ablation and the benchmark, so all three train the same way).

Inputs by the data contracts: {data}/tokenizer/, {data}/cpt_corpus, {data}/sft_split,
{data}/rl_split(_all_turns) (Parquet, one partition per domain). Outputs: {data}/models/<name>/.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sources.schema import DOMAINS
from sources.storage import atomic_path
from sources.tables import Table
from training.cpt import CptConfig, read_cpt_corpus, train_cpt
from training.gspo import GspoConfig, Scorer, read_rl_split, train_gspo
from training.model_config import ModelConfig, load_tokenizer, new_model
from training.runner import StepConfig
from training.sft import SftConfig, read_rl_split_as_sft, read_sft_split, train_sft
from training.tables import (
    CPT_CORPUS,
    CPT_MODEL,
    RL_MODEL,
    RL_SPLIT,
    SFT_MODEL,
    SFT_SPLIT,
    TOKENIZER,
    UNTRAINED_MODEL,
    model_dir,
)
from training.training_log import TrainingLog


def with_steps(config: StepConfig, max_steps: int | None, batch_size: int | None) -> StepConfig:
    """Override the step count / batch size where given (run config, ablation, benchmark)."""
    return replace(config, **{k: v for k, v in (("max_steps", max_steps),
                                                ("batch_size", batch_size)) if v})


def partitions(data_dir: Path, table: Table) -> list[Path]:
    """Every domain partition of a table, sorted (a stable training order)."""
    paths = table.paths(data_dir, tuple(sorted(DOMAINS)))
    if not paths:
        raise FileNotFoundError(f"no partitions of {table.name} under {data_dir}: "
                                "materialize it first")
    return paths


def tokenizer_dir(data_dir: Path, config: ModelConfig) -> Path:
    """The tokenizer a stage reads: a checkpoint's own, else the project's {data}/tokenizer."""
    return Path(config.checkpoint) if config.checkpoint else TOKENIZER.dir(data_dir)


def save_untrained(data_dir: Path, config: ModelConfig, name: str = UNTRAINED_MODEL.name) -> Path:
    """The model CPT starts from, untrained: the same architecture and tokenizer, initialised
    with the config's seed, saved as a folder (the floor a trained model must rise above); with
    a checkpoint, that pretrained base as it is."""
    tokenizer = load_tokenizer(tokenizer_dir(data_dir, config))
    out = model_dir(data_dir, name)
    with atomic_path(out) as tmp:
        new_model(config, tokenizer).save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
    return out


def run_cpt(data_dir: Path, config: CptConfig, name: str = CPT_MODEL.name) -> TrainingLog:
    corpus = read_cpt_corpus(partitions(data_dir, CPT_CORPUS))
    return train_cpt(corpus, tokenizer_dir(data_dir, config.model), model_dir(data_dir, name),
                     config)


def run_sft(data_dir: Path, config: SftConfig, start: str = CPT_MODEL.name,
            name: str = SFT_MODEL.name, table: Table = SFT_SPLIT) -> TrainingLog:
    """SFT on sft_split's train rows, evaluated on its validation rows; or on an rl split's
    prompts + references (the Echo Trap ablation: every row trains, no evaluation)."""
    paths = partitions(data_dir, table)
    if table is SFT_SPLIT:
        splits = read_sft_split(paths)
        samples, validation = splits["train"], splits["validation"]
    else:
        start_dir = Path(config.model.checkpoint or model_dir(data_dir, start))
        samples = read_rl_split_as_sft(paths, load_tokenizer(start_dir))
        validation = None
    return train_sft(samples, model_dir(data_dir, start), model_dir(data_dir, name), config,
                     validation=validation)


def run_rl(data_dir: Path, config: GspoConfig, scorer: Scorer, start: str = SFT_MODEL.name,
           name: str = RL_MODEL.name) -> tuple[TrainingLog, int]:
    """GSPO on rl_split; also returns how many prompts had old turns dropped to fit."""
    tokenizer = load_tokenizer(model_dir(data_dir, start))
    prompts, too_long = read_rl_split(partitions(data_dir, RL_SPLIT), tokenizer,
                                      config.max_prompt_tokens)
    log = train_gspo(prompts, scorer, model_dir(data_dir, start), model_dir(data_dir, name), config)
    return log, too_long

