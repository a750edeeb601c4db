-- Candidate target turns of one domain: judgeable turns (the listed categories) of the bench-pool
-- trajectories, each with a seeded draw. `pick` orders a trajectory's own turns (1 = its first
-- draw), `trajectory_draw` orders the trajectories; both are sources.ids.seeded_digest (SHA-256
-- of the seed and the ids joined by ':', here as hex, which orders as the digest does), so the
-- choice is the same on every machine, does not depend on file row order, and is the draw every
-- other seeded choice makes (SFT / RL target turns, the split, prompt variants).
-- Views: turns (scrubbed_turns), labels (turn_labels), pool (trajectory_id of the bench pool).

WITH eligible AS (
    SELECT t.trajectory_id, t.turn_index, t.source, l.category
    FROM turns AS t
    JOIN labels AS l USING (trajectory_id, turn_index)
    JOIN pool AS p USING (trajectory_id)
    WHERE list_contains($categories, l.category)
)
SELECT
    trajectory_id,
    turn_index,
    source,
    category,
    row_number() OVER (
        PARTITION BY trajectory_id
        ORDER BY sha256($seed || ':' || trajectory_id || ':' || turn_index::VARCHAR)
    ) AS pick,
    sha256($seed || ':' || trajectory_id) AS trajectory_draw
FROM eligible
ORDER BY source, pick, trajectory_draw, turn_index
