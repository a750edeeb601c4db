"""Same inputs, same bytes, for every table the data assets build: the seeded corpus of
tests/curated_pipeline.py (3 generated trajectories per domain, seed 7, plus half a file per
domain) through ingest, features, labels, scrubbing, dedup, the split, tokenizer, CPT / SFT / RL
corpora, the bench samples (official layout too), the baselines' predictions, scores and the
leaderboard, each materialized through Dagster.

The expected sha256s (tests/data/pipeline_sha256.json) were written by running this pipeline.
The restructuring of issue 15 (the table registry and the moves between layers) was checked
against the code before it (492f488): every file byte-identical. A change that alters an output
on purpose (a policy version, a reader's mapping, a schema) rewrites the file with
`python tests/test_same_bytes_pipeline.py` and says which tables changed, and why, in its commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

EXPECTED = Path(__file__).resolve().parent / "data" / "pipeline_sha256.json"
HASHED_SUFFIXES = (".parquet", ".jsonl", ".arrow", ".csv", ".md")


def file_hashes(data: Path) -> dict[str, str]:
    """sha256 of every table file under the data directory, by relative path."""
    return {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(data.rglob("*"))
            if path.is_file() and path.suffix in HASHED_SUFFIXES}


def test_every_table_has_the_recorded_bytes(curated_pipeline) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    written = file_hashes(curated_pipeline.data)
    changed = sorted(name for name in expected.keys() & written.keys()
                     if expected[name] != written[name])
    assert (changed, sorted(expected.keys() - written.keys()),
            sorted(written.keys() - expected.keys())) == ([], [], [])
    assert len(written) >= 80


if __name__ == "__main__":  # rewrite the expected hashes after an intended change
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from curated_pipeline import materialize

    with tempfile.TemporaryDirectory() as scratch:
        hashes = file_hashes(materialize(Path(scratch)).data)
    EXPECTED.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{EXPECTED}: {len(hashes)} files")
