"""One walk for "the agent's call, then the message that answers it", and one name for what is
left over.

Two shapes of log pair a call with its observation:
  * by position (`exchanges`): a call message is answered by the message right after it when that
    message has an answering role (mini-swe-agent text actions, MiroFlow `<use_mcp_tool>` blocks,
    SWE-agent demonstrations, Harbor/Terminus rows);
  * by id (`OpenCalls`): calls wait until a message names them, in any order (OpenAI
    `tool_calls` answered by `role: tool`, ATIF `source_call_id`, mini-swe-agent v2 tool calls,
    OpenHands `cause`).

What is left over is named the same way by every reader: the calls that never got an observation
go to metadata under `CALLS_WITHOUT_OBSERVATION` (their action texts, in call order) or, where a
reader quarantines them, get `unanswered_reason`; an answer that matches no open call gets
`orphan_reason`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

CALLS_WITHOUT_OBSERVATION = "calls_without_observation"  # metadata key: list of action texts

C = TypeVar("C")


def unanswered_reason(name: str) -> str:
    """Why a call is quarantined: no message answered it."""
    return f"call {name!r} has no observation"


def orphan_reason(detail: str) -> str:
    """Why an answer is quarantined: it names no call that is waiting (`detail` says what it
    named)."""
    return f"observation answers no open call ({detail})"


def note_unanswered(metadata: dict[str, Any], actions: Sequence[str]) -> None:
    """Record the calls left without an observation, when there are any."""
    if actions:
        metadata[CALLS_WITHOUT_OBSERVATION] = list(actions)


@dataclass(frozen=True)
class Exchange:
    """One message of the walk; a call comes with the message answering it (None: unanswered)."""

    index: int
    message: Any
    is_call: bool = False
    reply: dict[str, Any] | None = None

    @property
    def unanswered(self) -> bool:
        return self.is_call and self.reply is None


def exchanges(
    messages: Sequence[Any],
    is_call: Callable[[Any], bool],
    reply_roles: tuple[str, ...] = ("user",),
    start: int = 0,
) -> Iterator[Exchange]:
    """Walk `messages[start:]` in order. A call (`is_call(message)`) is answered by the next
    message when that one is an object whose role is in `reply_roles`; the answer is then taken
    with the call and not walked on its own. Every other message comes alone."""
    index = start
    while index < len(messages):
        message = messages[index]
        if not is_call(message):
            yield Exchange(index, message)
            index += 1
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        if isinstance(following, dict) and following.get("role") in reply_roles:
            yield Exchange(index, message, True, following)
            index += 2
        else:
            yield Exchange(index, message, True, None)
            index += 1


@dataclass
class Slot(Generic[C]):
    """A call made, with its answer once one arrives."""

    call_id: str | None
    name: str | None
    call: C
    answer: Any = None
    answered: bool = False


@dataclass
class OpenCalls(Generic[C]):
    """Calls in the order they were made, each filled by the message that names it."""

    slots: list[Slot[C]] = field(default_factory=list)

    def open(self, call_id: str | None, call: C, name: str | None = None) -> None:
        self.slots.append(Slot(call_id, name, call))

    def is_open(self, call_id: str | None) -> bool:
        return any(slot.call_id == call_id for slot in self.waiting())

    def waiting(self) -> list[Slot[C]]:
        """The calls still without an answer, in call order."""
        return [slot for slot in self.slots if not slot.answered]

    def answer(self, answer: Any, call_id: str | None = None, name: str | None = None,
               by_id_only: bool = True) -> Slot[C] | None:
        """Give `answer` to the oldest waiting call with `call_id`; with no id and
        `by_id_only=False`, to the oldest waiting call named `name`, or (no name) the oldest
        waiting call. Returns the slot, or None when no waiting call matches."""
        waiting = self.waiting()
        if call_id is not None or by_id_only:
            slot = next((s for s in waiting if s.call_id == call_id), None)
        elif name is not None:
            slot = next((s for s in waiting if s.name == name), None)
        else:
            slot = waiting[0] if waiting else None
        if slot is not None:
            slot.answer, slot.answered = answer, True
        return slot

    def answered(self) -> list[Slot[C]]:
        """The calls that got an answer, in call order."""
        return [slot for slot in self.slots if slot.answered]
