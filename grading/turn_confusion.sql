-- The generator's truth joined to what the stage decided; paths are bound as parameters.
SELECT t.category AS truth, l.category AS predicted, count(*) AS n
FROM read_parquet($labels) AS l
JOIN read_parquet($trajectories) AS tr USING (trajectory_id)
LEFT JOIN read_parquet($truth) AS t
    ON t.source = tr.source AND t.file = tr.source_path AND t.turn_index = l.turn_index
GROUP BY ALL
