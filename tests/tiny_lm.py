"""A tiny random-init model folder for the serving and predictor tests (no download).

Built the way the training stage builds its models: the test chat tokenizer of
tests/training_fixtures.py (CONTRACTS "tokenizer": byte-level BPE, our special tokens, a chat
template) and `training.model_config.new_model` (a Llama with the stop tokens in its generation
config), saved as a Hugging Face folder, so it loads exactly like {data}/models/sft_model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.training_fixtures import make_tokenizer
from training.model_config import ModelConfig, new_model

# 8192 positions: a judge prompt is a few thousand tokens with a 300-token vocabulary.
TINY = ModelConfig(hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64,
                   max_positions=8192, device="cpu", cpu_threads=0)


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Train a 300-token BPE, initialise a 2-layer Llama, save both to `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = make_tokenizer(folder)
    config = ModelConfig(**{**vars(TINY), "seed": seed})
    new_model(config, tokenizer).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny causal LM folder, built once per test session."""
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny_lm")


@pytest.fixture(scope="module")
def torch_one_thread():
    """One intra-op thread while a module's tiny models run: on a shared, oversubscribed CPU,
    torch's spinning worker threads make a 40k-parameter model ~7x slower, not faster."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
