-- Every turn of one pool ($pool) of one domain, with its trajectory's task, metadata (the GUI
-- initial screen) and its label, in
-- trajectory order (one episode after another). Paths: the domain's partitions of
-- trajectory_split ($split), scrubbed_trajectories ($trajectories), scrubbed_turns ($turns)
-- and turn_labels ($labels).
SELECT s.trajectory_id, tr.task, tr.metadata, t.turn_index, t.action, t.observation,
       t.observation_format, l.category, l.loss_weight, t.exit_code, t.is_error,
       t.action_kind, t.tool_name
FROM read_parquet($split) AS s
JOIN read_parquet($trajectories) AS tr USING (trajectory_id)
JOIN read_parquet($turns) AS t USING (trajectory_id)
JOIN read_parquet($labels) AS l USING (trajectory_id, turn_index)
WHERE s.pool = $pool
ORDER BY s.trajectory_id, t.turn_index
