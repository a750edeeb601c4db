"""The retrieval baseline: answer with the observation of the most similar TRAINING turn.

Similarity is the MinHash estimate of the Jaccard of word 3-gram shingles (identifiers masked)
of the turn's key: its action plus the tail of the observation before it (the recent context).
Only the train pool is indexed (trajectory_split pool == 'train'), so no bench trajectory can
answer its own question. The search is exact over the estimate (every training turn of the
domain is compared, in blocks); ties go to the first turn in (trajectory_id, turn_index) order.
At a few thousand turns per domain this is milliseconds per sample; at millions of turns the
LSH banding of quality.minhash would pick the candidates first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from bench.parsing import format_prediction
from bench.predictors.base import PredictorContext, PredictorSetupError
from bench.sample import BenchSample
from quality.minhash import MinHashConfig, signatures
from quality.shingles import ShingleConfig, shingle
from quality.tables import SCRUBBED_TURNS, TRAJECTORY_SPLIT
from sources.storage import load_sql, parquet_view

CONTEXT_CHARS = 600  # tail of the previous observation in the key: the recent state
SHINGLES = ShingleConfig(ngram=3, tokens="words", mask_ids=True)
MINHASH = MinHashConfig(num_perm=128, seed=1)
_BLOCK = 32  # queries compared at once: 32 x n_train x 128 bytes


def turn_key(action: str, previous_observation: str) -> str:
    return f"{action}\n{previous_observation[-CONTEXT_CHARS:]}"


@dataclass
class DomainIndex:
    """Signatures of the training turns of one domain and their observations."""

    signatures: np.ndarray
    observations: list[str]

    def nearest(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(index, estimated Jaccard) of the nearest training turn for each key."""
        queries = signatures(shingle(list(keys), SHINGLES), MINHASH)
        best = np.zeros(len(keys), dtype=np.int64)
        score = np.zeros(len(keys), dtype=np.float64)
        for lo in range(0, len(keys), _BLOCK):
            block = queries[lo:lo + _BLOCK]
            similarity = (block[:, None, :] == self.signatures[None, :, :]).mean(axis=2)
            best[lo:lo + _BLOCK] = similarity.argmax(axis=1)
            score[lo:lo + _BLOCK] = similarity.max(axis=1)
        return best, score


def train_turns(data_dir: Path, domain: str) -> list[tuple[str, str, str]]:
    """(action, previous observation, observation) of every train-pool turn of a domain, from
    the scrubbed turns (what a published score may show)."""
    split = TRAJECTORY_SPLIT.path(data_dir, domain)
    turns = SCRUBBED_TURNS.domain_glob(data_dir, domain)
    for path, there in ((split, split.exists()), (turns, SCRUBBED_TURNS.has(data_dir, domain))):
        if not there:
            raise PredictorSetupError(f"{path} is missing: the retrieval baseline indexes the "
                                      "train pool of the data directory")
    with duckdb.connect() as con:
        parquet_view(con, "split", split)
        parquet_view(con, "turns", turns)
        return con.execute(load_sql(__file__, "train_turns.sql")).fetchall()


@dataclass
class RetrievalPredictor:
    """Nearest training turn by MinHash over action + recent context."""

    data_dir: Path | None = None
    name: str = "retrieval"
    indexes: dict[str, DomainIndex] = field(default_factory=dict)
    last_similarity: list[float] = field(default_factory=list)

    @classmethod
    def from_spec(cls, argument: str | None, context: PredictorContext) -> RetrievalPredictor:
        data_dir = Path(argument) if argument else context.data_dir
        if data_dir is None:
            raise PredictorSetupError("retrieval needs the data directory (retrieval:DIR, or "
                                      "--data on the command line)")
        return cls(data_dir=Path(data_dir))

    @classmethod
    def from_turns(cls, turns_by_domain: dict[str, list[tuple[str, str, str]]]
                   ) -> RetrievalPredictor:
        """An index over given (action, previous observation, observation) turns."""
        predictor = cls()
        for domain, turns in turns_by_domain.items():
            predictor.indexes[domain] = cls._index(turns)
        return predictor

    @staticmethod
    def _index(turns: list[tuple[str, str, str]]) -> DomainIndex:
        keys = [turn_key(action, previous) for action, previous, _ in turns]
        sigs = signatures(shingle(keys, SHINGLES), MINHASH) if keys else np.zeros(
            (0, MINHASH.num_perm), np.uint32)
        return DomainIndex(sigs, [observation for _, _, observation in turns])

    def index(self, domain: str) -> DomainIndex:
        if domain not in self.indexes:
            if self.data_dir is None:
                raise ValueError(f"no training turns indexed for {domain}")
            self.indexes[domain] = self._index(train_turns(self.data_dir, domain))
        return self.indexes[domain]

    def predict(self, samples: Sequence[BenchSample]) -> list[str]:
        outputs: list[str] = [""] * len(samples)
        similarity: list[float] = [0.0] * len(samples)
        by_domain: dict[str, list[int]] = {}
        for position, sample in enumerate(samples):
            by_domain.setdefault(sample.domain, []).append(position)
        for domain, positions in sorted(by_domain.items()):
            index = self.index(domain)
            if not index.observations:
                for position in positions:
                    outputs[position] = format_prediction("")
                continue
            keys = [turn_key(samples[p].current_action, samples[p].last_observation)
                    for p in positions]
            best, score = index.nearest(keys)
            for position, row, value in zip(positions, best, score, strict=True):
                outputs[position] = format_prediction(index.observations[row])
                similarity[position] = float(value)
        self.last_similarity = similarity
        return outputs
