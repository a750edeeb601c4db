"""The reference-grounded rubric judge (offline, the default): five axes, each 1..5 from evidence.

Every axis is a measurement in 0..1 binned to 1..5 at fixed edges (0.2, 0.4, 0.6, 0.8), so a
score can always be traced to the numbers in `AxisScores.evidence`. Nothing here is fitted to
any model's outputs. P is the predicted observation (the fallback text when malformed), R the
reference, L the observation before the action, H the action, the last 8 turns and the initial
screen (older turns are not read: the cost per sample stays bounded).

- format: the mean of kind agreement (JSON / screen of elements / text / empty, P vs R),
  line-shape Jaccard, and line-count agreement.
- factuality: agreement with R: the mean of content F1 (line F1 and token F1, volatile bits
  masked), change recall (R's words that L lacks, found in P: did the action's effect come
  out right) and the domain's rule-verifier score where it has one; at most 2 when P reads as
  an error and R does not, or the reverse.
- consistency: agreement with what H pins down: the share of P's identifiers (paths, file
  names, numbers, ids) found in H or R; on GUI screens also the share of the elements the
  action left unchanged in R that P keeps unchanged.
- realism: 1 minus penalties for what no environment prints: assistant talk ("I think",
  "Sure,", "As an AI", "would likely"), placeholders ("...", "<placeholder>", "[omitted]"),
  degenerate repetition (repeated lines well beyond R's own), runaway length (more than
  3 x R's lines + 5) and a kind that differs from R's.
- quality: the new information of R (its words absent from H) that P predicts, averaged with
  factuality's measure.

An empty P for a non-empty R scores 1 on every axis but format (nothing predicted). GUI
domains (what the official GUI judge prompts ask of the judge): a wrong primary effect (the
touched element does not end as in R, or without a touched element, changed-element Jaccard
under 0.5) caps factuality and quality at 2; realism is capped at 3 when factuality or
consistency is 2 or less.

Strict scoring only (`strict=True`, `--scoring strict`; never the official score): a malformed
output (no closed <predicted_observation> block) gets format 1 and, on GUI domains, every axis
capped at 2; an echo (P is an earlier observation of H again, word 3-gram Jaccard >= 0.9, while
R is not: the Echo Trap) caps factuality, consistency and quality at 2 and realism at 3. Both
are recorded as diagnostics in every mode (evidence `malformed`, `echo`).
"""

from __future__ import annotations

import re
from statistics import fmean
from typing import Any

from bench.judges import evidence as ev
from bench.judges.gui import parse_screen
from bench.judges.rules import verify
from bench.parsing import ParsedPrediction, parse_prediction
from bench.sample import GUI_DOMAINS, BenchSample
from bench.scoring import AxisScores

EDGES = (0.2, 0.4, 0.6, 0.8)
_ASSISTANT_TALK = re.compile(
    r"(?i)\b(I think|I believe|I would|I'll|I will|as an AI|Sure[,!]|Here is|Here's|"
    r"would (likely|probably)|it (seems|appears) that|the (environment|output) (would|will)|"
    r"predicted observation|world model)\b")
_PLACEHOLDER = re.compile(r"(?i)(\.\.\.|…|<placeholder>|\[omitted\]|\[truncated\]|"
                          r"<[a-z_ ]+ here>|lorem ipsum|TODO\b)")
ECHO_JACCARD = 0.9  # word 3-gram Jaccard at which two observations count as the same output
PREFILTER_JACCARD = 0.75
CONTEXT_TURNS = 8  # history turns the consistency and novelty measures read (bounded cost)


def to_scale(value: float) -> int:
    """0..1 -> 1..5 at the fixed edges."""
    return 1 + sum(value >= edge for edge in EDGES)


def _kind(text: str, domain: str) -> str:
    if not ev.lines(text):
        return "empty"
    if ev.parse_json(text) is not None:
        return "json"
    if domain in GUI_DOMAINS and parse_screen(text).well_formed_share >= 0.5:
        return "screen"
    return "text"


def _realism(predicted: str, reference: str, kind_match: bool) -> tuple[float, dict[str, Any]]:
    p_lines, r_lines = ev.lines(predicted), ev.lines(reference)
    repeated = 1 - len(set(p_lines)) / len(p_lines) if p_lines else 0.0
    reference_repeated = 1 - len(set(r_lines)) / len(r_lines) if r_lines else 0.0
    penalties = {
        "assistant_talk": 0.5 if _ASSISTANT_TALK.search(predicted[:20_000])
        and not _ASSISTANT_TALK.search(reference[:20_000]) else 0.0,
        "placeholder": 0.25 if len(_PLACEHOLDER.findall(predicted[:20_000]))
        > len(_PLACEHOLDER.findall(reference[:20_000])) else 0.0,
        "repetition": min(0.5, max(0.0, repeated - reference_repeated - 0.2)),
        "runaway_length": 0.25 if len(p_lines) > 3 * len(r_lines) + 5 else 0.0,
        "kind_mismatch": 0.0 if kind_match else 0.25,
    }
    return max(0.0, 1.0 - sum(penalties.values())), penalties


def context_texts(sample: BenchSample) -> list[str]:
    """The action, the last CONTEXT_TURNS turns and the initial screen: what H pins down."""
    recent = sample.history[-CONTEXT_TURNS:]
    return [sample.current_action, *(text for turn in recent for text in turn),
            sample.initial_state]


