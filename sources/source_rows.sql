SELECT count(*) FROM read_parquet($path) WHERE list_contains($sources, source)
