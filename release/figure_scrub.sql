-- Values the scrub stage replaced, per domain and kind.
SELECT domain, kind, count(*) AS replaced FROM read_parquet($table)
GROUP BY domain, kind ORDER BY domain, kind
