-- Feature rows outside their documented ranges: shares and similarities in [0, 1] (null where
-- undefined), ratios >= 0, an observation occurs at least in its own trajectory.
SELECT count(*) FROM read_parquet($path)
WHERE (overlap_action < 0 OR overlap_action > 1) OR (overlap_context < 0 OR overlap_context > 1)
   OR (novelty < 0 OR novelty > 1) OR (jaccard_prev < 0 OR jaccard_prev > 1)
   OR (jaccard_max_prev < 0 OR jaccard_max_prev > 1)
   OR length_ratio_prev < 0 OR length_ratio_action < 0 OR corpus_frequency < 1
