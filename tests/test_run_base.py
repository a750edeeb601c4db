"""`worldtrace run --base DIR`: the run config it gives every phase-2 asset is valid for that
asset's config schema, names the base's folder, and sizes everything by REAL_BASE_BUDGETS; a
folder that is not a model is a user error."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.definitions import defs
from tests.tiny_lm import tiny_model_dir  # noqa: F401  (fixture)
from training.sft_split import REAL_BASE_BUDGETS
from worldtrace.commands.run import real_base_config


def test_every_entry_is_valid_run_config_of_its_asset(tiny_model_dir):  # noqa: F811
    config = real_base_config(tiny_model_dir)
    job = defs.resolve_job_def("corpus_job")
    for name, settings in config.items():
        assert dg.validate_run_config(job, {"ops": {name: {"config": settings}}})
    assert config["sft_split"]["max_target_observation_tokens"] == (
        REAL_BASE_BUDGETS.target_observation_tokens)
    assert config["cpt_model"]["checkpoint"] == str(tiny_model_dir.resolve())
    assert {config[k]["base"] for k in ("cpt_corpus", "sft_split", "rl_split",
                                        "untrained_model")} == {str(tiny_model_dir.resolve())}
    assert config["bench_predictions"]["max_new_tokens"] == REAL_BASE_BUDGETS.answer_tokens
    assert config["mcp_simulation_report"]["model_max_prompt_tokens"] == (
        REAL_BASE_BUDGETS.prompt_tokens)


def test_a_folder_without_a_model_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="worldtrace base-model"):
        real_base_config(tmp_path)
    (tmp_path / "config.json").write_text("{}")  # a config alone is not a model either
    with pytest.raises(FileNotFoundError, match=r"no architectures\) \(run `worldtrace base-model"):
        real_base_config(tmp_path)
