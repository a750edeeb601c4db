"""A stateful model of an Android phone (launcher, Settings, Contacts, Notes, Files) - MODELED.

No emulator runs here: screens are computed from the model's state, and actions change that
state the way the real apps would (a click on a switch flips `is_checked`; input_text sets a
field's text; open_app opens the app's screen; navigate_back pops a screen). Each screen is a
list of UI elements with AndroidWorld's keys (text, content_description, class_name,
bbox_pixels, is_checked, is_clickable, is_editable, resource_name, ...), indexed as AndroidWorld
indexes them (position in the list).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

WIDTH, ROW = 1080, 160
PKG = {
    "home": "com.google.android.apps.nexuslauncher",
    "Settings": "com.android.settings",
    "Contacts": "com.google.android.contacts",
    "Notes": "com.simplemobiletools.notes.pro",
    "Files": "com.google.android.documentsui",
}
APPS = ("Settings", "Contacts", "Notes", "Files", "Camera")
SWITCHES = ("Wi-Fi", "Bluetooth", "Airplane mode", "Dark theme", "Do Not Disturb")


def element(
    text: str | None = None,
    desc: str | None = None,
    cls: str = "android.widget.TextView",
    row: int = 0,
    pkg: str = PKG["home"],
    res: str | None = None,
    **flags: Any,
) -> dict[str, Any]:
    """One UI element in AndroidWorld's dictionary layout."""
    top = 140 + row * ROW
    return {
        "text": text,
        "content_description": desc,
        "class_name": cls,
        "bbox": None,
        "bbox_pixels": {
            "x_min": 0 if flags.get("wide", True) else 40,
            "x_max": WIDTH,
            "y_min": top,
            "y_max": top + ROW - 20,
        },
        "hint_text": flags.get("hint"),
        "is_checked": flags.get("checked", False),
        "is_checkable": flags.get("checkable", False),
        "is_clickable": flags.get("clickable", False),
        "is_editable": flags.get("editable", False),
        "is_enabled": True,
        "is_focused": flags.get("focused", False),
        "is_focusable": flags.get("clickable", False),
        "is_long_clickable": False,
        "is_scrollable": flags.get("scrollable", False),
        "is_selected": False,
        "is_visible": True,
        "package_name": pkg,
        "resource_name": f"{pkg}:id/{res}" if res else None,
        "tooltip": None,
        "resource_id": None,
        "metadata": None,
    }


SCREEN_PKG = {
    "home": PKG["home"], "camera": "com.android.camera2", "settings": PKG["Settings"],
    "contacts": PKG["Contacts"], "contact_new": PKG["Contacts"], "contact": PKG["Contacts"],
    "notes": PKG["Notes"], "note_edit": PKG["Notes"], "note": PKG["Notes"],
    "files": PKG["Files"], "folder": PKG["Files"], "file": PKG["Files"],
}  # fmt: skip
Handler = Callable[[], None]


