"""Scale generator, Android domain: AndroidWorld episode JSON (the step_records layout).

Modeled, not executed: screens of a few apps (contacts, settings, files, notes, calendar,
messages) built as AndroidWorld `ui_elements` lists with every key the real records carry.
`step_records[k].state` is the screen before action k, `final_state` the screen after the last
one, and the episode ends with a `status` action, like the AndroidWorld results fixture. The
reader (sources/readers/androidworld.py) pairs action k with the screen of step k + 1 and renders it
with `sources.readers.ui_render`, which is also what the truth texts here are rendered with.
"""

from __future__ import annotations

import json
import random
from json.encoder import encode_basestring
from typing import Any

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn
from sources.factory.scale_focus import planned_focus
from sources.readers.ui_render import render_ui_elements

DOMAIN = "android"
SUFFIX = ".json"
MEAN_TURNS = 38.0
WEIGHTS = {"informative": 0.52, "echo": 0.03, "unchanged": 0.22, "boilerplate": 0.08,
           "error": 0.08, "empty": 0.07}
PREFIX: tuple[str, ...] = ()
LAST: str | None = None

APPS = {
    "Contacts": "com.google.android.contacts", "Settings": "com.android.settings",
    "Files": "com.google.android.documentsui", "Markor": "net.gsantner.markor",
    "Simple Calendar Pro": "com.simplemobiletools.calendar.pro",
    "Messages": "com.google.android.apps.messaging",
}
LAUNCHER = "com.google.android.apps.nexuslauncher"
GOALS = (
    ("ContactsAddContact", "Create a new contact for {p}. Their number is +1{n}."),
    ("SystemWifiTurnOff", "Turn off WiFi, then open {a}."),
    ("FilesDeleteFile", "Delete the file {f} from the Android filesystem located in the {d} "
                        "folder within the sdk_gphone_x86_64 storage area."),
    ("MarkorCreateNote", "Create a new note in Markor named {f} with the following text: {w}"),
    ("SimpleCalendarAddOneEvent", "In Simple Calendar Pro, create a calendar event on {dt} at "
                                  "{t} with the title '{w}' and the description '{w2}'."),
    ("SmsReply", "Reply to {p} with the message: {w}"),
)


Element = tuple[dict[str, Any], str]  # the element and its rendered line without the index


def el(cls: str, pkg: str, y: int, h: int, text: str | None = None, desc: str | None = None,
       res: str | None = None, click: bool = False, edit: bool = False, scroll: bool = False,
       checked: bool | None = None, hint: str | None = None, x: int = 0, w: int = 1080
       ) -> Element:
    """One AndroidWorld UI element with the full key set of the real records, and its line.

    The line is what `sources.readers.ui_render.render_ui_element` prints for it (minus the index),
    built here directly because rendering every screen through the generic renderer is the
    generator's main cost; `_check_fast_render` verifies the two agree at import.
    """
    element = {"text": text, "content_description": desc, "class_name": cls, "bbox": None,
               "bbox_pixels": {"x_min": x, "x_max": x + w, "y_min": y, "y_max": y + h},
               "hint_text": hint, "is_checked": bool(checked), "is_checkable": checked is not None,
               "is_clickable": click, "is_editable": edit, "is_enabled": True,
               "is_focused": False, "is_focusable": click or edit,
               "is_long_clickable": click and not edit, "is_scrollable": scroll,
               "is_selected": False, "is_visible": True, "package_name": pkg,
               "resource_name": res, "tooltip": None, "resource_id": None, "metadata": None}
    parts = [cls]
    if text:
        parts.append(_dumps(text))
    if desc:
        parts.append(f"desc={_dumps(desc)}")
    if hint and hint != text:
        parts.append(f"hint={_dumps(hint)}")
    if res:
        parts.append(f"id={res}")
    flags = [label for on, label in ((click, "clickable"), (edit, "editable"),
                                     (checked, "checked"), (scroll, "scrollable")) if on]
    if flags:
        parts.append("(" + ", ".join(flags) + ")")
    parts.append(f"bbox=({x},{y},{x + w},{y + h})")
    return element, " ".join(parts)


