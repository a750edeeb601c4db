"""Android and OS collectors over MODELED user interfaces (no emulator or desktop runs here).

Android: `gui_android.Phone`, written as AndroidWorld episode JSON (step_records with the
ui_elements the agent saw before each action, final_state after the last). OS:
`gui_desktop.Desktop`, written as OSWorld's `<example id>/traj.jsonl` (pyautogui code actions,
the accessibility tree after each action in `accessibility_tree`, the instruction on the first
record) with `result.txt` holding the evaluator's score. The scripted agents pick elements by
reading the screen they are shown, make seeded mistakes (wrong app first, a field typed into the
wrong box, a toggle clicked twice, a click on empty space) and declare completion; success is
checked against the model's state. The README must call these domains modeled, not real.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from sources.factory.collect_util import FIXED_EPOCH, dump_json, trajectory_rng, write_text
from sources.factory.gui_android import SWITCHES, Phone
from sources.factory.gui_desktop import FOLDERS, Desktop

FIRST = ("Adam", "Willow", "Priya", "Tomas", "Mei", "Jonas", "Amara", "Luca", "Noor", "Ines")
LAST = ("Gonzalez", "Muller", "Okafor", "Sato", "Novak", "Haddad", "Larsen", "Reyes")
NOTE_TITLES = ("Groceries", "Packing list", "Ideas", "Meeting notes", "Books to read", "Recipes")
FILE_STEMS = ("report", "invoice", "draft", "photo", "backup", "notes", "budget", "scan")
SCREEN = {"pixels": "<screenshot_excluded>", "forest": "<protobuf: AndroidAccessibilityForest>"}


# --- Android ---------------------------------------------------------------------------------
class PhoneAgent:
    def __init__(self, phone: Phone, rng: random.Random) -> None:
        self.phone, self.rng = phone, rng
        self.records: list[dict[str, Any]] = []
        self.screen = phone.ui_elements()
        self.initial = self.screen

    def index(
        self,
        text: str | None = None,
        desc: str | None = None,
        cls: str | None = None,
        hint: str | None = None,
        after: int = 0,
    ) -> int:
        for i, e in enumerate(self.screen):
            if i < after or (text is not None and e["text"] != text):
                continue
            if (
                (desc is not None and e["content_description"] != desc)
                or (cls is not None and e["class_name"] != cls)
                or (hint is not None and e["hint_text"] != hint)
            ):
                continue
            return i
        return len(self.screen)  # not on screen: an index that does nothing

    def act(self, reason: str, action: dict[str, Any]) -> None:
        text = f"Reason: {reason}\nAction: {json.dumps(action)}"
        self.records.append(
            {
                "step_num": len(self.records) + 1,
                "state": {**SCREEN, "ui_elements": self.screen},
                "action": text,
                "agent_data": {"summary": reason},
                "timestamp": FIXED_EPOCH + 6.0 * len(self.records),
            }
        )
        self.phone.act(action)
        self.screen = self.phone.ui_elements()


def android_switch(agent: PhoneAgent, phone: Phone, rng: random.Random) -> tuple[str, str, Any]:
    name = rng.choice(SWITCHES)
    want = not phone.switches[name] if rng.random() < 0.8 else phone.switches[name]
    if rng.random() < 0.3:
        agent.act(
            "Open the app that should hold this setting.",
            {"action_type": "open_app", "app_name": "Files"},
        )
        agent.act(
            "This is the file manager, not Settings; go home.", {"action_type": "navigate_home"}
        )
    agent.act("Open Settings.", {"action_type": "open_app", "app_name": "Settings"})
    switch = agent.index(cls="android.widget.Switch", after=agent.index(text=name))
    if agent.screen[switch]["is_checked"] != want:
        agent.act(f"Tap the {name} switch.", {"action_type": "click", "index": switch})
        if rng.random() < 0.2:  # a double tap flips it back; usually noticed and fixed
            agent.act(
                f"Tap the {name} switch again to be sure.",
                {"action_type": "click", "index": switch},
            )
            if agent.screen[switch]["is_checked"] != want and rng.random() < 0.7:
                agent.act(
                    "That turned it back; tap once more.", {"action_type": "click", "index": switch}
                )
    state = "on" if want else "off"
    return (
        f"SystemSwitch{name.replace(' ', '').replace('-', '')}",
        f"Turn {state} {name}.",
        lambda: phone.switches[name] == want,
    )


def android_contact(agent: PhoneAgent, phone: Phone, rng: random.Random) -> tuple[str, str, Any]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    number = f"+1{rng.randint(200, 999)}{rng.randint(1000000, 9999999)}"
    agent.act("Open the Contacts app.", {"action_type": "open_app", "app_name": "Contacts"})
    agent.act(
        "Tap the create contact button.",
        {"action_type": "click", "index": agent.index(desc="Create contact")},
    )
    agent.act(
        "Enter the first name.",
        {"action_type": "input_text", "text": first, "index": agent.index(hint="First name")},
    )
    if rng.random() < 0.3:  # the number typed into the wrong box, (usually) then corrected
        agent.act(
            "Enter the phone number.",
            {"action_type": "input_text", "text": number, "index": agent.index(hint="Last name")},
        )
        if rng.random() < 0.7:
            agent.act(
                "That went into Last name; put the last name there.",
                {"action_type": "input_text", "text": last, "index": agent.index(hint="Last name")},
            )
    else:
        agent.act(
            "Enter the last name.",
            {"action_type": "input_text", "text": last, "index": agent.index(hint="Last name")},
        )
    agent.act(
        "Enter the phone number.",
        {"action_type": "input_text", "text": number, "index": agent.index(hint="Phone")},
    )
    agent.act("Save the contact.", {"action_type": "click", "index": agent.index(text="Save")})
    return (
        "ContactsAddContact",
        f"Create a new contact for {first} {last}. Their number is {number}.",
        lambda: phone.contacts.get(f"{first} {last}") == number,
    )


def android_note(agent: PhoneAgent, phone: Phone, rng: random.Random) -> tuple[str, str, Any]:
    title = rng.choice([t for t in NOTE_TITLES if t not in phone.notes])
    body = ", ".join(
        rng.sample(["milk", "eggs", "tickets", "charger", "call mum", "rice", "tea"], 3)
    )
    agent.act("Open the notes app.", {"action_type": "open_app", "app_name": "Notes"})
    if rng.random() < 0.25:
        agent.act("Scroll to see all notes.", {"action_type": "scroll", "direction": "down"})
    agent.act("Start a new note.", {"action_type": "click", "index": agent.index(desc="New note")})
    agent.act(
        "Type the title.",
        {"action_type": "input_text", "text": title, "index": agent.index(hint="Title")},
    )
    agent.act(
        "Type the body.",
        {"action_type": "input_text", "text": body, "index": agent.index(hint="Note")},
    )
    agent.act("Save the note.", {"action_type": "click", "index": agent.index(desc="Save")})
    return (
        "NotesCreateNote",
        f"Create a note titled '{title}' with the text '{body}'.",
        lambda: phone.notes.get(title) == body,
    )


def android_delete_file(
    agent: PhoneAgent, phone: Phone, rng: random.Random
) -> tuple[str, str, Any]:
    folder = rng.choice([f for f in sorted(phone.files) if phone.files[f]])
    name = rng.choice(sorted(phone.files[folder]))
    agent.act("Open the Files app.", {"action_type": "open_app", "app_name": "Files"})
    if rng.random() < 0.3:
        other = rng.choice([f for f in sorted(phone.files) if f != folder])
        agent.act(f"Look in {other}.", {"action_type": "click", "index": agent.index(text=other)})
        agent.act(f"{name} is not here; go back.", {"action_type": "navigate_back"})
    agent.act(f"Open {folder}.", {"action_type": "click", "index": agent.index(text=folder)})
    agent.act(f"Open {name}.", {"action_type": "click", "index": agent.index(text=name)})
    agent.act("Delete it.", {"action_type": "click", "index": agent.index(desc="Delete")})
    return (
        "FilesDeleteFile",
        f"Delete the file {name} from {folder}.",
        lambda: name not in phone.files[folder],
    )


ANDROID_TASKS = (android_switch, android_contact, android_note, android_delete_file)


def collect_android_one(index: int, seed: int, out_dir: Path) -> int:
    rng = trajectory_rng(seed, "android", index)
    phone = Phone(
        switches={name: rng.random() < 0.5 for name in SWITCHES},
        contacts={
            f"{rng.choice(FIRST)} {rng.choice(LAST)}": f"+1555{rng.randint(1000000, 9999999)}"
            for _ in range(rng.randint(0, 4))
        },
        notes={t: "..." for t in rng.sample(NOTE_TITLES, rng.randint(0, 3))},
        files={
            f: [f"{s}_{rng.randint(1, 99)}.pdf" for s in rng.sample(FILE_STEMS, rng.randint(1, 4))]
            for f in ("Documents", "Download", "Pictures")
        },
    )
    agent = PhoneAgent(phone, rng)
    task_name, goal, check = ANDROID_TASKS[index % len(ANDROID_TASKS)](agent, phone, rng)
    success = bool(check())
    agent.act(
        "The goal is achieved." if success else "I believe the task is done.",
        {"action_type": "status", "goal_status": "complete"},
    )
    actions = [r["action"] for r in agent.records]
    episode = {
        "task_name": task_name,
        "goal": goal,
        "model_name": "worldtrace/scripted-android",
        "prompt_variant": "base",
        "max_steps": 30,
        "success": success,
        "steps_taken": len(actions),
        "responses": actions,
        "actions": actions,
        "initial_state": {**SCREEN, "ui_elements": agent.initial},
        "final_state": {**SCREEN, "ui_elements": agent.screen},
        "step_records": agent.records,
        "task_class": task_name,
        "max_steps_allowed": 30,
        "episode_terminated_early": False,
        "agent_claimed_done": True,
        "task_actually_successful": success,
        "environment": "worldtrace modeled Android UI (no emulator)",
    }
    write_text(out_dir / f"{task_name}_collected_{index:05d}.json", dump_json(episode))
    return len(actions) - 1


# --- OS ----------------------------------------------------------------------------------------
class DesktopAgent:
    def __init__(self, desktop: Desktop, instruction: str) -> None:
        self.desktop, self.instruction = desktop, instruction
        self.records: list[dict[str, Any]] = []

    def _record(self, code: str, response: str, done: bool) -> None:
        n = len(self.records) + 1
        stamp = f"20250303@10{n // 60:02d}{n % 60:02d}"
        record: dict[str, Any] = {
            "step_num": n,
            "action_timestamp": stamp,
            "action": code,
            "response": response,
            "reward": 0,
            "done": done,
            "info": {},
            "screenshot_file": f"step_{n}_{stamp}.png",
            "accessibility_tree": self.desktop.tree(),
        }
        if n == 1:
            record["instruction"] = self.instruction
        self.records.append(record)

    def do(self, code: str, response: str) -> None:
        self.desktop.run(code)
        self._record(code, response, False)

    def click(self, tag: str, name: str, response: str, double: bool = False) -> None:
        x, y = self.desktop.center(tag, name) or (1700, 1000)  # not on screen: empty desktop
        self.do(f"pyautogui.{'doubleClick' if double else 'click'}({x}, {y})", response)

    def done(self) -> None:
        self._record("DONE", "done", True)


def os_toggle(desktop: Desktop, rng: random.Random) -> tuple[str, Any]:
    panel, name = rng.choice(
        [("Appearance", "Dark style"), ("Wi-Fi", "Wi-Fi"), ("Bluetooth", "Bluetooth")]
    )
    want = not desktop.settings[name]
    instruction = f"Turn {'on' if want else 'off'} {name} in Settings."
    agent = DesktopAgent(desktop, instruction)
    if rng.random() < 0.3:
        agent.do("pyautogui.click(1500, 950)", "click:empty desktop")  # nothing there: unchanged
    agent.click("push-button", "Settings", "click:Settings")
    agent.click("list-item", panel, f"click:{panel}")
    agent.click("toggle-button", name, f"click:{name} switch")
    return instruction, (agent, lambda: desktop.settings[name] == want)


def os_save_text(desktop: Desktop, rng: random.Random) -> tuple[str, Any]:
    folder, name = rng.choice(FOLDERS), f"{rng.choice(FILE_STEMS)}.txt"
    text = rng.choice(
        ["Meeting at 10.", "Buy milk and eggs.", "Call the plumber.", "Draft v2 ready."]
    )
    instruction = f"Create a text file {name} in {folder} containing '{text}'."
    agent = DesktopAgent(desktop, instruction)
    agent.click("push-button", "Text Editor", "click:Text Editor")
    agent.do(f"pyautogui.typewrite({text!r})", f"type:{text}")
    agent.do("pyautogui.hotkey('ctrl', 's')", "hotkey:ctrl+s")
    agent.do(f"pyautogui.typewrite({name!r})", f"type:{name}")
    forgets = rng.random() < 0.15  # keeps the dialog's default folder (Documents) by mistake
    if (folder != "Documents" and not forgets) or rng.random() < 0.3:
        agent.click("list-item", folder, f"click:{folder}")
    agent.click("push-button", "Save", "click:Save")
    return instruction, (agent, lambda: desktop.files[folder].get(name) == text)


def os_file_op(desktop: Desktop, rng: random.Random) -> tuple[str, Any]:
    folder = rng.choice([f for f in FOLDERS if desktop.files[f]])
    name = rng.choice(sorted(desktop.files[folder]))
    rename = rng.random() < 0.5
    new = f"{name.rsplit('.', 1)[0]}_old.{name.rsplit('.', 1)[1]}"
    instruction = (
        f"Rename {name} in {folder} to {new}." if rename else f"Delete {name} from {folder}."
    )
    agent = DesktopAgent(desktop, instruction)
    agent.click("push-button", "Files", "click:Files")
    if rng.random() < 0.3:
        other = rng.choice([f for f in FOLDERS if f != folder])
        agent.click("icon", other, f"double_click:{other}", double=True)
        agent.do("pyautogui.hotkey('alt', 'left')", "hotkey:alt+left")
    agent.click("icon", folder, f"double_click:{folder}", double=True)
    agent.click("icon", name, f"click:{name}")
    if rename:
        agent.do("pyautogui.press('f2')", "press:f2")
        agent.do(f"pyautogui.typewrite({new!r})", f"type:{new}")
        agent.do("pyautogui.press('enter')", "press:enter")
        return instruction, (
            agent,
            lambda: new in desktop.files[folder] and name not in desktop.files[folder],
        )
    agent.do("pyautogui.press('delete')", "press:delete")
    return instruction, (agent, lambda: name not in desktop.files[folder])


OS_TASKS = (os_toggle, os_save_text, os_file_op)


def collect_os_one(index: int, seed: int, out_dir: Path) -> int:
    rng = trajectory_rng(seed, "os", index)
    desktop = Desktop(
        files={
            f: {
                f"{s}_{rng.randint(1, 99)}.{rng.choice(['txt', 'pdf', 'png'])}": ""
                for s in rng.sample(FILE_STEMS, rng.randint(1, 4))
            }
            for f in FOLDERS
        },
        settings={
            "Wi-Fi": rng.random() < 0.7,
            "Bluetooth": rng.random() < 0.4,
            "Dark style": rng.random() < 0.3,
        },
    )
    _, (agent, check) = OS_TASKS[index % len(OS_TASKS)](desktop, rng)
    agent.done()
    folder = out_dir / f"os-collected-{index:05d}"
    write_text(
        folder / "traj.jsonl",
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in agent.records),
    )
    write_text(folder / "result.txt", f"{1.0 if check() else 0.0}\n")
    return len(agent.records)  # DONE is a turn too (OSWorld records it as a step)


def collect_android(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` modeled Android episodes (cheap: no pool needed)."""
    return [collect_android_one(i, seed, out_dir) for i in range(n)]


def collect_os(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` modeled OS trajectories."""
    return [collect_os_one(i, seed, out_dir) for i in range(n)]
