"""The tables the quality stage builds: features, labels, dedup, scrubbed copies, the split.

Declared once here (sources/tables.py is the registry); the stage's code takes paths and
columns from these objects. turn_features and turn_labels are written by DuckDB SQL, so their
schema here is what the SQL yields, checked against the written files (tests/test_tables.py).
"""

from __future__ import annotations

import pyarrow as pa

from quality.reply_features import REPLY_COLUMN_DOCS
from sources.schema import TRAJECTORY_SCHEMA, TURN_SCHEMA
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS, Table

_FEATURE_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("turn_index", pa.int32()), ("domain", pa.string()),
    ("source", pa.string()), ("source_format", pa.string()), ("action_kind", pa.string()),
    ("observation_format", pa.string()), ("tool_name", pa.string()), ("obs_chars", pa.int64()),
    ("action_chars", pa.int64()), ("content_chars", pa.int64()), ("obs_shingles", pa.int64()),
    ("novel_shingles", pa.int64()), ("new_words", pa.int64()), ("own_words", pa.int64()),
    ("new_words_in_action", pa.float64()), ("overlap_action", pa.float64()),
    ("overlap_context", pa.float64()), ("novelty", pa.float64()), ("jaccard_prev", pa.float64()),
    ("jaccard_max_prev", pa.float64()), ("length_ratio_prev", pa.float64()),
    ("length_ratio_action", pa.float64()), ("action_in_observation", pa.bool_()),
    ("is_error", pa.bool_()), ("error_source", pa.string()), ("fields_sent", pa.int32()),
    ("fields_mirrored", pa.int32()), ("write_call", pa.bool_()),
    ("action_line_share", pa.float64()), ("seen_line_share", pa.float64()),
    ("prev_line_share", pa.float64()), ("blank_view", pa.bool_()),
    ("arg_chars_found", pa.int32()), ("ack_words", pa.int32()), ("ack_lines", pa.int32()),
    ("ack_phrase", pa.bool_()),
    ("confirm_prompt", pa.bool_()), ("foreign_ids", pa.int32()), ("repeat_masked", pa.int8()),
    ("action_words", pa.float64()), ("corpus_frequency", pa.int64()),
    ("template_frequency", pa.int64()),
])
# Step 2 of the features (quality/corpus_columns.py): every feature but the two corpus
# frequencies, with the trajectory's number in the shard and the two MinHash signatures that the
# domain's frequencies are counted from.
_FREQUENCY_COLUMNS = ("corpus_frequency", "template_frequency")
_STAGED_EXTRA = {
    "traj_seq": "the trajectory's number in its shard, in row order (0, 1, ...)",
    "obs_signature": "MinHash signature of the observation's shingles (all 0xFFFFFFFF when it "
                     "has none): what corpus_frequency counts over the domain",
    "residual_signature": "the same for the observation without its action's words: what "
                          "template_frequency counts",
}
# MinHashConfig's 128 permutations' uint32 minima, little-endian, one binary value a row
# (quality/minhash.py's signature_bytes: read back without a list's levels)
_SIGNATURE_TYPE = pa.binary(4 * 128)
_STAGED_SCHEMA = pa.schema(
    [field for f in _FEATURE_SCHEMA if f.name not in _FREQUENCY_COLUMNS
     for field in ([f, pa.field("traj_seq", pa.int64())] if f.name == "error_source" else [f])]
    + [pa.field("obs_signature", _SIGNATURE_TYPE),
       pa.field("residual_signature", _SIGNATURE_TYPE)])
_LABEL_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("turn_index", pa.int32()), ("domain", pa.string()),
    ("source", pa.string()), ("source_format", pa.string()), ("observation_format", pa.string()),
    ("category", pa.string()), ("loss_weight", pa.float64()), ("rule", pa.string()),
    ("rule_features", pa.string()), ("ambiguous", pa.bool_()), ("near_rule", pa.string()),
    ("policy_version", pa.int32()), ("policy_hash", pa.string()),
])
_DEDUP_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("domain", pa.string()), ("source", pa.string()),
    ("source_path", pa.string()), ("cluster_id", pa.string()), ("cluster_size", pa.int64()),
    ("kept", pa.bool_()), ("reason", pa.string()), ("max_jaccard", pa.float64()),
])
_PAIR_SCHEMA = pa.schema([("id_a", pa.string()), ("id_b", pa.string()),
                          ("jaccard", pa.float64()), ("kind", pa.string())])
_PAIR_DOCS = {
    "id_a": "one trajectory of the pair (the smaller id)",
    "id_b": "the other trajectory",
    "jaccard": "exact Jaccard of their shingles (1.0 for an exact duplicate)",
    "kind": "exact, near (word shingles) or short (character shingles)",
}
SIGNATURE_PERMUTATIONS = 128  # MinHash permutations of the default DedupConfig
_SIGNATURE_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("kind", pa.string()), ("n_shingles", pa.int64()),
    ("signature", pa.list_(pa.uint32(), SIGNATURE_PERMUTATIONS)),
])
_TURN_KEYS = ("trajectory_id", "turn_index", "domain", "source", "source_format")

