SELECT count(*) AS mismatched FROM read_parquet($trajectories) AS t
LEFT JOIN (
    SELECT trajectory_id, count(*) AS n FROM read_parquet($turns) GROUP BY trajectory_id
) AS c USING (trajectory_id)
WHERE coalesce(c.n, 0) <> t.n_turns
