"""The scale generator's truth sidecar: which turn has which category, which files are copies.

    _truth/turn_truth.parquet       source, domain, file, turn_index (int32), category
    _truth/duplicate_pairs.parquet  source, domain, file_a, file_b, jaccard (float64), kind
    _truth/manifest.json            per-domain seed and counts, sha256 of every file

Rows of domains not in this call are kept, so generating one domain at a time (a partitioned
asset) builds up the same files; a lock file serialises concurrent writers, and every file is
replaced atomically. Rows are sorted, so the same corpus always gives the same bytes.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sources.storage import atomic_path, write_parquet

TURN_SCHEMA = pa.schema([("source", pa.string()), ("domain", pa.string()), ("file", pa.string()),
                         ("turn_index", pa.int32()), ("category", pa.string())])
PAIR_SCHEMA = pa.schema([("source", pa.string()), ("domain", pa.string()),
                         ("file_a", pa.string()), ("file_b", pa.string()),
                         ("jaccard", pa.float64()), ("kind", pa.string())])
TURN_KEYS = ("domain", "file", "turn_index")
PAIR_KEYS = ("domain", "file_a", "file_b")

FileRow = tuple[int, str, str, int, list[str]]  # index, file name, sha256, bytes, categories
PairRow = tuple[str, str, float, str]  # file_a, file_b, jaccard, kind


def write_truth(
    truth: Path, records: dict[str, tuple[list[FileRow], list[PairRow]]],
    summaries: dict[str, dict[str, Any]],
) -> None:
    """Write the three truth files for the domains in `records`, keeping the other domains."""
    truth.mkdir(parents=True, exist_ok=True)
    turn_cols: dict[str, list] = {name: [] for name in TURN_SCHEMA.names}
    pair_cols: dict[str, list] = {name: [] for name in PAIR_SCHEMA.names}
    files: list[dict[str, Any]] = []
    for domain, (rows, pairs) in records.items():
        source = summaries[domain]["source"]
        for _, name, digest, size, cats in rows:
            k = len(cats)
            turn_cols["source"] += [source] * k
            turn_cols["domain"] += [domain] * k
            turn_cols["file"] += [name] * k
            turn_cols["turn_index"] += range(k)
            turn_cols["category"] += cats
            files.append({"path": f"{domain}/{source}/{name}", "sha256": digest, "bytes": size})
        for a, b, similarity, kind in pairs:
            for key, value in zip(PAIR_SCHEMA.names, (source, domain, a, b, similarity, kind),
                                  strict=True):
                pair_cols[key].append(value)
    done = pa.array(list(records), pa.string())
    with (truth / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # partitions of the asset may finish at the same time
        for name, cols, schema, keys in (
            ("turn_truth.parquet", turn_cols, TURN_SCHEMA, TURN_KEYS),
            ("duplicate_pairs.parquet", pair_cols, PAIR_SCHEMA, PAIR_KEYS),
        ):
            table = pa.table(cols, schema=schema)
            path = truth / name
            if path.exists():
                old = pq.read_table(path, schema=schema)
                old = old.filter(pc.invert(pc.is_in(old["domain"], value_set=done)))
                table = pa.concat_tables([old, table])
            table = table.sort_by([(key, "ascending") for key in keys])
            write_parquet(table, path, compression="snappy")  # pyarrow's default, as before
        manifest = _merge_manifest(truth / "manifest.json", summaries, files)
        text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
        with atomic_path(truth / "manifest.json") as tmp:
            tmp.write_text(text, encoding="utf-8")


def _merge_manifest(
    path: Path, summaries: dict[str, dict[str, Any]], files: list[dict[str, Any]]
) -> dict[str, Any]:
    """The manifest with this call's domains replaced and the others kept."""
    manifest: dict[str, Any] = {"generator": "worldtrace-scale", "format": 1, "domains": {},
                                "files": []}
    if path.exists():
        manifest = json.loads(path.read_text(encoding="utf-8"))
    kept = [f for f in manifest["files"] if f["path"].split("/", 1)[0] not in summaries]
    manifest["files"] = sorted(kept + files, key=lambda f: f["path"])
    manifest["domains"].update(summaries)
    seeds = {d["seed"] for d in manifest["domains"].values()}
    manifest["seed"] = seeds.pop() if len(seeds) == 1 else None
    return manifest
