"""The one plug-in registry, and a third-party reader installed as a real package.

The package is written here, installed with `pip install --no-deps --target` (no index is
reached: the build uses the setuptools already installed), and put on PYTHONPATH; the
`worldtrace` command line then lists its reader and ingests a file with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.registry import PluginError, Registry, UnknownName, load_target

REPO_ROOT = Path(__file__).resolve().parent.parent

READER_MODULE = '''
"""A pipe log: a header line, then "$ command" lines each followed by its output."""

from sources.readers.base import FormatError, Reader
from sources.schema import Trajectory, Turn


class PipeLogReader(Reader):
    name = "pipe_log"
    domain = "terminal"
    description = "pipe log: action = a '$ ' command line, observation = the lines after it"

    def sniff(self, path, head):
        return head.startswith("PIPE-LOG v1\\n")

    def read(self, path):
        lines = path.read_text(encoding="utf-8").splitlines()
        task = lines[1].removeprefix("task: ")
        turns, output = [], None
        for number, line in enumerate(lines[2:], start=3):
            if line.startswith("$ "):
                turns.append([line[2:], []])
            elif not turns:
                raise FormatError(path, f"line {number}", "output before any command")
            else:
                turns[-1][1].append(line)
        yield Trajectory(task, [Turn(a, "\\n".join(o), "shell", "stdout") for a, o in turns], "$")
'''

PYPROJECT = '''
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "worldtrace-pipe-log"
version = "0.1.0"

[project.entry-points."worldtrace.readers"]
pipe_log = "pipe_log_reader:PipeLogReader"

[tool.setuptools]
py-modules = ["pipe_log_reader"]
'''


def test_registry_loads_targets_lazily_and_names_what_is_unknown() -> None:
    registry: Registry[object] = Registry("widget", {"path": "pathlib:Path", "json": "json"})
    assert registry.names() == ["path", "json"]
    assert registry.get("path") is Path
    assert registry.get("json").dumps([1]) == "[1]"
    with pytest.raises(UnknownName, match="unknown widget 'nope'; expected one of path, json"):
        registry.get("nope")
    assert load_target("os.path:join") is os.path.join


def test_a_broken_target_is_an_error_never_skipped() -> None:
    registry: Registry[object] = Registry("widget", {"gone": "no_such_module_here:Thing"})
    with pytest.raises(PluginError, match="widget 'gone': cannot load"):
        registry.all()


def test_detection_order_is_the_registry_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """all_readers keeps the order it built, but for the registry in use (a test may swap it),
    and hands out a copy (a caller changing it changes nothing)."""
    import sources.readers as readers

    order = list(readers.all_readers())
    targets = readers.READERS.targets()
    swapped = Registry("reader", {"table_rows": targets["table_rows"], "atif": targets["atif"]},
                       build=lambda cls: cls())
    monkeypatch.setattr(readers, "READERS", swapped)
    assert list(readers.all_readers()) == ["atif", "table_rows"]  # the generic reader last
    monkeypatch.undo()
    copy = readers.all_readers()
    copy.clear()
    assert list(readers.all_readers()) == order


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed third-party reader package."""
    source = tmp_path_factory.mktemp("pipe-log-src")
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "pipe_log_reader.py").write_text(textwrap.dedent(READER_MODULE))
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(target), str(source)],
        check=True, capture_output=True, text=True)
    assert (target / "pipe_log_reader.py").exists()
    return target


def worldtrace(plugin_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(REPO_ROOT)])}
    return subprocess.run([sys.executable, "-m", "worldtrace", *args], env=env, check=True,
                          capture_output=True, text=True, cwd=REPO_ROOT)


def test_an_installed_reader_is_listed_and_ingests(plugin_path: Path, tmp_path: Path) -> None:
    listed = worldtrace(plugin_path, "formats").stdout.splitlines()
    names = [line.split()[0] for line in listed]
    assert "pipe_log" in names
    # tried after the specific built-ins, before the generic readers
    assert names.index("pipe_log") < names.index("chat_jsonl") < names.index("table_rows")
    log = tmp_path / "session.log"
    log.write_text("PIPE-LOG v1\ntask: list and count\n$ ls\na.txt\nb.txt\n$ ls | wc -l\n2\n")
    out = tmp_path / "data"
    result = worldtrace(plugin_path, "ingest", str(log), "--out", str(out), "--quiet")
    assert "1 trajectories, 2 turns, 0 quarantined" in result.stdout
    turns = pq.read_table(
        out / "raw_turns" / "domain=terminal" / "shard=0" / "part-0.parquet").to_pylist()
    assert [(t["action"], t["observation"], t["source_format"]) for t in turns] == [
        ("ls", "a.txt\nb.txt", "pipe_log"), ("ls | wc -l", "2", "pipe_log")]
