-- One category and loss weight per turn, from the turn features and the policy's thresholds
-- (quality/policy.toml says why each threshold is what it is). The first rule that holds wins.
-- A comparison with a NULL feature (first turn, observation without shingles) does not hold.

WITH boilerplate_floor AS (
    SELECT greatest($boilerplate_min_trajectories,
                    $boilerplate_min_trajectory_share * count(DISTINCT trajectory_id))
           AS min_trajectories
    FROM features
),
labelled AS (
    SELECT
        f.*,
        CASE
            WHEN f.content_chars <= $empty_max_content_chars THEN 'empty'
            WHEN f.is_error THEN 'error'
            -- the action changed nothing: the previous observation again
            WHEN f.novel_shingles <= $unchanged_max_novel_shingles
                 AND f.jaccard_prev >= $unchanged_min_jaccard_prev THEN 'unchanged'
            -- what is new is the action's own text
            WHEN f.overlap_action >= $echo_min_overlap_action
                 OR (f.novel_shingles >= 1 AND f.novelty <= $echo_max_novelty
                     AND (f.action_in_observation
                          OR f.overlap_action >= $echo_min_overlap_action_with_context
                          OR f.new_words_in_action >= $echo_min_new_words_in_action))
                 OR (f.new_words_in_action >= $echo_min_new_words_in_action
                     AND f.novelty <= $echo_max_novelty_new_words) THEN 'echo'
            -- the same observation, as a whole, in many trajectories
            WHEN f.corpus_frequency >= b.min_trajectories THEN 'boilerplate'
            -- a short canned message around the action's words ("Replaced X with Y")
            WHEN f.template_frequency >= b.min_trajectories AND f.action_words > 0
                 AND f.own_words <= $echo_max_own_words THEN 'echo'
            -- a canned page that quotes the action (a bot check naming the URL)
            WHEN f.template_frequency >= b.min_trajectories THEN 'boilerplate'
            -- a state the trajectory has shown before (and that is not a canned screen)
            WHEN f.novel_shingles <= $unchanged_max_novel_shingles
                 AND (f.jaccard_max_prev >= $unchanged_min_jaccard_max_prev
                      OR f.overlap_context >= $unchanged_min_overlap_context) THEN 'unchanged'
            ELSE 'informative'
        END AS category
    FROM features AS f, boilerplate_floor AS b
)
SELECT
    trajectory_id,
    turn_index,
    domain,
    source,
    source_format,
    observation_format,
    category,
    CASE category
        WHEN 'empty' THEN $empty_loss_weight
        WHEN 'error' THEN $error_loss_weight
        WHEN 'unchanged' THEN $unchanged_loss_weight
        WHEN 'echo' THEN $echo_loss_weight
        WHEN 'boilerplate' THEN $boilerplate_loss_weight
        ELSE $informative_loss_weight
    END::DOUBLE AS loss_weight,
    $policy_version::INTEGER AS policy_version,
    $policy_hash::VARCHAR AS policy_hash
FROM labelled
ORDER BY file_row_number
