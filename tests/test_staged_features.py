"""The staged turn features (step 2 of turn_features, one step per shard: the
staged_turn_features table) record what they were made from, and step 3 reads a domain's staged
shards only when each was made from its shard's raw_turns file as it is now, with the same
settings, and all with the same common words (quality/staged_features.py): a stale staged shard
(a lowered shard count, a re-ingest) never reaches the domain's corpus counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from quality.features import FeatureConfig
from quality.sharded import (
    features_for_domain,
    finish_domain_features,
    order_of_domain,
    stage_shard,
    stage_shard_features,
)
from quality.staged_features import StaleStagedFeatures
from quality.tables import STAGED_TURN_FEATURES, TURN_FEATURES
from sources.catalog import make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.ingest import write_tables
from sources.shards import ShardConfig
from sources.tables import RAW_TURNS

PER_DOMAIN = 24  # as tests/test_shards.py: every one of 3 shards gets files
SHARDS = 3


def rows(data: Path, domain: str) -> list[dict]:
    """Every turn_features row of a domain over all its shards, in a shard-independent order."""
    found = [row for path in TURN_FEATURES.domain_files(data, domain)
             for row in pq.read_table(path).to_pylist()]
    return sorted(found, key=lambda r: (r["trajectory_id"], r["turn_index"]))


def test_stale_staged_shards_never_reach_the_corpus_counts(tmp_path: Path) -> None:
    """The staged shards of a 3-shard layout, then the domain ingested again with 2 shards:
    step 3 refuses the shards staged from the old files (and never reads the lost shard 2);
    once shards 0 and 1 are staged again, the lost one is gone and the features are those of
    one shard. A shard staged with other settings, or before another shard of the domain
    changed (other common words), is refused too."""
    data, domain, config = tmp_path / "data", "terminal", FeatureConfig()
    generate_corpus(tmp_path / "corpus", [domain], PER_DOMAIN, seed=11)
    specs = [make_spec(source_name(domain), tmp_path / "corpus" / domain / source_name(domain),
                       domain)]
    one = tmp_path / "one"  # the domain in one shard: the features to get
    write_tables(specs, one)
    features_for_domain(one, one, domain, config)
    write_tables(specs, data, shards=ShardConfig(SHARDS))
    for shard in RAW_TURNS.shards(data, domain):
        stage_shard(data, data, domain, shard, config)
    assert STAGED_TURN_FEATURES.shards(data, domain) == ["0", "1", "2"]
    staged_schema = pq.read_schema(STAGED_TURN_FEATURES.path(data, domain, "0"))
    assert STAGED_TURN_FEATURES.mismatches(staged_schema) == []  # as declared
    write_tables(specs, data, shards=ShardConfig(2), replace=True)
    assert RAW_TURNS.shards(data, domain) == ["0", "1"]

    def finish() -> None:
        finish_domain_features(data, data, domain, order_of_domain(data, domain), config)

    with pytest.raises(StaleStagedFeatures, match="another version of .*raw_turns"):
        finish()
    assert not TURN_FEATURES.shards(data, domain)  # nothing was written
    stage_shard(data, data, domain, "0", config)
    with pytest.raises(StaleStagedFeatures, match="shard=1.*another version"):
        finish()
    stage_shard(data, data, domain, "1", FeatureConfig(common_word_share=0.2))
    with pytest.raises(StaleStagedFeatures, match="shard=1.*settings"):
        finish()
    stage_shard(data, data, domain, "1", config)
    assert STAGED_TURN_FEATURES.shards(data, domain) == ["0", "1"]  # the lost shard dropped
    finish()
    assert TURN_FEATURES.shards(data, domain) == ["0", "1"]
    assert rows(data, domain) == rows(one, domain)
    assert not STAGED_TURN_FEATURES.shards(data, domain)  # consumed

    # a shard staged with other common words than the other (as when another shard of the
    # domain changed between their steps)
    stage_shard(data, data, domain, "0", config)
    stage_shard_features(data, data, domain, "1", config, np.zeros(1, np.uint64))
    with pytest.raises(StaleStagedFeatures, match="different common words"):
        finish()
