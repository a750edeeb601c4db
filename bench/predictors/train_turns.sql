-- Every turn of the train pool of one domain, with the observation before it (the retrieval
-- key's recent context), in a fixed order so ties resolve the same way on every run.
-- Views: split (trajectory_split), turns (raw_turns).
SELECT
    t.action,
    coalesce(lag(t.observation) OVER (PARTITION BY t.trajectory_id ORDER BY t.turn_index), '')
        AS previous_observation,
    t.observation
FROM turns AS t
JOIN split AS s USING (trajectory_id)
WHERE s.pool = 'train'
ORDER BY t.trajectory_id, t.turn_index
