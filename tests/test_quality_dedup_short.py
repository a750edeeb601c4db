"""Near copies of short trajectories (under 20 word 5-grams) are found, by their characters,
and different runs of one short command template are not merged."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from quality_rows import write_partition
from short_corpus import short_corpus, texts_of

from quality.dedup import DedupConfig, dedup_trajectories
from quality.tables import TRAJECTORY_DEDUP
from sources.factory.scale_text import jaccard


def clusters_by_name(root, config: DedupConfig) -> dict[str, str]:
    items, _ = short_corpus(300, 120, seed=5)
    turns, trajectories = write_partition(root, "terminal", items)
    dedup_trajectories(trajectories, turns, root / str(config), config)
    names = {r["trajectory_id"]: r["source_path"]
             for r in pq.read_table(trajectories, columns=["trajectory_id", "source_path"])
             .to_pylist()}
    rows = pq.read_table(TRAJECTORY_DEDUP.path(root / str(config))).to_pylist()
    return {names[r["trajectory_id"]]: names[r["cluster_id"]] for r in rows}


@pytest.fixture(scope="module")
def corpus():
    items, planted = short_corpus(300, 120, seed=5)
    return texts_of(items), planted


def recall(cluster: dict[str, str], pairs: list[tuple[str, str]]) -> float:
    return sum(cluster[a] == cluster[b] for a, b in pairs) / len(pairs)


def test_short_near_copies_are_found(corpus, tmp_path):
    texts, planted = corpus
    assert all(len(texts[name].split()) < 24 for name in texts)  # all under 20 word 5-grams
    cluster = clusters_by_name(tmp_path, DedupConfig())
    word_close = [(a, b) for a, b in planted if jaccard(texts[a], texts[b]) >= 0.8]
    assert word_close  # some edits sit at a text's end, where word 5-grams still see them
    assert recall(cluster, word_close) == 1.0
    assert recall(cluster, planted) >= 0.95  # one word edited anywhere in a 9-15 word text


def test_exact_only_dedup_misses_them(corpus, tmp_path):
    """The control: without character shingles only exact copies were found."""
    texts, planted = corpus
    cluster = clusters_by_name(tmp_path, DedupConfig(min_char_shingles=10**9))
    assert recall(cluster, planted) == 0.0


def test_runs_of_one_template_stay_apart(corpus, tmp_path):
    texts, planted = corpus
    cluster = clusters_by_name(tmp_path, DedupConfig())
    base_of = {copy: base for base, copy in planted}
    merged = {}
    for name, centre in cluster.items():
        merged.setdefault(centre, set()).add(base_of.get(name, name))
    assert all(len(bases) == 1 for bases in merged.values())  # one base (and its copies) each
