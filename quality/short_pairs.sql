-- Exact jaccard_max_prev for small observations: the highest Jaccard between an observation and
-- an earlier one of its trajectory, over observations with at most $exact_max_shingles distinct
-- shingles (quality/features.py says why; larger pairs get a MinHash estimate).
--
-- Input `short_shingles(traj, turn, h, size)`: the distinct shingles of each small observation
-- and its number of distinct shingles. Only pairs that share a shingle appear; a pair sharing
-- none has Jaccard 0.

WITH pairs AS (
    SELECT
        later.traj,
        later.turn,
        count(*) AS shared,
        any_value(later.size) AS later_size,
        any_value(earlier.size) AS earlier_size
    FROM short_shingles AS later
    JOIN short_shingles AS earlier
        ON earlier.traj = later.traj AND earlier.h = later.h AND earlier.turn < later.turn
    GROUP BY later.traj, later.turn, earlier.turn
)
SELECT traj, turn, max(shared / (later_size + earlier_size - shared)) AS short_max_jaccard
FROM pairs
GROUP BY traj, turn
ORDER BY traj, turn
