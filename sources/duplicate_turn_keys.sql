SELECT count(*) AS duplicate_keys FROM (
    SELECT trajectory_id, turn_index FROM read_parquet($path)
    GROUP BY ALL HAVING count(*) > 1
)
