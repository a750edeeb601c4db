"""The real collectors: their environments are real, isolated, deterministic, and readable.

Each test checks a recorded observation against the environment itself (bash run again in a
fresh folder, the MCP server's own error, the linked page fetched directly, the documents the
search returned), or the isolation and determinism the factory promises, or that the matching
reader parses every collected file without quarantining anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shlex
import site
import subprocess
import sys
from pathlib import Path

import pytest

from sources.factory import collect_terminal
from sources.factory.collect import COLLECTED_DOMAINS, FORMATS, collect_domain
from sources.factory.collect_mcp import McpClient, ServerProcess, _Zygote
from sources.factory.collect_swe import collect_one as collect_swe_one
from sources.factory.collect_terminal import SHOWN_HOME, BashSandbox
from sources.factory.collect_util import minimal_env, normalise_path
from sources.factory.gui_android import Phone
from sources.factory.gui_desktop import Desktop
from sources.factory.mcp_scenarios import seed_state
from sources.factory.search_engine import default_engine
from sources.factory.terminal_tasks import make_task
from sources.factory.text_browser import TextBrowser
from sources.factory.web_app import Shop, ShopServer
from sources.readers import detect, get_reader
from sources.schema import Quarantine

SEED = 11
N_EACH = 3


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every domain collected once (N_EACH trajectories, SEED)."""
    out = tmp_path_factory.mktemp("collected")
    for domain in COLLECTED_DOMAINS:
        stats = collect_domain(domain, out, N_EACH, SEED)
        assert stats.n_trajectories == N_EACH and stats.n_turns > 0
    return out


def _files(out: Path, domain: str) -> list[Path]:
    folder = out / domain / f"{domain}-collected"
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "result.txt")


# --- terminal --------------------------------------------------------------------------------
def test_terminal_observations_equal_what_bash_prints(tmp_path: Path) -> None:
    """Replay every recorded command with a fresh `bash -c` in a fresh copy of the task's files:
    each command's recorded output is exactly what bash prints for it."""
    index = 2
    collect_terminal.collect_one(index, SEED, tmp_path / "out", tmp_path / "work")
    document = json.loads(
        (tmp_path / "out" / f"terminal-collected-{index:05d}.trajectory.json").read_text()
    )
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    make_task(SEED, index).materialise(fresh)
    env = minimal_env(fresh)
    compared = 0
    for step in document["steps"]:
        if "tool_calls" not in step:
            continue
        command = step["tool_calls"][0]["arguments"]["keystrokes"].removesuffix("\n")
        screen = step["observation"]["results"][0]["content"]
        head = f"New Terminal Output:\n\nagent@sandbox:~$ {command}\n"
        assert screen.startswith(head) and screen.endswith("agent@sandbox:~$ ")
        recorded = screen[len(head) : -len("agent@sandbox:~$ ")]
        run = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", command],
            cwd=fresh,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        printed = normalise_path(run.stdout.decode(), fresh, SHOWN_HOME)
        assert step["extra"]["exit_code"] == run.returncode, command
        if not printed.startswith("bash:"):  # bash's own messages name the script line with -c
            assert recorded == printed, command
            compared += 1
    assert compared >= 4


def test_terminal_sandbox_cannot_touch_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me\n")
    sandbox = outside / "sandbox"
    sandbox.mkdir()
    before = sorted(
        (p.relative_to(tmp_path), p.read_bytes() if p.is_file() else b"")
        for p in tmp_path.rglob("*")
        if sandbox not in (p, *p.parents)
    )
    attempts = [
        "touch ../escaped.txt",
        f"echo owned > {shlex.quote(str(victim))}",
        "rm ../victim.txt",
        "cd .. && touch escaped",
        "ln -s .. up",
        "cat ~/../victim.txt",
        "cd $HOME/..",
        "touch $(echo ..)/x",
        "cp /etc/hostname .",
        "cd /",
        "X=..; cd $X/..",
        "printf 'touch /tmp/wt-escape\\n' > s.sh",
        "mkdir sub && cd sub && cd ../..",
    ]
    with BashSandbox(sandbox) as shell:
        results = [shell.run(command) for command in attempts]
        for command in ("mkdir -p a/b", "cd a/b", "cd ../..", "pwd"):  # moving inside is fine
            assert shell.run(command).exit_code == 0, command
        assert shell.cwd == sandbox.resolve()
    for command, result in zip(attempts, results, strict=True):
        assert result.refused or result.exit_code != 0, command
    after = sorted(
        (p.relative_to(tmp_path), p.read_bytes() if p.is_file() else b"")
        for p in tmp_path.rglob("*")
        if sandbox not in (p, *p.parents)
    )
    assert after == before
    assert victim.read_text() == "keep me\n"
    assert not Path("/tmp/wt-escape").exists()


