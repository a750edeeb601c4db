-- The published turns: scrubbed text, the turn's label and loss weight (the rule that named it,
-- whether it is ambiguous), its main features.
SELECT t.*, l.category, l.loss_weight, l.rule, l.ambiguous, l.policy_hash,
       f.novelty, f.overlap_action, f.overlap_context, f.jaccard_prev, f.corpus_frequency
FROM read_parquet($turns, hive_partitioning = false) AS t
LEFT JOIN read_parquet($labels) AS l USING (trajectory_id, turn_index)
LEFT JOIN read_parquet($features) AS f USING (trajectory_id, turn_index)
ORDER BY t.trajectory_id, t.turn_index
