"""LLM judge: a model behind an OpenAI-compatible endpoint grades predictions on the rubric.

With `official` prompts (`--judge-prompts DIR`, bench/judges/official_prompts.py) it is the
released evaluation's judge: its per-domain system prompts and user prompt over the record's own
strings and the whole history, temperature 0.6, the answer read forgivingly, asked up to
`max_attempts` times (the same question each time), then the sample fails. Without them it is
our judge, named "... [worldtrace prompts: not the official judge]" in every row it writes:

Our own judge prompts, versioned files (bench/judges/prompts/<version>/: common.md, then text.md
or gui.md, then <domain>.md); a new wording is a new version folder, never an edit in place.
The judge reads the recent history, the action, the simulated and the real observation; it
classifies the content type (text domains) and reasons, then returns JSON inside
<final_evaluation>. An answer without a parseable block is asked again, with the reason, up to
`max_attempts`. A judge prompt the endpoint rejects as longer than its context is asked again
with a smaller view (fewer history turns, then shorter clips); a retry that no longer fits with
the previous answer in it is asked without that answer. The GUI caps and the malformed-output
caps are applied here, in code, only under `scoring="strict"` (the official score takes the
judge's numbers as they are; the official GUI prompts ask the judge for the caps in words).
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench.concurrency import run_concurrently
from bench.endpoint import ChatEndpoint, EndpointConfig, EndpointError, error_code
from bench.judges.official_prompts import OfficialPrompts, official_judge_messages, read_verdict
from bench.official import to_record
from bench.parsing import parse_prediction
from bench.result_cache import ResultCache, content_hash, fingerprint
from bench.sample import GUI_DOMAINS, BenchSample
from bench.scoring import AXES, AxisScores

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
PROMPT_VERSION = "llm_judge_v1"
_BLOCK = re.compile(r"<final_evaluation>(.*?)</final_evaluation>", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
MIN_CLIP_CHARS = 200  # the smallest clip of a section tried when the prompt is too long
OFFICIAL_LABEL = " [official judge prompts]"
NOT_OFFICIAL_LABEL = " [worldtrace prompts: not the official judge]"


@dataclass(frozen=True)
class LLMJudgeConfig:
    """The judge endpoint and how it is asked. Observations longer than max_chars are shown
    with their middle elided (the judge's context is finite; heads and tails carry the shape)."""

    endpoint: EndpointConfig
    temperature: float = 0.0
    retry_temperature: float = 0.7  # a greedy judge would repeat its unparseable answer
    max_tokens: int = 2048
    max_attempts: int = 3
    seed: int = 0
    history_turns: int = 8
    max_chars: int = 6000
    prompt_version: str = PROMPT_VERSION
    cache_dir: Path | None = None
    official: OfficialPrompts | None = None  # the released judge prompts (--judge-prompts)
    scoring: str = "official"  # "strict": our caps in code on top of the judge's scores


class UnparseableEvaluation(ValueError):
    """A judge answer without a valid <final_evaluation> block (the message says why)."""


class JudgeFailure(RuntimeError):
    """No valid evaluation after every attempt (or the endpoint failed for good)."""


@cache
def judge_system_prompt(domain: str, version: str = PROMPT_VERSION) -> str:
    """The judge instructions for one domain: common, then text or GUI rules, then the domain."""
    folder = PROMPTS_DIR / version
    parts = ["common", "gui" if domain in GUI_DOMAINS else "text", domain]
    missing = [p for p in parts if not (folder / f"{p}.md").is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: no judge prompt {', '.join(missing)} (.md)")
    return "\n\n".join((folder / f"{p}.md").read_text(encoding="utf-8").strip() for p in parts)


def clip(text: str, max_chars: int) -> str:
    """The text, or its head and tail with the middle elided and counted."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


def _tagged(tag: str, text: str) -> str:
    # A prediction cannot close its own section early and pose as the real observation.
    escaped = text.replace(f"</{tag}>", f"<\\/{tag}>")
    return f"<{tag}>\n{escaped}\n</{tag}>"


def judge_messages(sample: BenchSample, prediction_text: str, config: LLMJudgeConfig
                   ) -> list[dict[str, str]]:
    """System = our judge prompt for the domain; user = the case to grade."""
    parsed = parse_prediction(prediction_text)
    shown = sample.history[-config.history_turns:] if config.history_turns else ()
    first = len(sample.history) - len(shown) + 1
    parts = []
    if sample.task:
        parts.append(f"## Task instruction\n{clip(sample.task, config.max_chars)}")
    if sample.initial_state and first == 1:
        parts.append(f"## Initial state\n{clip(sample.initial_state, config.max_chars)}")
    parts.append(f"## History ({len(sample.history)} earlier turns"
                 + (f", the last {len(shown)} shown" if len(shown) < len(sample.history) else "")
                 + ")")
    for turn, (action, observation) in enumerate(shown, start=first):
        parts.append(f"### Turn {turn}\nAction:\n{clip(action, config.max_chars)}\n"
                     f"Observation:\n{clip(observation, config.max_chars)}")
    parts.append(f"## Current action (turn {sample.turn_idx})\n"
                 f"{clip(sample.current_action, config.max_chars)}")
    note = ("\n(The model's output had no complete <predicted_observation> block; shown is its "
            "text without reasoning.)" if parsed.malformed else "")
    parts.append(f"## Simulated observation{note}\n"
                 + _tagged("simulated_observation", clip(parsed.judged_text, config.max_chars)))
    parts.append("## Real observation\n"
                 + _tagged("real_observation", clip(sample.reference, config.max_chars)))
    return [{"role": "system", "content": judge_system_prompt(sample.domain,
                                                              config.prompt_version)},
            {"role": "user", "content": "\n\n".join(parts)}]


def parse_evaluation(text: str) -> dict[str, Any]:
    """The JSON of the last <final_evaluation> block, its five scores checked as integers 1..5."""
    blocks = _BLOCK.findall(text or "")
    if not blocks:
        raise UnparseableEvaluation("no <final_evaluation>...</final_evaluation> block")
    try:
        evaluation = json.loads(_FENCE.sub("", blocks[-1].strip()))
    except json.JSONDecodeError as error:
        raise UnparseableEvaluation(f"the block is not JSON ({error})") from None
    scores = evaluation.get("scores") if isinstance(evaluation, dict) else None
    if not isinstance(scores, dict):
        raise UnparseableEvaluation('no "scores" object in the block')
    checked = {}
    for axis in AXES:
        value = scores.get(axis)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise UnparseableEvaluation(f"score {axis!r} must be an integer 1..5, got {value!r}")
        checked[axis] = value
    return {**evaluation, "scores": checked}


def apply_caps(domain: str, scores: dict[str, int], primary_effect_correct: Any,
               malformed: bool) -> tuple[dict[str, int], list[str]]:
    """Malformed output: format 1. GUI (official caps): a wrong primary effect caps factuality
    and quality at 2; realism at most 3 when factuality or consistency is 2 or less; a missing
    closing tag caps every axis at 2."""
    capped, caps = dict(scores), []
    if malformed:
        capped["format"] = 1
        caps.append("malformed: format 1")
    if domain in GUI_DOMAINS:
        if primary_effect_correct is False:
            capped["factuality"] = min(capped["factuality"], 2)
            capped["quality"] = min(capped["quality"], 2)
            caps.append("primary effect wrong: factuality, quality <= 2")
        if capped["factuality"] <= 2 or capped["consistency"] <= 2:
            capped["realism"] = min(capped["realism"], 3)
            caps.append("factuality or consistency <= 2: realism <= 3")
        if malformed:
            capped = {axis: min(value, 2) for axis, value in capped.items()}
            caps.append("missing closing tag: every axis <= 2")
    return capped, caps


class LLMJudge:
    """`judge(sample, prediction_text) -> AxisScores`, the rubric judge's signature; verdicts are
    cached by the hash of what the judge was shown, so a rerun asks nothing twice."""

    def __init__(self, config: LLMJudgeConfig) -> None:
        self.config = config
        self.endpoint = ChatEndpoint(config.endpoint)
        self.name = f"llm_judge:{self.endpoint.model}" + (
            OFFICIAL_LABEL if config.official else NOT_OFFICIAL_LABEL)
        self.unparseable_answers = 0
        self.on_done: Callable[[int], None] | None = None  # progress: samples judged
        self._lock = threading.Lock()
        settings = {"model": self.endpoint.model, "version": config.prompt_version,
                    "temperature": config.temperature, "retry": config.retry_temperature,
                    "max_tokens": config.max_tokens, "seed": config.seed,
                    "history_turns": config.history_turns, "max_chars": config.max_chars,
                    "official": config.official.source if config.official else None}
        path = None if config.cache_dir is None else \
            Path(config.cache_dir) / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', self.name)}.jsonl"
        self.cache = ResultCache(path, fingerprint(settings))

    def judge(self, sample: BenchSample, prediction_text: str) -> AxisScores:
        """The five axes for one prediction (JudgeFailure when no attempt gave a verdict)."""
        official = self.config.official
        parsed = parse_prediction(prediction_text)
        messages = official_judge_messages(to_record(sample), sample.domain, parsed.observation,
                                           official) if official else \
            judge_messages(sample, prediction_text, self.config)
        key = content_hash(messages)
        verdict = self.cache.get(key, key)
        if verdict is None:
            verdict = self._ask_official(sample, messages) if official else \
                self._ask_fitting(sample, prediction_text)
            self.cache.put(key, key, verdict)
        caps: list[str] = []
        scores = verdict["scores"]
        if self.config.scoring == "strict":
            scores, caps = apply_caps(sample.domain, scores,
                                      verdict.get("primary_effect_correct"), parsed.malformed)
        if not any(scores.values()):
            raise JudgeFailure(f"sample {sample.id}: the judge gave no axis a score")
        evidence = {k: v for k, v in verdict.items() if k != "scores"}
        evidence.update(judge=self.name, judge_scores=verdict["scores"], caps=caps,
                        prompt_version=official.source if official else self.config.prompt_version)
        return AxisScores(**scores, evidence=evidence)

    def _ask_official(self, sample: BenchSample, messages: list[dict[str, str]]
                      ) -> dict[str, Any]:
        """The released judge loop: the same question up to max_attempts times (an endpoint
        error counts as an attempt), the answer read forgivingly."""
        last = ""
        for attempt in range(self.config.max_attempts):
            try:
                answer = self.endpoint.complete(messages, temperature=self.config.temperature,
                                                max_tokens=self.config.max_tokens,
                                                seed=self.config.seed + attempt)
            except EndpointError as error:
                last = str(error)
                continue
            verdict = read_verdict(answer)
            if verdict is not None:
                return {**verdict, "attempts": attempt + 1}
            with self._lock:
                self.unparseable_answers += 1
            last = "no scores object in the answer"
        raise JudgeFailure(f"sample {sample.id}: no readable evaluation in "
                           f"{self.config.max_attempts} attempts (last: {last})")

    def judge_all(self, samples: Sequence[BenchSample], predictions: Sequence[str]
                  ) -> list[AxisScores | JudgeFailure]:
        """Judge every pair concurrently; a failure stays in its slot for the caller to report."""
        pairs = list(zip(samples, predictions, strict=True))
        return run_concurrently(lambda pair: self.judge(*pair), pairs,
                                self.config.endpoint.concurrency, expected=(JudgeFailure,),
                                on_done=self.on_done)

    def _ask_fitting(self, sample: BenchSample, prediction_text: str) -> dict[str, Any]:
        """Ask with the configured view; while the endpoint says the prompt is longer than its
        context, ask again with a smaller one (the view shrunk is kept in the verdict)."""
        for view in smaller_views(self.config):
            try:
                verdict = self._ask(sample, judge_messages(sample, prediction_text, view))
            except _ContextExceeded:
                continue
            if view != self.config:
                verdict["shown"] = {"history_turns": view.history_turns,
                                    "max_chars": view.max_chars}
            return verdict
        raise JudgeFailure(f"sample {sample.id}: the judge prompt is longer than the judge's "
                           f"context even with no history and every section clipped to "
                           f"{MIN_CLIP_CHARS} characters")

    def _ask(self, sample: BenchSample, messages: list[dict[str, str]]) -> dict[str, Any]:
        """Ask until a parseable verdict; each retry shows the judge its last answer and why it
        could not be read (or, when that no longer fits the context, asks afresh)."""
        conversation = messages
        reason = ""
        for attempt in range(self.config.max_attempts):
            temperature = self.config.temperature if attempt == 0 else \
                max(self.config.temperature, self.config.retry_temperature)
            try:
                answer = self._complete(sample, conversation, temperature, attempt)
            except _ContextExceeded:
                if conversation is messages:
                    raise
                answer = self._complete(sample, messages, temperature, attempt)
            try:
                verdict = parse_evaluation(answer)
            except UnparseableEvaluation as error:
                with self._lock:
                    self.unparseable_answers += 1
                reason = str(error)
                conversation = [*messages, {"role": "assistant", "content": answer},
                                {"role": "user", "content": (
                                    f"Your answer could not be read: {reason}. Answer again: "
                                    "reasoning, then exactly one <final_evaluation> block "
                                    "with the JSON.")}]
                continue
            return {**verdict, "attempts": attempt + 1}
        raise JudgeFailure(f"sample {sample.id}: no valid evaluation in "
                           f"{self.config.max_attempts} attempts (last: {reason})")

    def _complete(self, sample: BenchSample, conversation: list[dict[str, str]],
                  temperature: float, attempt: int) -> str:
        try:
            return self.endpoint.complete(conversation, temperature=temperature,
                                          max_tokens=self.config.max_tokens,
                                          seed=self.config.seed + attempt)
        except EndpointError as error:
            if error_code(error) == "context_length_exceeded":
                raise _ContextExceeded from error
            raise JudgeFailure(f"sample {sample.id}: {error}") from error


class _ContextExceeded(Exception):
    """The endpoint rejected a conversation as longer than its context."""


def smaller_views(config: LLMJudgeConfig) -> list[LLMJudgeConfig]:
    """The configured view, then halved history turns down to none, then halved clips down to
    MIN_CLIP_CHARS: the order in which a too-long judge prompt is shrunk."""
    views = [config]
    while views[-1].history_turns > 0:
        views.append(dataclasses.replace(views[-1], history_turns=views[-1].history_turns // 2))
    while views[-1].max_chars > MIN_CLIP_CHARS:
        views.append(dataclasses.replace(
            views[-1], max_chars=max(MIN_CLIP_CHARS, views[-1].max_chars // 2)))
    return views
