"""The sensor that registers shard keys as sources arrive, for a deployment where files land in
the catalog's folders and nobody runs `worldtrace run` (which registers them itself).

Each tick walks the catalog (file names only: sources/shard_inputs.py) and adds the shard keys
its files hash to that the instance does not know yet; Dagster then shows the new domain x shard
partitions of the per-turn assets as missing, to be materialized from the UI or by a schedule.
Off by default: turn it on in the UI (Automation).
"""

import dagster as dg

from assets.partitions import shards
from assets.resources import WorldtraceStorage
from sources.schema import DOMAINS
from sources.storage import shard_order


@dg.sensor(minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.STOPPED,
           description="Adds the shard keys the catalog's files hash to (the `shard` dimension "
                       "of the per-turn partitions) as sources arrive.")
def shard_registry(context: dg.SensorEvaluationContext, storage: WorldtraceStorage
                   ) -> dg.SensorResult | dg.SkipReason:
    found = {key for domain in DOMAINS for key in storage.shards_for(domain)}
    known = set(context.instance.get_dynamic_partitions(shards.name))
    new = sorted(found - known, key=shard_order)
    if not new:
        return dg.SkipReason(f"no new shard (known: {', '.join(sorted(known, key=shard_order))})")
    return dg.SensorResult(dynamic_partitions_requests=[shards.build_add_request(new)])
