"""Partitions: every asset of the pipeline is split by the seven domains.

Past one machine, each domain partition runs as its own step (multiprocess executor here,
Dask on a cluster: assets/executors.py). The per-turn tables are already cut into shards on disk
(sources/shards.py), and a domain's step runs its shards one after the other; a domain x shard
multi-partition is the next step.
"""

import dagster as dg

from sources.schema import DOMAINS

domain_partitions = dg.StaticPartitionsDefinition(list(DOMAINS))
