"""The one call -> observation walk (sources/readers/pairing.py): by position and by id."""

from __future__ import annotations

from sources.readers.pairing import CALLS_WITHOUT_OBSERVATION, OpenCalls, exchanges, note_unanswered


def _is_call(message: dict) -> bool:
    return message["role"] == "assistant" and "ls" in message["content"]


def test_a_call_takes_the_next_answering_message_and_a_last_call_stays_unanswered() -> None:
    log = [{"role": "user", "content": "task"},
           {"role": "assistant", "content": "ls"}, {"role": "user", "content": "a.txt"},
           {"role": "assistant", "content": "thinking"}, {"role": "user", "content": "go on"},
           {"role": "assistant", "content": "ls -la"}]
    walked = [(step.index, step.is_call, step.reply and step.reply["content"])
              for step in exchanges(log, _is_call, start=1)]
    # the answer is taken with its call; a reply to talk without a call is walked on its own
    assert walked == [(1, True, "a.txt"), (3, False, None), (4, False, None), (5, True, None)]
    assert [step.unanswered for step in exchanges(log, _is_call)][-1] is True


def test_a_reply_of_another_role_does_not_answer() -> None:
    log = [{"role": "assistant", "content": "ls"}, {"role": "assistant", "content": "ls"},
           {"role": "tool", "content": "x"}]
    assert [(s.index, s.reply) for s in exchanges(log, _is_call)] == [(0, None), (1, None),
                                                                      (2, None)]
    assert [(s.index, s.reply) for s in exchanges(log, _is_call, ("tool",))][-1] == (
        1, {"role": "tool", "content": "x"})


def test_open_calls_match_by_id_in_any_order_then_by_name_then_oldest() -> None:
    calls: OpenCalls[str] = OpenCalls()
    for call_id, name in (("a", "read"), ("b", "write"), (None, "read"), (None, "list")):
        calls.open(call_id, f"{name}()", name)
    assert calls.answer("B", "b").call == "write()"
    assert calls.answer("again", "b") is None  # answered once only
    assert calls.answer("by name", name="list", by_id_only=False).call == "list()"
    assert calls.answer("oldest", by_id_only=False).call == "read()"  # the oldest waiting: "a"
    assert calls.is_open(None) and not calls.is_open("a")
    assert [slot.call for slot in calls.answered()] == ["read()", "write()", "list()"]
    metadata: dict = {}
    note_unanswered(metadata, [slot.call for slot in calls.waiting()])
    assert metadata == {CALLS_WITHOUT_OBSERVATION: ["read()"]}
    nothing_left: dict = {}
    note_unanswered(nothing_left, [])
    assert nothing_left == {}
