-- Exact and near duplicates removed per domain.
SELECT domain, count(*) AS trajectories, count(*) FILTER (kept) AS kept,
       count(*) FILTER (reason = 'exact_duplicate') AS exact_duplicates,
       count(*) FILTER (reason = 'near_duplicate') AS near_duplicates
FROM read_parquet($table) GROUP BY domain ORDER BY domain
