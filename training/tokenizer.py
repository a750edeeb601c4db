"""The tokenizer: byte-level BPE trained here on the train pool, with the chat special tokens.

Byte-level, so any byte sequence (a binary dump in a terminal, an emoji in a page) encodes
without an unknown token. Trained on the train pool only (the bench pool is not seen), from the
texts the models will read: system prompts, actions and observations, at most
`max_chars_per_domain` characters per domain so one verbose domain cannot own the vocabulary
and training stays a few seconds. Saved as a `PreTrainedTokenizerFast` folder with a chat
template, so `apply_chat_template(messages)` writes the layout of render.py:
`<|system|>...<|end|><|user|>...<|end|><|assistant|>...<|end|>`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from quality.tables import TRAJECTORY_SPLIT
from sources.storage import atomic_path
from training.render import read_episodes

PAD, EOS = "<pad>", "<eos>"
CHAT_TOKENS = ["<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
REASONING_TOKENS = ["<think>", "</think>", "<predicted_observation>", "</predicted_observation>"]
SPECIAL_TOKENS = [PAD, EOS, *CHAT_TOKENS, *REASONING_TOKENS]
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@dataclass(frozen=True)
class TokenizerConfig:
    """Vocabulary size (special tokens included) and the training text budget."""

    vocab_size: int = 4096
    min_frequency: int = 2
    max_chars_per_domain: int = 400_000

    def __str__(self) -> str:
        return f"bytebpe_v{self.vocab_size}_f{self.min_frequency}"


@dataclass
class TokenizerStats:
    """What the tokenizer was trained on."""

    config: str = ""
    texts: int = 0
    chars: int = 0
    vocab_size: int = 0
    trajectories: int = 0


def training_texts(data_dir: Path, domains: Sequence[str], config: TokenizerConfig,
                   stats: TokenizerStats) -> Iterator[str]:
    """System prompt, actions and observations of train episodes, up to the per-domain budget."""
    for domain in domains:
        if not TRAJECTORY_SPLIT.path(data_dir, domain).exists():
            continue
        budget = config.max_chars_per_domain
        for episode in read_episodes(data_dir, domain, "train"):
            stats.trajectories += 1
            _, system = episode.system()
            for text in (system, *(t for s in episode.steps for t in (s.action, s.observation))):
                text = text[:budget]
                budget -= len(text)
                stats.texts += 1
                stats.chars += len(text)
                yield text
                if budget <= 0:
                    break
            if budget <= 0:
                break


def train_tokenizer(data_dir: Path, out_dir: Path, domains: Sequence[str],
                    config: TokenizerConfig = TokenizerConfig()) -> TokenizerStats:
    """Train on the train pool and save the folder atomically; return what it saw."""
    stats = TokenizerStats(config=str(config))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=config.vocab_size,
                                  min_frequency=config.min_frequency,
                                  special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(training_texts(Path(data_dir), domains, config, stats), trainer)
    if stats.texts == 0:
        raise ValueError(f"{data_dir}: no train trajectories to train the tokenizer on")
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token=PAD, eos_token=EOS,
                                   additional_special_tokens=[*CHAT_TOKENS, *REASONING_TOKENS],
                                   chat_template=CHAT_TEMPLATE)
    with atomic_path(Path(out_dir)) as tmp:
        fast.save_pretrained(str(tmp))
    stats.vocab_size = len(fast)
    return stats


def load_tokenizer(folder: Path) -> PreTrainedTokenizerFast:
    """The saved tokenizer; an error naming the folder when it is not there."""
    if not (Path(folder) / "tokenizer.json").exists():
        raise FileNotFoundError(f"{folder}: no tokenizer.json (materialize `tokenizer` first)")
    return PreTrainedTokenizerFast.from_pretrained(str(folder))