_dumps = encode_basestring  # json.dumps(text, ensure_ascii=False) for a str, without overhead


def render_screen(screen: list[Element]) -> str:
    """The observation text of a screen, as the reader renders it."""
    if not _FAST:
        return render_ui_elements([e for e, _ in screen])
    return "\n".join([f"[{k}] {line}" for k, (_, line) in enumerate(screen)])


def _status_bar(ctx: dict[str, Any]) -> list[Element]:
    ui = "com.android.systemui"
    return [el("android.widget.TextView", ui, 1, 127, ctx["clock"], ctx["clock"],
               f"{ui}:id/clock", x=50, w=98),
            el("android.widget.ImageView", ui, 1, 127, desc="Android System notification: ",
               x=148, w=58),
            el("android.widget.FrameLayout", ui, 35, 58, desc="Wifi signal full.,No internet",
               res=f"{ui}:id/wifi_combo", x=885, w=46),
            el("android.widget.LinearLayout", ui, 1, 127, desc=f"Battery {ctx['battery']} percent.",
               res=f"{ui}:id/battery", x=986, w=20)]


# Screens that every episode can meet, identical across episodes (planted boilerplate).
_FIXED_CTX = {"clock": "15:34", "battery": 100}
HOME = [el("android.widget.ScrollView", LAUNCHER, 0, 2400, res=f"{LAUNCHER}:id/workspace",
           scroll=True), el("android.view.View", LAUNCHER, 128, 2209, desc="Home")] + [
    el("android.widget.TextView", LAUNCHER, 1873, 195, name, name, click=True, x=76 + 252 * k,
       w=173) for k, name in enumerate(("Phone", "Messages", "Chrome", "Gmail"))] + [
    el("android.widget.FrameLayout", LAUNCHER, 2125, 165, desc="Search", click=True,
       res=f"{LAUNCHER}:id/search_container_hotseat"),
    el("android.widget.TextView", LAUNCHER, 292, 62, "Sun, Oct 15", "Sun, Oct 15", click=True,
       res=f"{LAUNCHER}:id/date")] + _status_bar(_FIXED_CTX)
PERMISSION = [
    el("android.widget.TextView", "com.google.android.permissioncontroller", 1100, 120,
       "Allow this app to access your contacts?",
       res="com.android.permissioncontroller:id/permission_message"),
    el("android.widget.Button", "com.google.android.permissioncontroller", 1300, 130, "Allow",
       click=True, res="com.android.permissioncontroller:id/permission_allow_button"),
    el("android.widget.Button", "com.google.android.permissioncontroller", 1440, 130,
       "Don't allow", click=True, res="com.android.permissioncontroller:id/permission_deny_button"),
] + _status_bar(_FIXED_CTX)
RECENTS = [el("android.widget.TextView", LAUNCHER, 1100, 100, "No recent items",
              res=f"{LAUNCHER}:id/recents_empty")] + _status_bar(_FIXED_CTX)
BOILERPLATE = (HOME, HOME, PERMISSION, RECENTS)


def make_task(rng: random.Random) -> GenTask:
    name, template = rng.choice(GOALS)
    goal = template.format(p=tx.person(rng), n=tx.ri(rng, 2000000000, 9999999999),
                           a=rng.choice(tuple(APPS)), f=tx.filename(rng), d=rng.choice(tx.DIRS),
                           w=tx.sentence(rng, 3, 8), w2=tx.sentence(rng, 3, 8), dt=tx.date(rng),
                           t=tx.clock(rng))
    ctx = {"clock": tx.clock(rng), "battery": tx.ri(rng, 15, 100), "task_name": name,
           "app": rng.choice(tuple(APPS)), "scene_seed": rng.getrandbits(64)}
    return GenTask(goal, ctx)