_FEATURE_DOCS: dict[str, str] = {
    "trajectory_id": "the turn's trajectory (key shared with raw_turns)",
    "turn_index": "0-based position of the turn in its trajectory",
    "domain": "copied from raw_turns",
    "source": "copied from raw_turns",
    "source_format": "copied from raw_turns",
    "action_kind": "copied from raw_turns",
    "observation_format": "copied from raw_turns",
    "tool_name": "copied from raw_turns",
    "obs_chars": "characters in the observation",
    "action_chars": "characters in the action",
    "content_chars": "letters and digits in the observation once a harness's 'no output' text "
                     "is removed (first and last 2000 characters)",
    "obs_shingles": "distinct word 3-grams of the observation",
    "novel_shingles": "shingles of the observation in no earlier text of the trajectory "
                      "(the turn's own action included)",
    "new_words": "distinct words of the observation in no earlier turn of the trajectory (the "
                 "turn's own action aside)",
    "new_words_in_action": "share of those new words that the turn's action contains",
    "overlap_action": "share of the observation's shingles also in the turn's action (echo)",
    "overlap_context": "share of the observation's shingles in an earlier turn's action or "
                       "observation",
    "novelty": "share of the observation's shingles in no earlier text of the trajectory "
               "(the turn's own action included)",
    "jaccard_prev": "Jaccard similarity of the observation's shingles with the previous "
                    "observation's (exact)",
    "jaccard_max_prev": "highest Jaccard similarity with any earlier observation (exact up to "
                        "64 shingles, MinHash estimate beyond)",
    "length_ratio_prev": "observation characters / previous observation's characters",
    "length_ratio_action": "observation characters / action characters",
    "action_in_observation": "the stripped action (2+ characters) appears verbatim in the "
                             "observation, case-insensitive",
    "is_error": "the turn failed: error flag, non-zero exit code, or (without an exit code) an "
                "error message in the observation",
    "error_source": "flag, exit_code or pattern: what made is_error true",
    "corpus_frequency": "distinct trajectories of the partition with a near-identical "
                        "observation (MinHash LSH, verified), its own included",
    "template_frequency": "the same, for the observation without the words its action contains "
                          "(a canned page or message that quotes the action)",
    "action_words": "share of the observation's words that its action contains",
    "own_words": "distinct words of the observation that are neither in its action nor chrome "
                 "(words on half the observations of its trajectory -- toolbars, prompts, "
                 "headers -- or on 10 % of the partition's: markup, function words)",
    **REPLY_COLUMN_DOCS,  # defined beside the code that computes them
}


_LABEL_DOCS: dict[str, str] = {
    "category": "empty, error, unchanged, echo, boilerplate or informative (policy.toml)",
    "loss_weight": "weight of the observation's tokens in the training loss, in [0, 1] (an "
                   "ambiguous turn's as the policy's [ambiguous] loss_weight says)",
    "rule": "id of the rule that named the turn, category.name (the policy's [rules] table)",
    "rule_features": "JSON object: the feature values that rule read (quality/rules.py)",
    "ambiguous": "the category changes once every threshold moves by the policy's margin",
    "near_rule": "for an ambiguous turn, the rule that names it a margin away (else null)",
    "policy_version": "the policy file's `version`",
    "policy_hash": "first 12 hex digits of the policy file's sha256",
}


_FINDINGS_SCHEMA = pa.schema([
    pa.field("domain", pa.string(), nullable=False),
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("turn_index", pa.int32()),
    pa.field("field", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("placeholder", pa.string(), nullable=False),
])

_FINDINGS_DOCS: dict[str, str] = {
    "domain": "partition the trajectory belongs to",
    "trajectory_id": "trajectory the value was found in",
    "turn_index": "turn it was found in; null for the task, system prompt or metadata",
    "field": "column it was found in: task, system_prompt, metadata, action or observation",
    "kind": "what it was: openai_key, github_token, email, phone, ip_address, ... "
            "(quality/secrets.py)",
    "placeholder": "what replaced it, e.g. <SECRET_1>; the value itself is never stored",
}


_DEDUP_DOCS = {
    "trajectory_id": "the trajectory",
    "domain": "its domain partition",
    "source": "catalog source",
    "source_path": "file it was read from, relative to the source's root",
    "cluster_id": "trajectory_id of the cluster's kept member (itself when unique)",
    "cluster_size": "members of its cluster (1 = unique)",
    "kept": "true for the one member of each cluster that stays",
    "reason": "unique, kept, exact_duplicate or near_duplicate",
    "max_jaccard": "highest confirmed Jaccard to another member (null when unique)",
}


_SIGNATURE_DOCS = {
    "trajectory_id": "the signed trajectory (one per exact-duplicate group)",
    "kind": "shingles the signature is over: 'words' (word n-grams) or 'chars' (character "
            "n-grams, for trajectories under min_shingles word n-grams)",
    "n_shingles": "shingles of that kind (with repeats)",
    "signature": "MinHash signature (datasketch affine32 values)",
}


_SPLIT_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()), ("domain", pa.string()), ("source", pa.string()),
    ("group_key", pa.string()), ("pool", pa.string()), ("nearest_bench_id", pa.string()),
    ("similarity", pa.float32()),
])
_SPLIT_DOCS = {
    "trajectory_id": "a trajectory kept by trajectory_dedup",
    "domain": "its domain partition",
    "source": "catalog source",
    "group_key": "the source task it belongs to (task id, task text, or its own id): all runs "
                 "of one task share a pool",
    "pool": "train, bench, or contaminated (a train run too similar to a bench run)",
    "nearest_bench_id": "the bench trajectory it is too similar to (contaminated only)",
    "similarity": "MinHash estimate of Jaccard to that bench trajectory (contaminated only)",
}


