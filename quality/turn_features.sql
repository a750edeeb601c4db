-- Features of every turn of one or more batches of whole trajectories (all but the corpus
-- frequencies). Every value is the row's own (no window, no aggregate): one query may run over
-- several batches (quality/turn_sql.py).
--
-- Input `turns`: the raw_turns rows, plus
--   traj, turn      the trajectory's number in its batch and the turn's 0-based ordinal in it;
--   traj_seq        the trajectory's number in the shard (increasing over the batches);
--   obs_shingles, in_action, in_context, novel, in_prev_obs, new_words, new_words_from_action,
--   own_words       set counts of the observation (quality/observation_sets.py);
--   short_max_jaccard  exact best Jaccard with an earlier small observation (max_jaccard.py);
--   long_max_jaccard   MinHash estimate of it for pairs with a large one (max_jaccard.py);
--   obs_chars       the observation's length in characters (code points, as length());
--   ascii_echo      action_in_observation where the action and the observation are ASCII,
--                   NULL elsewhere (quality/action_echo.py: lower() and trim() copy every
--                   text);
--   ascii_error_text, ascii_content_chars  error_text_found (where `scanned` is `head_tail`)
--                   and content_chars where the observation is ASCII, NULL elsewhere
--                   (quality/ascii_patterns.py: the same patterns by polars, 3x faster);
--   prev_obs_shingles, prev_obs_chars  obs_shingles and the observation's length of the
--                   previous turn of the trajectory (NULL on its first turn): the rows come in
--                   trajectory and turn order, so they are the previous row's, taken in numpy
--                   rather than by a window (whose sort carried every text of the batch).
-- The rows come out in the input's order (DuckDB keeps the insertion order of a query without
-- ORDER BY; turn_sql.py checks it): a sort of every row saved.
-- Shares are NULL for an observation without shingles, comparisons with the previous turn
-- NULL on the first turn.
--
-- The error and empty-output patterns (the two braced placeholders) come from quality/patterns.py.

