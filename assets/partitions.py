"""Partitions: every asset of the pipeline is split by the seven domains.

Past one machine, each domain partition runs as its own step (multiprocess executor here,
k8s / celery executors on a cluster); a domain x shard multi-partition is the next step.
"""

import dagster as dg

from sources.schema import DOMAINS

domain_partitions = dg.StaticPartitionsDefinition(list(DOMAINS))
