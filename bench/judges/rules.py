"""Rule verifiers: executable checks of a predicted observation against the real one, per domain.

Each verifier runs a few checks, each a number in 0..1 or None when it does not apply to this
sample; the score is the mean of the checks that apply, and the evidence holds every check's
value and what it compared. A domain whose checks all fail to apply returns None.

- terminal: exit status (error or not; the recorded exit code when known); recall of the
  reference's deterministic lines (those the history or the action already show: the echoed
  command, the prompt, a file printed before); line F1.
- mcp: JSON structure (parses when the reference does; key-path Jaccard); error vs success;
  line F1 for text results.
- swe: the reference's file paths recalled; test counts (passed, failed, errors, collected)
  equal; error vs success.
- search: result list well formed (JSON when the reference is, URLs when it has them); URL
  Jaccard; title token F1; page-text token F1 when the reference is no result list.
- android, web, os: well-formed screen (share of lines that are elements, against the
  reference's); the touched element ends as in the reference; Jaccard of the changed element
  lines (prediction vs previous screen, against reference vs previous screen).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from bench.judges import evidence as ev
from bench.judges.gui import changed_lines, parse_screen, touched_key
from bench.sample import GUI_DOMAINS, BenchSample

_PROMPT_LINE = re.compile(r"^[\w.-]+@[\w.-]+:[^\n]*[#$]")
_TEST_COUNT = re.compile(r"\b(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b"
                         r"|\bcollected (\d+) items?\b|\bRan (\d+) tests?\b")
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_TITLE = re.compile(r'"title"\s*:\s*"([^"]*)"|^\s*(?:Title:|#+)\s*(.+)$', re.MULTILINE)


@dataclass(frozen=True)
class RuleResult:
    """A verifier's score in 0..1 and the checks behind it."""

    score: float
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleInput:
    """What a verifier compares: the prediction, the reference, the action and the history."""

    domain: str
    observation: str
    reference: str
    action: str
    history: Sequence[tuple[str, str]] = ()
    previous: str = ""
    spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reference_is_error(self) -> bool:
        exit_code = self.spec.get("exit_code")
        if isinstance(exit_code, int):
            return exit_code != 0
        if isinstance(self.spec.get("is_error"), bool) and self.spec["is_error"]:
            return True
        return ev.looks_like_error(self.reference, self.domain)


def verifier_spec(domain: str, exit_code: int | None = None, is_error: bool | None = None
                  ) -> dict[str, Any]:
    """The JSON-able spec of a turn's verifier (rl_split's `verifier` column)."""
    spec: dict[str, Any] = {"domain": domain}
    if exit_code is not None:
        spec["exit_code"] = int(exit_code)
    if is_error is not None:
        spec["is_error"] = bool(is_error)
    return spec


def _error_match(rule: RuleInput) -> float:
    return float(ev.looks_like_error(rule.observation, rule.domain) == rule.reference_is_error)


def _terminal(rule: RuleInput) -> dict[str, float | None]:
    known = set(ev.lines(rule.action)) | {
        line for _, obs in rule.history[-8:] for line in ev.lines(obs)}
    deterministic = {line for line in ev.lines(rule.reference)
                     if line in known or _PROMPT_LINE.match(line)}
    return {"exit_status": _error_match(rule),
            "deterministic_lines": ev.recall(deterministic, set(ev.lines(rule.observation))),
            "line_f1": ev.line_f1(rule.observation, rule.reference)}


def _mcp(rule: RuleInput) -> dict[str, float | None]:
    reference, predicted = ev.parse_json(rule.reference), ev.parse_json(rule.observation)
    checks: dict[str, float | None] = {"error_vs_success": _error_match(rule)}
    if reference is not None:
        checks["json_structure"] = float(predicted is not None)
        checks["key_jaccard"] = (ev.jaccard(ev.key_paths(reference), ev.key_paths(predicted))
                                 if predicted is not None else 0.0)
    else:
        checks["line_f1"] = ev.line_f1(rule.observation, rule.reference)
    return checks


def _paths(text: str) -> set[str]:
    return {i for i in ev.identifiers(text) if "/" in i or re.search(r"\.[A-Za-z]{1,5}$", i)}


