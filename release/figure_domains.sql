-- Per-domain statistics of the published turns.
SELECT domain, count(DISTINCT trajectory_id) AS trajectories, count(*) AS turns,
       round(count(*) / count(DISTINCT trajectory_id), 1) AS turns_per_trajectory,
       round(avg(length(observation)), 0)::INT AS mean_observation_chars,
       round(avg(loss_weight), 3) AS mean_loss_weight
FROM read_parquet($table) GROUP BY domain ORDER BY domain