def _rows(rng: random.Random, pkg: str, n: int, make) -> list[Element]:  # noqa: ANN001
    out: list[Element] = []
    y = 420
    for _ in range(n):
        out.extend(make(rng, pkg, y))
        y += 170
    return out


def _contact_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    name = tx.person(rng)
    return [el("android.widget.TextView", pkg, y, 150, name, click=True,
               res=f"{pkg}:id/cliv_name_textview", x=220, w=800),
            el("android.widget.QuickContactBadge", pkg, y, 150, desc=f"Quick contact for {name}",
               click=True, x=60, w=140)]


def _setting_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    toggle = rng.random() < 0.3
    row = [el("android.widget.TextView", pkg, y, 70, tx.words(rng, tx.ri(rng, 1, 3)).title(),
              res="android:id/title", x=180, w=700),
           el("android.widget.TextView", pkg, y + 70, 60, tx.words(rng, tx.ri(rng, 2, 6)),
              res="android:id/summary", x=180, w=700)]
    if toggle:
        row.append(el("android.widget.Switch", pkg, y, 130, click=True, checked=rng.random() < 0.5,
                      res="android:id/switch_widget", x=900, w=120))
    return row


def _file_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    return [el("android.widget.TextView", pkg, y, 70, tx.filename(rng), click=True,
               res="android:id/title", x=200, w=800),
            el("android.widget.TextView", pkg, y + 70, 60,
               f"{tx.ri(rng, 1, 999)} kB, {tx.date(rng)}", res=f"{pkg}:id/details", x=200, w=800)]


def _note_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    return [el("android.widget.TextView", pkg, y, 70, tx.filename(rng).rsplit(".", 1)[0] + ".md",
               click=True, res=f"{pkg}:id/ui__filesystem_item__title", x=160, w=880),
            el("android.widget.TextView", pkg, y + 70, 60, tx.sentence(rng, 4, 12),
               res=f"{pkg}:id/ui__filesystem_item__description", x=160, w=880)]


def _event_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    return [el("android.widget.TextView", pkg, y, 70, tx.sentence(rng, 2, 6)[:-1], click=True,
               res=f"{pkg}:id/event_item_title", x=60, w=900),
            el("android.widget.TextView", pkg, y + 70, 60,
               f"{tx.clock(rng)} - {tx.clock(rng)} · {rng.choice(tx.CITIES)}",
               res=f"{pkg}:id/event_item_time", x=60, w=900)]


def _thread_row(rng: random.Random, pkg: str, y: int) -> list[Element]:
    return [el("android.widget.TextView", pkg, y, 70, tx.person(rng), click=True,
               res=f"{pkg}:id/conversation_name", x=200, w=700),
            el("android.widget.TextView", pkg, y + 70, 60, tx.sentence(rng, 3, 10),
               res=f"{pkg}:id/conversation_snippet", x=200, w=700),
            el("android.widget.TextView", pkg, y, 70, tx.clock(rng), x=920, w=120)]


ROWS = {"Contacts": _contact_row, "Settings": _setting_row, "Files": _file_row,
        "Markor": _note_row, "Simple Calendar Pro": _event_row, "Messages": _thread_row}


def _screen(rng: random.Random, ctx: dict[str, Any], app: str) -> list[Element]:
    """A new screen of `app`: a list or an edit form."""
    pkg = APPS[app]
    top = [el("android.widget.TextView", pkg, 150, 120, app if rng.random() < 0.5 else
              tx.words(rng, 2).title(), res=f"{pkg}:id/toolbar_title", x=40, w=700),
           el("android.widget.ImageButton", pkg, 150, 120, desc="Navigate up", click=True,
              x=0, w=120),
           el("android.widget.ImageButton", pkg, 150, 120, desc="More options", click=True,
              x=950, w=130)]
    if rng.random() < 0.25:  # an edit form instead of a list
        fields = [el("android.widget.EditText", pkg, 400 + 180 * k, 150,
                     tx.words(rng, tx.ri(rng, 1, 3)) if rng.random() < 0.6 else None,
                     hint=tx.words(rng, 2).capitalize(), click=True, edit=True, x=137, w=796)
                  for k in range(tx.ri(rng, 3, 7))]
        body = fields + [el("android.widget.Button", pkg, 150, 120, "Save", click=True,
                            res=f"{pkg}:id/toolbar_button", x=723, w=231)]
    else:
        body = _rows(rng, pkg, tx.ri(rng, 3, 9), ROWS[app])
    return top + body + _status_bar(ctx)