# --- SWE -----------------------------------------------------------------------------------
def test_swe_pytest_fails_before_the_edit_and_passes_after(tmp_path: Path) -> None:
    index = 3  # the "median" template: an IndexError and a wrong mean for even counts
    collect_swe_one(index, SEED, tmp_path / "out", tmp_path / "work")
    traj = json.loads((tmp_path / "out" / f"swe-collected-{index:05d}.traj").read_text())
    runs = [s for s in traj["trajectory"] if s["action"] == "python -m pytest -q"]
    edit = next(
        i for i, s in enumerate(traj["trajectory"]) if s["observation"].startswith("The file ")
    )
    before = [s for s in traj["trajectory"][:edit] if s["action"] == "python -m pytest -q"]
    assert before and "IndexError: list index out of range" in before[0]["observation"]
    assert re.search(r"^2 failed, 3 passed$", before[0]["observation"], re.M)
    assert re.search(r"^5 passed$", runs[-1]["observation"], re.M)
    patch = traj["info"]["submission"]
    assert "-    return (ordered[mid] + ordered[mid + 1]) / 2" in patch
    assert "+    return (ordered[mid - 1] + ordered[mid]) / 2" in patch


# --- MCP -----------------------------------------------------------------------------------
def test_mcp_bad_arguments_return_the_servers_real_error(tmp_path: Path) -> None:
    seed_state("shopdb", tmp_path, random.Random(1))
    server = ServerProcess("shopdb", tmp_path)
    client = McpClient(server)
    try:
        init = client.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        assert init["result"]["serverInfo"]["name"] == "shop-db"
        client.notify("notifications/initialized")
        text, failed = client.call("read_query", {"query": "SELECT 1"})  # wrong argument name
        assert failed and "validation error" in text and "sql" in text and "Field required" in text
        text, failed = client.call("read_query", {"sql": "SELECT nme FROM products"})
        assert failed and "no such column: nme" in text  # sqlite3's own message
        rows, failed = client.call("read_query", {"sql": "SELECT COUNT(*) AS n FROM products"})
        assert not failed and rows[0]["n"] >= 8
    finally:
        server.close_stdin()
        assert server.wait() == 0
        _Zygote.shutdown()
    assert client.lines[0].startswith('--> {"jsonrpc":"2.0","id":1,"method":"initialize"')
    assert all(line.startswith(("--> ", "<-- ")) for line in client.lines)


# --- web -----------------------------------------------------------------------------------
def test_web_click_on_a_link_yields_the_linked_pages_tree() -> None:
    with ShopServer(Shop.seeded(random.Random(5))) as server:
        browser = TextBrowser()
        browser.load(f"{server.origin}/")
        browser.tree()
        assert browser.click(browser.find("link", "Products"))
        clicked = browser.tree()
        direct = TextBrowser()
        direct.load(f"{server.origin}/products")
        assert clicked == direct.tree() and "heading 'All products'" in clicked
        assert browser.url == f"{server.origin}/products"
        # a form changes server state: add the first product to the cart
        browser.click(browser.find("link", "Next") or browser.find("link", "Products"))
        browser.tree()
        before = browser.find("link", contains="Cart (")
        cart_before = browser.elements[before].name
        first = next(
            e
            for e in browser.elements.values()
            if e.role == "link"
            and e.node is not None
            and e.node.attrs["href"].startswith("/product/")
        )
        browser.click(first.node_id)
        browser.tree()
        browser.click(browser.find("button", "Add to cart"))
        browser.tree()
        assert browser.url.endswith("/cart") or browser.find("alert") is not None
        if browser.url.endswith("/cart"):
            assert browser.elements[browser.find("link", contains="Cart (")].name != cart_before


