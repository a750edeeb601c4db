"""Training: per-token loss weights reach the gradient exactly, SFT masks the prompt, trained
folders load back with transformers, runs resume, and GSPO raises the reward on a toy task."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from training_fixtures import (
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    TEXTS,
    cpt_rows,
    make_tokenizer,
    sft_messages,
)
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback

from training.cpt import CptConfig, train_cpt
from training.gspo import CompletionReward, GspoConfig, train_gspo
from training.model_config import ModelConfig, new_model
from training.runner import StepConfig, checkpoint_dir
from training.sft import SftConfig, messages_from_rl_row, tokenize_sample, train_sft
from training.training_log import LOG_FILE, PLOT_FILE
from training.weighted_loss import (
    IGNORE,
    WeightedCollator,
    weighted_causal_lm_loss,
    weighted_mean_loss_per_sample,
)

TINY_STEPS = StepConfig(max_steps=6, batch_size=4, logging_steps=2, save_steps=3)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tokenizer")
    make_tokenizer(folder)
    return folder


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dir: Path) -> PreTrainedTokenizerFast:
    return PreTrainedTokenizerFast.from_pretrained(str(tokenizer_dir))


@pytest.fixture(scope="module")
def cpt_folder(tokenizer_dir: Path, tokenizer: PreTrainedTokenizerFast,
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("models") / "cpt_model"
    train_cpt(Dataset.from_list(cpt_rows(tokenizer)), tokenizer_dir, out,
              CptConfig(steps=TINY_STEPS))
    return out


def _gradients(model: torch.nn.Module, batch: dict[str, torch.Tensor],
               weights: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad()
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    loss = weighted_causal_lm_loss(logits, batch["labels"], weights)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.fixture()
def model_and_batch(tokenizer: PreTrainedTokenizerFast):
    model = new_model(ModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                  intermediate_size=64), tokenizer)
    batch = WeightedCollator(tokenizer.pad_token_id)(cpt_rows(tokenizer)[:3])
    return model, batch


def test_zero_weight_gives_zero_gradient(model_and_batch) -> None:
    model, batch = model_and_batch
    loss, grads = _gradients(model, batch, torch.zeros_like(batch["loss_weights"]))
    assert loss.item() == 0.0
    assert all(torch.count_nonzero(g) == 0 for g in grads)
    # One token at weight 0 contributes nothing: same gradient as without that token's term.
    weights = batch["loss_weights"].clone()
    target = (0, 5)
    weights[target] = 0.0
    _, with_zero = _gradients(model, batch, weights)
    labels = batch["labels"].clone()
    labels[target] = IGNORE  # drop the term, keep N the same
    model.zero_grad()
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    n_targets = (batch["labels"][:, 1:] != IGNORE).sum()
    weighted_causal_lm_loss(logits, labels, weights, n_targets).backward()
    assert all(torch.allclose(a, p.grad, atol=1e-7, rtol=0) for a, p in
               zip(with_zero, model.parameters(), strict=True))


def test_halving_a_weight_halves_its_contribution(model_and_batch) -> None:
    model, batch = model_and_batch
    only = torch.zeros_like(batch["loss_weights"])
    only[1, 7] = 0.8
    loss_full, grads_full = _gradients(model, batch, only)
    loss_half, grads_half = _gradients(model, batch, only / 2)
    assert loss_full.item() > 0
    assert torch.equal(loss_half * 2, loss_full)  # exact: scaling by 1/2 is exact in floats
    assert all(torch.equal(h * 2, f) for h, f in zip(grads_half, grads_full, strict=True))
    # In a full batch, halving one weight removes exactly half of that token's share.
    weights = batch["loss_weights"].clone()
    weights[1, 7] = 0.8
    loss_all, _ = _gradients(model, batch, weights)
    weights[1, 7] = 0.4
    loss_all_half, _ = _gradients(model, batch, weights)
    assert torch.allclose(loss_all - loss_all_half, loss_full / 2, atol=1e-6, rtol=0)


def test_unweighted_collator_sets_every_real_token_to_one(tokenizer) -> None:
    rows = cpt_rows(tokenizer)[:2]
    batch = WeightedCollator(tokenizer.pad_token_id, uniform_weights=True)(rows)
    assert torch.equal(batch["loss_weights"], batch["attention_mask"].float())


def test_sft_weights_only_the_assistant_target(tokenizer) -> None:
    messages = sft_messages(TEXTS[2])
    sample = tokenize_sample(messages, tokenizer, max_length=512)
    ids, weights = sample["input_ids"], sample["loss_weights"]
    first = weights.index(1.0)
    assert set(weights[:first]) == {0.0} and set(weights[first:]) == {1.0}
    target = tokenizer.decode(ids[first:], skip_special_tokens=False)
    assert target == messages[-1]["content"] + "<|end|>"
    prompt = tokenizer.decode(ids[:first], skip_special_tokens=False)
    assert prompt.endswith("<|assistant|>") and messages[1]["content"] in prompt
    # Truncation keeps the end (the target).
    short = tokenize_sample(messages, tokenizer, max_length=len(ids) - first + 2)
    assert short["input_ids"] == ids[first - 2:]


def test_rl_row_becomes_sft_sample() -> None:
    row = {"prompt": [{"role": "user", "content": "ls"}], "reference_observation": "a.txt"}
    messages = messages_from_rl_row(row, row["reference_observation"])
    assert messages[-1] == {"role": "assistant",
                            "content": "<predicted_observation>a.txt</predicted_observation>"}


def test_cpt_folder_loads_with_transformers(cpt_folder: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(str(cpt_folder))
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(cpt_folder))
    log = json.loads((cpt_folder / LOG_FILE).read_text())
    assert log["steps"] == TINY_STEPS.max_steps and log["tokens_seen"] > 0
    assert log["tokens_per_second"] > 0 and len(log["loss_curve"]) == 3
    assert (cpt_folder / PLOT_FILE).stat().st_size > 0
    assert not checkpoint_dir(cpt_folder).exists()
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "ls"}],
                                           add_generation_prompt=True, return_tensors="pt",
                                           return_dict=True)
    out = model.generate(**prompt, max_new_tokens=5, do_sample=False)
    assert out.shape[1] > prompt["input_ids"].shape[1]


def test_sft_from_cpt_and_deterministic(cpt_folder: Path, tmp_path: Path) -> None:
    samples = Dataset.from_list([{"messages": sft_messages(t, i)} for i, t in enumerate(TEXTS)])
    logs = [train_sft(samples, cpt_folder, tmp_path / f"sft{i}", SftConfig(steps=TINY_STEPS))
            for i in range(2)]
    assert logs[0].loss_curve == logs[1].loss_curve
    assert ((tmp_path / "sft0" / "model.safetensors").read_bytes()
            == (tmp_path / "sft1" / "model.safetensors").read_bytes())
    AutoModelForCausalLM.from_pretrained(str(tmp_path / "sft0"))


def test_lora_sft_saves_a_plain_merged_folder(cpt_folder: Path, tmp_path: Path) -> None:
    """LoRA (peft) trains only its adapters; the folder holds merged weights that load without
    peft, and they differ from the start's only through the adapters' update."""
    samples = Dataset.from_list([{"messages": sft_messages(t, i)} for i, t in enumerate(TEXTS)])
    model = ModelConfig(checkpoint=str(cpt_folder), lora_rank=4, lora_alpha=8)
    log = train_sft(samples, cpt_folder, tmp_path / "lora",
                    SftConfig(model=model, steps=replace(TINY_STEPS, learning_rate=5e-2)))
    assert log.config["model"]["lora_rank"] == 4 and log.model.endswith("_lora4")
    assert not list((tmp_path / "lora").glob("adapter_*"))
    start = AutoModelForCausalLM.from_pretrained(str(cpt_folder)).state_dict()
    tuned = AutoModelForCausalLM.from_pretrained(str(tmp_path / "lora")).state_dict()
    assert start.keys() == tuned.keys()
    changed = {k for k in start if not torch.equal(start[k], tuned[k])}
    assert changed and all("proj" in k for k in changed)  # linear layers only, no norm/embed


def test_lora_needs_a_checkpoint() -> None:
    with pytest.raises(ValueError, match="needs a checkpoint"):
        ModelConfig(lora_rank=8)


def _target_mean_loss(model: torch.nn.Module, sample: dict[str, list]) -> tuple[float, float]:
    """By hand, one sample: (mean CE of its target tokens, mean CE of all its tokens)."""
    ids = torch.tensor([sample["input_ids"]])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1]
    ce = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
    weights = torch.tensor(sample["loss_weights"][1:])
    return float((ce * weights).sum() / weights.sum()), float(ce.mean())


def test_sft_evaluates_target_tokens_of_held_out_samples(cpt_folder, tokenizer, tmp_path) -> None:
    """eval_loss is the mean over validation samples of each one's mean target-token loss,
    computed with the final weights; the prompt tokens count for nothing."""
    train = Dataset.from_list([{"messages": sft_messages(t, i)} for i, t in enumerate(TEXTS[:12])])
    held_out = [sft_messages(t, 7) for t in TEXTS[:5]]
    held_out[1][1]["content"] = "a much longer prompt: " * 6 + held_out[1][1]["content"]
    log = train_sft(train, cpt_folder, tmp_path / "sft", SftConfig(steps=TINY_STEPS),
                    validation=Dataset.from_list([{"messages": m} for m in held_out]))
    assert log.validation_samples == 5 and "eval loss" in log.summary()
    assert json.loads((tmp_path / "sft" / LOG_FILE).read_text())["eval_loss"] == log.eval_loss
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "sft"))
    by_hand = [_target_mean_loss(model, tokenize_sample(m, tokenizer, 768)) for m in held_out]
    target_mean = sum(t for t, _ in by_hand) / len(by_hand)
    every_token_mean = sum(a for _, a in by_hand) / len(by_hand)
    assert log.eval_loss == pytest.approx(target_mean, abs=1e-5)
    assert abs(log.eval_loss - every_token_mean) > 0.05  # the prompt did not count


def test_eval_loss_of_a_batch_is_the_mean_of_its_samples_alone(model_and_batch,
                                                               tokenizer) -> None:
    """Padding and neighbours change nothing: each row's weighted mean, averaged over rows
    with weight (a row without any is left out)."""
    model, _ = model_and_batch
    rows = [tokenize_sample(sft_messages(t), tokenizer, 512) for t in TEXTS[:3]]
    rows.append({**rows[0], "loss_weights": [0.0] * len(rows[0]["input_ids"])})
    collate = WeightedCollator(tokenizer.pad_token_id)

    def loss(batch_rows):
        batch = collate(batch_rows)
        with torch.no_grad():
            logits = model(input_ids=batch["input_ids"],
                           attention_mask=batch["attention_mask"]).logits
        return weighted_mean_loss_per_sample(logits, batch["labels"], batch["loss_weights"])

    alone = [loss([row]).item() for row in rows[:3]]
    assert loss(rows).item() == pytest.approx(sum(alone) / 3, abs=1e-6)
    assert alone == pytest.approx([_target_mean_loss(model, row)[0] for row in rows[:3]],
                                  abs=1e-5)
    assert torch.isnan(loss(rows[3:]))


def test_sft_without_validation_records_no_eval(cpt_folder, tmp_path) -> None:
    """The Echo Trap path (rl_split rows as SFT samples) has no validation rows."""
    train = Dataset.from_list([{"messages": sft_messages(t)} for t in TEXTS[:8]])
    log = train_sft(train, cpt_folder, tmp_path / "sft", SftConfig(steps=StepConfig(
        max_steps=1, batch_size=4, save_steps=10)), validation=Dataset.from_list([]))
    assert log.eval_loss is None and log.validation_samples == 0
    assert "eval loss" not in log.summary()


def test_sft_split_without_split_column_asks_to_rebuild(tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from training.sft import read_sft_split

    path = tmp_path / "part-0.parquet"
    pq.write_table(pa.Table.from_pylist([{"messages": sft_messages(TEXTS[0])}]), path)
    with pytest.raises(ValueError, match="materialize sft_split again"):
        read_sft_split([path])


class _Interrupt(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 4:
            raise KeyboardInterrupt("simulated interruption")


def test_cpt_resumes_from_last_checkpoint(tokenizer_dir, tokenizer, tmp_path: Path) -> None:
    corpus = Dataset.from_list(cpt_rows(tokenizer))
    out = tmp_path / "cpt_model"
    with pytest.raises(KeyboardInterrupt):
        train_cpt(corpus, tokenizer_dir, out, CptConfig(steps=TINY_STEPS), [_Interrupt()])
    assert not out.exists() and (checkpoint_dir(out) / "checkpoint-3").is_dir()
    log = train_cpt(corpus, tokenizer_dir, out, CptConfig(steps=TINY_STEPS))
    assert log.resumed_from_step == 3 and log.steps == TINY_STEPS.max_steps
    assert [p["step"] for p in log.loss_curve] == [2, 4, 6]


def _toy_tokenizer(folder: Path) -> PreTrainedTokenizerFast:
    """A ~40-token vocabulary, so the tag token is sampled now and then at random init."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(["abc def ghi go"] * 10,
                                  trainers.BpeTrainer(vocab_size=60, special_tokens=SPECIAL_TOKENS))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>",
                                   eos_token="<eos>", chat_template=CHAT_TEMPLATE)
    fast.save_pretrained(str(folder))
    return fast


