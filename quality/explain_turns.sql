-- How many labelled turns a trajectory has (0: not in turn_labels), for `quality explain`.
SELECT count(*) FROM read_parquet($labels) WHERE trajectory_id = $trajectory_id
