SELECT count(*) FROM read_parquet($turns) AS t
ANTI JOIN read_parquet($labels) AS l USING (trajectory_id, turn_index)
