"""Bootstrap intervals of bench scores: stratified by domain, seeded, paired by sample id."""

from __future__ import annotations

import random

import pytest

from bench.bootstrap import paired_difference, score_intervals


def rows(shift: float = 0.0, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [{"id": f"{domain}{k}", "domain": domain,
             "score": min(100.0, max(0.0, base + shift + rng.gauss(0, 15)))}
            for domain, base in (("terminal", 40.0), ("web", 20.0)) for k in range(30)]


def test_the_interval_holds_the_macro_mean_and_is_seeded():
    scored = rows()
    intervals = score_intervals(scored)
    overall = intervals["overall"]
    means = [sum(r["score"] for r in scored if r["domain"] == d) / 30 for d in ("terminal", "web")]
    assert overall.estimate == pytest.approx(sum(means) / 2)
    assert overall.low < overall.estimate < overall.high < overall.low + 20
    assert intervals["terminal"].low > intervals["web"].high  # 20 points apart, 30 samples each
    assert score_intervals(scored) == intervals


def test_constant_scores_have_no_spread():
    scored = [{"id": str(k), "domain": "os", "score": 25.0} for k in range(10)]
    interval = score_intervals(scored)["overall"]
    assert (interval.low, interval.estimate, interval.high) == (25.0, 25.0, 25.0)


def test_paired_difference_sees_a_shift_the_marginal_intervals_hide():
    base, better = rows(seed=1), rows(seed=1)
    for row in better:
        row["score"] += 3.0
    a, b = score_intervals(better)["overall"], score_intervals(base)["overall"]
    assert a.low < b.high  # the marginal intervals overlap
    difference = paired_difference(better, base)
    assert difference.estimate == pytest.approx(3.0) and difference.low > 2.9
    with pytest.raises(ValueError, match="same samples"):
        paired_difference(better[:-1], base)
