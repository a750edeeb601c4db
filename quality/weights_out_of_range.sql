SELECT count(*) FROM read_parquet($labels)
WHERE loss_weight IS NULL OR loss_weight < 0 OR loss_weight > 1 OR category IS NULL
