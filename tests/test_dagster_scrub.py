"""The scrubbing assets on a real Dagster instance, over the real fixtures."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from shard_runs import materialize_domain

from assets.checks import domain_checks
from assets.ingest import raw_traces
from assets.resources import WorldtraceStorage
from assets.scrub import scrubbed_traces

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_scrubbed_traces_replace_fixture_emails_and_pass_the_blocking_check(
    traces_dir: Path, tmp_path: Path
) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path),
                                catalog=str(REPO_ROOT / "sources.example.toml"))
    result = materialize_domain([raw_traces, scrubbed_traces, *domain_checks([scrubbed_traces])],
                                "mcp", storage)
    assert result.success
    scrub_checks = [c for c in result.get_asset_check_evaluations()
                    if c.check_name == "nothing_left_to_scrub"]
    assert [c.passed for c in scrub_checks] == [True]
    spec = next(iter(domain_checks([scrubbed_traces])[0].check_specs))
    assert spec.blocking and spec.description
    metadata = {e.asset_key.to_user_string(): e.materialization.metadata
                for e in result.get_asset_materialization_events()}
    assert metadata["scrubbed_turns"]["replaced"].value > 0
    assert "email" in metadata["scrub_findings"]["replaced_per_kind"].value
    turns = pq.read_table(tmp_path / "scrubbed_turns" / "domain=mcp" / "shard=0" / "part-0.parquet")
    raw = pq.read_metadata(tmp_path / "raw_turns" / "domain=mcp" / "shard=0" / "part-0.parquet")
    assert turns.num_rows == raw.num_rows
    assert "<EMAIL_1>" in "\n".join(turns["observation"].to_pylist())
