"""GUI-domain readers (AndroidWorld, WebArena render HTML, OSWorld traj.jsonl) and ui_render."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from reader_checks import claimed_fixtures
from reader_checks import read_checked as read_all

from sources.readers.androidworld import AndroidWorldReader
from sources.readers.base import FormatError, Reader, read_head
from sources.readers.osworld import OsWorldReader
from sources.readers.ui_render import render_ui_element, render_ui_elements
from sources.readers.webarena import WebArenaRenderReader
from sources.schema import Trajectory

ANDROID_EPISODE = "android/androidworld/ContactsAddContact_base_gpt-4o-mini_48e64bf7.json"
ANDROID_DEMO = "android/androidworld/demo.json"
WEBARENA = "web/webarena/render_16.html"
OSWORLD = "os/osworld/traj.jsonl"


def only(reader: Reader, path: Path) -> Trajectory:
    trajectories, quarantined = read_all(reader, path)
    assert quarantined == []
    assert len(trajectories) == 1
    return trajectories[0]


# --- ui_render -------------------------------------------------------------------------------


def test_render_full_and_demo_elements() -> None:
    full = {
        "text": "Save", "content_description": None, "class_name": "android.widget.Button",
        "bbox": None, "bbox_pixels": {"x_min": 723, "x_max": 954, "y_min": 148, "y_max": 274},
        "hint_text": None, "is_checked": False, "is_clickable": True, "is_editable": False,
        "is_enabled": True, "is_focused": True, "is_scrollable": False, "is_selected": False,
        "resource_name": "com.app:id/save",
    }
    demo = {"text": None, "content_desc": 'Say "hi"\nnow', "class": "android.view.View",
            "bbox_pixels": [0, 1.0, 10, 20.5]}
    edit = {"text": "Adam", "hint_text": "First name", "class_name": "android.widget.EditText",
            "is_editable": True, "is_checked": True, "is_enabled": False, "bbox_pixels": None}
    assert render_ui_elements([full, demo, edit]).splitlines() == [
        (
            '[0] android.widget.Button "Save" id=com.app:id/save (clickable, focused) '
            "bbox=(723,148,954,274)"
        ),
        '[1] android.view.View desc="Say \\"hi\\"\\nnow" bbox=(0,1,10,20.5)',
        '[2] android.widget.EditText "Adam" hint="First name" (editable, checked, disabled)',
    ]
    # an EditText whose text is its hint says it once
    assert render_ui_element(4, {"text": "Phone", "hint_text": "Phone"}) == '[4] element "Phone"'
    assert render_ui_elements([]) == ""


def test_render_rejects_non_objects() -> None:
    with pytest.raises(TypeError, match="ui element 1"):
        render_ui_elements([{}, "not an element"])
    with pytest.raises(TypeError):
        render_ui_elements("abc")  # type: ignore[arg-type]


# --- AndroidWorld ----------------------------------------------------------------------------


def test_androidworld_episode(traces_dir: Path) -> None:
    path = traces_dir / ANDROID_EPISODE
    trajectory = only(AndroidWorldReader(), path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert trajectory.task == (
        "Create a new contact for Adam Gonzalez. Their number is +14460177118."
    )
    assert trajectory.outcome == "success"
    assert trajectory.position == "$"
    # 7 actions; the 7th is {"action_type": "status", "goal_status": "complete"} -> metadata
    assert len(trajectory.turns) == 6
    first = trajectory.turns[0]
    assert first.action == '{"action_type": "open_app", "app_name": "Phone"}'
    assert first.action_kind == "open"
    assert first.observation_format == "ui_elements"
    assert [turn.action_kind for turn in trajectory.turns] == [
        "open", "click", "type", "type", "type", "click"
    ]
    assert trajectory.turns[2].action == '{"action_type": "input_text", "text": "Adam", "index": 7}'
    assert trajectory.metadata["final_action"] == (
        '{"action_type": "status", "goal_status": "complete"}'
    )
    # Off-by-one: the initial screen is metadata; turn i shows the screen of step i + 1.
    initial = trajectory.metadata["initial_observation"].splitlines()
    assert initial[0] == (
        "[0] android.widget.ScrollView id=com.google.android.apps.nexuslauncher:id/workspace "
        "(scrollable) bbox=(0,0,1080,2400)"
    )
    steps = raw["step_records"]
    assert first.observation == render_ui_elements(steps[1]["state"]["ui_elements"])
    assert trajectory.turns[1].observation.splitlines()[2] == (
        '[2] android.widget.Button "Save" id=com.google.android.contacts:id/toolbar_button '
        "(clickable) bbox=(723,148,954,274)"
    )
    # typing "Adam" into index 7 shows up in the next screen
    assert (
        '[7] android.widget.EditText "Adam" hint="First name" (clickable, editable) '
        "bbox=(137,858,933,1007)"
    ) in trajectory.turns[2].observation.splitlines()
    # the last turn (click Save) is followed by step 7's screen (step 7 itself is the status);
    # final_state, taken after the status action, differs only in the clock (15:35)
    assert trajectory.turns[-1].observation == render_ui_elements(steps[6]["state"]["ui_elements"])
    assert '"15:34"' in trajectory.turns[-1].observation
    assert '[11] android.widget.TextView "Adam Gonzalez"' in trajectory.turns[-1].observation
    assert trajectory.metadata["model_name"] == "gpt-4o-mini"
    assert trajectory.metadata["reasons"][0].startswith("To create a new contact")
    assert len(trajectory.metadata["step_timings"]) == 7


def test_androidworld_demo(traces_dir: Path) -> None:
    trajectory = only(AndroidWorldReader(), traces_dir / ANDROID_DEMO)
    raw = json.loads((traces_dir / ANDROID_DEMO).read_text(encoding="utf-8"))
    assert trajectory.task == (
        "Create a new contact for Willow Muller. Their number is +12735883822."
    )
    assert trajectory.outcome == "unknown"  # the demo carries no success label
    assert len(trajectory.turns) == 6
    assert trajectory.turns[0].action == '{"action_type": "open_app", "app_name": "Contacts"}'
    assert trajectory.turns[1].action == '{"action_type": "click", "index": 0}'
    assert trajectory.turns[0].observation == render_ui_elements(
        raw["observations"][1]["ui_elements"]
    )
    assert trajectory.metadata["initial_observation"] == render_ui_elements(
        raw["observations"][0]["ui_elements"]
    )
    assert '[8] android.widget.EditText "Muller" bbox=(137,1043,933,1192)' in (
        trajectory.turns[3].observation.splitlines()
    )
    assert trajectory.metadata["final_action"] == (
        '{"action_type": "status", "goal_status": "complete"}'
    )


def _element(text: str) -> dict:
    return {"text": text, "class_name": "android.widget.TextView", "is_clickable": True}


def _episode(**overrides: object) -> dict:
    doc = {
        "goal": "Open the app",
        "success": 1.0,
        "step_records": [
            {"step_num": 1, "state": {"ui_elements": [_element("home")]},
             "action": 'Reason: open it\nAction: {"action_type": "open_app", "app_name": "X"}'},
            {"step_num": 2, "state": {"ui_elements": [_element("app")]},
             "action": 'Reason: tap\nAction: {"action_type": "click", "index": 0}'},
        ],
        "final_state": {"ui_elements": [_element("done")]},
    }
    doc.update(overrides)
    return doc


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_androidworld_synthetic_pairing_and_outcome(tmp_path: Path) -> None:
    trajectory = only(AndroidWorldReader(), _write(tmp_path, "ep.json", _episode()))
    assert trajectory.outcome == "success"  # 1.0 float
    assert [turn.observation for turn in trajectory.turns] == [
        '[0] android.widget.TextView "app" (clickable)',
        '[0] android.widget.TextView "done" (clickable)',
    ]
    initial = trajectory.metadata["initial_observation"]
    assert initial == '[0] android.widget.TextView "home" (clickable)'
    failed = only(AndroidWorldReader(), _write(tmp_path, "f.json", _episode(success=0.0)))
    assert failed.outcome == "failure"
    # no final_state and no after_element_list: the last action is kept in metadata, not dropped
    unobserved = only(AndroidWorldReader(), _write(tmp_path, "u.json", _episode(final_state=None)))
    assert len(unobserved.turns) == 1
    assert unobserved.metadata["unobserved_final_action"] == '{"action_type": "click", "index": 0}'
    # an action that is not JSON is kept verbatim as "other"
    doc = _episode()
    doc["step_records"][0]["action"] = "Reason: hmm\nAction: tap the thing"
    odd = only(AndroidWorldReader(), _write(tmp_path, "o.json", doc))
    assert (odd.turns[0].action, odd.turns[0].action_kind) == ("tap the thing", "other")


@pytest.mark.parametrize(
    ("doc", "position"),
    [
        (_episode(goal=5), "$.goal"),
        (_episode(step_records={"a": 1}), "$.step_records"),
        (
            {"goal": "g", "observations": [{"ui_elements": []}] * 5, "actions": [{}]},
            "$.observations",
        ),
        ({"goal": "g", "observations": [{"ui_elements": 3}], "actions": []},
         "$.observations[0].ui_elements"),
        ({"goal": "g"}, "$"),
    ],
)
def test_androidworld_wrong_types_quarantined(tmp_path: Path, doc: dict, position: str) -> None:
    trajectories, quarantined = read_all(AndroidWorldReader(), _write(tmp_path, "bad.json", doc))
    assert trajectories == []
    assert [q.position for q in quarantined] == [position]


def test_androidworld_bad_element_and_step(tmp_path: Path) -> None:
    doc = _episode()
    doc["step_records"][1]["state"]["ui_elements"] = ["oops"]
    _, quarantined = read_all(AndroidWorldReader(), _write(tmp_path, "e.json", doc))
    assert quarantined[0].position == "$.step_records[1].state.ui_elements"
    assert "ui element 0" in quarantined[0].reason
    doc = _episode()
    doc["step_records"][0]["action"] = 42
    _, quarantined = read_all(AndroidWorldReader(), _write(tmp_path, "a.json", doc))
    assert quarantined[0].position == "$.step_records[0].action"


def test_androidworld_unparseable_files(tmp_path: Path, traces_dir: Path) -> None:
    truncated = tmp_path / "trunc.json"
    truncated.write_bytes((traces_dir / ANDROID_DEMO).read_bytes()[:5000])
    with pytest.raises(FormatError) as error:
        list(AndroidWorldReader().read(truncated))
    assert error.value.position.startswith("line ")
    bad_utf8 = tmp_path / "utf8.json"
    bad_utf8.write_bytes(b'{"goal": "caf\xe9", "observations": [], "actions": []}')
    with pytest.raises(FormatError, match="invalid UTF-8") as error:
        list(AndroidWorldReader().read(bad_utf8))
    assert error.value.position == "byte 13"
    array = _write(tmp_path, "arr.json", [1, 2])
    with pytest.raises(FormatError, match="JSON object"):
        list(AndroidWorldReader().read(array))


# --- WebArena render HTML --------------------------------------------------------------------


def test_webarena_fixture(traces_dir: Path) -> None:
    trajectory = only(WebArenaRenderReader(), traces_dir / WEBARENA)
    assert trajectory.task == (
        "Compare the time for walking and driving route from 5000 Fifth Avenue, Pittsburgh to "
        "UPMC family health center"
    )
    assert trajectory.outcome == "unknown"
    # 4 New Page steps: 3 "none" actions each followed by a page, then the final stop
    assert len(trajectory.turns) == 3
    assert [turn.action for turn in trajectory.turns] == ["none", "none", "none"]
    assert {turn.action_kind for turn in trajectory.turns} == {"other"}
    observation = trajectory.turns[0].observation
    assert trajectory.turns[0].observation_format == "a11y_tree"
    assert observation.splitlines()[0] == "Tab 0 (current): OpenStreetMap"
    assert "\t[482] link 'Find directions between two points'" in observation.splitlines()
    assert observation.endswith("\t\t[292] link 'Website and API terms'")
    assert "<SCREENSHOT_STRIPPED>" not in observation
    metadata = trajectory.metadata
    assert metadata["initial_observation"].startswith("Tab 0 (current): OpenStreetMap\n\n[1]")
    assert metadata["final_action"] == "stop [Early stop: Failed to parse actions for 3 times]"
    assert metadata["final_answer"] == "Early stop: Failed to parse actions for 3 times"
    assert metadata["config"]["task_id"] == "16"
    assert metadata["config"]["sites"] == "['map']"
    assert metadata["n_steps"] == 4
    assert metadata["urls"][0] == (
        "http://ec2-3-131-244-37.us-east-2.compute.amazonaws.com:3000/#map=7/42.896/-75.108"
    )
    assert metadata["raw_predictions"][0].startswith("Let's think step-by-step.")


def _page(tree: str, action: str | None, url: str = "http://x/") -> str:
    block = (
        f"<h2>New Page</h2>\n<h3 class='url'><a href={url}>URL: {url}</a></h3>\n"
        f"<div class='state_obv'><pre>{tree}</pre><div>\n"
        "<div class='prev_action' style='background-color:pink'>None</div>\n"
    )
    if action is not None:
        block += (
            "<div class='predict_action'><div class='raw_parsed_prediction'><pre>think</pre></div>"
            "<div class='action_object'><pre>{}</pre></div>"
            f"<div class='parsed_action'><pre>{action}</pre></div></div>\n"
        )
    return block


def _html(*pages: str, config: str = "task_id: 7\nintent: Buy a &quot;cat&quot;\n") -> str:
    body = f"<pre>{config}</pre>\n" + "".join(pages)
    return f"<!DOCTYPE html>\n<html><body>{body}</body></html>\n"


def test_webarena_synthetic_pairing(tmp_path: Path) -> None:
    path = tmp_path / "render_7.html"
    path.write_text(_html(
        _page("[1] RootWebArea 'Shop'", "click [5] where [5] is link 'Cats'"),
        _page("[1] RootWebArea 'Cats &amp; more' a &lt; b <b>raw</b>", "type [9] [tabby] [1]"),
        _page("[1] RootWebArea 'Results'", "stop [N/A]", url="http://x/?q=tabby"),
    ), encoding="utf-8")
    trajectory = only(WebArenaRenderReader(), path)
    assert trajectory.task == 'Buy a "cat"'
    assert [(t.action, t.action_kind) for t in trajectory.turns] == [
        ("click [5] where [5] is link 'Cats'", "click"),
        ("type [9] [tabby] [1]", "type"),
    ]
    # entities unescaped; raw tags inside the tree kept as text
    assert trajectory.turns[0].observation == "[1] RootWebArea 'Cats & more' a < b <b>raw</b>"
    assert trajectory.turns[1].observation == "[1] RootWebArea 'Results'"
    assert trajectory.metadata["initial_observation"] == "[1] RootWebArea 'Shop'"
    assert trajectory.metadata["final_answer"] == "N/A"
    assert trajectory.metadata["urls"][-1] == "http://x/?q=tabby"


def test_webarena_truncated_and_broken_steps(tmp_path: Path) -> None:
    cut = tmp_path / "cut.html"
    # the page ends after the last tree (file cut before the action): no turn is lost
    cut.write_text(_html(_page("A", "scroll [down]"), _page("B", None))[:-30], encoding="utf-8")
    trajectory = only(WebArenaRenderReader(), cut)
    assert [(t.action, t.action_kind, t.observation) for t in trajectory.turns] == [
        ("scroll [down]", "scroll", "B")
    ]
    assert trajectory.metadata["truncated"] is True
    broken = tmp_path / "broken.html"
    broken.write_text(
        _html(_page("A", None), _page("B", "goto [http://y/]"), _page("C", "stop [x]")),
        encoding="utf-8",
    )
    trajectories, quarantined = read_all(WebArenaRenderReader(), broken)
    assert [q.position for q in quarantined] == ["step 1"]
    assert [(t.action, t.action_kind, t.observation) for t in trajectories[0].turns] == [
        ("goto [http://y/]", "navigate", "C")
    ]
    assert trajectories[0].metadata["quarantined_steps"] == [1]


def test_webarena_unparseable(tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_text("<html><body><pre>intent: x</pre></body></html>", encoding="utf-8")
    with pytest.raises(FormatError, match="New Page"):
        list(WebArenaRenderReader().read(empty))
    bad = tmp_path / "bad.html"
    bad.write_bytes(_html(_page("A", "none")).encode() + b"\xff\xfe")
    with pytest.raises(FormatError, match="invalid UTF-8") as error:
        list(WebArenaRenderReader().read(bad))
    assert error.value.position == f"byte {bad.stat().st_size - 2}"


# --- OSWorld traj.jsonl ----------------------------------------------------------------------


def test_osworld_fixture(traces_dir: Path) -> None:
    trajectory = only(OsWorldReader(), traces_dir / OSWORLD)
    assert len(trajectory.turns) == 15
    first = trajectory.turns[0]
    assert first.action == (
        'pyautogui.typewrite("set Bing as default search engine"); pyautogui.press("enter")'
    )
    assert first.action_kind == "code"
    assert first.observation == "screenshot: step_1_20250828@161440.png"
    assert first.observation_format == "text"
    assert trajectory.turns[1].action == "pyautogui.scroll(-800)"
    assert trajectory.turns[-1].observation == "screenshot: step_15_20250828@161609.png"
    assert trajectory.task == ""  # the instruction is not in traj.jsonl
    assert trajectory.outcome == "unknown"  # reward 0, done false, no result.txt
    assert trajectory.metadata["responses"][0] == "type:set Bing as default search engine"
    assert trajectory.metadata["last_step"] == 15
    assert trajectory.metadata["result_folder"] == "osworld"
    assert "example_id" not in trajectory.metadata  # folder name is not an OSWorld example id


def test_osworld_broken_line_quarantined(tmp_path: Path, traces_dir: Path) -> None:
    lines = (traces_dir / OSWORLD).read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][:40] + b"\n"  # line 5 broken in the middle
    lines[7] = b'{"step_num": 8, "action": "caf\xe9"}\n'  # line 8 invalid UTF-8
    lines[9] = b'{"step_num": 10, "action": 12}\n'  # line 10 wrong type
    path = tmp_path / "traj.jsonl"
    path.write_bytes(b"".join(lines))
    trajectories, quarantined = read_all(OsWorldReader(), path)
    assert [q.position for q in quarantined] == ["line 5", "line 8", "line 10"]
    assert "invalid JSON" in quarantined[0].reason
    assert "invalid UTF-8" in quarantined[1].reason
    assert "action must be" in quarantined[2].reason
    (trajectory,) = trajectories
    assert len(trajectory.turns) == 12
    assert trajectory.turns[4].observation == "screenshot: step_6_20250828@161547.png"
    assert trajectory.metadata["quarantined_lines"] == [5, 8, 10]


def test_osworld_result_folder_done_and_tree(tmp_path: Path, traces_dir: Path) -> None:
    example = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
    folder = tmp_path / "pyautogui" / "a11y_tree" / "gpt-4o" / "chrome" / example
    folder.mkdir(parents=True)
    records = [
        {"step_num": 1, "action": "pyautogui.click(10, 20)", "response": "r1", "reward": 0,
         "done": False, "info": {}, "screenshot_file": "step_1.png",
         "a11y_tree": "tag\tname\npush-button\tOK", "instruction": "Press OK"},
        {"Error": "Time limit exceeded"},
        {"step_num": 2, "action": "DONE", "response": "r2", "reward": 0, "done": True,
         "info": {"done": True}, "screenshot_file": "step_2.png"},
    ]
    path = folder / "traj.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    (folder / "result.txt").write_text("1.0\n", encoding="utf-8")
    trajectory = only(OsWorldReader(), path)
    assert trajectory.outcome == "success"
    assert trajectory.task == "Press OK"
    assert trajectory.turns[0].observation == "tag\tname\npush-button\tOK"
    assert trajectory.turns[0].observation_format == "a11y_tree"
    assert (trajectory.turns[1].action, trajectory.turns[1].action_kind) == ("DONE", "submit")
    assert trajectory.turns[1].observation == (
        'screenshot: step_2.png\ndone: true\ninfo: {"done": true}'
    )
    metadata = trajectory.metadata
    assert metadata["example_id"] == example
    assert (metadata["app_domain"], metadata["model"]) == ("chrome", "gpt-4o")
    assert metadata["errors"] == [{"line": 2, "error": "Time limit exceeded"}]
    (folder / "result.txt").write_text("0.0\n", encoding="utf-8")
    assert only(OsWorldReader(), path).outcome == "failure"
    # without result.txt a done episode with the placeholder reward 0 is not a failure label
    (folder / "result.txt").unlink()
    assert only(OsWorldReader(), path).outcome == "unknown"


def test_osworld_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "traj.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(FormatError):
        list(OsWorldReader().read(path))


# --- sniffing --------------------------------------------------------------------------------

OWN = {
    "androidworld": (AndroidWorldReader(), {ANDROID_EPISODE, ANDROID_DEMO}),
    "webarena_render": (WebArenaRenderReader(), {WEBARENA}),
    # the result folder is claimed as one unit too (its screenshots are not separate inputs)
    "osworld_traj": (OsWorldReader(), {OSWORLD, "os/osworld"}),
}


@pytest.mark.parametrize("name", sorted(OWN))
def test_sniff_claims_own_and_rejects_others(traces_dir: Path, name: str) -> None:
    reader, own = OWN[name]
    assert claimed_fixtures(reader, traces_dir) == own


def test_sniff_copy_renamed(tmp_path: Path, traces_dir: Path) -> None:
    # content decides, not the name
    for reader, own in OWN.values():
        for relative in own:
            if (traces_dir / relative).is_dir():
                continue
            copy = tmp_path / f"renamed_{Path(relative).name}.data"
            shutil.copy(traces_dir / relative, copy)
            assert reader.sniff(copy, read_head(copy))


def test_osworld_result_folder_reads_like_its_traj_file(traces_dir: Path) -> None:
    folder = traces_dir / "os" / "osworld"
    from_folder = list(OsWorldReader().read(folder))
    from_file = list(OsWorldReader().read(folder / "traj.jsonl"))
    assert [t.turns for t in from_folder] == [t.turns for t in from_file]
    assert len(from_folder[0].turns) == 15
