"""Turn features on hand-built trajectories, with the numbers worked out by hand.

Shingles are word 3-grams ("alpha beta gamma delta" has two: alpha-beta-gamma, beta-gamma-delta);
a text of one or two words is a single shingle of all of them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from quality_rows import trajectory, write_partition

from quality import corpus_columns, observation_sets
from quality.features import FeatureConfig, compute_turn_features, stage_turn_features
from quality.tables import TURN_FEATURES
from quality.turn_sql import TRIM_SPACES

CANNED = "Welcome to the portal. Please sign in to continue with your account."


def hand_made() -> dict:
    trajectories = {
        "t1.json": trajectory("explore", [
            ("ls", "alpha beta gamma delta"),
            ("cat alpha", "alpha beta gamma delta"),
            ("echo one two three", "one two three four"),
            ("printf hi", ""),
            ("python x.py", 'Traceback (most recent call last):\n  File "x.py", line 1\n'
                            "ValueError: bad"),
        ]),
        "t2.json": trajectory("flags", [
            ("false", "nothing here", {"exit_code": 1}),
            ("call", "ok fine", {"is_error": True}),
            ("true", "a report\nthat says Error: in its middle\nbut ends well", {"exit_code": 0}),
            ("x", "<returncode>0</returncode>\n<output>\n</output>"),
            ("mkdir -p src/x", "$ mkdir -p src/x\n$ "),
        ]),
        "t3.json": trajectory("revisit", [
            ("open red", "red green blue yellow"),
            ("open cat", "cat dog bird fish"),
            ("back", "red green blue yellow"),
        ]),
    }
    for k in range(6):  # the same canned page in six trajectories
        trajectories[f"login{k}.json"] = trajectory(f"task {k}", [
            (f"goto site{k}", CANNED), (f"read page {k}", f"page {k} body with words {k * 7}")])
    return trajectories


@pytest.fixture(scope="module")
def features(tmp_path_factory) -> dict[tuple[str, int], dict]:
    root = tmp_path_factory.mktemp("features")
    turns, trajectories = write_partition(root, "terminal", hand_made())
    out = root / "features.parquet"
    stats = compute_turn_features(turns, out)
    assert stats.turns == 25 and stats.trajectories == 9
    table = pq.read_table(out)
    assert set(TURN_FEATURES.docs) <= set(table.column_names)
    paths = dict(zip(*pq.read_table(trajectories, columns=["trajectory_id", "source_path"])
                     .to_pydict().values(), strict=True))
    return {(paths[r["trajectory_id"]], r["turn_index"]): r for r in table.to_pylist()}


def test_overlap_novelty_and_jaccard_by_hand(features):
    first, repeat, echo = (features["t1.json", k] for k in range(3))
    assert (first["obs_shingles"], first["novel_shingles"]) == (2, 2)
    assert first["novelty"] == 1.0 and first["overlap_context"] == 0.0
    assert first["jaccard_prev"] is None and first["length_ratio_prev"] is None
    assert first["length_ratio_action"] == 22 / 2
    # the same observation again: everything seen, Jaccard 1 with the previous one
    assert repeat["overlap_context"] == 1.0 and repeat["novelty"] == 0.0
    assert repeat["jaccard_prev"] == 1.0 and repeat["jaccard_max_prev"] == 1.0
    assert repeat["length_ratio_prev"] == 1.0
    # "one two three four" after action "echo one two three": one of its two 3-grams is the
    # action's, the other new; 3 of its 4 new words came with the action
    assert echo["overlap_action"] == 0.5 and echo["novelty"] == 0.5
    assert echo["overlap_context"] == 0.0 and echo["jaccard_prev"] == 0.0
    assert echo["new_words"] == 4 and echo["new_words_in_action"] == 0.75
    assert echo["action_in_observation"] is False


def test_empty_observations(features):
    blank, wrapped = features["t1.json", 3], features["t2.json", 3]
    assert blank["obs_shingles"] == 0 and blank["content_chars"] == 0
    assert blank["novelty"] is None and blank["jaccard_prev"] is None
    # mini-swe-agent's "<returncode>0</returncode>" says the command completed: a generic
    # success message (boilerplate by the guide), not a frame; the empty <output> tags are
    assert wrapped["content_chars"] > 0
    assert wrapped["ack_phrase"] is True and wrapped["ack_words"] == 0
    assert features["t2.json", 0]["content_chars"] == len("nothing here")


def test_is_error_sources(features):
    assert features["t1.json", 4]["error_source"] == "pattern"  # traceback, no exit code
    assert features["t2.json", 0]["error_source"] == "exit_code"
    assert features["t2.json", 1]["error_source"] == "flag"
    # exit code 0 beats the word "Error" in the middle of an output (policy v11: not when the
    # output opens or ends with an error message; see test_exit_code_0_with_an_error_at_an_edge)
    assert features["t2.json", 2]["is_error"] is False
    assert features["t1.json", 0]["is_error"] is False


def test_verbatim_echo(features):
    assert features["t2.json", 4]["action_in_observation"] is True


def test_jaccard_max_prev_sees_revisits(features):
    back = features["t3.json", 2]
    assert back["jaccard_prev"] == 0.0 and back["jaccard_max_prev"] == 1.0


def test_corpus_frequency_counts_trajectories(features):
    assert all(features[f"login{k}.json", 0]["corpus_frequency"] == 6 for k in range(6))
    assert features["t1.json", 0]["corpus_frequency"] == 1
    assert features["t1.json", 3]["corpus_frequency"] is None  # nothing to compare


def test_batches_do_not_change_the_result(tmp_path):
    turns, _ = write_partition(tmp_path, "terminal", hand_made())
    whole, split = tmp_path / "whole.parquet", tmp_path / "split.parquet"
    compute_turn_features(turns, whole)
    compute_turn_features(turns, split, dataclasses.replace(FeatureConfig(), batch_rows=3))
    assert pq.read_table(whole).equals(pq.read_table(split))


@pytest.mark.parametrize("grouping", [{"sql_rows": 1}, {"sql_rows": 7}, {"sql_bytes": 1}])
def test_batches_queried_together_or_alone_give_the_same_rows(tmp_path, grouping):
    """turn_features.sql over one batch at a time, over a few, or over all of them at once
    (quality/turn_sql.py): the same staged rows, signatures and traj_seq included."""
    turns, _ = write_partition(tmp_path, "terminal", hand_made())
    small = dataclasses.replace(FeatureConfig(), batch_rows=3)
    common = np.zeros(0, np.uint64)
    stage_turn_features(turns, tmp_path / "all.staged", small, common)
    stats = stage_turn_features(turns, tmp_path / "some.staged",
                                dataclasses.replace(small, **grouping), common)
    assert stats.batches == 7 and stats.trajectories == 9 and stats.turns == 25
    assert pq.read_table(tmp_path / "all.staged").equals(pq.read_table(tmp_path / "some.staged"))
    assert pq.read_metadata(tmp_path / "some.staged").num_row_groups == 7  # a group a batch


def test_output_is_streamed_in_row_groups(tmp_path, monkeypatch):
    """Small batches and 4-row output groups: the same table as one group, written a row group
    at a time, and nothing left beside it."""
    turns, _ = write_partition(tmp_path, "terminal", hand_made())
    whole, grouped = tmp_path / "whole" / "f.parquet", tmp_path / "grouped" / "f.parquet"
    compute_turn_features(turns, whole)
    monkeypatch.setattr(corpus_columns, "OUTPUT_ROW_GROUP_ROWS", 4)
    compute_turn_features(turns, grouped, dataclasses.replace(FeatureConfig(), batch_rows=3))
    assert pq.read_metadata(whole).num_row_groups == 1
    groups = pq.ParquetFile(grouped)
    sizes = [groups.metadata.row_group(k).num_rows for k in range(groups.num_row_groups)]
    assert sizes == [4, 4, 4, 4, 4, 4, 1]
    assert pq.read_table(whole).equals(pq.read_table(grouped))
    assert [p.name for p in grouped.parent.iterdir()] == ["f.parquet"]


def test_same_input_gives_byte_identical_output(tmp_path):
    turns, _ = write_partition(tmp_path, "terminal", hand_made())
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    compute_turn_features(turns, a)
    compute_turn_features(turns, b)
    assert a.read_bytes() == b.read_bytes()
    assert pq.read_metadata(a).metadata[b"feature_config"] == str(FeatureConfig()).encode()


def test_split_trajectory_is_refused(tmp_path):
    turns, _ = write_partition(tmp_path, "terminal", hand_made())
    table = pq.read_table(turns)
    shuffled = pa.concat_tables([table.slice(0, 2), table.slice(5, 3), table.slice(2, 3),
                                 table.slice(8)])
    pq.write_table(shuffled, turns)
    with pytest.raises(ValueError, match="consecutive rows|turn_index order"):
        compute_turn_features(turns, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_empty_partition(tmp_path):
    turns, _ = write_partition(tmp_path, "web", {})
    out = tmp_path / "out.parquet"
    assert compute_turn_features(turns, out).turns == 0
    assert pq.read_table(out).num_rows == 0
    assert "corpus_frequency" in pq.read_schema(out).names


def test_config_names_its_parameters():
    assert str(FeatureConfig()).startswith("3ng_words_maskids_128perm_s1_8b_16r_t0.9")


def test_exit_code_0_with_an_error_at_an_edge(tmp_path):
    """Policy v11: an exit code of 0 (a pipe's last command, a script printing its own
    traceback) does not hide an error message that opens or ends the output, once the harness's
    exit-status markup is dropped; one in its middle, or one after a first line that reports
    success, is no error. Real shapes of the realdev2 sample."""
    steps = [
        ("python3 -m pylint x.py 2>&1 | head -30",
         "<returncode>0</returncode>\n<output>\n/usr/bin/python3: No module named pylint\n"
         "</output>", {"exit_code": 0}),
        ("python -m pytest -x 2>&1 | head", "<returncode>0</returncode>\n<output>\nImportError "
         "while loading conftest 'c.py'.\ntests/base.py:5: in <module>\n    import simplejson\n"
         "E   ModuleNotFoundError: No module named 'simplejson'\n</output>", {"exit_code": 0}),
        ("python explore.py", "<returncode>0</returncode>\n<output>\nNaive index: 3\nError: "
         "float() argument must be a string\nCan convert to float: [3.6]\n</output>",
         {"exit_code": 0}),
        ('run_command({"command": "curl -s https://example.org/data.csv"})',
         "Access to dataset org/data is restricted. You must be authenticated to access it.\n\n"
         "Command completed with return code: 0", {"action_kind": "tool_call"}),
        ('run_query({"query": "INSERT INTO t SELECT 1"})',
         "Query executed successfully.\nTotal rows: 0, Returned: 0\n\nNo results returned.",
         {"action_kind": "tool_call", "observation_format": "tool_result_text"}),
        ('post_page({"parent": "p1"})',
         '{"status":400,"object":"error","code":"validation_error","message":"body failed"}',
         {"action_kind": "tool_call", "observation_format": "tool_result_json"}),
    ]
    turns, _ = write_partition(tmp_path, "swe", {"edges.json": trajectory("edges", steps)})
    out = tmp_path / "features.parquet"
    compute_turn_features(turns, out)
    rows = sorted(pq.read_table(out).to_pylist(), key=lambda r: r["turn_index"])
    assert [r["is_error"] for r in rows] == [True, True, False, True, False, True]
    assert {r["error_source"] for r in rows if r["is_error"]} == {"pattern"}


def test_a_partition_with_a_single_shingle(tmp_path):
    """One turn, no action text and a one-word reply: a single shingle and a single word in the
    whole partition (the set counts once padded their previous-occurrence columns to two keys
    and failed on it)."""
    turns, _ = write_partition(tmp_path, "terminal", {"one.json": trajectory("t", [("", "ok")])})
    out = tmp_path / "out.parquet"
    assert compute_turn_features(turns, out).turns == 1
    row = pq.read_table(out).to_pylist()[0]
    assert (row["obs_shingles"], row["novelty"], row["new_words"]) == (1, 1.0, 1)


@pytest.mark.parametrize("n_texts", [49, 50, 300, 5000])
def test_common_words_are_the_words_of_a_tenth_of_the_sampled_texts(n_texts):
    """common_words against a plain count: the words in at least `min_share` of the sampled
    texts that have words (a word repeated in one text counts once), none under `min_texts`."""
    rng = np.random.default_rng(n_texts)
    lengths = rng.integers(0, 30, size=n_texts)
    offsets = np.r_[0, np.cumsum(lengths)]
    # a skewed vocabulary: a few words on most texts, many rare ones, repeats within a text
    hashes = (rng.zipf(1.6, size=int(offsets[-1])) % 500).astype(np.uint64) * np.uint64(2**40 + 7)
    got = observation_sets.common_words(hashes, offsets, 0.1, min_texts=50, sample=4096)
    picked = sorted({int(i) for i in np.linspace(0, n_texts - 1, num=min(n_texts, 4096))})
    texts = [set(hashes[offsets[i]:offsets[i + 1]].tolist()) for i in picked]
    with_words = sum(1 for words in texts if words)
    counts = Counter(word for words in texts for word in words)
    expected = sorted(w for w, c in counts.items() if c >= 0.1 * with_words)
    assert sorted(got.tolist()) == (expected if n_texts >= 50 else [])
    assert n_texts < 50 or len(expected) > 3  # a case with common words


def test_trim_spaces_are_what_duckdb_trim_drops():
    """TRIM_SPACES, the class content_chars measures trim() with, holds exactly the code points
    DuckDB's trim() removes (a DuckDB whose trim drops more or fewer would fail here)."""
    differ = duckdb.connect().execute(f"""
        SELECT count(*) FROM range(1, 1114112) AS r(cp)
        WHERE cp NOT BETWEEN 55296 AND 57343  -- surrogates are no characters
          AND (length(trim(chr(cp::INTEGER))) = 0)
              <> regexp_matches(chr(cp::INTEGER), '^{TRIM_SPACES}$')""").fetchone()[0]
    assert differ == 0


def test_content_chars_is_the_trimmed_length(tmp_path):
    """Space separators (ASCII, no-break, ideographic) at either end do not count, line breaks
    and tabs do, and so does every space inside."""
    texts = ["\u3000 \u00a0abc d\u2003e \u00a0 ", "\n ab \t", " \u202fx\u205f", "  \n  "]
    turns, _ = write_partition(tmp_path, "terminal", {"spaces.json": trajectory(
        "t", [(f"a{k}", text) for k, text in enumerate(texts)])})
    out = tmp_path / "out.parquet"
    compute_turn_features(turns, out)
    rows = sorted(pq.read_table(out).to_pylist(), key=lambda r: r["turn_index"])
    assert [r["content_chars"] for r in rows] == [len("abc d\u2003e"), len("\n ab \t"), 1, 0]
