"""A small curated data directory for the split tests: the scale generator's native files,
ingested by the real readers, through the real quality stage (features, labels, dedup), split."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from quality.split import SplitConfig, split_trajectories
from quality.stage import run_quality_stage
from sources.catalog import make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.ingest import write_tables


def curated_data(root: Path, domains: Sequence[str], per_domain: int, seed: int = 3,
                 bench_share: float = 0.3) -> Path:
    """{root}/data with raw tables, turn_labels, trajectory_dedup and trajectory_split."""
    corpus, data = root / "corpus", root / "data"
    generate_corpus(corpus, domains, per_domain, seed)
    write_tables([make_spec(source_name(d), corpus / d / source_name(d), d) for d in domains],
                 data, domains)
    run_quality_stage(data, data, domains)
    split_trajectories(data, domains, SplitConfig(bench_share=bench_share))
    return data
