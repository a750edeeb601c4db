-- The rule that names each turn, from the turn features and the policy's thresholds (the
-- policy's [rules] table says what each rule means, its threshold comments why each value).
-- The first rule that holds wins; its id is `category.name`. A comparison with a NULL feature
-- (first turn, observation without shingles) does not hold. quality/rules.py reads the
-- features (f.*) and thresholds ($*) of every WHEN below to record and explain what a rule
-- read: keep one rule per WHEN, its id in the THEN.

-- $trajectories: the domain's trajectories (all its shards), so a shard's floor is its domain's.
WITH boilerplate_floor AS (
    SELECT greatest($boilerplate_min_trajectories,
                    $boilerplate_min_trajectory_share * $trajectories)
           AS min_trajectories
)
SELECT
    f.file_row_number,
    CASE
        WHEN f.content_chars <= $empty_max_content_chars THEN 'empty.no_content'
        WHEN f.is_error THEN 'error.failed'
        -- the action changed nothing: the previous observation again (an acknowledgement
        -- that quotes other arguments than the previous one is echo, below)
        WHEN f.novel_shingles <= $unchanged_max_novel_shingles
             AND f.jaccard_prev >= $unchanged_min_jaccard_prev
             AND NOT (f.ack_phrase AND f.arg_chars_found >= $echo_min_arg_chars
                      AND f.repeat_masked <> 1) THEN 'unchanged.previous'
        -- ... also once clocks, timestamps and ids are masked (a status with a new time)
        WHEN f.repeat_masked = 1 THEN 'unchanged.previous_masked'
        -- ... or, for a GUI screen or web page, nothing but elements of the previous screen
        -- (element numbers masked): the same screen reordered or cut down to fewer elements
        WHEN f.observation_format IN ('ui_elements', 'a11y_tree', 'html', 'page_text')
             AND f.prev_line_share >= $unchanged_min_screen_prev_line_share
             THEN 'unchanged.screen_subset'
        -- most lines restate the action (the typed command, the lines just inserted)
        WHEN f.action_line_share >= $echo_min_action_line_share THEN 'echo.action_lines'
        -- an acknowledgement that restates the call's arguments ("Wrote to PATH")
        WHEN f.ack_phrase AND f.arg_chars_found >= $echo_min_arg_chars
             AND f.ack_words <= $echo_max_ack_words THEN 'echo.ack_arguments'
        -- a created or updated object that returns the fields the call sent
        -- (and not much more: a result list that repeats its query is the results)
        WHEN ((f.fields_mirrored >= $echo_min_fields_mirrored
               AND f.fields_mirrored >= $echo_min_mirrored_share * f.fields_sent)
              OR (f.write_call AND f.fields_sent >= 1
                  AND f.fields_mirrored = f.fields_sent))
             AND f.novel_shingles <= $echo_max_novel_shingles_mirrored
             THEN 'echo.mirrored_fields'
        -- what is new is the action's own text (its new words: in a short reply)
        WHEN f.overlap_action >= $echo_min_overlap_action
             OR (f.novel_shingles >= 1 AND f.novelty <= $echo_max_novelty
                 AND (f.action_in_observation
                      OR f.overlap_action >= $echo_min_overlap_action_with_context))
             OR (f.new_words_in_action >= $echo_min_new_words_in_action
                 AND f.novelty <= $echo_max_novelty_new_words
                 AND f.novel_shingles <= $echo_max_novel_shingles_new_words
                 -- (a GUI screen: the previous screen with the typed text in it, not an
                 -- earlier screen come back around it)
                 AND (f.observation_format NOT IN ('ui_elements', 'a11y_tree', 'html',
                                                   'page_text')
                      OR f.jaccard_prev >= $unchanged_min_screen_jaccard_prev))
             THEN 'echo.action_text'
        -- a new or emptied file, shown empty by the tool that wrote it (echo before
        -- boilerplate: the same empty view recurs in every run that creates a file)
        WHEN f.blank_view AND f.write_call AND f.arg_chars_found >= $echo_min_arg_chars
             THEN 'echo.empty_view'
        -- the same observation, as a whole, in many trajectories
        WHEN f.corpus_frequency >= b.min_trajectories THEN 'boilerplate.corpus_frequency'
        -- a generic acknowledgement with nothing of the call or the step in it
        -- (one line of text: a program's report of several lines is its output)
        WHEN f.ack_phrase AND f.arg_chars_found = 0 AND f.foreign_ids = 0
             AND f.ack_words <= $boilerplate_max_ack_words
             AND f.ack_lines <= $boilerplate_max_ack_lines THEN 'boilerplate.generic_ack'
        WHEN f.confirm_prompt AND f.arg_chars_found = 0 THEN 'boilerplate.confirm_prompt'
        -- a short canned message around the action's words ("Replaced X with Y")
        WHEN f.template_frequency >= b.min_trajectories AND f.action_words > 0
             AND f.own_words <= $echo_max_own_words THEN 'echo.canned_template'
        -- a canned page that quotes the action (a bot check naming the URL)
        WHEN f.template_frequency >= b.min_trajectories THEN 'boilerplate.canned_template'
        -- a state the trajectory has shown before (and that is not a canned screen); a GUI
        -- screen or web page is the whole state, so it is compared with the previous screen:
        -- one that differs from it is what the action did, even if it was seen earlier (a
        -- navigation back to an earlier screen), and a short reply is an answer, not a view
        WHEN f.novel_shingles <= $unchanged_max_novel_shingles
             AND f.jaccard_max_prev >= $unchanged_min_jaccard_max_prev
             AND f.obs_shingles >= $unchanged_min_view_shingles
             AND (f.observation_format NOT IN ('ui_elements', 'a11y_tree', 'html', 'page_text')
                  OR f.jaccard_prev >= $unchanged_min_screen_jaccard_prev)
             THEN 'unchanged.revisit'
        -- ... also once clocks, counters and ids are masked, or line by line: a view
        -- shown before with only the lines the action touched changed
        WHEN f.repeat_masked = 2 AND f.obs_shingles >= $unchanged_min_view_shingles
             AND (f.observation_format NOT IN ('ui_elements', 'a11y_tree', 'html', 'page_text')
                  OR f.jaccard_prev >= $unchanged_min_screen_jaccard_prev)
             THEN 'unchanged.revisit_masked'
        WHEN f.seen_line_share >= $unchanged_min_seen_line_share
             AND f.action_line_share < $echo_min_action_line_share
             AND f.obs_shingles >= $unchanged_min_view_shingles
             AND f.novelty <= $unchanged_max_view_novelty
             AND f.jaccard_max_prev >= $unchanged_min_view_jaccard
             AND (f.observation_format NOT IN ('ui_elements', 'a11y_tree', 'html', 'page_text')
                  OR f.jaccard_prev >= $unchanged_min_screen_jaccard_prev)
             THEN 'unchanged.seen_view'
        ELSE 'informative.new_content'
    END AS rule
FROM features AS f, boilerplate_floor AS b
