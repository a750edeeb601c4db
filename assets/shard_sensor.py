"""The sensor that registers shard keys as sources arrive, for a deployment where files land in
the catalog's folders and nobody runs `worldtrace run` (which registers them itself).

Each tick walks the catalog (file names only: sources/shard_inputs.py) and adds the shard keys
its files hash to that the instance does not know yet; Dagster then shows the new domain x shard
partitions of the per-turn assets as missing, to be materialized from the UI or by a schedule.
Off by default: turn it on in the UI (Automation).
"""

import dagster as dg

from assets.partitions import shards, unknown_shards
from assets.resources import WorldtraceStorage
from sources.schema import DOMAINS
from sources.storage import shard_order


@dg.sensor(minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.STOPPED,
           description="Adds the shard keys the catalog's files hash to (the `shard` dimension "
                       "of the per-turn partitions) as sources arrive.")
def shard_registry(context: dg.SensorEvaluationContext, storage: WorldtraceStorage
                   ) -> dg.SensorResult | dg.SkipReason:
    found = sorted({key for domain in DOMAINS for key in storage.shards_for(domain)},
                   key=shard_order)
    new = unknown_shards(context.instance, found)
    if not new:
        return dg.SkipReason(f"no new shard (the catalog's, all known: {', '.join(found)})")
    return dg.SensorResult(dynamic_partitions_requests=[shards.build_add_request(new)])
