"""The released AgentWorldBench evaluation code (../shared/official-agentworld/eval), imported
in tests only, to check that our own code reads and computes as it does (never copied)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def released_module(official_dir: Path, name: str) -> ModuleType:
    """A module of the released `lwm_eval_utils` package, e.g. "lwm_eval_utils.output_parser"."""
    sys.path.insert(0, str(official_dir / "eval"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(official_dir / "eval"))


def released_eval(official_dir: Path) -> ModuleType:
    """The released eval.py (its own imports: lwm_eval_utils, openai)."""
    sys.path.insert(0, str(official_dir / "eval"))
    try:
        spec = importlib.util.spec_from_file_location("released_eval",
                                                      official_dir / "eval" / "eval.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(official_dir / "eval"))
