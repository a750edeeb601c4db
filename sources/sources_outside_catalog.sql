-- The sources with trajectories in a partition that the catalog ($sources) does not name.
SELECT source, count(*) AS trajectories
FROM read_parquet($path)
WHERE NOT list_contains($sources, source)
GROUP BY source
ORDER BY source
