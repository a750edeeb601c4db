"""Next-observation prompts under a token budget, and seeded choice of target turns.

A prompt for target turn t is: the system message (prompt variant + task), the history
(turns 0..t-1 replayed in the bench's layout, `render.Episode.rendered`), the current action as
the last user message. When it is over `max_prompt_tokens` the oldest turns are dropped, whole,
until it fits; the system message and the current action always stay. A prompt that does not
fit even without history is skipped and counted, so the cap always holds.

Token counts are exact and cheap: the chat template puts special tokens around each message
and the tokenizer never merges across special tokens, so a prompt's length is the sum of its
messages' content tokens + a fixed cost per message + the generation prompt TRL appends. The
costs are measured from the tokenizer's own template (`template_costs`): ours is 2 a message
(<|role|> ... <|end|>) + 1 (<|assistant|>); a real base's ChatML measures 6 + 4. Each message
is tokenized once per episode, lazily, newest first, so a small budget reads only the end of a
long history. Which turns go is decided in one place for the SFT and RL splits, the GSPO
prompts and the bench: `bench.predictors.messages.fit_messages` (the oldest pairs first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datasets import Dataset
from transformers import PreTrainedTokenizerFast

from bench.predictors.messages import fit_messages
from sources.ids import seeded_digest
from training.render import Episode, Step, messages


@dataclass(frozen=True)
class TemplateCosts:
    """Tokens a chat template adds: around each message, and the generation prompt."""

    per_message: int
    generation_prompt: int


def template_costs(tokenizer: PreTrainedTokenizerFast) -> TemplateCosts:
    """The template's costs, measured by rendering one-token messages (the dearest role's)."""

    def length(messages: list[dict[str, str]], generation_prompt: bool = False) -> int:
        text = tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=generation_prompt)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    content = len(tokenizer("x", add_special_tokens=False)["input_ids"])
    system = [{"role": "system", "content": "x"}]
    alone = length(system)
    per_role = [length([*system, {"role": role, "content": "x"}]) - alone - content
                for role in ("user", "assistant")]
    return TemplateCosts(per_message=max(alone - content, *per_role),
                         generation_prompt=length(system, True) - alone)


def pick_turns(episode: Episode, k: int | None, seed: int) -> list[Step]:
    """k judgeable turns of an episode (all when k is None), by a seeded hash, in turn order."""
    judgeable = [s for s in episode.steps if s.judgeable]
    if k is None or len(judgeable) <= k:
        return judgeable

    def draw(step: Step) -> str:
        return seeded_digest(seed, episode.trajectory_id, step.turn_index).hex()

    return sorted(sorted(judgeable, key=draw)[:k], key=lambda s: s.turn_index)


@dataclass
class Prompt:
    """A budgeted prompt: its messages, token count and how many history turns it kept."""

    messages: list[dict[str, str]]
    tokens: int
    history_turns: int
    dropped_turns: int


class PromptBuilder:
    """Prompts for the turns of one episode, sharing one cache of message token counts."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, episode: Episode,
                 max_prompt_tokens: int) -> None:
        self.tokenizer = tokenizer
        self.episode = episode
        self.max_prompt_tokens = max_prompt_tokens
        self.costs = template_costs(tokenizer)
        self._counts: dict[str, int] = {}

    def prefetch(self, last: int) -> None:
        """Count the messages of steps[:last + 1] in one batch (both cores), when most of them
        will be read anyway (a budget larger than their bytes: a token is at least a byte)."""
        texts = [t for pair in self.episode.rendered[:last + 1] for t in pair]
        if sum(len(t.encode()) for t in texts) > self.max_prompt_tokens:
            return
        todo = sorted({t for t in texts if t not in self._counts})
        if todo:
            encoded = self.tokenizer(todo, add_special_tokens=False)["input_ids"]
            self._counts.update(zip(todo, map(len, encoded), strict=True))

    def count(self, text: str) -> int:
        """Content tokens of one message (cached: boilerplate repeats within an episode)."""
        if text not in self._counts:
            self._counts[text] = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return self._counts[text]

    def fits(self, chat: list[dict[str, str]]) -> bool:
        """Whether the chat's tokens (contents + the template's costs) are within the budget;
        counted newest first and stopped once over, so a small budget reads only the end of a
        long history."""
        total = self.costs.generation_prompt
        for message in reversed(chat):
            total += self.count(message["content"]) + self.costs.per_message
            if total > self.max_prompt_tokens:
                return False
        return True

    def build(self, position: int, system: str) -> Prompt | None:
        """The prompt predicting steps[position], its oldest turns dropped until it fits (the
        bench's fitting, bench.predictors.messages); None when even no history is over budget."""
        fitted, dropped = fit_messages(messages(system, self.episode, 0, position), self.fits)
        if not self.fits(fitted):
            return None
        tokens = self.costs.generation_prompt + sum(
            self.count(message["content"]) + self.costs.per_message for message in fitted)
        return Prompt(fitted, tokens, position - dropped, dropped)

    def answer_tokens(self, *parts: str, special: int = 0) -> int:
        """Tokens of an assistant answer made of `parts` and `special` special tokens, with its
        <|end|>."""
        return sum(self.count(p) for p in parts) + special + 1


def prompt_tokens(prompt: list[dict[str, str]], tokenizer: PreTrainedTokenizerFast) -> int:
    """Tokens of a chat prompt as the chat template renders it, with the generation prompt."""
    text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def fit_prompt(prompt: list[dict[str, str]], tokenizer: PreTrainedTokenizerFast,
               budget: int) -> list[dict[str, str]] | None:
    """The prompt with its oldest history turns dropped until it fits `budget` tokens (system
    prompt and current action kept; the bench's fitting, bench.predictors.messages); None if
    even that is over."""
    def fits(messages: list[dict[str, str]]) -> bool:
        return prompt_tokens(messages, tokenizer) <= budget

    fitted, _ = fit_messages(prompt, fits)
    return fitted if fits(fitted) else None


def fit_prompts(rows: Dataset, tokenizer: PreTrainedTokenizerFast, max_prompt_tokens: int,
                where: str) -> tuple[Dataset, int]:
    """rl_split-layout rows (`prompt`, `prompt_tokens`) with prompts fitted to the budget
    (rows that cannot fit are left out), and how many had turns dropped."""
    trimmed = 0

    def fit(row: dict[str, Any]) -> dict[str, Any]:
        nonlocal trimmed
        if row["prompt_tokens"] <= max_prompt_tokens:
            return row
        trimmed += 1
        return {**row, "prompt": fit_prompt(row["prompt"], tokenizer, max_prompt_tokens)}

    fitted = rows.map(fit, desc="fitting RL prompts").filter(lambda row: row["prompt"] is not None)
    if len(fitted) == 0:
        raise ValueError(f"no rl_split prompt fits {max_prompt_tokens} tokens in {where}")
    return fitted, trimmed
