"""Our per-domain world-model system prompts, versioned text files (bench/prompts/<version>/).

A new wording is a new version folder, never an edit in place: a benchmark records the version
it was built with, and scores from two versions are not comparable.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from sources.schema import DOMAINS

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
PROMPT_VERSION = "world_model_v1"


@cache
def system_prompt(domain: str, version: str = PROMPT_VERSION) -> str:
    """The world-model system prompt of one domain (FileNotFoundError names the missing file)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}")
    path = PROMPTS_DIR / version / f"{domain}.md"
    if not path.exists():
        raise FileNotFoundError(f"no system prompt {path}")
    return path.read_text(encoding="utf-8").strip()
