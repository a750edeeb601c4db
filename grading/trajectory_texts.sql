-- `wanted` is a temp table of (source, source_path) filled before the query runs.
SELECT tr.source, tr.source_path, tr.task, list(t.action ORDER BY t.turn_index),
       list(t.observation ORDER BY t.turn_index)
FROM read_parquet($trajectories) AS tr
JOIN wanted USING (source, source_path)
LEFT JOIN read_parquet($turns) AS t USING (trajectory_id)
GROUP BY ALL
