-- The trajectory facts a bench sample carries, for the chosen trajectories.
-- Views: trajectories (scrubbed_trajectories), chosen (trajectory_id).
SELECT trajectory_id, source, task, metadata, n_turns FROM trajectories JOIN chosen USING (trajectory_id)