def _test_counts(text: str) -> dict[str, str]:
    counts = {}
    for match in _TEST_COUNT.finditer(text):
        if match.group(1):
            counts[match.group(2).rstrip("s") if match.group(2) != "passed" else "passed"] = (
                match.group(1))
        elif match.group(3):
            counts["collected"] = match.group(3)
        else:
            counts["ran"] = match.group(4)
    return counts


def _swe(rule: RuleInput) -> dict[str, float | None]:
    wanted = _test_counts(rule.reference)
    got = _test_counts(rule.observation)
    tests = (sum(got.get(k) == v for k, v in wanted.items()) / len(wanted)) if wanted else None
    return {"file_paths": ev.recall(_paths(rule.reference), _paths(rule.observation)),
            "test_counts": tests, "error_vs_success": _error_match(rule)}


def _titles(text: str) -> list[str]:
    return [word.lower() for m in _TITLE.finditer(text[:200_000])
            for word in ev.tokens(m.group(1) or m.group(2) or "")]


def _search(rule: RuleInput) -> dict[str, float | None]:
    urls = set(_URL.findall(rule.reference))
    if not urls and not _titles(rule.reference):
        return {"error_vs_success": _error_match(rule),
                "page_token_f1": ev.token_f1(rule.observation, rule.reference)}
    predicted_urls = set(_URL.findall(rule.observation))
    reference_json = ev.parse_json(rule.reference)
    well_formed = bool(predicted_urls) if urls else True
    if reference_json is not None:
        well_formed = well_formed and ev.parse_json(rule.observation) is not None
    return {"results_well_formed": float(well_formed),
            "url_jaccard": ev.jaccard(urls, predicted_urls) if urls else None,
            "title_f1": ev.multiset_f1(_titles(rule.observation), _titles(rule.reference))}


def _gui(rule: RuleInput) -> dict[str, float | None]:
    before, reference = parse_screen(rule.previous), parse_screen(rule.reference)
    predicted = parse_screen(rule.observation)
    reference_share = reference.well_formed_share
    well_formed = (min(1.0, predicted.well_formed_share / reference_share)
                   if reference_share > 0 and predicted.elements else
                   float(not reference.elements and not predicted.elements))
    key = touched_key(rule.action, before)
    touched = None
    if key is not None and (key in before.elements or key in reference.elements):
        want, got = reference.elements.get(key), predicted.elements.get(key)
        touched = float((want.line if want else None) == (got.line if got else None))
    return {"well_formed": well_formed, "touched_element": touched,
            "effect_jaccard": ev.jaccard(changed_lines(before, reference),
                                         changed_lines(before, predicted))}


VERIFIERS: dict[str, Callable[[RuleInput], dict[str, float | None]]] = {
    "terminal": _terminal, "mcp": _mcp, "swe": _swe, "search": _search,
    **{domain: _gui for domain in GUI_DOMAINS},
}


def run_checks(rule: RuleInput) -> RuleResult | None:
    """Score one prediction with its domain's verifier (None when no check applies)."""
    verifier = VERIFIERS.get(rule.domain)
    if verifier is None:
        return None
    checks = verifier(rule)
    applied = [value for value in checks.values() if value is not None]
    if not applied:
        return None
    return RuleResult(fmean(applied), {"checks": {k: v for k, v in checks.items()}})


def verify(sample_or_spec: BenchSample | Mapping[str, Any], observation: str, *,
           reference: str | None = None, action: str = "",
           history: Sequence[tuple[str, str]] = ()) -> RuleResult | None:
    """Verify a predicted observation: against a BenchSample, or a verifier spec (with the
    reference, action and history given as arguments, as the RL reward has them)."""
    if isinstance(sample_or_spec, BenchSample):
        sample = sample_or_spec
        rule = RuleInput(sample.domain, observation, sample.reference, sample.current_action,
                         sample.history, sample.last_observation)
    else:
        spec = dict(sample_or_spec)
        if reference is None:
            reference = spec.get("reference")
        if not isinstance(reference, str):
            raise ValueError("verify with a spec needs the reference observation")
        previous = history[-1][1] if history else ""
        rule = RuleInput(str(spec["domain"]), observation, reference, action, history,
                         previous, spec)
    return run_checks(rule)
