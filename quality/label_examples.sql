-- The first $per_category turns of each category (labels joined to their turns), for a preview.
SELECT l.category, l.trajectory_id, l.turn_index, t.action, t.observation
FROM read_parquet($labels) AS l
JOIN read_parquet($turns) AS t USING (trajectory_id, turn_index)
QUALIFY row_number() OVER (PARTITION BY l.category
                           ORDER BY l.trajectory_id, l.turn_index) <= $per_category
ORDER BY l.category, l.trajectory_id, l.turn_index