WITH texts AS (
    SELECT
        *,
        length(action) AS action_chars,
        -- the start and end of a long observation; see patterns.py. NULL where no step below
        -- reads it: an ASCII observation whose ascii_ columns decided it, with no exit code 0
        -- (passed_bare) and no error text found (bare). left() and right() count the
        -- characters of the whole text, a pass over every long observation saved.
        CASE WHEN ascii_content_chars IS NOT NULL AND exit_code IS DISTINCT FROM 0
                  AND NOT coalesce(ascii_error_text, false) THEN NULL
             WHEN obs_chars <= 2 * $head_tail_chars THEN observation
             ELSE left(observation, $head_tail_chars) || chr(10)
                  || right(observation, $head_tail_chars)
        END AS head_tail
    FROM turns
),
passed AS (
    SELECT
        *,
        -- the output once the harness's exit-status markup is dropped (patterns.OUTPUT_STATUS)
        -- where the exit code says 0: its first and last lines are where a failure shows
        CASE WHEN NOT coalesce(is_error, false) AND exit_code = 0
             THEN trim(regexp_replace(head_tail, {output_status}, '', 'g'), e' \t\n\r')
        END AS passed_bare
    FROM texts
),
checked AS (
    SELECT
        *,
        -- the error patterns where the flags leave it to them: the start and end of the
        -- output with no error flag and no exit code, its first and last lines with exit code
        -- 0 (often a pipe's last command's: `2>&1 | head`, and the output opens or ends with
        -- an error message: the command failed all the same). One text a row, so that the
        -- patterns are written once in the query: DuckDB compiles every regexp of a query
        -- again for each query and thread, which cost about as much as running them.
        -- (In a WHEN, where DuckDB evaluates each format's patterns on that format's rows
        -- only; as a value it would run every pattern on every row.)
        CASE WHEN NOT coalesce(is_error, false) AND exit_code IS NULL THEN head_tail
             ELSE regexp_extract(passed_bare, '^[^\n]*') || chr(10)
                  || regexp_extract(passed_bare, '[^\n]*$')
        END AS scanned
    FROM passed
),
found AS (
    SELECT
        *,
        CASE WHEN ascii_error_text IS NOT NULL THEN ascii_error_text
             WHEN {error_text} THEN true ELSE false END AS error_text_found
    FROM checked AS t
),
stripped AS (
    SELECT
        *,
        -- the output without the exit-status markup where error_source reads its first and
        -- last lines (an exit code 0, or error text to check for a recovery; NULL elsewhere):
        -- a pass over every text saved
        CASE WHEN exit_code = 0 THEN passed_bare
             WHEN exit_code IS NULL AND error_text_found
             THEN trim(regexp_replace(head_tail, {output_status}, '', 'g'), e' \t\n\r')
        END AS bare
    FROM found
),
edged AS (
    SELECT
        * EXCLUDE (bare),
        -- its first and last lines: where a log that recovered, or a reply that succeeded,
        -- says so (patterns.py)
        regexp_extract(bare, '^[^\n]*') AS first_line,
        -- (the last once trailing prompts and blank lines are dropped)
        regexp_extract(regexp_replace(right(bare, 400), {trailing_prompts}, ''), '[^\n]*$')
            AS last_line
    FROM stripped
),
judged AS (
    SELECT
        *,
        -- a success on the last or first line (NULL where `bare` is): a column, not written
        -- in both WHENs below, for the same reason as `scanned`
        {recovered} AS recovered
    FROM edged AS t
),
measured AS (
    SELECT
        *,
        CASE WHEN ascii_content_chars IS NULL
             THEN regexp_replace(head_tail, {empty_wrappers}, '', 'g')
        END AS unwrapped,
        CASE
            WHEN is_error THEN 'flag'
            WHEN exit_code <> 0 THEN 'exit_code'
            WHEN exit_code IS NULL AND error_text_found AND NOT recovered THEN 'pattern'
            WHEN exit_code = 0 AND error_text_found AND NOT recovered THEN 'pattern'
        END AS error_source,
        in_prev_obs / (obs_shingles + prev_obs_shingles - in_prev_obs) AS jaccard_with_prev
    FROM judged AS t
)
SELECT
    trajectory_id,
    turn_index,
    domain,
    source,
    source_format,
    action_kind,
    observation_format,
    tool_name,
    obs_chars,
    action_chars,
    -- what is left once a harness's "no output" markup is removed; 0 with no letter or digit.
    -- The length of trim(unwrapped) without trimming: trim() drops the space separators
    -- (Unicode Zs, the class below) at both ends, but walks the whole text to find the last
    -- one; the two anchored runs cannot meet in a text with a letter or digit.
    CASE WHEN ascii_content_chars IS NOT NULL THEN ascii_content_chars
         WHEN regexp_matches(unwrapped, '[\pL\pN]')
         THEN length(unwrapped) - length(regexp_extract(unwrapped, '^{spaces}+'))
              - length(regexp_extract(unwrapped, '{spaces}+$'))
         ELSE 0
    END AS content_chars,
    obs_shingles,
    CASE WHEN obs_shingles > 0 THEN novel END AS novel_shingles,
    CASE WHEN obs_shingles > 0 THEN new_words END AS new_words,
    CASE WHEN obs_shingles > 0 THEN own_words END AS own_words,
    -- of the observation's new words, the share the action brought (typed text showing up)
    new_words_from_action / nullif(new_words, 0) AS new_words_in_action,
    in_action / nullif(obs_shingles, 0) AS overlap_action,
    in_context / nullif(obs_shingles, 0) AS overlap_context,
    novel / nullif(obs_shingles, 0) AS novelty,
    -- |O & O_prev| / |O u O_prev|
    CASE WHEN turn > 0 AND obs_shingles > 0 THEN jaccard_with_prev END AS jaccard_prev,
    CASE WHEN turn > 0 AND obs_shingles > 0 THEN
        greatest(jaccard_with_prev, coalesce(short_max_jaccard, 0),
                 coalesce(long_max_jaccard, 0))
    END AS jaccard_max_prev,
    obs_chars / nullif(prev_obs_chars, 0) AS length_ratio_prev,
    obs_chars / nullif(action_chars, 0) AS length_ratio_action,
    -- the action (2+ characters, stripped) appears verbatim in the observation: a terminal
    -- echoing the command line, where a short command has no 3-gram to match
    -- (ascii_echo: the same test, made before the query where both texts are ASCII)
    CASE WHEN ascii_echo IS NULL
         THEN length(trim(action, ' ' || chr(9) || chr(10) || chr(13))) >= 2
              AND contains(lower(observation),
                           lower(trim(action, ' ' || chr(9) || chr(10) || chr(13))))
         ELSE ascii_echo
    END AS action_in_observation,
    error_source IS NOT NULL AS is_error,
    error_source,
    traj_seq
FROM measured
