-- Candidate near-duplicate pairs by LSH banding over stored MinHash signatures.
--
-- Input `signatures(trajectory_id, kind, n_shingles, signature uint32[num_perm])`; only the
-- signatures of one `kind` of shingles ($kind: word n-grams, or character n-grams for short
-- trajectories) are banded together. The first $bands * $rows values are cut into $bands bands
-- of $rows; two trajectories that agree on a whole band share that band's bucket and become a
-- candidate pair (checked exactly afterwards). Signatures under $min_shingles shingles take no
-- part: a handful of shingles makes unrelated tiny texts look alike; exact duplicates catch
-- their copies. A bucket with more than $max_bucket members pairs each member with its first
-- one only (a star): union-find joins them all the same, at n - 1 checks instead of
-- n (n - 1) / 2.

WITH band_keys AS (
    SELECT
        trajectory_id,
        band,
        hash(signature[band * $rows + 1 : (band + 1) * $rows]) AS bucket
    FROM signatures, range($bands) AS bands(band)
    WHERE kind = $kind AND n_shingles >= $min_shingles
),
members AS (
    SELECT
        band, bucket, trajectory_id,
        row_number() OVER bucket_window AS k,
        count(*) OVER bucket_window AS size
    FROM band_keys
    WINDOW bucket_window AS (PARTITION BY band, bucket ORDER BY trajectory_id
                             ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
),
small AS (SELECT * FROM members WHERE size > 1 AND size <= $max_bucket),
large AS (SELECT * FROM members WHERE size > $max_bucket),
pairs AS (
    SELECT a.trajectory_id AS id_a, b.trajectory_id AS id_b
    FROM small AS a
    JOIN small AS b ON a.band = b.band AND a.bucket = b.bucket AND a.k < b.k
    UNION ALL
    SELECT first.trajectory_id, other.trajectory_id
    FROM (SELECT * FROM large WHERE k = 1) AS first
    JOIN (SELECT * FROM large WHERE k > 1) AS other
        ON first.band = other.band AND first.bucket = other.bucket
)
SELECT DISTINCT id_a, id_b
FROM pairs
ORDER BY id_a, id_b