def _error_screen(rng: random.Random, ctx: dict[str, Any], app: str) -> list[Element]:
    pkg = "android"
    roll = rng.random()
    if roll < 0.5:
        body = [el("android.widget.TextView", pkg, 1000, 120, f"{app} keeps stopping",
                   res="android:id/alertTitle"),
                el("android.widget.Button", pkg, 1150, 130, "App info", click=True,
                   res="android:id/aerr_app_info"),
                el("android.widget.Button", pkg, 1290, 130, "Close app", click=True,
                   res="android:id/aerr_close")]
    elif roll < 0.8:
        body = [el("android.widget.TextView", pkg, 1000, 120, f"{app} isn't responding",
                   res="android:id/alertTitle"),
                el("android.widget.Button", pkg, 1150, 130, "Close app", click=True,
                   res="android:id/aerr_close"),
                el("android.widget.Button", pkg, 1290, 130, "Wait", click=True,
                   res="android:id/aerr_wait")]
    else:
        body = [el("android.widget.Toast", APPS[app], 2000, 100,
                   rng.choice(("Couldn't save changes", "No app found to open this file",
                               "Something went wrong. Try again.")))]
    return body + _status_bar(ctx)


def _action(rng: random.Random) -> dict[str, Any]:
    """An action within the app in front (opening an app is planned: `planned_focus`)."""
    roll = rng.random()
    if roll < 0.57:
        return {"action_type": "click", "index": tx.ri(rng, 0, 20)}
    if roll < 0.72:
        return {"action_type": "scroll", "direction": rng.choice(("down", "up"))}
    if roll < 0.82:
        return {"action_type": "navigate_back"}
    if roll < 0.9:
        return {"action_type": "long_press", "index": tx.ri(rng, 0, 20)}
    return {"action_type": "input_text", "text": tx.words(rng, tx.ri(rng, 1, 4)),
            "index": tx.ri(rng, 0, 12)}


def _turn(action: dict[str, Any], screen: list[Element], category: str, app: str | None,
          text: str | None = None) -> GenTurn:
    """A turn whose observation is `screen`, showing `app` (None: the launcher, a system
    screen or nothing)."""
    observation = render_screen(screen) if text is None else text
    return GenTurn(json.dumps(action, ensure_ascii=False), observation, category,
                   {"action": action, "screen": screen, "app": app})


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    ctx = task.ctx
    shown = prev.native["app"] if prev is not None else None
    app, switched = planned_focus(ctx, index, tuple(APPS), shown)
    if category == "unchanged" and prev is not None:
        action = rng.choice(({"action_type": "wait"}, {"action_type": "click", "index": 0},
                             {"action_type": "scroll", "direction": "up"}))
        return _turn(action, prev.native["screen"], category, shown, prev.observation)
    if category == "echo":
        typed = tx.words(rng, tx.ri(rng, 2, 6))
        action = {"action_type": "input_text", "text": typed, "index": tx.ri(rng, 0, 8)}
        pkg = APPS[app]
        screen = [el("android.widget.EditText", pkg, 150, 120, typed, click=True, edit=True),
                  el("android.widget.TextView", pkg, 300, 90, f"Search for \"{typed}\"")]
        return _turn(action, screen, category, app)
    if category == "boilerplate":
        k = int(rng.random() * len(BOILERPLATE))
        action = ({"action_type": "navigate_home"}, {"action_type": "navigate_home"},
                  {"action_type": "open_app", "app_name": "Contacts"},
                  {"action_type": "navigate_back"})[k]
        return _turn(action, BOILERPLATE[k], category, None)
    if category == "error":
        return _turn(_action(rng), _error_screen(rng, ctx, app), category, app)
    if category == "empty":
        return _turn(rng.choice(({"action_type": "wait"}, {"action_type": "keyboard_enter"})),
                     [], category, None)
    action = {"action_type": "open_app", "app_name": app} if switched else _action(rng)
    return _turn(action, _screen(rng, ctx, app), "informative", app)


