"""What a shard's staged features (step 2 of turn_features, quality/corpus_columns.py) were made
from, recorded in the staged file, and the check step 3 makes before it counts the domain's
corpus frequencies from them.

Step 2 runs once per shard, possibly at different times, on different workers, and a failed
shard is retried alone; step 3 reads every shard of the domain. A staged shard is only read if
it was made from the raw_turns file its shard holds now (a shard re-ingested since, or the rows
of another shard count, are refused), with the feature settings step 3 runs with (all but the
corpus-frequency LSH, which is step 3's own), and with the same common words as every other
shard of the domain. So a stale or mismatched staged file fails step 3 with its reason; it never
mixes into a domain's counts.

The raw file is identified by a sha256 of its Parquet footer (schema, row groups, each column
chunk's offsets, sizes and statistics): read in constant time whatever the file's size, and it
changes when the rows do.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.parquet as pq

from quality.minhash import LshConfig

if TYPE_CHECKING:
    from quality.features import FeatureConfig

STAGED_FROM = b"staged_from"  # the staged file's schema-metadata key


class StaleStagedFeatures(ValueError):
    """A staged shard that step 3 must not read (made from other rows, settings or words)."""


def parquet_fingerprint(path: Path) -> str:
    """sha256 (hex) of a Parquet file's footer: its identity, read in constant time."""
    with Path(path).open("rb") as handle:
        handle.seek(-8, 2)
        length, magic = struct.unpack("<I4s", handle.read(8))
        if magic != b"PAR1":
            raise ValueError(f"{path}: not a Parquet file (no PAR1 at its end)")
        handle.seek(-8 - length, 2)
        return hashlib.sha256(handle.read(length)).hexdigest()


def stage_settings(config: FeatureConfig) -> str:
    """The feature settings step 2 depends on: all but the corpus-frequency LSH (step 3's)."""
    return str(dataclasses.replace(config, lsh=LshConfig()))


def words_digest(common: np.ndarray) -> str:
    """sha256 (hex) of the domain's common words as a set (they come in no fixed order)."""
    return hashlib.sha256(np.sort(np.asarray(common, dtype=np.uint64)).tobytes()).hexdigest()


def staged_from(turns_path: Path, common: np.ndarray, config: FeatureConfig
                ) -> dict[bytes, bytes]:
    """The schema metadata of a staged file: its raw_turns file, common words and settings."""
    return {STAGED_FROM: json.dumps({
        "raw_turns": parquet_fingerprint(turns_path), "common_words": words_digest(common),
        "settings": stage_settings(config)}, sort_keys=True).encode()}


def check_staged(staged_paths: Sequence[Path], turns_paths: Sequence[Path],
                 config: FeatureConfig) -> None:
    """Raise StaleStagedFeatures unless every staged shard was made from its raw_turns file as
    it is now, with `config`'s step-2 settings, and all with the same common words."""
    words: dict[str, Path] = {}
    for staged, turns in zip(staged_paths, turns_paths, strict=True):
        recorded = (pq.read_schema(staged).metadata or {}).get(STAGED_FROM)
        if recorded is None:
            raise StaleStagedFeatures(f"{staged}: records nothing of what it was staged from; "
                                      "stage this shard's features again")
        made = json.loads(recorded)
        if made["raw_turns"] != parquet_fingerprint(turns):
            raise StaleStagedFeatures(f"{staged}: staged from another version of {turns} (the "
                                      "shard was ingested again since); stage it again")
        if made["settings"] != stage_settings(config):
            raise StaleStagedFeatures(f"{staged}: staged with the settings {made['settings']}, "
                                      f"not {stage_settings(config)}; stage it with the same "
                                      "feature settings")
        words.setdefault(made["common_words"], Path(staged))
    if len(words) > 1:
        raise StaleStagedFeatures(
            "the domain's shards were staged with different common words (a shard of the "
            f"domain changed between them): {', '.join(map(str, words.values()))}; stage "
            "every shard of the domain again")
