"""A per-shard check reruns without its asset (issue 15): materialize one domain's shard, then
run only shard_checks_job for that partition (`domain|shard` as the run's tag: Dagster 1.13
takes no partition key for a run of checks only), after the table changed on disk."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets.checks import domain_checks
from assets.ingest import raw_traces
from assets.jobs import CHECK_PARTITION_TAG, checks_jobs
from assets.partitions import register_shards, shard_key
from assets.resources import WorldtraceStorage

EXAMPLE_CATALOG = Path(__file__).resolve().parent.parent / "sources.example.toml"


def test_a_check_reruns_alone_on_the_table_on_disk(traces_dir: Path, tmp_path: Path) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path), catalog=str(EXAMPLE_CATALOG))
    checks = domain_checks([raw_traces])
    defs = dg.Definitions(assets=[raw_traces], asset_checks=checks, jobs=checks_jobs(checks),
                          resources={"storage": storage})
    instance = dg.DagsterInstance.ephemeral()
    register_shards(instance, ["0"])
    partition = shard_key("terminal", "0")
    assert dg.materialize([raw_traces, *checks], partition_key=partition, instance=instance,
                          resources={"storage": storage}).success
    job = defs.resolve_job_def("shard_checks_job")
    with pytest.raises(Exception, match="no PartitionsDefinition shared"):  # a CheckError
        job.execute_in_process(partition_key=partition, instance=instance)

    turns = tmp_path / "raw_turns" / "domain=terminal" / "shard=0" / "part-0.parquet"
    pq.write_table(pq.read_table(turns).drop_columns(["exit_code"]), turns)
    result = job.execute_in_process(instance=instance, raise_on_error=False,
                                    tags={CHECK_PARTITION_TAG: str(partition)})
    assert result.get_asset_materialization_events() == []  # nothing recomputed
    verdicts = {(c.asset_key.to_user_string(), c.check_name): c.passed
                for c in result.get_asset_check_evaluations()}
    # all but records_reconcile and not_empty, which their asset's run reports
    assert len(verdicts) == 6
    assert verdicts[("raw_turns", "schema")] is False  # the column dropped on disk
    assert verdicts[("raw_trajectories", "schema")] is True
    assert result.dagster_run.tags[CHECK_PARTITION_TAG] == "terminal|0"