TURN_FEATURES = Table(
    "turn_features", "quality",
    "Per-turn features of one domain: overlap with the action and with earlier context, "
    "novelty, Jaccard with the previous and the most similar earlier observation, length "
    "ratios, corpus frequency (boilerplate), error flag, reply shapes.",
    _FEATURE_SCHEMA, {**{k: RAW_TURNS.docs[k] for k in _TURN_KEYS}, **_FEATURE_DOCS},
    order=("trajectory_id", "turn_index"), sharded=True)
STAGED_TURN_FEATURES = Table(
    "staged_turn_features", "quality",
    "Step 2 of turn_features, one shard at a time: every feature but the two corpus "
    "frequencies, with the two MinHash signatures the domain's frequencies are counted from "
    "(step 3, turn_features, reads every shard of the domain, then removes these files). Each "
    "file records what it was staged from: its raw_turns file, the domain's common words, the "
    "feature settings.",
    _STAGED_SCHEMA, {**{k: RAW_TURNS.docs[k] for k in _TURN_KEYS}, **_FEATURE_DOCS,
                     **_STAGED_EXTRA},
    order=("trajectory_id", "turn_index"), sharded=True)
TURN_LABELS = Table(
    "turn_labels", "quality",
    "Category (empty, error, unchanged, echo, boilerplate, informative) and loss weight of "
    "every turn, from the versioned policy file, whose hash every row records.",
    _LABEL_SCHEMA, {**{k: RAW_TURNS.docs[k] for k in (*_TURN_KEYS, "observation_format")},
                    **_LABEL_DOCS},
    order=("trajectory_id", "turn_index"), sharded=True)
TRAJECTORY_DEDUP = Table(
    "trajectory_dedup", "quality",
    "One row per trajectory of every domain: its exact or near-duplicate cluster, whether it "
    "is the member kept, and why.",
    _DEDUP_SCHEMA, _DEDUP_DOCS, partitioned=False)
DUPLICATE_PAIRS = Table(
    "duplicate_pairs", "quality",
    "The exact and confirmed near-duplicate pairs behind trajectory_dedup's clusters.",
    _PAIR_SCHEMA, _PAIR_DOCS, partitioned=False, folder="trajectory_dedup",
    asset="trajectory_dedup")
DEDUP_SIGNATURES = Table(
    "dedup_signatures", "quality",
    "One MinHash signature per trajectory (per exact-duplicate group): what the cross-domain "
    "steps (decontamination, the bench's checks) compare instead of the raw text.",
    _SIGNATURE_SCHEMA, _SIGNATURE_DOCS, partitioned=False, folder="trajectory_dedup",
    file="signatures.parquet", asset="trajectory_dedup")
SCRUBBED_TRAJECTORIES = Table(
    "scrubbed_trajectories", "quality",
    "raw_trajectories with task, system prompt and metadata scrubbed: secrets and personal "
    "data replaced by <SECRET_n>, <EMAIL_n>, <PHONE_n>, <IP_n>.",
    TRAJECTORY_SCHEMA, RAW_TRAJECTORIES.docs, asset="scrubbed_trajectories", sharded=True)
SCRUBBED_TURNS = Table(
    "scrubbed_turns", "quality",
    "raw_turns with actions and observations scrubbed; the same value keeps its placeholder "
    "across a trajectory. What everything that reaches a score or a release reads.",
    TURN_SCHEMA, RAW_TURNS.docs, order=("trajectory_id", "turn_index"), sharded=True)
SCRUB_FINDINGS = Table(
    "scrub_findings", "quality",
    "One row per replaced value: where (trajectory, turn, field), what kind, which "
    "placeholder. Never the value itself.",
    _FINDINGS_SCHEMA, _FINDINGS_DOCS, sharded=True)
TRAJECTORY_SPLIT = Table(
    "trajectory_split", "quality",
    "Every trajectory dedup kept, in the train or the bench pool by a stable hash of its "
    "source task; train trajectories too close to a bench one moved to `contaminated`.",
    _SPLIT_SCHEMA, _SPLIT_DOCS, order=("trajectory_id",))
