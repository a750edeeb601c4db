"""Tiny in-test data in the CONTRACTS layout: a chat tokenizer, cpt rows, sft and rl samples.

Small and seeded so the training tests take seconds on one CPU core; the shapes match what the
splits helper writes (tokenizer folder, cpt_corpus rows, sft_split messages, rl_split prompts).
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

SPECIAL_TOKENS = ["<pad>", "<eos>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>",
                  "<think>", "</think>", "<predicted_observation>", "</predicted_observation>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")

TEXTS = [
    "ls -la\ntotal 4\n-rw-r--r-- 1 user user 12 notes.txt",
    "cat notes.txt\nbuy milk\ncall bob",
    "grep error log.txt\nerror: disk full\nerror: retry",
    "python -m pytest -q\n3 passed in 0.12s",
    "git status\nOn branch main\nnothing to commit",
    "search weather paris\n1. Paris weather today: sunny 21C",
] * 4


def make_tokenizer(folder: Path, vocab_size: int = 300) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer with the chat special tokens, saved to `folder`."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(TEXTS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>",
                                   eos_token="<eos>", chat_template=CHAT_TEMPLATE)
    fast.save_pretrained(str(folder))
    return fast


def cpt_rows(tokenizer: PreTrainedTokenizerFast, length: int = 48) -> list[dict]:
    """Packed sequences: action tokens weight 1.0, observation tokens alternately 1.0 and 0.1."""
    rows = []
    for i, text in enumerate(TEXTS):
        action, observation = text.split("\n", 1)
        ids_a = tokenizer(action + "\n")["input_ids"]
        ids_o = tokenizer(observation)["input_ids"] + [tokenizer.eos_token_id]
        weight = 1.0 if i % 2 else 0.1
        ids = (ids_a + ids_o)[:length]
        weights = ([1.0] * len(ids_a) + [weight] * len(ids_o))[:length]
        rows.append({"input_ids": ids, "loss_weights": weights, "trajectory_ids": [f"t{i}"],
                     "domain": "terminal"})
    return rows


def sft_messages(text: str, variant: int = 0) -> list[dict[str, str]]:
    """One sft_split sample: system, the action as user, the target as assistant."""
    action, observation = text.split("\n", 1)
    return [{"role": "system", "content": f"You are a world model (variant {variant})."},
            {"role": "user", "content": action},
            {"role": "assistant", "content": "<think>the command prints its output</think>"
                                             f"<predicted_observation>{observation}"
                                             "</predicted_observation>"}]


def rl_row(text: str, domain: str = "terminal", index: int = 0) -> dict:
    """One rl_split row for a one-command trajectory."""
    observation = text.split("\n", 1)[1]
    return {"prompt": sft_messages(text)[:-1], "reference_observation": observation,
            "domain": domain, "trajectory_id": f"{domain}-{index}", "turn_index": 0,
            "verifier": json.dumps({"domain": domain}), "prompt_tokens": 20}


def write_split_tables(data_dir: Path, domains: tuple[str, ...] = ("terminal", "search")) -> None:
    """tokenizer/, cpt_corpus, sft_split (every 4th sample in split "validation"), rl_split and
    rl_split_all_turns in the contract layout."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tokenizer = make_tokenizer(data_dir / "tokenizer")
    for d, domain in enumerate(domains):
        texts = TEXTS[d::len(domains)]
        tables = {
            "cpt_corpus": [{**row, "domain": domain} for row in cpt_rows(tokenizer)[d::2]],
            "sft_split": [{"messages": sft_messages(t, i), "domain": domain,
                           "trajectory_id": f"t{i}", "turn_index": 0, "prompt_variant": i % 10,
                           "reasoning_source": "deterministic",
                           "split": "validation" if i % 4 == 3 else "train"}
                          for i, t in enumerate(texts)],
            "rl_split": [rl_row(t, domain, i) for i, t in enumerate(texts)],
            "rl_split_all_turns": [rl_row(t, domain, i) for i, t in enumerate(texts + texts[:3])],
        }
        for table, rows in tables.items():
            path = data_dir / table / f"domain={domain}" / "part-0.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows), path)