def test_completion_reward_keeps_tag_tokens(tokenizer) -> None:
    ids = tokenizer("<predicted_observation>ok</predicted_observation><|end|>")["input_ids"]
    seen = []
    reward = CompletionReward(lambda row, text: seen.append((row, text)) or 1.0, tokenizer)
    assert reward(["p"], [[{"content": "ignored"}]], [ids], domain=["terminal"]) == [1.0]
    assert seen == [({"domain": "terminal", "prompt": "p"},
                     "<predicted_observation>ok</predicted_observation>")]


def test_gspo_raises_reward_on_toy_task(tmp_path: Path) -> None:
    """Reward = share of completion tokens that are the <predicted_observation> tag."""
    tokenizer = _toy_tokenizer(tmp_path / "tokenizer")
    start = tmp_path / "start"
    new_model(ModelConfig(), tokenizer).save_pretrained(str(start))
    tokenizer.save_pretrained(str(start))
    prompts = Dataset.from_list([{"prompt": [{"role": "user", "content": "go"}],
                                  "reference_observation": "x", "domain": "terminal",
                                  "verifier": "{}", "prompt_tokens": 5}] * 32)
    config = GspoConfig(steps=StepConfig(max_steps=12, batch_size=8, learning_rate=1e-2,
                                         warmup_steps=0, logging_steps=1, save_steps=100),
                        num_generations=8, max_completion_length=8)
    log = train_gspo(prompts, lambda row, text: text.count("<predicted_observation>") / 8,
                     start, tmp_path / "rl_model", config)
    rewards = [point["reward"] for point in log.reward_curve]
    assert len(rewards) == 6  # one generation batch feeds two optimizer steps (off-policy)
    assert rewards[0] < 0.1 and rewards[-1] > 0.5, rewards
    AutoModelForCausalLM.from_pretrained(str(tmp_path / "rl_model"))


def test_fit_prompt_drops_oldest_turns_keeps_system_and_action(tokenizer) -> None:
    from training.prompts import fit_prompt, prompt_tokens

    prompt = [{"role": "system", "content": "world model"}]
    for i in range(6):
        prompt += [{"role": "user", "content": f"cat file{i}.txt"},
                   {"role": "assistant", "content": f"contents of file {i} " * 5}]
    prompt.append({"role": "user", "content": "ls"})
    budget = prompt_tokens(prompt, tokenizer) - 10
    fitted = fit_prompt(prompt, tokenizer, budget)
    assert prompt_tokens(fitted, tokenizer) <= budget
    assert fitted[0] == prompt[0] and fitted[-1] == prompt[-1]
    assert fitted[1:] == prompt[-len(fitted) + 1:] and len(fitted) == len(prompt) - 2
    assert fit_prompt(prompt, tokenizer, 3) is None
