-- One labelled row per turn: the rule that named it (quality/rules.sql, put in place of the
-- rules placeholder by labels.py: every feature of the turn, then column policy under the
-- policy's thresholds, easier / harder with every threshold moved by the policy's margin;
-- rules.variants_sql), its category and loss weight, the feature values that rule read, and
-- whether the turn is ambiguous: a margin's move gives it another category. The
-- rule_features placeholder below is replaced by labels.py: one json_object per rule
-- (rules.features_json_sql). The features are read once: the rules carry every column the
-- rows need (a second scan joined back by row number cost as much as the rules).

WITH rules AS (
    /* rules */
),
weights (category, weight) AS (
    VALUES ('empty', $empty_loss_weight), ('error', $error_loss_weight),
           ('unchanged', $unchanged_loss_weight), ('echo', $echo_loss_weight),
           ('boilerplate', $boilerplate_loss_weight), ('informative', $informative_loss_weight)
),
judged AS (
    SELECT
        r.*,
        r.policy AS rule,
        r.easier AS easier_rule,
        r.harder AS harder_rule,
        split_part(r.policy, '.', 1) AS category,
        split_part(r.easier, '.', 1) AS easier_category,
        split_part(r.harder, '.', 1) AS harder_category
    FROM rules AS r
),
weighed AS (
    SELECT
        j.*,
        j.easier_category <> j.category OR j.harder_category <> j.category AS ambiguous,
        w.weight,
        greatest(w.weight, we.weight, wh.weight) AS highest_weight
    FROM judged AS j
    JOIN weights AS w ON w.category = j.category
    JOIN weights AS we ON we.category = j.easier_category
    JOIN weights AS wh ON wh.category = j.harder_category
)
SELECT
    x.trajectory_id,
    x.turn_index,
    x.domain,
    x.source,
    x.source_format,
    x.observation_format,
    x.category,
    CASE
        WHEN NOT x.ambiguous OR $ambiguous_weight_mode = 'category' THEN x.weight
        WHEN $ambiguous_weight_mode = 'highest' THEN x.highest_weight
        ELSE $ambiguous_loss_weight
    END::DOUBLE AS loss_weight,
    x.rule,
    /* rule_features */ AS rule_features,
    x.ambiguous,
    CASE
        WHEN x.easier_category <> x.category THEN x.easier_rule
        WHEN x.harder_category <> x.category THEN x.harder_rule
    END AS near_rule,
    $policy_version::INTEGER AS policy_version,
    $policy_hash::VARCHAR AS policy_hash
FROM weighed AS x
ORDER BY x.file_row_number
