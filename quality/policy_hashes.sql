SELECT DISTINCT policy_hash FROM read_parquet($labels)
