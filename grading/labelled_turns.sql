-- Each hand-labelled turn with the category the policy gave it (its rule, whether it is
-- ambiguous) and its turn features.
-- `wanted` holds the labels file (file, position, turn_index, label, source, line);
-- a labelled turn that matches no ingested turn comes back with a NULL predicted category.
SELECT
    w.line,
    w.file,
    w.position,
    w.turn_index,
    w.label,
    w.source,
    l.category AS predicted,
    l.rule,
    l.ambiguous,
    f.* EXCLUDE (trajectory_id, turn_index, source)
FROM wanted AS w
LEFT JOIN read_parquet($trajectories) AS tr
    ON tr.source_path = w.file AND tr.source_position = w.position
LEFT JOIN read_parquet($labels) AS l
    ON l.trajectory_id = tr.trajectory_id AND l.turn_index = w.turn_index
LEFT JOIN read_parquet($features, hive_partitioning = false) AS f
    ON f.trajectory_id = tr.trajectory_id AND f.turn_index = w.turn_index
ORDER BY w.line
