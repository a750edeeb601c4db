"""The libraries import one way only: sources <- quality <- bench <- training, never Dagster.

Every .py file of a library is parsed (AST), so an import inside a function or under
`if TYPE_CHECKING` counts as much as one at the top. `worldtrace/` and `assets/` may import all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("sources", "quality", "bench", "training")  # each may import only those before it
FORBIDDEN_EVERYWHERE = ("dagster", "dagster_webserver", "assets", "worldtrace")


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import statement in the tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def violations(layer: str, root: Path = REPO_ROOT) -> list[str]:
    """Imports in `layer` of a higher layer, of Dagster, or of the layers that wire them."""
    higher = LAYERS[LAYERS.index(layer) + 1:]
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            top = module.split(".")[0]
            if top in higher or top in FORBIDDEN_EVERYWHERE:
                bad.append(f"{path.relative_to(root)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_a_library_never_imports_upward_nor_dagster(layer: str) -> None:
    assert violations(layer) == []


def test_the_walk_sees_imports_inside_functions(tmp_path: Path) -> None:
    """The check can fail: a hidden upward import in a function is reported with its line."""
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "leaky.py").write_text(
        "import json\n\n\ndef f():\n    from quality.grade import grade\n    import dagster\n"
        "    return grade, dagster, json\n")
    assert violations("sources", tmp_path) == [
        "sources/leaky.py:5 imports quality.grade", "sources/leaky.py:6 imports dagster"]