def near_copy(left: str, right: str) -> bool:
    """Word 3-gram Jaccard >= ECHO_JACCARD (after a cheap word-set prefilter: texts whose word
    sets overlap less than PREFILTER_JACCARD are never that close in 3-grams in practice)."""
    if ev.jaccard(ev.word_set(left), ev.word_set(right)) < PREFILTER_JACCARD:
        return False
    return ev.jaccard(ev.trigram_set(left), ev.trigram_set(right)) >= ECHO_JACCARD


def copies_history(predicted: str, sample: BenchSample) -> bool:
    """P is an earlier observation again (word 3-gram Jaccard >= ECHO_JACCARD) and R is not."""
    if not ev.lines(predicted):
        return False
    earlier = [obs for _, obs in sample.history[-CONTEXT_TURNS:]] + [sample.initial_state]
    return any(near_copy(predicted, obs) and not near_copy(sample.reference, obs)
               for obs in earlier if obs)


def _gui_kept(sample: BenchSample, predicted: str) -> float | None:
    before = parse_screen(sample.last_observation)
    reference = parse_screen(sample.reference)
    kept = {e.line for e in before.elements.values()} & {e.line for e in
                                                          reference.elements.values()}
    if not kept:
        return None
    return len(kept & {e.line for e in parse_screen(predicted).elements.values()}) / len(kept)


def _gui_effect_wrong(rule_checks: dict[str, Any]) -> bool:
    touched = rule_checks.get("touched_element")
    if touched is not None:
        return touched < 1.0
    return (rule_checks.get("effect_jaccard") or 0.0) < 0.5


def judge(sample: BenchSample, prediction_text: str,
          parsed: ParsedPrediction | None = None, strict: bool = False) -> AxisScores:
    """Score one raw model output against the sample's reference (see the module docstring;
    `strict` adds our malformed and echo caps)."""
    parsed = parsed or parse_prediction(prediction_text)
    predicted, reference, before = parsed.judged_text, sample.reference, sample.last_observation
    p_kind, r_kind = _kind(predicted, sample.domain), _kind(reference, sample.domain)
    kind_match = p_kind == r_kind
    format_value = fmean([float(kind_match), ev.jaccard(ev.shapes(predicted), ev.shapes(reference)),
                          ev.length_agreement(predicted, reference)])
    rule = verify(sample, predicted)
    rule_checks = rule.evidence["checks"] if rule else {}
    content = fmean([ev.line_f1(predicted, reference), ev.token_f1(predicted, reference)])
    p_words = ev.word_set(predicted)
    change = ev.recall(set(ev.word_set(reference) - ev.word_set(before)), set(p_words))
    factual = fmean([v for v in (content, change, rule.score if rule else None) if v is not None])
    error_mismatch = (ev.looks_like_error(predicted, sample.domain)
                      != ev.looks_like_error(reference, sample.domain))
    context = context_texts(sample)
    own_ids = ev.identifiers(predicted)
    grounded = set(ev.identifiers(reference)).union(*(ev.identifiers(t) for t in context))
    consistency_parts = [len(own_ids & grounded) / len(own_ids)] if own_ids else []
    if sample.domain in GUI_DOMAINS and (kept := _gui_kept(sample, predicted)) is not None:
        consistency_parts.append(kept)
    consistency = fmean(consistency_parts) if consistency_parts else content
    realism, penalties = _realism(predicted, reference, kind_match)
    novel = ev.recall(set(ev.word_set(reference)).difference(*(ev.word_set(t) for t in context)),
                      set(p_words))
    quality = fmean([novel, factual]) if novel is not None else factual
    echo = copies_history(predicted, sample)
    evidence: dict[str, Any] = {
        "malformed": parsed.malformed, "kind": [p_kind, r_kind],
        "format_value": round(format_value, 4), "content_f1": round(content, 4),
        "change_recall": None if change is None else round(change, 4), "rule": rule_checks,
        "rule_score": round(rule.score, 4) if rule else None, "error_mismatch": error_mismatch,
        "consistency_value": round(consistency, 4), "realism_penalties": penalties,
        "novel_recall": None if novel is None else round(novel, 4), "echo": echo,
    }
    axes = {"format": 1 if strict and parsed.malformed else to_scale(format_value),
            "factuality": to_scale(factual), "consistency": to_scale(consistency),
            "realism": to_scale(realism), "quality": to_scale(quality)}
    if error_mismatch:
        axes["factuality"] = min(axes["factuality"], 2)
    if strict and echo:
        axes.update({axis: min(axes[axis], 2) for axis in ("factuality", "consistency",
                                                            "quality")})
        axes["realism"] = min(axes["realism"], 3)
    if not ev.lines(predicted) and ev.lines(reference):
        axes.update(factuality=1, consistency=1, realism=1, quality=1)
        evidence["nothing_predicted"] = True
    if sample.domain in GUI_DOMAINS:
        axes = _gui_caps(axes, rule_checks, strict and parsed.malformed, evidence)
    return AxisScores(**axes, evidence=evidence)


def _gui_caps(axes: dict[str, int], rule_checks: dict[str, Any], malformed: bool,
              evidence: dict[str, Any]) -> dict[str, int]:
    """The GUI caps, in order: primary effect, then realism, then (strict) the closing tag."""
    if _gui_effect_wrong(rule_checks):
        evidence["primary_effect_wrong"] = True
        axes["factuality"], axes["quality"] = min(axes["factuality"], 2), min(axes["quality"], 2)
    if axes["factuality"] <= 2 or axes["consistency"] <= 2:
        axes["realism"] = min(axes["realism"], 3)
    if malformed:
        axes = {axis: min(value, 2) for axis, value in axes.items()}
    return axes
