"""Exact and near-duplicate trajectories (the `trajectory_dedup` asset).

`dedup_trajectories(trajectories_path, turns_path, out_root, config)`:

1. exact duplicates: equal `content_hash` (task and turns hashed at ingest);
2. near duplicates, among one representative per exact group: the trajectory's text (task, then
   each turn's action and observation, joined with newlines) as a set of word 5-grams, MinHashed
   in numpy while the turns stream by, the signatures written to Parquet
   (dedup_signatures), then banded in DuckDB (dedup_candidates.sql), so no corpus-wide
   set of signatures or shingles is ever held as Python objects;
3. every candidate pair is confirmed by its exact Jaccard (the shingle sets of the candidates
   only, rebuilt in a second pass) before it joins anything: LSH buckets are only a shortlist;
4. union-find over exact groups and confirmed pairs gives the clusters; each keeps its first
   member by (source, source_path, source_position, trajectory_id), a rule that does not depend
   on processing order.

Outputs, three tables of quality/tables.py under the data directory `out_root`: trajectory_dedup
(one row per trajectory: cluster, kept, reason), duplicate_pairs (the exact and confirmed near
pairs) and dedup_signatures.

Short trajectories (under `min_shingles` word 5-grams, about 24 words) are shingled by
character 5-grams instead (`shingles.char_shingles`), banded only among themselves, confirmed by
their exact character Jaccard (>= `short_lsh.threshold`) and clustered as stars, not by union-find
(clusters.py says why): a near copy of a short run is found, and short boilerplate cannot chain
different runs into one cluster. Texts under `min_char_shingles` characters stay exact-only.

Threshold: Jaccard 0.8 on word 5-grams, the usual near-duplicate threshold for web text
(Lee et al. 2022, "Deduplicating Training Data Makes Language Models Better"; Penedo et al.
2024, FineWeb), with 16 bands x 8 rows (see minhash.py for the S-curve).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from quality.clusters import find, star_edges, union
from quality.dedup_shingles import SHORT, WORDS, shingle_sets, trajectory_shingles
from quality.minhash import LshConfig, MinHashConfig, signature_array, signatures
from quality.shingles import ShingleConfig
from quality.tables import DEDUP_SIGNATURES, DUPLICATE_PAIRS, TRAJECTORY_DEDUP
from sources.duckdb_cursors import duckdb_cursor
from sources.storage import (
    atomic_path,
    load_sql,
    parquet_view,
    query_arrow,
    write_parquet,
)

PathOrPaths = Path | str | Sequence[Path | str]


@dataclass(frozen=True)
class DedupConfig:
    """Parameters of trajectory deduplication; `str()` names them."""

    shingles: ShingleConfig = ShingleConfig(ngram=5, tokens="whitespace")
    minhash: MinHashConfig = MinHashConfig()
    lsh: LshConfig = LshConfig(threshold=0.8, bands=16, rows=8)
    # Below 20 word shingles (about 24 words) one changed word moves the 5-gram Jaccard by up to
    # 0.3, so "near" means nothing there: such a trajectory is shingled by characters instead
    # (a changed word touches about 5 + its length of a hundred-odd character grams).
    min_shingles: int = 20
    char_ngram: int = 5
    # Under 20 character grams (a couple of words) only exact copies count.
    min_char_shingles: int = 20
    # One changed word of a short (about 12-word) agent text leaves a character 5-gram Jaccard
    # of 0.69-0.95 (median 0.87), while different runs of one command template top out near
    # 0.58 (tests/short_corpus.py): 0.7 keeps the first and drops the second. 25 bands x 5 rows
    # (125 of the 128 values) make P(candidate) 0.99 at 0.7 and 0.22 at 0.4; short texts are
    # few, so the extra candidates cost little, and each is confirmed exactly.
    short_lsh: LshConfig = LshConfig(threshold=0.7, bands=25, rows=5)
    max_bucket: int = 200
    batch_rows: int = 16_000
    batch_bytes: int = 24 << 20  # text per batch (see FeatureConfig)

    def __str__(self) -> str:
        return (f"{self.shingles}_{self.minhash}_{self.lsh}_min{self.min_shingles}"
                f"_short{self.char_ngram}c_{self.short_lsh}")


@dataclass
class DedupStats:
    """Counters recorded while deduplicating."""

    config: str = ""
    trajectories: int = 0
    exact_duplicates: int = 0
    too_short_for_near: int = 0  # under min_char_shingles: exact copies only
    short_by_chars: int = 0  # shingled by characters
    candidate_pairs: int = 0
    confirmed_pairs: int = 0
    confirmed_short_pairs: int = 0  # by characters; only a star's edges join clusters
    rejected_pairs: int = 0
    near_duplicates: int = 0
    clusters: int = 0  # clusters with more than one member
    largest_cluster: int = 0
    kept: int = 0
    removed: int = 0
    seconds: Counter = field(default_factory=Counter)


def dedup_trajectories(trajectories_path: PathOrPaths, turns_path: PathOrPaths, out_root: Path,
                       config: DedupConfig = DedupConfig()) -> DedupStats:
    """Find exact and near-duplicate trajectories; write the tables listed in the docstring."""
    stats = DedupStats(config=str(config))
    out_dir = TRAJECTORY_DEDUP.dir(out_root)
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    meta = _read_trajectories(_paths(trajectories_path))
    stats.trajectories = meta.num_rows
    order = _stable_order(meta)
    meta = meta.take(order)  # sorted by the keep rule: the first of any group is kept
    ids = meta["trajectory_id"].to_pylist()
    index = {tid: i for i, tid in enumerate(ids)}
    parent = np.arange(len(ids))
    exact_pairs = _exact_groups(meta, parent)
    stats.exact_duplicates = len(exact_pairs)
    representative = np.array([parent[i] == i for i in range(len(ids))])
    stats.seconds["exact"] += time.perf_counter() - clock

    clock = time.perf_counter()
    sig_path = DEDUP_SIGNATURES.path(out_root)
    tasks = dict(zip(ids, meta["task"].to_pylist(), strict=True))
    wanted = {ids[i] for i in np.flatnonzero(representative)}
    with atomic_path(sig_path) as tmp:
        _write_signatures(_paths(turns_path), tasks, wanted, tmp, config, stats)
    stats.seconds["signatures"] += time.perf_counter() - clock

    clock = time.perf_counter()
    candidates = _candidate_pairs(sig_path, config)
    stats.candidate_pairs = len(candidates)
    stats.seconds["lsh banding"] += time.perf_counter() - clock

    clock = time.perf_counter()
    involved = {t for a, b, _ in candidates for t in (a, b)}
    sets = dict(shingle_sets(_paths(turns_path), tasks, involved, config))
    near_pairs: list[tuple[str, str, float, str]] = []  # (a, b, Jaccard, kind)
    short_pairs: dict[tuple[int, int], float] = {}
    for a, b, kind in candidates:
        j = exact_jaccard(sets[a], sets[b])
        if j < (config.short_lsh.threshold if kind == SHORT else config.lsh.threshold):
            stats.rejected_pairs += 1
        elif kind == SHORT:
            short_pairs[min(index[a], index[b]), max(index[a], index[b])] = j
        else:
            near_pairs.append((a, b, j, "near"))
            union(parent, index[a], index[b])
    stats.confirmed_pairs = len(near_pairs)
    stats.confirmed_short_pairs = len(short_pairs)
    for centre, member in star_edges(short_pairs):
        near_pairs.append((ids[centre], ids[member], short_pairs[centre, member], "near_short"))
        union(parent, centre, member)
    stats.seconds["exact jaccard"] += time.perf_counter() - clock

    clock = time.perf_counter()
    _write_outputs(out_root, meta, parent, exact_pairs, near_pairs, config, stats)
    stats.seconds["clusters"] += time.perf_counter() - clock
    return stats


def _paths(value: PathOrPaths) -> list[Path]:
    if isinstance(value, (str, Path)):
        return [Path(value)]
    return [Path(v) for v in value]


def _read_trajectories(paths: list[Path]) -> pa.Table:
    columns = ["trajectory_id", "content_hash", "domain", "source", "source_path",
               "source_position", "task"]
    return pa.concat_tables([pq.read_table(p, columns=columns) for p in paths])


def _stable_order(meta: pa.Table) -> np.ndarray:
    keys = [(c, "ascending") for c in ("source", "source_path", "source_position",
                                       "trajectory_id")]
    return pc.sort_indices(meta, sort_keys=keys).to_numpy()


def _exact_groups(meta: pa.Table, parent: np.ndarray) -> list[tuple[int, int]]:
    """Point every exact copy at the first trajectory (in keep order) with its content hash."""
    first: dict[str, int] = {}
    pairs = []
    for i, digest in enumerate(meta["content_hash"].to_pylist()):
        if digest in first:
            parent[i] = first[digest]
            pairs.append((first[digest], i))
        else:
            first[digest] = i
    return pairs


def _write_signatures(paths: list[Path], tasks: dict[str, str], wanted: set[str], out: Path,
                      config: DedupConfig, stats: DedupStats) -> None:
    """Stream the turns, write one MinHash signature per wanted trajectory; count short ones."""
    schema = pa.schema([("trajectory_id", pa.string()), ("kind", pa.string()),
                        ("n_shingles", pa.int64()),
                        ("signature", pa.list_(pa.uint32(), config.minhash.num_perm))])
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for traj_ids, kind, shingled in trajectory_shingles(paths, tasks, wanted, config):
            counts = shingled.counts()
            if kind == SHORT:
                stats.short_by_chars += len(traj_ids)
                stats.too_short_for_near += int(np.count_nonzero(
                    counts < config.min_char_shingles))
            table = pa.table({"trajectory_id": pa.array(traj_ids, pa.string()),
                              "kind": pa.array([kind] * len(traj_ids), pa.string()),
                              "n_shingles": pa.array(counts, pa.int64()),
                              "signature": signature_array(signatures(shingled, config.minhash))},
                             schema=schema)
            writer.write_table(table)


def _candidate_pairs(sig_path: Path, config: DedupConfig) -> list[tuple[str, str, str]]:
    """(id_a, id_b, kind) pairs that share a band bucket, within one kind of shingles, each
    kind banded with its own LSH parameters."""
    pairs = []
    con = duckdb_cursor()
    try:
        parquet_view(con, "signatures", sig_path)
        for kind, lsh, floor in ((WORDS, config.lsh, config.min_shingles),
                                 (SHORT, config.short_lsh, config.min_char_shingles)):
            table = query_arrow(con, load_sql(__file__, "dedup_candidates.sql"), {
                "kind": kind, "bands": int(lsh.bands), "rows": int(lsh.rows),
                "min_shingles": int(floor), "max_bucket": int(config.max_bucket)})
            pairs += zip(table["id_a"].to_pylist(), table["id_b"].to_pylist(),
                         [kind] * table.num_rows, strict=True)
    finally:
        con.close()
    return pairs


def exact_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard of two sorted arrays of distinct hashes (two empty sets are identical)."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def _write_outputs(out_root: Path, meta: pa.Table, parent: np.ndarray,
                   exact_pairs: list[tuple[int, int]],
                   near_pairs: list[tuple[str, str, float, str]],
                   config: DedupConfig, stats: DedupStats) -> None:
    n = meta.num_rows
    ids = meta["trajectory_id"].to_pylist()
    root = np.array([find(parent, i) for i in range(n)], dtype=np.int64)
    size = np.bincount(root, minlength=n)
    exact_child = np.zeros(n, dtype=bool)
    for _, child in exact_pairs:
        exact_child[child] = True
    best = np.zeros(n)
    position = {tid: i for i, tid in enumerate(ids)}
    for a, b, j, _ in near_pairs:
        for t in (position[a], position[b]):
            best[t] = max(best[t], j)
    best[exact_child] = 1.0
    kept = root == np.arange(n)
    reason = np.where(kept, np.where(size[root] > 1, "kept", "unique"),
                      np.where(exact_child, "exact_duplicate", "near_duplicate"))
    table = pa.table({
        "trajectory_id": meta["trajectory_id"],
        "domain": meta["domain"],
        "source": meta["source"],
        "source_path": meta["source_path"],
        "cluster_id": pa.array([ids[r] for r in root], pa.string()),
        "cluster_size": pa.array(size[root], pa.int64()),
        "kept": pa.array(kept),
        "reason": pa.array(reason.tolist(), pa.string()),
        "max_jaccard": pa.array(np.where(size[root] > 1, best, np.nan), pa.float64(),
                                from_pandas=True),
    })
    table = table.sort_by([("trajectory_id", "ascending")])
    metadata = {b"dedup_config": str(config).encode()}
    write_parquet(table.replace_schema_metadata(metadata), TRAJECTORY_DEDUP.path(out_root))
    pair_rows = sorted([(ids[a], ids[b], 1.0, "exact") for a, b in exact_pairs]
                       + near_pairs)
    pairs = pa.table({
        "id_a": pa.array([p[0] for p in pair_rows], pa.string()),
        "id_b": pa.array([p[1] for p in pair_rows], pa.string()),
        "jaccard": pa.array([p[2] for p in pair_rows], pa.float64()),
        "kind": pa.array([p[3] for p in pair_rows], pa.string()),
    })
    write_parquet(pairs.replace_schema_metadata(metadata), DUPLICATE_PAIRS.path(out_root))
    stats.kept = int(kept.sum())
    stats.removed = n - stats.kept
    stats.near_duplicates = int(np.count_nonzero(~kept & ~exact_child))
    stats.clusters = int(np.count_nonzero(kept & (size > 1)))
    stats.largest_cluster = int(size.max()) if n else 0
