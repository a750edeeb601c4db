-- Every turn of the chosen trajectories, in order (one pass builds all their samples).
-- Views: turns (scrubbed_turns), chosen (trajectory_id).
SELECT trajectory_id, turn_index, action, observation FROM turns
JOIN chosen USING (trajectory_id) ORDER BY trajectory_id, turn_index
