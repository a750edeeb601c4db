-- Trajectories per pool and domain (contaminated: train runs too close to a bench run).
SELECT domain, count(*) FILTER (pool = 'train') AS train,
       count(*) FILTER (pool = 'bench') AS bench,
       count(*) FILTER (pool = 'contaminated') AS contaminated
FROM read_parquet($table) GROUP BY domain ORDER BY domain
