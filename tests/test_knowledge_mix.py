"""The CPT knowledge mix: the installed packages' documentation as a text dataset, any local
text dataset read (Parquet, JSONL, datasets folder), and mixed into cpt_corpus at the asked
share of each domain's tokens; without a mix the corpus is byte-identical to before."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from datasets import Dataset
from split_data import curated_data

from training.cpt_corpus import CptCorpusConfig, build_cpt_corpus
from training.knowledge import build_package_docs, read_texts
from training.tokenizer import TokenizerConfig, load_tokenizer, train_tokenizer

DOMAINS = ["terminal", "web"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = curated_data(tmp_path_factory.mktemp("mix"), DOMAINS, per_domain=10)
    train_tokenizer(data, data / "tokenizer", DOMAINS, TokenizerConfig(vocab_size=1024))
    return data


@pytest.fixture(scope="module")
def package_docs(tmp_path_factory):
    return build_package_docs(tmp_path_factory.mktemp("knowledge"))


def test_package_docs_are_the_installed_packages_readmes(package_docs):
    path, stats = package_docs
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == stats.documents > 50
    sources = [r["source"].split("==")[0] for r in rows]
    assert sources == sorted(sources) and "duckdb" in sources
    duckdb_doc = next(r for r in rows if r["source"].startswith("duckdb=="))
    assert "DuckDB" in duckdb_doc["text"]
    assert stats.packages == stats.documents + stats.too_short


def test_every_local_layout_reads_the_same_texts(tmp_path):
    records = [{"text": "alpha doc", "source": "a"}, {"text": "", "source": "empty"},
               {"text": "beta doc", "source": "b"}]
    jsonl = tmp_path / "k.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    Dataset.from_list(records).save_to_disk(str(tmp_path / "hf"))
    Dataset.from_list(records).to_parquet(str(tmp_path / "k.parquet"))
    expected = [("a", "alpha doc"), ("b", "beta doc")]
    for path in (jsonl, tmp_path / "hf", tmp_path / "k.parquet"):
        assert list(read_texts(path)) == expected
    with pytest.raises(ValueError, match="no column 'body'"):
        list(read_texts(tmp_path / "k.parquet", column="body"))
    (tmp_path / "bad.jsonl").write_text('{"text": "x"}\nnot json\n')
    with pytest.raises(ValueError, match="bad.jsonl, line 2"):
        list(read_texts(tmp_path / "bad.jsonl"))


def test_mix_reaches_the_ratio_in_every_domain(data, package_docs):
    tok = load_tokenizer(data / "tokenizer")
    path, _ = package_docs
    config = CptCorpusConfig(seq_len=256, max_tokens_per_domain=None,
                             knowledge_path=str(path), knowledge_ratio=0.25)
    stats = build_cpt_corpus(data, tok, DOMAINS, config)
    assert "_know0.25-package_docs" in stats.config
    for domain in DOMAINS:
        share = stats.knowledge_tokens[domain] / stats.tokens[domain]
        assert 0.2 < share < 0.35, (domain, share)
        rows = pq.read_table(data / "cpt_corpus" / f"domain={domain}" / "part-0.parquet")
        owners = [t for r in rows.to_pylist() for t in r["trajectory_ids"]]
        documents = {t for t in owners if t.startswith("knowledge:")}
        assert len(documents) == stats.knowledge_documents[domain] > 0
        assert sum(len(r) for r in rows.column("input_ids").to_pylist()) == stats.tokens[domain]
    table = stats.table()
    assert {"knowledge_documents", "knowledge_tokens"} <= set(table[0])


def test_no_mix_is_the_corpus_as_before(data):
    tok = load_tokenizer(data / "tokenizer")
    config = CptCorpusConfig(seq_len=128, max_tokens_per_domain=20_000)
    stats = build_cpt_corpus(data, tok, DOMAINS, config)
    assert "know" not in stats.config and "knowledge_tokens" not in stats.table()[0]
    with pytest.raises(ValueError, match="needs a knowledge_path"):
        CptCorpusConfig(knowledge_ratio=0.2)
