-- Candidate (train, bench) pairs for decontamination, by LSH banding over the stored MinHash
-- signatures of trajectory_dedup (one per kept trajectory, of its kind: word or character
-- shingles). Input views: `signatures(trajectory_id, kind, n_shingles, signature)` and
-- `pools(trajectory_id, pool)`. Only train x bench pairs of the same kind are formed; the caller
-- estimates each pair's Jaccard from the signatures and keeps those at the threshold.

WITH band_keys AS (
    SELECT
        s.trajectory_id, p.pool, s.kind, band,
        hash(s.signature[band * $rows + 1 : (band + 1) * $rows]) AS bucket
    FROM signatures AS s
    JOIN pools AS p USING (trajectory_id)
    CROSS JOIN range($bands) AS bands(band)
    WHERE s.n_shingles >= $min_shingles
)
SELECT DISTINCT t.trajectory_id AS train_id, b.trajectory_id AS bench_id
FROM band_keys AS t
JOIN band_keys AS b
    ON t.kind = b.kind AND t.band = b.band AND t.bucket = b.bucket
WHERE t.pool = 'train' AND b.pool = 'bench'
ORDER BY train_id, bench_id
