"""A per-domain check reruns without its asset (issue 15): materialize one domain, then run
only domain_checks_job for that domain (the partition as the run's tag: Dagster 1.13 takes no
partition key for a run of checks only), after the table changed on disk."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets.checks import domain_checks
from assets.ingest import raw_traces
from assets.jobs import CHECK_PARTITION_TAG, checks_job
from assets.resources import WorldtraceStorage

EXAMPLE_CATALOG = Path(__file__).resolve().parent.parent / "sources.example.toml"


def test_a_check_reruns_alone_on_the_table_on_disk(traces_dir: Path, tmp_path: Path) -> None:
    storage = WorldtraceStorage(data_dir=str(tmp_path), catalog=str(EXAMPLE_CATALOG))
    checks = domain_checks([raw_traces])
    defs = dg.Definitions(assets=[raw_traces], asset_checks=checks, jobs=[checks_job(checks)],
                          resources={"storage": storage})
    instance = dg.DagsterInstance.ephemeral()
    assert dg.materialize([raw_traces, *checks], partition_key="terminal", instance=instance,
                          resources={"storage": storage}).success
    job = defs.resolve_job_def("domain_checks_job")
    with pytest.raises(Exception, match="no PartitionsDefinition shared"):  # a CheckError
        job.execute_in_process(partition_key="terminal", instance=instance)

    turns = tmp_path / "raw_turns" / "domain=terminal" / "shard=0" / "part-0.parquet"
    pq.write_table(pq.read_table(turns).drop_columns(["exit_code"]), turns)
    result = job.execute_in_process(instance=instance, raise_on_error=False,
                                    tags={CHECK_PARTITION_TAG: "terminal"})
    assert result.get_asset_materialization_events() == []  # nothing recomputed
    verdicts = {(c.asset_key.to_user_string(), c.check_name): c.passed
                for c in result.get_asset_check_evaluations()}
    assert len(verdicts) == 7  # all but records_reconcile, which its asset run reports
    assert verdicts[("raw_turns", "schema")] is False  # the column dropped on disk
    assert verdicts[("raw_trajectories", "schema")] is True
    assert result.dagster_run.tags[CHECK_PARTITION_TAG] == "terminal"
