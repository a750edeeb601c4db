"""Scrubbing: raw_trajectories + raw_turns -> scrubbed_trajectories, scrubbed_turns, scrub_findings.

Credentials (API keys and tokens, private keys, passwords in URLs and env dumps), e-mail
addresses, phone numbers and IP addresses are replaced with typed placeholders numbered within
each trajectory (quality/scrub.py). Everything published is built from the scrubbed tables, and
a blocking check (nothing_left_to_scrub, assets/checks.py) refuses them while a second pass
still finds something.
"""

from collections.abc import Iterator

import dagster as dg

import quality.scrub
import quality.secrets
from assets.asset_info import asset_info
from assets.partitions import domain_and_shard, shard_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import reads, records_table, table_metadata
from quality.sharded import scrub_shard
from quality.tables import SCRUB_FINDINGS, SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

PREVIEWS = {SCRUBBED_TRAJECTORIES: ["trajectory_id", "source", "task", "n_turns"],
            SCRUBBED_TURNS: ["trajectory_id", "turn_index", "action", "observation"],
            SCRUB_FINDINGS: ["trajectory_id", "turn_index", "field", "kind", "placeholder"]}

INFO = asset_info("curate", kinds={"parquet", "polars"}, code=[quality.scrub, quality.secrets],
                  pii="scrubbed")


@dg.multi_asset(
    specs=[dg.AssetSpec(table.name, group_name="quality", description=table.description,
                        deps=reads(RAW_TRAJECTORIES, RAW_TURNS), **INFO) for table in PREVIEWS],
    partitions_def=shard_partitions,
)
def scrubbed_traces(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                    ) -> Iterator[dg.MaterializeResult]:
    """Replace secrets and personal data in the trajectories and turns of one shard of a
    domain."""
    domain, shard = domain_and_shard(context)
    data = storage.data_path
    stats = scrub_shard(data, data, domain, shard)
    context.log.info(f"{domain} shard {shard}: {stats.replaced} values replaced in "
                     f"{stats.trajectories} trajectories, {stats.turns} turns "
                     f"({stats.turns_per_second:,.0f} turns/s)")
    counts = {
        "replaced": stats.replaced,
        "replaced_per_kind": dg.MetadataValue.md(records_table(
            [{"kind": kind, "values": n} for kind, n in sorted(stats.kinds.items())])),
        "replaced_per_field": dg.MetadataValue.md(records_table(
            [{"field": name, "values": n} for name, n in stats.fields.items()])),
        "turns_per_second": round(stats.turns_per_second),
    }
    for table, preview in PREVIEWS.items():
        yield dg.MaterializeResult(asset_key=table.name, metadata={
            **table_metadata(table, data, domain, preview, shard), **counts})
