"""Scrubbing: raw_trajectories + raw_turns -> scrubbed_trajectories, scrubbed_turns, scrub_findings.

Credentials (API keys and tokens, private keys, passwords in URLs and env dumps), e-mail
addresses, phone numbers and IP addresses are replaced with typed placeholders numbered within
each trajectory (quality/scrub.py). Everything published is built from the scrubbed tables, and
a blocking check refuses them while a second pass still finds something.
"""

from collections.abc import Iterator

import dagster as dg
import pyarrow.parquet as pq

import quality.scrub
import quality.secrets
from assets.asset_info import asset_info, domain_check
from assets.partitions import domain_partitions
from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, records_table, table_metadata
from quality import checks
from quality.scrub import FINDINGS_COLUMN_DOCS, scrub_partition
from sources.schema import TRAJECTORY_COLUMN_DOCS, TURN_COLUMN_DOCS
from sources.storage import partition_path

SCRUBBED_TRAJECTORIES = dg.AssetKey("scrubbed_trajectories")
SCRUBBED_TURNS = dg.AssetKey("scrubbed_turns")
SCRUB_FINDINGS = dg.AssetKey("scrub_findings")

INFO = asset_info("curate", kinds={"parquet", "polars"}, code=[quality.scrub, quality.secrets],
                  pii="scrubbed")
PLACEHOLDER_NOTE = (" Secrets and personal data replaced by <SECRET_n>, <EMAIL_n>, <PHONE_n>,"
                    " <IP_n>.")


@dg.multi_asset(
    specs=[
        dg.AssetSpec(SCRUBBED_TRAJECTORIES, group_name="quality",
                     deps=["raw_trajectories", "raw_turns"],
                     description="raw_trajectories with task, system prompt and metadata "
                                 "scrubbed." + PLACEHOLDER_NOTE, **INFO),
        dg.AssetSpec(SCRUBBED_TURNS, group_name="quality", deps=["raw_trajectories", "raw_turns"],
                     description="raw_turns with actions and observations scrubbed; the same "
                                 "value keeps its placeholder across a trajectory."
                                 + PLACEHOLDER_NOTE, **INFO),
        dg.AssetSpec(SCRUB_FINDINGS, group_name="quality", deps=["raw_trajectories", "raw_turns"],
                     description="One row per replaced value: where (trajectory, turn, field), "
                                 "what kind, which placeholder. Never the value itself.",
                     **INFO),
    ],
    check_specs=[domain_check(
        "nothing_left_to_scrub", SCRUBBED_TURNS,
        "A second scrubbing pass over scrubbed_trajectories and scrubbed_turns finds no "
        "credential, e-mail address, phone number or IP address; blocking: nothing downstream "
        "is built from a table that fails it.", blocking=True)],
    partitions_def=domain_partitions,
)
def scrubbed_traces(context: dg.AssetExecutionContext, storage: WorldtraceStorage
                    ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Replace secrets and personal data in one domain's trajectories and turns."""
    domain = context.partition_key
    data = storage.data_path
    paths = {key: partition_path(data, key.path[-1], domain)
             for key in (SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, SCRUB_FINDINGS)}
    stats = scrub_partition(
        partition_path(data, "raw_trajectories", domain), partition_path(data, "raw_turns", domain),
        paths[SCRUBBED_TRAJECTORIES], paths[SCRUBBED_TURNS], paths[SCRUB_FINDINGS])
    context.log.info(f"{domain}: {stats.replaced} values replaced in {stats.trajectories} "
                     f"trajectories, {stats.turns} turns ({stats.turns_per_second:,.0f} turns/s)")
    counts = {
        "replaced": stats.replaced,
        "replaced_per_kind": dg.MetadataValue.md(records_table(
            [{"kind": kind, "values": n} for kind, n in sorted(stats.kinds.items())])),
        "replaced_per_field": dg.MetadataValue.md(records_table(
            [{"field": name, "values": n} for name, n in stats.fields.items()])),
        "turns_per_second": round(stats.turns_per_second),
    }
    docs = {SCRUBBED_TRAJECTORIES: (TRAJECTORY_COLUMN_DOCS,
                                    ["trajectory_id", "source", "task", "n_turns"]),
            SCRUBBED_TURNS: (TURN_COLUMN_DOCS,
                             ["trajectory_id", "turn_index", "action", "observation"]),
            SCRUB_FINDINGS: (FINDINGS_COLUMN_DOCS,
                             ["trajectory_id", "turn_index", "field", "kind", "placeholder"])}
    for key, (column_docs, preview) in docs.items():
        yield dg.MaterializeResult(asset_key=key, metadata={
            **table_metadata(paths[key], pq.read_schema(paths[key]), column_docs, preview),
            **counts})
    yield check_result("nothing_left_to_scrub", checks.nothing_left_to_scrub(
        paths[SCRUBBED_TRAJECTORIES], paths[SCRUBBED_TURNS]), asset_key=SCRUBBED_TURNS)