@dataclass
class Phone:
    """The model's state and its current screen stack."""

    switches: dict[str, bool]
    contacts: dict[str, str]  # "First Last" -> phone
    notes: dict[str, str]  # title -> body
    files: dict[str, list[str]]  # folder -> file names
    stack: list[tuple[str, ...]] = field(default_factory=lambda: [("home",)])
    form: dict[str, str] = field(default_factory=dict)  # text typed into the current screen
    focused: str | None = None
    _rows: list[tuple[dict[str, Any], Handler | None, str | None]] = field(default_factory=list)
    _pkg: str = PKG["home"]  # package of the screen being built

    # --- screens -----------------------------------------------------------------------
    def ui_elements(self) -> list[dict[str, Any]]:
        """The current screen's elements (status bar first); also binds indices to actions."""
        self._rows = []
        systemui = "com.android.systemui"
        self._add("10:00", res="clock", pkg=systemui)
        self._add(None, "Battery 100 percent.", cls="android.widget.ImageView", pkg=systemui)
        name, *args = self.stack[-1]
        self._pkg = SCREEN_PKG[name]
        getattr(self, f"_screen_{name}")(*args)
        return [item for item, _, _ in self._rows]

    def _add(
        self,
        text: str | None = None,
        desc: str | None = None,
        on: Handler | None = None,
        edit: str | None = None,
        **kw: Any,
    ) -> None:
        """Append an element; `on` runs when it is clicked, `edit` names the field it edits."""
        kw.setdefault("pkg", self._pkg)
        if on is not None or edit is not None:
            kw.setdefault("clickable", True)
        self._rows.append((element(text, desc, **kw), on, edit))

    def _open(self, *screen: str) -> Handler:
        def go() -> None:
            self.stack.append(screen)
            self.form, self.focused = {}, None

        return go

    def _field(self, label: str, row: int) -> None:
        value = self.form.get(label, "")
        self._add(
            value or label,
            cls="android.widget.EditText",
            row=row,
            edit=label,
            editable=True,
            hint=label,
            focused=self.focused == label,
        )

    def _screen_home(self) -> None:
        for i, app in enumerate(APPS):
            self._add(app, app, on=self._open(app.lower()), row=8 + i // 4, wide=False)
        self._add(None, "Search", cls="android.widget.FrameLayout", row=11, clickable=True)

    def _screen_camera(self) -> None:
        self._add("Camera is not available in this environment", row=3)

    def _screen_settings(self) -> None:
        self._add("Settings", row=1, res="title")
        for i, name in enumerate(SWITCHES):
            on, flip = self.switches[name], self._toggle(name)
            self._add(name, on=flip, row=2 + i, res="title")
            self._add("On" if on else "Off", row=2 + i, res="summary")
            self._add(
                "ON" if on else "OFF",
                on=flip,
                cls="android.widget.Switch",
                row=2 + i,
                res="switch_widget",
                checkable=True,
                checked=on,
                wide=False,
            )

    def _toggle(self, name: str) -> Handler:
        def flip() -> None:
            self.switches[name] = not self.switches[name]

        return flip

    def _screen_contacts(self) -> None:
        self._add(
            None,
            "Create contact",
            on=self._open("contact_new"),
            cls="android.widget.ImageButton",
            row=10,
            res="floating_action_button",
        )
        for i, name in enumerate(sorted(self.contacts)):
            self._add(name, on=self._open("contact", name), row=2 + i, res="cliv_name_textview")
        if not self.contacts:
            self._add("No contacts", row=3)

    def _screen_contact_new(self) -> None:
        self._add(None, "Cancel", on=self.back, cls="android.widget.ImageButton", row=1)
        self._add(
            "Save", on=self._save_contact, cls="android.widget.Button", row=1, res="toolbar_button"
        )
        for i, label in enumerate(("First name", "Last name", "Phone")):
            self._field(label, 3 + i)

    def _save_contact(self) -> None:
        parts = (self.form.get("First name", ""), self.form.get("Last name", ""))
        name = " ".join(p for p in parts if p)
        if name:
            self.contacts[name] = self.form.get("Phone", "")
            self.stack[-1] = ("contact", name)
            self.form, self.focused = {}, None

    def _screen_contact(self, name: str) -> None:
        self._add(name, row=2, res="large_title")
        self._add(self.contacts.get(name, ""), row=4, res="header")
        self._add(None, "Call", cls="android.widget.ImageButton", row=5, clickable=True)

    def _screen_notes(self) -> None:
        self._add(
            None, "New note", on=self._open("note_edit"), cls="android.widget.ImageButton", row=10
        )
        for i, title in enumerate(sorted(self.notes)):
            self._add(title, on=self._open("note", title), row=2 + i, res="note_title")

    def _screen_note_edit(self) -> None:
        self._field("Title", 2)
        self._field("Note", 4)
        self._add(None, "Save", on=self._save_note, cls="android.widget.ImageButton", row=1)

    def _save_note(self) -> None:
        title = self.form.get("Title", "").strip()
        if title:
            self.notes[title] = self.form.get("Note", "")
            self.stack[-1] = ("note", title)
            self.form, self.focused = {}, None

    def _screen_note(self, title: str) -> None:
        self._add(title, row=2, res="note_title")
        self._add(self.notes.get(title, ""), row=3, res="text_note_view")
        self._add(
            None, "Delete", on=self._delete_note(title), cls="android.widget.ImageButton", row=1
        )

    def _delete_note(self, title: str) -> Handler:
        def delete() -> None:
            self.notes.pop(title, None)
            self.back()

        return delete

    def _screen_files(self) -> None:
        for i, folder in enumerate(sorted(self.files)):
            self._add(folder, on=self._open("folder", folder), row=2 + i, res="item_root_title")

    def _screen_folder(self, folder: str) -> None:
        self._add(folder, row=1, res="toolbar_title")
        for i, name in enumerate(sorted(self.files[folder])):
            self._add(name, on=self._open("file", folder, name), row=2 + i, res="item_title")
        if not self.files[folder]:
            self._add("No items", row=3)

    def _screen_file(self, folder: str, name: str) -> None:
        self._add(name, row=2, res="title")
        self._add(
            None,
            "Delete",
            on=self._delete_file(folder, name),
            cls="android.widget.ImageButton",
            row=1,
        )

    def _delete_file(self, folder: str, name: str) -> Handler:
        def delete() -> None:
            if name in self.files[folder]:
                self.files[folder].remove(name)
            self.back()

        return delete

    # --- actions -------------------------------------------------------------------------
    def back(self) -> None:
        if len(self.stack) > 1:
            self.stack.pop()
        self.form, self.focused = {}, None

    def act(self, action: dict[str, Any]) -> None:
        """Apply one AndroidWorld JSON action to the model (indices refer to the last screen)."""
        kind = action.get("action_type")
        index = action.get("index", -1)
        if kind == "open_app" and action.get("app_name") in APPS:
            self.stack = [("home",)]
            self._open(str(action["app_name"]).lower())()
        elif kind == "navigate_home":
            self.stack, self.form, self.focused = [("home",)], {}, None
        elif kind == "navigate_back":
            self.back()
        elif kind == "click" and 0 <= index < len(self._rows):
            _, handler, edit = self._rows[index]
            if edit:
                self.focused = edit
            elif handler:
                handler()
        elif kind == "input_text" and 0 <= index < len(self._rows) and self._rows[index][2]:
            edit = self._rows[index][2]
            self.focused = edit
            self.form[edit] = str(action.get("text", ""))
        # scroll, wait, status and anything else leave the screen as it is
