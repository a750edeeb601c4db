"""One check of a model folder (bench/model_folder.py), run by every loader: the bench's and the
server's (LocalChatModel.load) and training's (load_model), each refusing a folder that is not a
model with a message naming the folder and what it lacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.local_model import LocalChatModel
from bench.model_folder import NotAModelFolder, check_model_folder
from tests.tiny_lm import tiny_model_dir  # noqa: F401  (fixture)
from training.model_config import ModelConfig, load_model


def broken(model: Path, tmp_path: Path, how: str) -> tuple[Path, str]:
    """A copy of a real model folder with one thing wrong, and the message expected."""
    folder = tmp_path / how
    if how == "missing":
        return folder, f"{folder}: no such model folder"
    shutil.copytree(model, folder)
    config = folder / "config.json"
    if how == "no config":
        config.unlink()
        return folder, f"{folder}: not a model folder (no config.json)"
    if how == "config not an object":
        config.write_text("[1, 2]")
        return folder, f"{config}: not a model config (not a JSON object)"
    if how == "no architectures":
        config.write_text(json.dumps({k: v for k, v in json.loads(config.read_text()).items()
                                      if k != "architectures"}))
        return folder, f"{config}: not a model config (no architectures)"
    for weights in folder.glob("*.safetensors"):
        weights.unlink()
    return folder, f"{folder}: not a model folder (no weights: *.safetensors, *.bin)"


HOW = ["missing", "no config", "config not an object", "no architectures", "no weights"]


@pytest.mark.parametrize("how", HOW)
def test_every_loader_refuses_what_the_check_refuses(tiny_model_dir, tmp_path, how):  # noqa: F811
    folder, message = broken(tiny_model_dir, tmp_path, how)
    for load in (check_model_folder, LocalChatModel.load,
                 lambda f: load_model(f, ModelConfig(device="cpu"))):
        with pytest.raises(NotAModelFolder) as error:
            load(folder)
        assert str(error.value) == message


def test_a_real_model_folder_passes(tiny_model_dir):  # noqa: F811
    assert check_model_folder(str(tiny_model_dir)) == tiny_model_dir
