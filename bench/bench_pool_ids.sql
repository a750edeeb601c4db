-- Trajectory ids of the bench pool of one domain's trajectory_split partition ($path).
SELECT trajectory_id FROM read_parquet($path) WHERE pool = 'bench' ORDER BY trajectory_id
