-- trajectory_id -> pool of one domain's trajectory_split partition ($path).
SELECT trajectory_id, pool FROM read_parquet($path)
