-- Per domain of trajectory_dedup ($decisions): trajectories, kept, exact and near duplicates
-- removed, and removed ones whose kept member sits in another domain.
WITH d AS (SELECT * FROM read_parquet($decisions))
SELECT d.domain, count(*) AS trajectories, count(*) FILTER (d.kept) AS kept,
       count(*) FILTER (d.reason = 'exact_duplicate') AS exact,
       count(*) FILTER (d.reason = 'near_duplicate') AS near,
       count(*) FILTER (NOT d.kept AND k.domain <> d.domain) AS across_domains
FROM d JOIN d AS k ON k.trajectory_id = d.cluster_id
GROUP BY d.domain ORDER BY d.domain
