SELECT source, file_a, file_b, jaccard FROM read_parquet($truth)
