-- Group keys (source tasks) with runs in both train and bench, across trajectory_split ($path).
SELECT count(*) FROM (
    SELECT group_key FROM read_parquet($path)
    WHERE pool IN ('train', 'bench')
    GROUP BY group_key HAVING count(DISTINCT pool) > 1)
