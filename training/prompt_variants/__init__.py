"""The 10 world-model system prompts (v00.txt ... v09.txt beside this file; our own text).

The recipe trains on 10 prompt variants so the model does not tie its behaviour to one wording.
A sample's variant is a stable hash of its trajectory id and turn, so the same sample always
gets the same prompt. The templates take {domain}, {environment} (what the environment is),
{formats} (how its observations look) and {task}. `PROMPTS_VERSION` changes whenever a template
does; it is the SHA-256 (12 hex) of the ten files, written into every split's metadata.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from sources.ids import seeded_digest

N_VARIANTS = 10
_HERE = Path(__file__).resolve().parent

ENVIRONMENTS = {
    "mcp": "set of MCP tool servers answering JSON-RPC tool calls",
    "search": "web search and browsing tool (search results and page text)",
    "terminal": "Linux terminal (bash in a container)",
    "swe": "software repository with a shell, file viewer and editor, and test runner",
    "android": "Android phone's user interface (a list of UI elements per screen)",
    "web": "web browser showing pages as accessibility trees",
    "os": "desktop operating system (accessibility tree of the screen)",
}

FORMATS = {
    "stdout": "the command's terminal output",
    "terminal_screen": "the terminal screen text",
    "json_rpc": "a JSON-RPC response",
    "tool_result_json": "the tool's JSON result",
    "tool_result_text": "the tool's text result",
    "a11y_tree": "an accessibility tree",
    "ui_elements": "a numbered list of UI elements",
    "html": "the page HTML",
    "search_results": "a list of search results",
    "page_text": "the page text",
    "text": "plain text",
}


@cache
def templates() -> tuple[str, ...]:
    """The ten templates, in order."""
    return tuple((_HERE / f"v{k:02d}.txt").read_text(encoding="utf-8").strip()
                 for k in range(N_VARIANTS))


@cache
def prompts_version() -> str:
    """SHA-256 (12 hex) of the ten template files."""
    digest = hashlib.sha256()
    for text in templates():
        digest.update(text.encode())
    return digest.hexdigest()[:12]


def variant_for(key: str, seed: int = 0) -> int:
    """The variant (0..9) of a sample, from a stable hash of its key."""
    return int.from_bytes(seeded_digest("prompt", seed, key)[:8], "big") % N_VARIANTS


def format_phrase(domain: str, formats: list[str]) -> str:
    """How the domain's observations look, from the observation formats seen."""
    seen = [FORMATS.get(f, f) for f in dict.fromkeys(formats) if f]
    return " or ".join(seen) if seen else "the environment's own output format"


def system_prompt(variant: int, domain: str, task: str, formats: list[str]) -> str:
    """The system message of one sample."""
    if not 0 <= variant < N_VARIANTS:
        raise ValueError(f"prompt variant must be in 0..{N_VARIANTS - 1}, got {variant}")
    return templates()[variant].format(
        domain=domain, environment=ENVIRONMENTS.get(domain, f"{domain} environment"),
        formats=format_phrase(domain, formats),
        task=task.strip() or "(no task recorded)")
