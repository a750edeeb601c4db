"""A tiny random-init Llama model folder with a tokenizer trained here (no download).

The tokenizer follows CONTRACTS "tokenizer": byte-level BPE, our special tokens and a chat
template, so the folder loads exactly like {data}/models/sft_model does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIAL_TOKENS = ["<pad>", "<eos>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>",
                  "<think>", "</think>", "<predicted_observation>", "</predicted_observation>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")
CORPUS = [
    "$ ls -la\ntotal 8\n-rw-r--r-- 1 user user 42 notes.txt\n",
    '{"result": {"content": [{"type": "text", "text": "ok"}]}, "isError": false}',
    "**Environment Observation:**\nFAILED tests/test_app.py::test_login - AssertionError",
    "<think>it lists files</think><predicted_observation>notes.txt</predicted_observation>",
    "[1] Search result: world models for agents (arxiv.org)",
]


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Train a ~300-token BPE, initialise a 2-layer Llama, save both to `folder`."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(CORPUS * 4, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", eos_token="<eos>",
                                        additional_special_tokens=SPECIAL_TOKENS[2:])
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=8192, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=None)
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
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