def _reason_action(rng: random.Random, action: str) -> str:
    return f"Reason: {tx.sentence(rng)}\nAction: {action}"


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    ctx = task.ctx
    first = HOME
    done = {"action_type": "status", "goal_status": rng.choice(("complete", "complete",
                                                                 "infeasible"))}
    texts = [_reason_action(rng, t.action) for t in turns]
    texts.append(_reason_action(rng, json.dumps(done)))
    screens = [[e for e, _ in screen] for screen in [first] + [t.native["screen"] for t in turns]]
    stamp = 1752900000.0 + tx.ri(rng, 0, 10 ** 6)
    records = []
    for k, (text, screen) in enumerate(zip(texts, screens, strict=True)):
        stamp += rng.uniform(3.0, 12.0)
        records.append({
            "step_num": k + 1,
            "state": {"pixels": "<screenshot_excluded>",
                      "forest": "<protobuf: AndroidAccessibilityForest>",
                      "ui_elements": screen, "auxiliaries": {}},
            "action": text,
            "agent_data": {"before_screenshot": "<screenshot_excluded>",
                           "action_output": text, "action_raw_response": "<Response [200]>",
                           "summary": f"Step {k + 1}: {tx.sentence(rng)}"},
            "timestamp": round(stamp, 6),
        })
    timings = [round(rng.uniform(3.0, 12.0), 6) for _ in texts]
    success = done["goal_status"] == "complete" and rng.random() < 0.6
    doc = {
        "task_name": ctx["task_name"], "goal": task.text, "model_name": "gpt-4o-mini",
        "prompt_variant": "base", "max_steps": len(texts) + 10, "success": success,
        "steps_taken": len(texts), "evaluation_time": round(sum(timings) + 4.2, 6),
        "actions": texts, "step_timings": timings,
        "initial_state": {"pixels": "<screenshot_excluded>",
                          "forest": "<protobuf: AndroidAccessibilityForest>",
                          "ui_elements": screens[0], "auxiliaries": {}},
        "final_state": {"pixels": "<screenshot_excluded>",
                        "forest": "<protobuf: AndroidAccessibilityForest>",
                        "ui_elements": screens[-1], "auxiliaries": {}},
        "step_records": records,
        "evaluation_timestamp": round(stamp + 4.2, 6),
        "total_ui_elements": sum(len(s) for s in screens),
        "task_complexity": round(rng.uniform(0.5, 3.0), 1), "task_class": ctx["task_name"],
        "max_steps_allowed": len(texts) + 10, "episode_terminated_early": False,
        "agent_claimed_done": done["goal_status"] == "complete",
        "task_actually_successful": success,
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def _check_fast_render() -> bool:
    """True when `render_screen`'s lines equal the shared renderer's for every element shape."""
    rng = random.Random(5)
    ctx = {"clock": "09:41", "battery": 80, "app": "Settings", "task_name": "x"}
    screens = [HOME, PERMISSION, _error_screen(rng, ctx, "Files")] + [
        _screen(rng, ctx, app) for _ in range(7) for app in APPS]
    screens.append([el("android.widget.TextView", "p", 1, 2, 'say "hi"\\', desc="d\u00e9",
                       hint='say "hi"\\', checked=True, scroll=True)])
    for screen in screens:
        fast = "\n".join(f"[{k}] {line}" for k, (_, line) in enumerate(screen))
        if fast != render_ui_elements([e for e, _ in screen]):
            return False
    return True


_FAST = _check_fast_render()
