"""The compiled loops of quality/ with numba's bounds checks on: their own tests run again in a
subprocess with NUMBA_BOUNDSCHECK=1 and a fresh cache, so an index past an array raises
IndexError there. Without the checks (how the pipeline runs: numba's default) such
a read passes or segfaults as memory falls: a slot mask kept from a text too long to read once
sent line_share_rows past its table, which CI alone met, as a segfault.

The files are the kernels' own tests that run in seconds; the real-trace batches of
test_line_shares are left out (the kernel's hand-made and random cases stay)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from conftest import REPO_ROOT

KERNEL_TESTS = (
    "test_action_echo.py", "test_ascii_patterns.py", "test_corpus_frequency.py",
    "test_flat_texts.py", "test_line_marks.py", "test_line_shares.py", "test_max_jaccard.py",
    "test_quality_dedup.py", "test_quality_dedup_short.py", "test_quality_features.py",
    "test_quality_residual.py", "test_quality_shingles.py", "test_reply_rows.py",
    "test_staged_features.py", "test_text_pool.py", "test_word_split.py",
)
SLOW = "tests/test_line_shares.py::test_every_batch_of_the_real_traces"


def test_kernel_tests_pass_with_bounds_checks() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": cache}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             *(f"tests/{name}" for name in KERNEL_TESTS), "--deselect", SLOW],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1800)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary, summary
