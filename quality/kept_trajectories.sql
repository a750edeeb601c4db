-- The trajectories dedup kept ($decisions: trajectory_dedup) among the raw_trajectories
-- partitions ($trajectories glob) of the listed $domains, by id.
SELECT t.trajectory_id, t.domain, t.source, t.task, t.metadata
FROM read_parquet($trajectories, hive_partitioning = false) AS t
JOIN read_parquet($decisions) AS d USING (trajectory_id)
WHERE d.kept AND list_contains($domains::VARCHAR[], t.domain)
ORDER BY t.trajectory_id
