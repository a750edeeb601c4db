"""The data assets of the pipeline materialized one by one on a small seeded corpus, recording
which tables each step located (sources.tables.recording): what tests/test_tables.py compares
with the declarations, and tests/test_same_bytes.py with the bytes of an earlier commit.

The corpus is tests/test_same_bytes.py's: 3 generated trajectories per domain, seed 7, plus the
first half of each domain's first file (so the quarantine has rows). No model is trained; the
bench runs the copy_last and retrieval baselines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from shard_runs import materialize_domain

from assets.definitions import defs
from assets.resources import WorldtraceStorage
from sources import tables
from sources.factory.scale import generate_corpus, source_name
from sources.schema import DOMAINS

PER_DOMAIN = ["raw_turns", "staged_turn_features", "turn_features", "turn_labels",
              "scrubbed_turns"]
OVER_ALL_DOMAINS = ["trajectory_dedup", "trajectory_split", "tokenizer", "cpt_corpus",
                    "sft_split", "rl_split", "rl_split_all_turns", "agentworldbench",
                    "bench_predictions", "bench_scores", "leaderboard"]
RUN_CONFIG = {"bench_predictions": {"config": {"predictors": ["copy_last", "retrieval"],
                                               "include_models": False}}}


@dataclass
class CuratedPipeline:
    """Where the data is, and per asset key: the asset's deps and the tables it located."""

    data: Path
    deps: dict[str, set[str]] = field(default_factory=dict)  # the asset's declared deps
    siblings: dict[str, set[str]] = field(default_factory=dict)  # the keys its step writes
    located: dict[str, set[str]] = field(default_factory=dict)  # tables its step located


def write_corpus(root: Path) -> Path:
    """The seeded corpus and a catalog naming it; returns the catalog."""
    corpus = root / "corpus"
    generate_corpus(corpus, list(DOMAINS), 3, 7)
    for domain in DOMAINS:
        folder = corpus / domain / source_name(domain)
        first = sorted(folder.iterdir())[0]
        whole = first.read_bytes()
        (folder / f"zz-truncated-{first.name}").write_bytes(whole[: len(whole) // 2])
    catalog = root / "catalog.toml"
    catalog.write_text("".join(
        f'[[source]]\nname = "{source_name(d)}"\ndomain = "{d}"\nformat = "auto"\n'
        f'path = "{corpus / d / source_name(d)}"\n\n' for d in DOMAINS))
    return catalog


def materialize(root: Path) -> CuratedPipeline:
    """Every data asset above, one at a time (per shard of each domain where partitioned), in
    order."""
    storage = WorldtraceStorage(data_dir=str(root / "data"), catalog=str(write_corpus(root)))
    by_key = {key.to_user_string(): asset for asset in defs.assets for key in asset.keys}
    graph = defs.resolve_asset_graph()
    run = CuratedPipeline(storage.data_path)
    for name in PER_DOMAIN + OVER_ALL_DOMAINS:
        asset = by_key[name]
        keys = [key.to_user_string() for key in asset.keys]
        config = {"ops": {asset.op.name: RUN_CONFIG[name]}} if name in RUN_CONFIG else None
        with tables.recording() as located:
            for domain in (DOMAINS if asset.partitions_def else [None]):
                result = (materialize_domain([asset], domain, storage, run_config=config)
                          if domain else dg.materialize([asset], run_config=config,
                                                        resources={"storage": storage}))
                assert result.success, name
        for key in keys:
            run.deps[key] = {parent.to_user_string()
                             for parent in graph.get(dg.AssetKey(key)).parent_keys}
            run.siblings[key] = set(keys)
            run.located[key] = set(located)
    return run