# --- search --------------------------------------------------------------------------------
def test_search_returns_documents_containing_the_term() -> None:
    engine = default_engine()
    for term in ("quote", "temporary", "median"):
        hits = engine.search(term)
        assert hits
        assert all(term in doc.text.lower() for doc, _ in hits), term
    titles = [doc.title for doc, _ in engine.search("serialize obj to a JSON formatted str")]
    assert "json.dumps" in titles[:3]


# --- GUI models ----------------------------------------------------------------------------
def test_gui_models_flip_a_toggle() -> None:
    phone = Phone(
        switches={
            "Wi-Fi": False,
            "Bluetooth": True,
            "Airplane mode": False,
            "Dark theme": False,
            "Do Not Disturb": False,
        },
        contacts={},
        notes={},
        files={},
    )
    phone.ui_elements()
    phone.act({"action_type": "open_app", "app_name": "Settings"})
    screen = phone.ui_elements()
    switch = next(i for i, e in enumerate(screen) if e["class_name"] == "android.widget.Switch")
    assert screen[switch]["is_checked"] is False
    phone.act({"action_type": "click", "index": switch})
    assert phone.ui_elements()[switch]["is_checked"] is True
    desktop = Desktop(
        files={"Documents": {}, "Downloads": {}, "Pictures": {}},
        settings={"Wi-Fi": True, "Bluetooth": False, "Dark style": False},
    )
    for tag, name in (
        ("push-button", "Settings"),
        ("list-item", "Appearance"),
        ("toggle-button", "Dark style"),
    ):
        x, y = desktop.center(tag, name)
        desktop.run(f"pyautogui.click({x}, {y})")
    assert (
        '<toggle-button name="Dark style" st:enabled="true" st:checkable="true" st:checked="true"'
        in desktop.tree()
    )


# --- every domain: readers and determinism -------------------------------------------------
@pytest.mark.parametrize("domain", COLLECTED_DOMAINS)
def test_collected_files_parse_with_their_reader(collected: Path, domain: str) -> None:
    files = _files(collected, domain)
    assert len(files) == N_EACH
    reader = get_reader(FORMATS[domain])
    for path in files:
        assert detect(path).name == reader.name, path
        items = list(reader.read(path))
        quarantined = [item for item in items if isinstance(item, Quarantine)]
        assert not quarantined, quarantined
        assert len(items) == 1 and items[0].turns, path


def _checksums(out: Path, domain: str) -> dict[str, str]:
    folder = out / domain / f"{domain}-collected"
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("domain", COLLECTED_DOMAINS)
def test_same_seed_gives_identical_files(collected: Path, tmp_path: Path, domain: str) -> None:
    collect_domain(domain, tmp_path, N_EACH, SEED)
    assert _checksums(tmp_path, domain) == _checksums(collected, domain)
    assert not [p for p in (tmp_path / domain).iterdir() if p.name.startswith(".")]  # no leftovers


def test_search_corpus_does_not_depend_on_the_process_or_checkout(tmp_path: Path) -> None:
    """The corpus (and so every BM25 score of the default data) is the same text whichever
    interpreter path runs it and wherever objects land in memory: a default value's address
    (`<weakref at 0x..; to ..>`) and sys.executable (`platform.architecture`) are written out of
    the signatures."""
    script = ("import hashlib; from sources.factory.search_engine import build_corpus; "
              "print(hashlib.sha256(''.join(d.url + d.text for d in build_corpus())"
              ".encode()).hexdigest())")
    repo = str(Path(__file__).resolve().parent.parent)
    # the same interpreter under another path (a link outside the virtualenv, which then
    # finds the packages through PYTHONPATH)
    other = tmp_path / "elsewhere" / "python"
    other.parent.mkdir()
    other.symlink_to(Path(sys.executable).resolve())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, *site.getsitepackages()])}
    digests = {subprocess.run([python, "-c", script], capture_output=True, text=True, env=env,
                              check=True).stdout for python in (sys.executable, str(other))}
    assert len(digests) == 1
    text = "".join(doc.text for doc in default_engine().docs)
    assert " at 0x" not in text and sys.executable not in text
