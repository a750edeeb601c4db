"""numba's cache follows an edit to any source file a compiled loop depends on
(quality/kernel_cache.py): a loop of quality/line_sets.py cached, then a loop it calls in
quality/utf8_lines.py edited, and the next process runs the edited code, not the cached."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from quality.kernel_cache import _package_imports, source_files

# _stripped strips the trailing U+3000 (a str.isspace character) after decoding it.
STRIP = """
import numpy as np
from quality.line_sets import _stripped
from quality.utf8_lines import code_point_flags
data = np.frombuffer("ab\\u3000".encode(), np.uint8)
print(*_stripped(data, 0, len(data), code_point_flags()))
"""
# The edit: every character decodes as "A", which is no space.
EDIT = """

@numba.njit
def decode(data: np.ndarray, start: int) -> tuple[int, int]:
    return 65, 1
"""


def _strip(root: Path) -> str:
    """STRIP's output in a new process that imports quality/ from `root` (run there: the
    working directory comes first on sys.path)."""
    env = {**os.environ, "PYTHONPATH": str(root),
           "NUMBA_CACHE_DIR": str(root / "numba-cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", STRIP], env=env, cwd=root,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_an_edit_to_a_called_file_compiles_afresh(tmp_path: Path) -> None:
    package = tmp_path / "quality"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path in source_files("quality.line_sets").values():
        shutil.copy(path, package / path.name)
    assert _strip(tmp_path) == "0 2"
    assert any((tmp_path / "numba-cache").rglob("line_sets._stripped-*.nbc"))  # (cached)
    with open(package / "utf8_lines.py", "a") as source:
        source.write(EDIT)
    assert _strip(tmp_path) == "0 5"  # (numba's own key alone: "0 2", the stale loop)


def test_source_files_follow_the_package_imports() -> None:
    """The line-shares kernel depends on the files it imports and theirs, and on nothing else
    of the package (an edit to features.py recompiles no loop of it)."""
    assert set(source_files("quality.line_shares_kernel")) == {
        "quality.line_shares_kernel", "quality.line_sets", "quality.utf8_lines",
        "quality.line_shares", "quality.kernel_cache"}
    assert set(source_files("quality.shingles")) >= {
        "quality.shingles", "quality.word_split", "quality.text_pool", "quality.volatile"}


NESTED_IMPORTS = """
import os
import quality.a
def f():
    from quality import b
    if os:
        import quality.c
    else:
        from quality.d import x
class K:
    try:
        from quality.e import y
    except ImportError:
        from quality.f import z
    finally:
        import quality.g
def h(v):
    match v:
        case 1:
            import quality.i
    return [quality.j for _ in ()]  # (an expression: no import)
"""


def test_imports_are_found_in_every_nested_block(tmp_path: Path) -> None:
    """Imports inside functions, branches, classes, try / except / finally and match cases
    count (the file walk visits statements only)."""
    path = tmp_path / "m.py"
    path.write_text(NESTED_IMPORTS)
    assert _package_imports(path, "quality") == {
        f"quality.{name}" for name in "abcdefgi"}
