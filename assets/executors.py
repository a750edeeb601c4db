"""Which Dagster executor runs the steps of a run: chosen once per deployment, by environment.

Unset, it is Dagster's default (multiprocess, or in-process by run config), what `make run`
uses. `WORLDTRACE_EXECUTOR=dask` runs each step as a task on a Dask cluster (dagster-dask): the
run's process plans the steps and hands them to the scheduler, which places each on a free
worker process, here or on other machines. The scheduler's address is run config:

    execution:
      config:
        cluster:
          existing:
            address: tcp://127.0.0.1:8786

Dask rather than Celery: a Dask scheduler and its workers are Python processes that pip installs
(`dask scheduler`, `dask worker`), so CI starts a real cluster; Celery needs a broker (Redis or
RabbitMQ) that pip does not install. Every process of the deployment (the code location, the
run workers, the Dask workers) must see the same variable, since each one imports
assets.definitions and the run's executor config must match the job's executor there too.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator

import dagster as dg

EXECUTOR_VARIABLE = "WORLDTRACE_EXECUTOR"
EXECUTORS = ("dask",)  # besides the default (unset)

# dagster-dask's cluster types: where each one's class lives (the extra packages are the user's).
DASK_CLUSTERS = {
    "local": ("dask.distributed", "LocalCluster"), "ssh": ("dask.distributed", "SSHCluster"),
    "yarn": ("dask_yarn", "YarnCluster"), "kube": ("dask_kubernetes", "KubeCluster"),
    **{name: ("dask_jobqueue", f"{name.upper()}Cluster")
       for name in ("pbs", "moab", "sge", "lsf", "slurm", "oar")},
}


def executor_from_environment() -> dg.ExecutorDefinition | None:
    """$WORLDTRACE_EXECUTOR's executor; None (Dagster's default) when it is unset or empty."""
    name = os.environ.get(EXECUTOR_VARIABLE, "")
    if not name:
        return None
    if name == "dask":
        return run_scoped_dask_executor()
    raise ValueError(f"${EXECUTOR_VARIABLE}={name!r}: known executors are {EXECUTORS} "
                     "(or unset for Dagster's default)")


def run_scoped_dask_executor() -> dg.ExecutorDefinition:
    """dagster-dask's executor (same name, config and cluster types) with two fixes that
    tests/test_dask_executor.py found. Every task's key is unique to its run: upstream keys a
    step's task `{job}.{step}`, so two runs of one job on one cluster (two domains of main_job)
    shared keys and Dask handed the second run the first run's results: it "succeeded" without
    running a step and wrote nothing. And a re-execution from failure runs: upstream waits on
    the future of every step a step reads, and the steps that passed in the parent run have
    none (KeyError)."""
    import dask.distributed  # the `dask` extra; only this deployment needs it
    from dagster_dask.executor import (
        DaskExecutor,
        dask_executor,
        get_dask_resource_requirements,
        query_on_dask_worker,
    )

    class RunScopedDaskExecutor(DaskExecutor):
        def execute(self, plan_context, execution_plan) -> Iterator[dg.DagsterEvent]:
            if not plan_context.instance.is_persistent:
                raise dg.DagsterInvariantViolationError(
                    "the Dask executor needs a persistent Dagster instance: set DAGSTER_HOME")
            job, run_id = plan_context.job_name, plan_context.run_id
            with dask.distributed.Client(self._cluster(job)) as client:
                futures: dict[str, dask.distributed.Future] = {}
                for level in execution_plan.get_steps_to_execute_by_level():
                    for step in level:  # a step waits for the futures of the steps it reads
                        after = [futures[key] for step_input in step.step_inputs
                                 for key in step_input.dependency_keys
                                 if key in futures]  # else done by the run re-executed
                        futures[step.key] = client.submit(
                            query_on_dask_worker, after, plan_context.reconstructable_job,
                            plan_context.dagster_run, plan_context.run_config, [step.key],
                            plan_context.instance.get_ref(), execution_plan.known_state,
                            key=f"{job}.{run_id}.{step.key}",
                            resources=get_dask_resource_requirements(step.tags))
                for _, events in dask.distributed.as_completed(list(futures.values()),
                                                               with_results=True):
                    yield from events

        def _cluster(self, job: str):
            """The scheduler's address, or a cluster of the configured type."""
            if self.cluster_type == "existing":
                return self.cluster_configuration["address"]
            module, name = DASK_CLUSTERS[self.cluster_type]
            return getattr(importlib.import_module(module), name)(**self.build_dict(job))

    @dg.executor(name=dask_executor.name, config_schema=dask_executor.config_schema,
                 requirements=dg.multiple_process_executor_requirements())
    def run_scoped_dask(init_context: dg.InitExecutorContext) -> RunScopedDaskExecutor:
        ((cluster_type, cluster_configuration),) = init_context.executor_config["cluster"].items()
        return RunScopedDaskExecutor(cluster_type, cluster_configuration)

    return run_scoped_dask
