"""Trace factory stage: the built-in default data, written in the native formats.

Real collectors (a sandboxed bash, git + pytest, MCP servers over stdio, a local search engine,
a local web app; Android and OS are modeled) and the seeded scale generator each write files
that the readers then ingest like any user's data.
"""

import time

import dagster as dg

import sources.factory
from assets.asset_info import asset_info
from assets.partitions import domain_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import records_table
from sources.factory.collect import collect_domain
from sources.factory.scale import generate_corpus


class FactoryConfig(dg.Config):
    """How much default data to make, and from which seed."""

    collected_trajectories: int = 40
    generated_trajectories: int = 300
    seed: int = 0


@dg.asset(partitions_def=domain_partitions, group_name="sources",
          **asset_info("ingest", kinds={"python", "json"}, code=[sources.factory]))
def generated_traces(
    context: dg.AssetExecutionContext, config: FactoryConfig, storage: WorldtraceStorage
) -> dg.MaterializeResult:
    """Native-format trace files for one domain: real-collector runs plus scale-generator runs
    with planted ground truth, under `{data}/generated/<domain>/`."""
    domain = context.partition_key
    out_dir = storage.data_path / "generated"
    started = time.perf_counter()
    collected = collect_domain(domain, out_dir, config.collected_trajectories, config.seed)
    collected_seconds = time.perf_counter() - started
    context.log.info(f"{domain}: collected {collected}")
    generated = generate_corpus(out_dir, [domain], config.generated_trajectories, config.seed)
    context.log.info(f"{domain}: generated {generated}")
    sources_made = [
        {"source": collected.source, "how": "real run" if collected.real else "modeled UI",
         "format": collected.format, "trajectories": collected.n_trajectories,
         "turns": collected.n_turns, "seconds": round(collected.seconds, 2)},
        *({"source": f"{name}-generated", "how": "scale generator (planted truth)",
           "format": "native", "trajectories": stats.trajectories, "turns": stats.turns,
           "seconds": round(generated.wall_seconds, 2)}
          for name, stats in generated.domains.items()),
    ]
    return dg.MaterializeResult(
        metadata={
            "sources": dg.MetadataValue.md(records_table(sources_made)),
            "trajectories": sum(row["trajectories"] for row in sources_made),
            "turns": sum(row["turns"] for row in sources_made),
            "settings": dg.MetadataValue.json(config.model_dump()),
            "collect_seconds": round(collected_seconds, 2),
            "total_seconds": round(time.perf_counter() - started, 2),
            "path": dg.MetadataValue.path(str(out_dir / domain)),
        }
    )
