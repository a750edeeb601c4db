"""Reasoning for SFT targets: a deterministic rationale from the data, or a teacher model.

The SFT target is `<think>reasoning</think><predicted_observation>real observation
</predicted_observation>`; the reasoning is about the state before the action, what the action
does and the format the environment answers in. Two sources, marked in `reasoning_source`:

- `deterministic` (offline, the default): built from the data alone: the action's kind and
  target, the last observation (its first line and size), the answer's format and size, and
  whether the environment refuses it (an error turn).
- `teacher:<model>`: an OpenAI-compatible endpoint (bench.endpoint.ChatEndpoint: the official
  `openai` client with timeouts, retries and backoff) asked for `candidates` (3) answers per
  query: reasoning in <think></think>, then a <predicted_observation>, given the last
  observation and the action but not the real observation. A judge (any callable: candidate
  text, query -> score in 0..1; by default the bench's rubric against the real observation)
  scores them; the reasoning of the best is kept when it reaches `min_score`, and a query whose
  best is weak is dropped (the recipe kept 7,094 of 10,250). `TeacherStats` reports the
  retention. The kept reasoning is paired with the real observation in the SFT target.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.endpoint import ChatEndpoint, EndpointConfig
from bench.judges.rubric import judge as rubric
from bench.sample import BenchSample
from bench.scoring import normalize
from training.prompt_variants import format_phrase
from training.render import Step

THINK = re.compile(r"<think>(.*?)</think>", re.S)


@dataclass(frozen=True)
class Query:
    """What a rationale explains: the domain, the last observation, the action, the answer;
    `history` the earlier (action, observation) turns when known (the judge's context)."""

    domain: str
    previous: str
    step: Step
    history: tuple[tuple[str, str], ...] = ()


def _first_line(text: str, limit: int = 100) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def deterministic_rationale(query: Query, style: str = "full") -> str:
    """A rationale from the data alone (see module docstring); `brief` keeps the action's kind
    and target, the outcome and the format, in about 20 tokens (for a tiny model's targets)."""
    step = query.step
    kind = step.action_kind or "action"
    target = f" `{step.tool_name}`" if step.tool_name else ""
    fmt = format_phrase(query.domain, [step.observation_format])
    if style == "brief":
        outcome = "it fails" if step.category == "error" else "it succeeds"
        return f"A {kind}{target}: {outcome}; {fmt}."
    if style != "full":
        raise ValueError(f"rationale style must be 'brief' or 'full', got {style!r}")
    action = _first_line(step.action, 120)
    if query.previous.strip():
        lines = len(query.previous.splitlines())
        state = (f"Before it, the environment showed {lines} line(s), starting with "
                 f"\"{_first_line(query.previous)}\".")
    else:
        state = "Nothing has been shown yet, so the answer starts from the initial state."
    answer_lines = len(step.observation.splitlines())
    outcome = ("The action cannot succeed as written, so the environment reports an error."
               if step.category == "error" else
               "The action succeeds and its effect shows in the new observation.")
    return (f"The agent sends a {kind}{target}: {action}. {state} {outcome} The environment "
            f"answers with {fmt}, about {answer_lines} line(s).")


def rubric_judge(candidate: str, query: Query) -> float:
    """The bench's rubric score (0..1) of a candidate's predicted observation against the
    real one, with the query's history as context: a candidate whose reasoning led to a wrong
    or malformed prediction scores low."""
    history = query.history or ((("", query.previous),) if query.previous else ())
    sample = BenchSample(domain=query.domain, id="teacher", history=history,
                         current_action=query.step.action, reference=query.step.observation,
                         system_prompt="", turn_idx=len(history) + 1,
                         total_turns=len(history) + 1, trajectory_id="", source="",
                         category=query.step.category)
    return normalize(rubric(sample, candidate).mean) / 100.0


Judge = Callable[[str, Query], float]


@dataclass
class TeacherStats:
    """Queries asked, candidates received, queries kept (best candidate at min_score)."""

    queries: int = 0
    candidates: int = 0
    kept: int = 0
    malformed: int = 0
    scores: list[float] = field(default_factory=list)

    @property
    def retention(self) -> float:
        return self.kept / self.queries if self.queries else 0.0


TEACHER_SYSTEM = (
    "You are a world model: given the last observation of an environment and an agent's action, "
    "you predict the environment's next observation. First reason in 2-5 sentences inside "
    "<think></think> about the state before the action, what the action does, and the format "
    "the environment answers in; then write the next observation, exactly as the environment "
    "would, inside <predicted_observation></predicted_observation>.")


class OpenAITeacher:
    """Rationales from an OpenAI-compatible chat endpoint, judged; best kept, weak dropped."""

    def __init__(self, base_url: str, model: str, api_key: str = "none", candidates: int = 3,
                 judge: Judge = rubric_judge, min_score: float = 0.5,
                 temperature: float = 0.8, max_tokens: int = 600, timeout: float = 60.0,
                 max_retries: int = 5) -> None:
        self.endpoint = ChatEndpoint(EndpointConfig(
            base_url=base_url, model=model, api_key=api_key, timeout_s=timeout,
            max_retries=max_retries))
        self.model, self.candidates, self.judge = model, candidates, judge
        self.min_score, self.temperature, self.max_tokens = min_score, temperature, max_tokens
        self.stats = TeacherStats()

    @property
    def source(self) -> str:
        return f"teacher:{self.model}"

    def request(self, query: Query) -> list[dict[str, str]]:
        """The chat messages asking for one reasoned prediction (the answer is not shown)."""
        return [{"role": "system", "content": TEACHER_SYSTEM},
                {"role": "user", "content": (
                    f"Domain: {query.domain}\n\nLast observation:\n{query.previous[-4000:]}\n\n"
                    f"Action:\n{query.step.action[-2000:]}")}]

    def rationale(self, query: Query) -> str | None:
        """The reasoning of the best judged candidate, or None when every candidate is weak or
        malformed (no reasoning)."""
        self.stats.queries += 1
        answers = self.endpoint.complete_all(
            self.request(query), n=self.candidates, temperature=self.temperature,
            max_tokens=self.max_tokens)
        best, best_score = None, -1.0
        for answer in answers:
            self.stats.candidates += 1
            match = THINK.search(answer)
            if not match or not match.group(1).strip():
                self.stats.malformed += 1
                continue
            score = float(self.judge(answer, query))
            if score > best_score:
                best, best_score = match.group(1).strip(), score
        if best is None or best_score < self.min_score:
            return None
        self.stats.kept += 1
        self.stats.scores.append(best_score)
        return best
