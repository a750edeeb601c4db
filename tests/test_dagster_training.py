"""The training assets on a real Dagster instance, over tiny split tables in the contract
layout: cpt_model -> sft_model -> rl_model, each a folder transformers loads, with its figures."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
from training_fixtures import write_split_tables
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

from assets.resources import WorldtraceStorage
from assets.training import cpt_model, rl_model, sft_model

TINY = {"max_steps": 4, "batch_size": 4}


def test_training_chain_materializes(tmp_path: Path) -> None:
    write_split_tables(tmp_path)
    result = dg.materialize(
        [cpt_model, sft_model, rl_model],
        resources={"storage": WorldtraceStorage(data_dir=str(tmp_path))},
        run_config={"ops": {name: {"config": TINY}
                            for name in ("cpt_model", "sft_model", "rl_model")}},
    )
    assert result.success
    events = {e.asset_key.to_user_string(): e.materialization.metadata
              for e in result.get_asset_materialization_events()}
    assert set(events) == {"cpt_model", "sft_model", "rl_model"}
    for name, metadata in events.items():
        folder = tmp_path / "models" / name
        assert metadata["steps"].value == TINY["max_steps"]
        assert metadata["tokens_seen"].value > 0 and metadata["tokens_per_second"].value > 0
        assert "data:image/png;base64," in metadata["curve_plot"].value
        log = json.loads((folder / "training_log.json").read_text())
        assert log["stage"] == name.removesuffix("_model")
        AutoModelForCausalLM.from_pretrained(str(folder))
        PreTrainedTokenizerFast.from_pretrained(str(folder))
    assert "reward_curve" in events["rl_model"] and events["rl_model"]["final_reward"].value >= 0
    # sft_split's validation rows (3 a domain) are held out and evaluated on at the end
    assert events["sft_model"]["validation_samples"].value == 6
    assert 0 < events["sft_model"]["eval_loss"].value < 20
    assert "eval_loss" not in events["cpt_model"] and "eval_loss" not in events["rl_model"]
    sft_log = json.loads((tmp_path / "models" / "sft_model" / "training_log.json").read_text())
    assert sft_log["config"]["model"]["checkpoint"] == str(tmp_path / "models" / "cpt_model")
