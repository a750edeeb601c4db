"""Training data: trajectory_dedup -> trajectory_split -> tokenizer, cpt_corpus, sft_split,
rl_split, rl_split_all_turns.

These assets are not partitioned: the split, the tokenizer and the corpora are built over every
domain present at once (a tokenizer trained on one domain would not fit the others), and each
writes its tables in the usual per-domain layout, {data}/{table}/domain={d}/part-0.parquet.
"""

import time
from collections.abc import Iterator

import dagster as dg
import pyarrow.parquet as pq

from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, column_schema, markdown_preview, records_table
from sources.schema import DOMAINS
from sources.storage import partition_path
from training.decontaminate import DecontaminationConfig
from training.split import (
    SPLIT_COLUMN_DOCS,
    SplitConfig,
    groups_in_one_pool,
    split_trajectories,
)

GROUP = "training"


def domain_tables_metadata(data_dir, table: str, docs: dict[str, str],
                           preview_columns: list[str] | None = None) -> dict:
    """Row count, column schema and a preview of a table written in the per-domain layout."""
    paths = [p for d in DOMAINS if (p := partition_path(data_dir, table, d)).exists()]
    if not paths:
        return {"dagster/row_count": 0}
    return {
        "dagster/row_count": sum(pq.read_metadata(p).num_rows for p in paths),
        "dagster/column_schema": column_schema(pq.read_schema(paths[0]), docs),
        "path": dg.MetadataValue.path(str(paths[0].parent.parent)),
        "preview": dg.MetadataValue.md(markdown_preview(paths[0], preview_columns)),
    }


class SplitSettings(dg.Config):
    """Bench share, seed of the pool hash, decontamination threshold (MinHash Jaccard)."""

    bench_share: float = 0.15
    seed: int = 0
    contamination_threshold: float = 0.5


@dg.asset(group_name=GROUP, deps=["trajectory_dedup"],
          check_specs=[dg.AssetCheckSpec("groups_in_one_pool", asset="trajectory_split")])
def trajectory_split(context: dg.AssetExecutionContext, config: SplitSettings,
                     storage: WorldtraceStorage) -> Iterator[dg.MaterializeResult
                                                             | dg.AssetCheckResult]:
    """Every trajectory kept by dedup in the train or the bench pool, by a stable hash of its
    source task (runs of one task never straddle the split); train runs that are near copies
    of a bench run (MinHash over the stored dedup signatures) move to `contaminated`."""
    split_config = SplitConfig(
        bench_share=config.bench_share, seed=config.seed,
        decontamination=DecontaminationConfig(threshold=config.contamination_threshold))
    started = time.perf_counter()
    stats = split_trajectories(storage.data_path, DOMAINS, split_config)
    seconds = time.perf_counter() - started
    rows = stats.rows()
    context.log.info(f"split {stats.trajectories} trajectories in {seconds:.1f}s: "
                     + ", ".join(f"{r['domain']} {r['train']}/{r['bench']}/{r['contaminated']}"
                                 for r in rows))
    yield dg.MaterializeResult(metadata={
        **domain_tables_metadata(storage.data_path, "trajectory_split", SPLIT_COLUMN_DOCS),
        "config": str(split_config),
        "pools_per_domain": dg.MetadataValue.md(records_table(rows)),
        **{f"{pool}_trajectories": sum(r[pool] for r in rows)
           for pool in ("train", "bench", "contaminated")},
        **{f"contaminated_{r['domain']}": r["contaminated"] for r in rows},
        **{f"{pool}_groups": n for pool, n in stats.groups.items()},
        "seconds": round(seconds, 2),
    })
    yield check_result("groups_in_one_pool", groups_in_one_pool(storage.data_path))
