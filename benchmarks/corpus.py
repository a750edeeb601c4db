"""The benchmarks' shared input: a generated corpus of about N turns over all seven domains."""

from __future__ import annotations

from pathlib import Path

from sources.factory.scale import generate_corpus, writer_for
from sources.schema import DOMAINS


def generate_turns(out_dir: Path, turns: int, seed: int) -> None:
    """Native-format trace files of about `turns` turns, split over the domains by their mean
    trajectory length, under out_dir/<domain>/<domain>-generated/."""
    per_domain = max(1, round(turns / sum(writer_for(d).MEAN_TURNS for d in DOMAINS)))
    generate_corpus(out_dir, DOMAINS, per_domain, seed)


def generated_folder(out_dir: Path, domain: str) -> Path:
    return out_dir / domain / f"{domain}-generated"
