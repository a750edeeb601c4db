"""Search-R1 rollouts: JSONL records whose generated text interleaves search calls and results.

    {"id": "nq_3412", "question": "who sings does he love me with reba?",
     "prompt": "Answer the given question. You must conduct reasoning inside <think> ...
                Question: who sings does he love me with reba?\\n",
     "response": "<think> I need to find ... </think>\\n<search> does he love me reba duet
                  </search>\\n\\n<information>Doc 1(Title: \\"Does He Love You\\") ...
                  </information>\\n\\n<think>...</think>\\n<answer> Linda Davis </answer>",
     "golden_answers": ["Linda Davis"], "reward": 1.0}

Each `<search>query</search>` and the `<information>...</information>` that follows it is one
turn: action = the query (stripped), observation = the retrieved passages (stripped),
action_kind "search", observation_format "search_results", tool_name "search". The model's
<think> text is thought, not action; the final `<answer>` goes to metadata["answer"]; a last
search the rollout never got results for (out of turns) is listed in
metadata["calls_without_observation"].

Accepted records: `prompt` (a string or a list of chat messages) and/or `question`, plus the
generated text in `response` / `output` / `completion` / `generation`; or `messages`, where every
message after the first user message (the prompt) is read, in order, as one stream (a tool/user
message without <information> tags is taken as the information block itself). The template's
own "<search> query </search>" example is never read as a call: parsing starts after it; the
"My previous action is invalid ..." notes Search-R1 feeds back (which quote the tags) are cut
out and counted in metadata["n_invalid_action_notes"].
task = `question`, else the text after the last "Question:" of the prompt; system_prompt = the
instruction part of the prompt. outcome comes only from the record's own label: `outcome`, a
boolean `success` / `correct` / `is_correct`, or an exact-match `reward` / `score` of 0 or 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import FormatError, Reader, as_text, read_jsonl_items, record_outcome
from sources.readers.pairing import note_unanswered
from sources.schema import Quarantine, Trajectory, Turn

_TAG = re.compile(r"<(search|information|answer)>(.*?)</\1>", re.DOTALL)
# The template's example, right before "Question:"; "For example, " keeps a model's own
# "<answer> Beijing </answer>" from being taken for it.
TEMPLATE_END = "For example, <answer> Beijing </answer>"
INVALID_NOTE = "My previous action is invalid"  # what Search-R1 feeds back for a malformed action
# The note quotes the tags ("between <search> and </search>"): cut it out before parsing tags.
_INVALID = re.compile(re.escape(INVALID_NOTE) + r".*?Let me try again\.", re.DOTALL)
RESPONSE_KEYS = ("response", "output", "completion", "generation")
PROMPT_KEYS = ("prompt", "question", "messages", *RESPONSE_KEYS)


def _after_template(text: str) -> str:
    """Drop a copy of the instruction template (and its example tags) from a generated stream."""
    cut = text.find(TEMPLATE_END)
    if cut < 0:
        return text
    question = text.find("Question:", cut)
    end = text.find("\n", question) if question >= 0 else -1
    return text[end + 1:] if end >= 0 else text[cut + len(TEMPLATE_END):]


def _split_prompt(prompt: str) -> tuple[str | None, str | None]:
    """(instructions, question) of a Search-R1 prompt; (None, None) when there is no 'Question:'."""
    cut = prompt.rfind("Question:")
    if cut < 0:
        return None, None
    return prompt[:cut].strip() or None, prompt[cut + len("Question:"):].strip() or None


class SearchR1Reader(Reader):
    """Search-R1 style JSONL: one turn per <search> / <information> pair."""

    name: ClassVar[str] = "search_r1"
    domain: ClassVar[str] = "search"
    description: ClassVar[str] = (
        "action = the query inside <search>...</search>; observation = the following "
        "<information>...</information> passages"
    )

    def sniff(self, path: Path, head: str) -> bool:
        return (
            head.lstrip().startswith("{")
            and "<search>" in head
            and "<information>" in head
            and '"message_history"' not in head  # MiroFlow
            and '"current_prompt"' not in head  # AgentWorldBench (its search domain)
            and '"tool_calls"' not in head  # OpenAI tool calling: chat_jsonl
        )

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        yield from read_jsonl_items(path, self._record)

    def _record(self, source: str, position: str,
                record: Any) -> Iterator[Trajectory | Quarantine]:
        if not isinstance(record, dict):
            raise FormatError(source, position, f"record must be object, got "
                                                f"{type(record).__name__}")
        system_parts: list[str] = []
        prompt_text, stream = self._prompt_and_stream(source, position, record, system_parts)
        instructions, asked = _split_prompt(prompt_text) if prompt_text else (None, None)
        question = record.get("question")
        task = question if isinstance(question, str) and question.strip() else asked or prompt_text
        if not task and not stream:
            raise FormatError(source, position, "no prompt, question, response or messages")
        if instructions:
            system_parts.append(instructions)

        turns: list[Turn] = []
        problems: list[tuple[str, str]] = []
        pending: str | None = None
        answer: str | None = None
        invalid = stream.count(INVALID_NOTE)
        generated = _INVALID.sub("", _after_template(stream))
        for count, match in enumerate(_TAG.finditer(generated), start=1):
            tag, body = match.group(1), match.group(2).strip()
            where = f"{position} tag {count} <{tag}>"
            if tag == "search":
                if pending is not None:
                    reason = f"search {pending!r} got no <information> before the next search"
                    problems.append((where, reason))
                pending = body
            elif tag == "information":
                if pending is None:
                    problems.append((where, "<information> that follows no <search>"))
                    continue
                turns.append(Turn(action=pending, observation=body, action_kind="search",
                                  observation_format="search_results", tool_name="search"))
                pending = None
            else:
                answer = body

        metadata = {k: v for k, v in record.items() if k not in PROMPT_KEYS}
        if prompt_text and prompt_text != task:
            metadata["prompt"] = prompt_text
        if answer is not None:
            metadata["answer"] = answer
        note_unanswered(metadata, [pending] if pending is not None else [])
        if invalid:
            metadata["n_invalid_action_notes"] = invalid
        if problems:
            metadata["n_quarantined_tags"] = len(problems)
        yield Trajectory(task=task or "", turns=turns, position=position,
                         outcome=record_outcome(record, ("success", "correct", "is_correct"),
                                                 ("reward", "score")),
                         system_prompt="\n\n".join(system_parts) if system_parts else None,
                         metadata=metadata)
        for where, reason in problems:
            yield Quarantine(source, where, reason)

    @staticmethod
    def _prompt_and_stream(source: str, position: str, record: dict[str, Any],
                           system_parts: list[str]) -> tuple[str | None, str]:
        """The prompt text and the generated stream (search calls + results) of one record."""
        if "messages" in record:
            messages = record["messages"]
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise FormatError(source, f"{position} $.messages", "messages must be a list of "
                                                                    "objects")
            prompt: str | None = None
            pieces: list[str] = []
            for message in messages:
                role, text = message.get("role"), as_text(message.get("content"))
                if role in ("system", "developer"):
                    system_parts.append(text)
                elif prompt is None and role == "user":
                    prompt = text
                elif role == "assistant" or "<information>" in text or INVALID_NOTE in text:
                    pieces.append(text)
                else:  # a tool/user turn carrying the passages without the tags
                    pieces.append(f"<information>{text}</information>")
            return prompt, "\n".join(pieces)
        prompt_value = record.get("prompt")
        if isinstance(prompt_value, list):  # verl-style parquet rows: [{"role", "content"}, ...]
            users = [as_text(m.get("content")) for m in prompt_value
                     if isinstance(m, dict) and m.get("role") == "user"]
            prompt_value = users[-1] if users else None
        if prompt_value is not None and not isinstance(prompt_value, str):
            raise FormatError(source, f"{position} $.prompt",
                              f"prompt must be string or message list, got "
                              f"{type(prompt_value).__name__}")
        stream = ""
        for key in RESPONSE_KEYS:
            if key in record:
                if not isinstance(record[key], str):
                    raise FormatError(source, f"{position} $.{key}",
                                      f"{key} must be string, got {type(record[key]).__name__}")
                stream = record[key]
                break
        return prompt_value, stream
