"""The tables and folders training builds: tokenizer, CPT corpus, SFT and RL splits, models.

Declared once here (sources/tables.py is the registry). The splits are also exported as a
Hugging Face DatasetDict beside their partitions ({data}/{table}/hf, training/export.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from sources.tables import Table

MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
_SFT_SCHEMA = pa.schema([
    ("messages", pa.list_(MESSAGE)), ("domain", pa.string()), ("trajectory_id", pa.string()),
    ("turn_index", pa.int32()), ("prompt_variant", pa.int32()),
    ("reasoning_source", pa.string()), ("split", pa.string()),
])
_SFT_DOCS = {
    "messages": "system (a prompt variant with the task), history in the bench's layout "
                "(user = '### Turn N / **Action:**', assistant = '**Environment Observation:**'"
                "), the current action, then the assistant target "
                "<think>...</think><predicted_observation>...</predicted_observation>",
    "domain": "domain partition",
    "trajectory_id": "the train trajectory the sample comes from",
    "turn_index": "the target turn (0-based)",
    "prompt_variant": "which of the 10 system prompt variants (0..9)",
    "reasoning_source": "'deterministic' (rationale from the data) or 'teacher:<model>'",
    "split": "'train' or 'validation' (held out by a stable hash of the trajectory id and the "
             "seed: every sample of a trajectory is on the same side)",
}

_CPT_SCHEMA = pa.schema([
    ("input_ids", pa.list_(pa.int32())), ("loss_weights", pa.list_(pa.float32())),
    ("trajectory_ids", pa.list_(pa.string())), ("domain", pa.string()),
])
_CPT_DOCS = {
    "input_ids": "token ids of one packed sequence (seq_len tokens; the domain's last row may "
                 "be shorter)",
    "loss_weights": "per-token loss weight: system prompt and actions 1.0, observation tokens "
                    "their turn's turn_labels.loss_weight",
    "trajectory_ids": "the train trajectories whose tokens are in this row, in order",
    "domain": "domain partition",
}

_RL_SCHEMA = pa.schema([
    ("prompt", pa.list_(MESSAGE)), ("reference_observation", pa.string()),
    ("domain", pa.string()), ("trajectory_id", pa.string()), ("turn_index", pa.int32()),
    ("verifier", pa.string()), ("prompt_tokens", pa.int32()),
])
_RL_DOCS = {
    "prompt": "system (a prompt variant with the task), history in the bench's layout (user = "
              "'### Turn N / **Action:**', assistant = '**Environment Observation:**'; oldest "
              "turns dropped to fit the budget), the current action",
    "reference_observation": "the real next observation",
    "domain": "domain partition",
    "trajectory_id": "the train trajectory",
    "turn_index": "the target turn (0-based)",
    "verifier": "JSON spec of the domain's rule verifier (bench.judges.rules.verifier_spec)",
    "prompt_tokens": "tokens of the prompt with the chat template and generation prompt",
}


TOKENIZER = Table(
    "tokenizer", "training",
    "The byte-level BPE tokenizer trained on the train pool's scrubbed text, with the chat "
    "template every model uses (a Hugging Face tokenizer folder).",
    partitioned=False, storage="folder")
CPT_CORPUS = Table(
    "cpt_corpus", "training",
    "Packed token sequences of the train pool for continued pre-training, with a per-token loss "
    "weight: observations weighted by their turn's loss weight.",
    _CPT_SCHEMA, _CPT_DOCS)
SFT_SPLIT = Table(
    "sft_split", "training",
    "SFT conversations from the train pool: system prompt variant, history, action, and the "
    "target (a short rationale in think tags, then the predicted observation); train and "
    "validation rows.",
    _SFT_SCHEMA, _SFT_DOCS)
RL_SPLIT = Table(
    "rl_split", "training",
    "RL prompts, one turn per train trajectory, with the reference observation and the rule "
    "verifier's spec (GSPO's reward inputs).",
    _RL_SCHEMA, _RL_DOCS)
RL_SPLIT_ALL_TURNS = Table(
    "rl_split_all_turns", "training",
    "RL prompts of every turn of each train trajectory (the Echo Trap ablation's data).",
    _RL_SCHEMA, _RL_DOCS)


MODELS_FOLDER = "models"


def model_table(name: str, description: str) -> Table:
    """A model folder: {data}/models/<name>/ (weights, config, tokenizer, training log)."""
    return Table(name, "training", description, partitioned=False, storage="folder",
                 folder=f"{MODELS_FOLDER}/{name}")


UNTRAINED_MODEL = model_table(
    "untrained_model", "The model CPT starts from, untrained: the floor a trained model must beat.")
CPT_MODEL = model_table("cpt_model", "The model after continued pre-training on cpt_corpus.")
SFT_MODEL = model_table("sft_model", "The world model after SFT on sft_split.")
RL_MODEL = model_table("rl_model", "The world model after GSPO on rl_split.")
MODELS = (UNTRAINED_MODEL, CPT_MODEL, SFT_MODEL, RL_MODEL)


def model_dir(data_dir: Path, name: str) -> Path:
    """{data}/models/<name>: a model table's folder, or an ablation variant's."""
    return Path(data_dir) / MODELS_FOLDER / name


def model_folders(data_dir: Path, names: Sequence[str] | None = None) -> list[Path]:
    """The folders under {data}/models: the named ones, or every one (the declared models, the
    ablation's and any a user put there), sorted; the bench runs those holding a model."""
    if names is None:
        return sorted((Path(data_dir) / MODELS_FOLDER).glob("*"))
    return [model_dir(data_dir, name) for name in names]

ABLATION_TABLE = Table(
    "ablation_table", "training",
    "The CPT / SFT / RL variants trained and scored on the same bench samples: per-domain "
    "scores, Overall, echo and malformed rates (ablation.csv, ablation.md).",
    partitioned=False, storage="folder", folder="ablation")
