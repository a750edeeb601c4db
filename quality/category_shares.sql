-- Per domain, each listed category's share of turns (rounded to $digits), from turn-labelled
-- Parquet ($path: a file or glob with domain and category columns). One row per (domain,
-- category), every listed category present (share 0 when it has no turn).
SELECT l.domain, c.category, round(avg((l.category = c.category)::INT), $digits) AS share
FROM read_parquet($path) AS l
CROSS JOIN unnest($categories::VARCHAR[]) AS c(category)
GROUP BY l.domain, c.category
ORDER BY l.domain, c.category
