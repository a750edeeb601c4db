"""Rubric-vs-LLM-judge agreement: Spearman per domain, checked against scipy's."""

from __future__ import annotations

import numpy as np
import pytest

from bench.judges.agreement import average_ranks, judge_agreement, spearman


def test_average_ranks_share_ties():
    assert average_ranks(np.array([10.0, 30.0, 20.0, 30.0])).tolist() == [1.0, 3.5, 2.0, 3.5]


def test_spearman_matches_scipy_with_ties():
    stats = pytest.importorskip("scipy.stats", reason="scipy is only a cross-check")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, 40).astype(float)
    b = a + rng.integers(0, 4, 40)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)


def test_spearman_is_undefined_for_too_few_or_constant_scores():
    assert spearman([1, 2], [2, 1]) is None
    assert spearman([5, 5, 5], [1, 2, 3]) is None
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)


def test_agreement_per_domain_and_overall():
    rows = [("mcp", 10, 20), ("mcp", 50, 60), ("mcp", 90, 70),
            ("web", 10, 90), ("web", 50, 50), ("web", 90, 10), ("os", 40, 40)]
    result = {a.domain: a for a in judge_agreement(rows)}
    assert list(result) == ["mcp", "os", "web", "all"]
    assert result["mcp"].spearman == pytest.approx(1.0)
    assert result["web"].spearman == pytest.approx(-1.0)
    assert result["os"].spearman is None and result["os"].samples == 1
    assert result["all"].samples == 7 and result["mcp"].mean_llm == pytest.approx(50.0)
    assert judge_agreement([]) == []
