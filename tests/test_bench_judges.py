"""Rule verifiers, the rubric judge and the hybrid reward, on hand-made and built samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.judges.gui import parse_screen, touched_key
from bench.judges.rubric import judge
from bench.judges.rules import verifier_spec, verify
from bench.parsing import format_prediction
from bench.reward import hybrid_reward
from bench.sample import BenchSample

SCREEN = ("[0] android.widget.TextView \"Notes\" bbox=(0,0,100,50)\n"
          "[1] android.widget.CheckBox \"Done\" (clickable) bbox=(0,60,100,110)\n"
          "[2] android.widget.Button \"Save\" (clickable) bbox=(0,120,100,170)")
TICKED = SCREEN.replace('CheckBox "Done" (clickable)', 'CheckBox "Done" (clickable, checked)')


def _sample(domain: str, history, action: str, reference: str) -> BenchSample:
    return BenchSample(domain=domain, id="x", history=history, current_action=action,
                       reference=reference, system_prompt="", turn_idx=len(history) + 1,
                       total_turns=len(history) + 1, trajectory_id="t", source="unit")


def test_terminal_rule_exit_status_and_deterministic_lines() -> None:
    sample = _sample("terminal", [("cat a.txt", "hello\nworld")], "cat a.txt b.txt",
                     "hello\nworld\ncat: b.txt: No such file or directory")
    right = verify(sample, "hello\nworld\ncat: b.txt: No such file or directory")
    wrong = verify(sample, "hello\nworld\nsome content of b")
    assert right.score == 1.0
    assert wrong.evidence["checks"]["exit_status"] == 0.0
    assert wrong.evidence["checks"]["deterministic_lines"] == 1.0
    # A spec with the recorded exit code decides the exit status, not the patterns.
    spec = verifier_spec("terminal", exit_code=1)
    assert verify(spec, "done", reference="done", action="false").evidence["checks"][
        "exit_status"] == 0.0


def test_mcp_rule_keys_and_errors() -> None:
    reference = '{"result": {"content": [{"type": "text", "text": "ok"}], "isError": false}}'
    sample = _sample("mcp", [], '{"method": "tools/call"}', reference)
    assert verify(sample, reference).score == 1.0
    checks = verify(sample, '{"error": {"code": -32602, "message": "bad"}}').evidence["checks"]
    assert checks["error_vs_success"] == 0.0 and checks["key_jaccard"] == 0.0
    assert verify(sample, "plain text").evidence["checks"]["json_structure"] == 0.0


def test_swe_rule_paths_and_test_counts() -> None:
    reference = "tests/test_a.py ..F\nFAILED tests/test_a.py::test_x\n1 failed, 2 passed in 0.1s"
    sample = _sample("swe", [], "python -m pytest -q", reference)
    good = verify(sample, "tests/test_a.py ..F\n1 failed, 2 passed in 0.3s")
    bad = verify(sample, "tests/test_b.py ...\n3 passed in 0.3s")
    assert good.evidence["checks"]["test_counts"] == 1.0
    assert good.evidence["checks"]["file_paths"] == 1.0
    assert bad.evidence["checks"]["test_counts"] == 0.0 and bad.score < good.score


def test_search_rule_urls_and_titles() -> None:
    reference = ('{"organic": [{"title": "Python docs", "link": "https://docs.python.org/3/"}, '
                 '{"title": "PEP 8", "link": "https://peps.python.org/pep-0008/"}]}')
    sample = _sample("search", [], "search python", reference)
    assert verify(sample, reference).score == 1.0
    other = verify(sample, '{"organic": [{"title": "Cooking", "link": "https://food.example/"}]}')
    assert other.evidence["checks"]["url_jaccard"] == 0.0 and other.score < 0.5


def test_gui_touched_element_and_effect() -> None:
    before = parse_screen(SCREEN)
    assert touched_key('{"action_type": "click", "index": 1}', before) == "1"
    assert touched_key("click [1234] where [1234] is link 'Home'", before) == "1234"
    desktop = parse_screen("tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\t"
                           "size (w&h)\npush-button\tFiles\t\"\"\t\t\t(0, 340)\t(70, 64)\n"
                           "frame\tDesk\t\"\"\t\t\t(0, 0)\t(1920, 1080)")
    assert touched_key("pyautogui.click(10, 350)", desktop) == "push-button|Files#1"
    sample = _sample("android", [("open", SCREEN)], '{"action_type": "click", "index": 1}',
                     TICKED)
    right, unchanged = verify(sample, TICKED), verify(sample, SCREEN)
    assert right.score == 1.0
    assert unchanged.evidence["checks"]["touched_element"] == 0.0
    assert unchanged.evidence["checks"]["effect_jaccard"] == 0.0


def test_rubric_reference_is_perfect_and_echo_is_capped() -> None:
    sample = _sample("android", [("open", SCREEN)], '{"action_type": "click", "index": 1}',
                     TICKED)
    perfect = judge(sample, format_prediction(TICKED))
    assert perfect.as_dict() == dict.fromkeys(perfect.as_dict(), 5) and perfect.score == 100.0
    echo = judge(sample, format_prediction(SCREEN))
    assert echo.evidence["echo"] and echo.evidence["primary_effect_wrong"]
    assert echo.factuality <= 2 and echo.quality <= 2 and echo.realism <= 3
    # An exact GUI answer without its closing tag: officially the answer is what counts (100);
    # only strict scoring caps it (format 1, every axis at most 2).
    unclosed = "<predicted_observation>" + TICKED
    official = judge(sample, unclosed)
    assert official.evidence["malformed"] and official.score == 100.0
    strict = judge(sample, unclosed, strict=True)
    assert strict.format == 1 and max(strict.as_dict().values()) <= 2
    chatty = judge(sample, format_prediction("Sure, here is what I think the screen would "
                                             "likely show:\n" + TICKED))
    assert chatty.evidence["realism_penalties"]["assistant_talk"] > 0
    assert chatty.realism < 5


def test_an_echo_is_a_diagnostic_officially_and_capped_under_strict_scoring() -> None:
    listing = "total 8\n-rw-r--r-- 1 dev dev 120 Mar 3 a.txt\n-rw-r--r-- 1 dev dev 90 b.txt"
    sample = _sample("terminal", [("ls -l", listing)], "ls -l",
                     listing.replace("120", "121") + "\n-rw-r--r-- 1 dev dev 4 c.txt")
    official = judge(sample, format_prediction(listing))
    strict = judge(sample, format_prediction(listing), strict=True)
    assert official.evidence["echo"] and strict.evidence["echo"]
    assert official.factuality > 2 and strict.factuality <= 2 and strict.realism <= 3
    assert strict.score < official.score


def test_rubric_text_domain_axes() -> None:
    sample = _sample("terminal", [("ls", "a.txt\nb.txt")], "wc -l a.txt", "3 a.txt")
    assert judge(sample, format_prediction("3 a.txt")).score == 100.0
    empty = judge(sample, format_prediction(""))
    assert empty.evidence["nothing_predicted"] and empty.factuality == empty.quality == 1
    wrong = judge(sample, format_prediction("wc: a.txt: No such file or directory"))
    assert wrong.evidence["error_mismatch"] and wrong.factuality <= 2


def test_hybrid_reward_range() -> None:
    history = [("ls", "a.txt\nb.txt")]
    assert hybrid_reward("terminal", "3 a.txt", "3 a.txt", history, "wc -l a.txt") == 0.0
    best = hybrid_reward("terminal", format_prediction("3 a.txt"), "3 a.txt", history,
                         "wc -l a.txt", {"domain": "terminal", "exit_code": 0})
    worst = hybrid_reward("terminal", format_prediction(""), "3 a.txt", history, "wc -l a.txt")
    assert best == 25.0
    assert 5.0 <= worst < best


def test_baselines_order_on_built_samples(bench_corpus: Path) -> None:
    from bench_corpus import pools

    from bench.build import BuildConfig, build_domain
    from bench.evaluate import judge_outputs, summarize
    from bench.predictors.base import build_predictor
    from sources.schema import DOMAINS

    samples = []
    for domain in DOMAINS:
        samples += build_domain(bench_corpus, domain, BuildConfig(counts={domain: 6}),
                                trajectory_ids=pools(bench_corpus, domain)[0])[0]
    rows = []
    for name in ("copy_last", "empty"):
        rows += judge_outputs(samples, build_predictor(name).predict(samples), name)
    rows += judge_outputs(samples, [format_prediction(s.reference) for s in samples], "oracle")
    overall = {s.predictor: s.overall for s in summarize(rows)}
    assert overall["oracle"].macro == pytest.approx(100.0)
    assert overall["empty"].macro < overall["copy_last"].macro < 50.0
    assert all(overall["oracle"].complete for _ in [0])
