SELECT d.cluster_id, tr.source, tr.source_path
FROM read_parquet($decisions) AS d
JOIN read_parquet($trajectories) AS tr USING (trajectory_id)
WHERE d.cluster_size > 1
ORDER BY d.cluster_id, tr.source, tr.source_path
