-- The turns, in order, of the bench-pool trajectories of one domain, with their catalog source
-- (never the train pool: a model is not scored on sessions it trained on).
-- $turns: the domain's scrubbed_turns partition; $split: its trajectory_split partition.
SELECT t.trajectory_id, t.source, t.action, t.observation
FROM read_parquet($turns) AS t
JOIN read_parquet($split) AS s USING (trajectory_id)
WHERE s.pool = 'bench'
ORDER BY t.trajectory_id, t.turn_index
