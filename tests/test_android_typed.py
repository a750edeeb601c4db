"""AndroidWorld's typed decoding (elements left as JSON text, lines cached by their bytes) reads
every episode exactly as the generic decoding does: the same trajectories, the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sources.readers.androidworld import AndroidWorldReader
from sources.readers.androidworld_decode import _EPISODE, _key_by_key, typed_episode
from sources.readers.base import FormatError, load_json
from sources.readers.ui_render import ElementLines, render_ui_elements


class GenericAndroidWorldReader(AndroidWorldReader):
    """The reader with the plain `json.loads` decoding (what it did before the typed one)."""

    def load(self, path: Path) -> Any:
        return load_json(path)


def read_both(path: Path) -> tuple[list[Any], list[Any]]:
    """Each decoding's items, or the FormatError it raised, as comparable values."""
    results = []
    for reader in (AndroidWorldReader(), GenericAndroidWorldReader()):
        try:
            results.append(list(reader.read(path)))
        except FormatError as error:
            results.append([("FormatError", str(error))])
    return results[0], results[1]


def real_episodes(*roots: Path) -> list[Path]:
    return sorted(path for root in roots for path in (root / "android").rglob("*.json"))


def test_real_episodes_read_the_same_both_ways(
    traces_dir: Path, realdev_dir: Path, realdev2_dir: Path
) -> None:
    paths = real_episodes(traces_dir, realdev_dir, realdev2_dir)
    typed = [path for path in paths if typed_episode(path.read_bytes()) is not None]
    assert len(paths) == 18 and len(typed) == 17  # the demo layout goes the generic way
    for path in typed:  # android_world's keys, in one pass: what the key-by-key pass gives
        data = path.read_bytes()
        assert typed_episode(data) == _key_by_key(data), path.name
    turns = 0
    for path in paths:
        fast, generic = read_both(path)
        assert fast == generic, path.name
        turns += sum(len(item.turns) for item in fast)
    assert turns == 245


def episode(elements: list[Any], **extra: Any) -> dict[str, Any]:
    """A two-step episode whose screens are `elements` then the same screen scrolled."""
    screen = {"ui_elements": elements}
    return {
        "goal": "Add a contact", "success": 1.0, **extra,
        "step_records": [
            {"step_num": 0, "state": screen, "action": '{"action_type": "open_app"}',
             "agent_data": {"summary": "opened"}, "timestamp": "t0"},
            {"step_num": 1, "state": screen, "action": {"action_type": "scroll"}},
        ],
        "final_state": {"ui_elements": elements[::-1]},
    }


BUTTON = {"text": "Save", "class_name": "android.widget.Button", "is_clickable": True,
          "bbox_pixels": {"x_min": 1, "y_min": 2, "x_max": 3, "y_max": 4}}


@pytest.mark.parametrize("document", [
    episode([BUTTON, {"content_desc": "Back", "class": "android.view.View"}]),
    episode([BUTTON, "not an element"]),  # a FormatError naming the screen
    episode([BUTTON], metadata_list=[1, 2], n=12345678901234567890123),  # a big int, exact
    episode([BUTTON], initial_state={"ui_elements": [BUTTON]}),
    episode([BUTTON], task_name="t", step_timings=[1.5, 2], prompts=["p"], model_name=None),
    {**episode([BUTTON]), "final_state": "not a state"},  # not a dict: the agent's last list
    {**episode([BUTTON]), "final_state": {"no": "elements"}},
    {"goal": "g", "step_records": [{"state": None, "action": "x"}]},
    {"goal": "g", "step_records": []},
    {"goal": "g", "step_records": [], "initial_state": {"ui_elements": [BUTTON]}},
    {"goal": "g", "observations": [{"ui_elements": [BUTTON]}], "actions": []},
    [1, 2],
])
def test_documents_read_the_same_both_ways(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "episode.json"
    path.write_text(json.dumps(document))
    fast, generic = read_both(path)
    assert fast == generic


@pytest.mark.parametrize("text", [
    # invalid UTF-8 in a part the typed decoding skips: refused as the generic decoding does
    b'{"goal": "g", "step_records": [{"state": {"ui_elements": []}, "action": "x", '
    b'"timestamp": "\xff"}]}',
    # numbers msgspec refuses (json takes them): the element's value is json's
    b'{"goal": "g", "step_records": [{"state": {"ui_elements": [{"text": 1e999}, '
    b'{"text": "a", "text": "b"}]}, "action": "x"}], "final_state": {"ui_elements": []}}',
    b'{"goal": "g", "step_records": [{"state": {"ui_elements": []}, "action": "x", '
    b'"action": {"action_type": "wait"}}], "t": 1e999}',
    b'{"goal": "g", "step_records": [{"state": {"ui_elements": [NaN]}, "action": "x"}]}',
    # a repeated key: its last value, whichever way the document is decoded
    b'{"goal": "a", "step_records": [], "initial_state": {"ui_elements": []}, "goal": "b"}',
    b'{"goal": "a", "step_records": [], "initial_state": {"ui_elements": []}, "goal": "b", '
    b'"other": 1}',
    b'{"goal": "caf\xc3\xa9", "step_records": [{"state": {"ui_elements": [{"text": "\\ud800"}]}, '
    b'"action": "x"}], "final_state": {"ui_elements": []}}',
])
def test_edge_bytes_read_the_same_both_ways(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "episode.json"
    path.write_bytes(text)
    fast, generic = read_both(path)
    assert fast == generic
    assert fast  # a trajectory or an error, never nothing


def test_element_lines_match_the_renderer_whatever_the_cache_holds() -> None:
    elements = [BUTTON, {"text": "Name", "hint_text": "Name"}, BUTTON, {"class": "X"}, BUTTON]
    document = typed_episode(json.dumps(episode(elements)).encode())
    assert document is not None
    raw = document["step_records"][0]["state"]["ui_elements"]
    for limit in (1, 2, 100):
        lines = ElementLines(limit=limit)
        for _ in range(3):  # later screens come from the cache
            assert lines.screen(raw) == render_ui_elements(elements)
        assert len(lines._lines) <= limit
    with pytest.raises(TypeError, match="ui element 1 must be an object, got str"):
        ElementLines().screen(typed_episode(json.dumps(episode([BUTTON, "x"])).encode())[
            "step_records"][0]["state"]["ui_elements"])


def test_known_keys_decode_in_one_pass_and_others_key_by_key() -> None:
    known = json.dumps(episode([BUTTON], task_name="t")).encode()
    assert _EPISODE.decode(known).task_name == "t"
    other = json.dumps(episode([BUTTON], run_id=7)).encode()
    with pytest.raises(msgspec.ValidationError, match="unknown field `run_id`"):
        _EPISODE.decode(other)
    assert typed_episode(other)["run_id"] == 7  # read key by key
