"""Whether a folder holds a Hugging Face causal-LM: the one check every model loader runs first.

Light on purpose (no torch, no transformers): the command line runs it before importing either,
so a wrong folder is one line naming it, not a traceback from deep inside `from_pretrained`.
"""

from __future__ import annotations

import json
from pathlib import Path


class NotAModelFolder(FileNotFoundError):
    """A folder that is missing or holds no model (the message names the folder and what is
    missing)."""


def check_model_folder(folder: Path | str) -> Path:
    """`folder` as a Path when it holds a model: a config.json that is a JSON object naming its
    architectures, and weights (*.safetensors or *.bin); NotAModelFolder otherwise."""
    folder = Path(folder)
    config = folder / "config.json"
    if not folder.is_dir():
        raise NotAModelFolder(f"{folder}: no such model folder")
    if not config.is_file():
        raise NotAModelFolder(f"{folder}: not a model folder (no config.json)")
    try:
        architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        raise NotAModelFolder(f"{config}: not a model config (not a JSON object)") from None
    if not architectures:
        raise NotAModelFolder(f"{config}: not a model config (no architectures)")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
        raise NotAModelFolder(f"{folder}: not a model folder (no weights: *.safetensors, *.bin)")
    return folder
