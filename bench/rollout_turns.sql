-- Every turn, in order, of the wanted trajectories (view wanted: trajectory_id) from one
-- domain's raw_turns partition ($path).
SELECT trajectory_id, action, observation FROM read_parquet($path)
JOIN wanted USING (trajectory_id) ORDER BY trajectory_id, turn_index
