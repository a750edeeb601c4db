"""Same inputs, same Parquet bytes: the restructuring (storage base, readers package, one
registry, ingest driver) changed no output.

The expected sha256s were computed at commit 06b8219, before the restructuring, by generating
the seeded corpus below (3 trajectories per domain, seed 7, plus in each domain the first half of
its first file, so that the quarantine tables have rows) and ingesting it with that commit's
code. A change that alters ingest output on purpose (a reader's mapping, the schema, the writer's
settings) updates them, and says so in its commit. The Android and desktop entries were
rewritten at d36b41e, whose generator keeps those trajectories in one app (so the corpus, not
the ingest code, changed): b2ac89d's code ingests the new corpus to the same bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from curated_pipeline import write_corpus

from sources.catalog import make_spec
from sources.factory.scale import source_name
from sources.ingest import write_tables
from sources.schema import DOMAINS

EXPECTED_SHA256 = {
    "ingest_quarantine/domain=android/shard=0/part-0.parquet":
        "c2f4e336640b2e84ada39813e4a83aea7121ef114da360c38657a231f42d7d01",
    "ingest_quarantine/domain=mcp/shard=0/part-0.parquet":
        "73fd5d6517b49abc504513920c7651c3e6763e42c95c09234b75cb11a0f0a8e2",
    "ingest_quarantine/domain=os/shard=0/part-0.parquet":
        "40de368c4a2c16dfd20d6bea9704673d414c0b8cb1470a87b65e6e27febdb74d",
    "ingest_quarantine/domain=search/shard=0/part-0.parquet":
        "ed7ba94bd8b474d649913d4a70bc23b8803ade4914f273ea360c6f2bcae2576f",
    "ingest_quarantine/domain=swe/shard=0/part-0.parquet":
        "80c12e1fc54675a376d4cfe1e77691915581db2d0352a99074401852251e6aff",
    "ingest_quarantine/domain=terminal/shard=0/part-0.parquet":
        "b418987796cf923359f1c515db4244c7761b5636eec23d6f805c5e9a36f3a033",
    "ingest_quarantine/domain=web/shard=0/part-0.parquet":
        "2d9c736ca28d94baf7ce93c5eaea6eee8f71ba5d128e42291b6981feeda04428",
    "raw_trajectories/domain=android/shard=0/part-0.parquet":
        "588a0ebeb0efdde6a275cdd3c2bbaf19f2cfa01356d6f8886f9ee3cc7bb0ff1a",
    "raw_trajectories/domain=mcp/shard=0/part-0.parquet":
        "8fb863af05a9bcd702478ee1fed2f3305d02eb0fdef3e652c3b54a5928cb1600",
    "raw_trajectories/domain=os/shard=0/part-0.parquet":
        "1f741b9a539a910e09eeff2cb5a2d1a0cca9d696e6c6b8e851364591c3f372f6",
    "raw_trajectories/domain=search/shard=0/part-0.parquet":
        "01882e0ae84b67452dcceea4bbe1d0ed8a414433a5f989161ed57905e0608a3b",
    "raw_trajectories/domain=swe/shard=0/part-0.parquet":
        "e7f716aad552a4cc20b5bfef0db9ca5f9a868c1e33aa2af2358fcb1a04a5512f",
    "raw_trajectories/domain=terminal/shard=0/part-0.parquet":
        "4f178aead214021a038a5f599dba5b87ceaef86b6cfe533278bb51d4dcd976fe",
    "raw_trajectories/domain=web/shard=0/part-0.parquet":
        "e4cd247ff8145cfd713f66a523e07521ff4110e8a43ab4dcea55a9b55c8660b5",
    "raw_turns/domain=android/shard=0/part-0.parquet":
        "8b422f981efd69a3d4b5ec051ccd1333c8cf7f6a392e258a6f5c104e6e1cf7b0",
    "raw_turns/domain=mcp/shard=0/part-0.parquet":
        "467cd168de92f4f626fcfbcb9c55ef8ba2a9e37855f5dd8a3a226201cc075a5c",
    "raw_turns/domain=os/shard=0/part-0.parquet":
        "f13bc78d43232e6d20675d2645c9e26916ec339036021bb110bf0dc23b8aa562",
    "raw_turns/domain=search/shard=0/part-0.parquet":
        "2d5000966ca59b396631307a0b6bca26b031567c3d06f4ce7c1b62fafe914c80",
    "raw_turns/domain=swe/shard=0/part-0.parquet":
        "bdf45c1446632887b04d8279de6592b15be6e19a8bfe7b9370977417a11d44a3",
    "raw_turns/domain=terminal/shard=0/part-0.parquet":
        "c0536873ad2014716ef113c1095f102e07d0f9a96e704da4d2b8b61014da83e1",
    "raw_turns/domain=web/shard=0/part-0.parquet":
        "8c7fe34e35ce192e0ded042922434891670fca0821b757b82be582ba8be3531f",
}


def test_ingest_writes_the_same_bytes_as_before_the_restructuring(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    write_tables([make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS],
                 data)
    written = {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
               for path in sorted(data.rglob("*.parquet"))}
    assert written == EXPECTED_SHA256
