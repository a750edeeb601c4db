-- The trajectory_dedup rows of one domain ($path: the decisions file, $domain), by id.
SELECT * FROM read_parquet($path) WHERE domain = $domain ORDER BY trajectory_id
