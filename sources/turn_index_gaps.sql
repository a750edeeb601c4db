-- A trajectory with turns 0..n-1 has max(turn_index) = n - 1 and n distinct indices.
SELECT count(*) AS trajectories_with_gaps FROM (
    SELECT trajectory_id FROM read_parquet($path)
    GROUP BY trajectory_id
    HAVING min(turn_index) <> 0 OR max(turn_index) + 1 <> count(DISTINCT turn_index)
)
