"""AndroidWorld episodes decoded for speed: the screens' elements left as JSON text.

The screens are about 95 % of an episode's bytes, and decoding each element into a dict of its
~20 keys, then rendering it, was two thirds of ingesting Android. Here msgspec leaves every
element as its JSON text (msgspec.Raw), which `ElementLines` renders once per distinct text, and
skips the parts of a step record the reader never looks at. The document handed to the reader
has the generic decoding's keys and values (`json.loads`'s), screens aside; anything this cannot
take (the demo layout, a document or part msgspec refuses, a part of another shape) is left to
the generic decoding, whose answer or error stands.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType


class _State(msgspec.Struct):
    ui_elements: list[msgspec.Raw]  # each element's JSON text


class _StepRecord(msgspec.Struct):
    """The parts of a step record the reader uses; the rest (the prompt, timestamps) is skipped."""

    state: _State
    action: Any
    agent_data: Any = None


class _Episode(msgspec.Struct, forbid_unknown_fields=True):
    """android_world's episode record, key by key (every real episode here has exactly these):
    decoded in one pass. A key outside them fails the decoding, which then goes key by key."""

    step_records: list[_StepRecord]
    final_state: _State | None | UnsetType = UNSET
    initial_state: _State | None | UnsetType = UNSET
    task_name: Any = UNSET
    goal: Any = UNSET
    model_name: Any = UNSET
    prompt_variant: Any = UNSET
    max_steps: Any = UNSET
    success: Any = UNSET
    steps_taken: Any = UNSET
    evaluation_time: Any = UNSET
    prompts: Any = UNSET
    responses: Any = UNSET
    actions: Any = UNSET
    step_timings: Any = UNSET
    evaluation_timestamp: Any = UNSET
    total_ui_elements: Any = UNSET
    task_complexity: Any = UNSET
    task_class: Any = UNSET
    max_steps_allowed: Any = UNSET
    episode_terminated_early: Any = UNSET
    agent_claimed_done: Any = UNSET
    task_actually_successful: Any = UNSET


_EPISODE = msgspec.json.Decoder(_Episode)
_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])
_STEP_RECORDS = msgspec.json.Decoder(list[_StepRecord])
_STATE_OR_NULL = msgspec.json.Decoder(_State | None)
_VALUE = msgspec.json.Decoder()
_SCREENS = ("final_state", "initial_state")
_FAILURES = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeEncodeError)


def typed_episode(data: bytes) -> dict[str, Any] | None:
    """A step_records episode with its screens' elements as msgspec.Raw, the rest as
    `json.loads` gives it; None where the generic decoding is to read the file. A skipped
    string's UTF-8 is not checked by msgspec, so it is checked here for the whole file."""
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return _known_keys(_EPISODE.decode(data))
    except msgspec.ValidationError:  # another key, or a part of another shape
        pass
    except _FAILURES:
        return None
    try:
        return _key_by_key(data)
    except _FAILURES:
        return None


def _known_keys(episode: _Episode) -> dict[str, Any]:
    """The document of a one-pass decoding (key order aside: metadata is stored sorted)."""
    document: dict[str, Any] = {}
    for key in episode.__struct_fields__:
        value = getattr(episode, key)
        if value is not UNSET:
            document[key] = value
    document["step_records"] = _records(episode.step_records)
    for key in _SCREENS:
        if isinstance(document.get(key), _State):
            document[key] = {"ui_elements": document[key].ui_elements}
    return document


def _key_by_key(data: bytes) -> dict[str, Any] | None:
    """The document decoded key by key, in its own order: any keys, two passes."""
    top = _TOP_LEVEL.decode(data)
    if "step_records" not in top:
        return None
    document: dict[str, Any] = {}
    for key, raw in top.items():
        if key == "step_records":
            document[key] = _records(_STEP_RECORDS.decode(raw))
        elif key in _SCREENS:
            state = _STATE_OR_NULL.decode(raw)
            document[key] = None if state is None else {"ui_elements": state.ui_elements}
        else:
            document[key] = _VALUE.decode(raw)
    return document


def _records(records: list[_StepRecord]) -> list[dict[str, Any]]:
    """Step records as the generic decoding's dicts (the keys the reader reads)."""
    return [{"state": {"ui_elements": record.state.ui_elements}, "action": record.action,
             "agent_data": record.agent_data} for record in records]
