"""The libraries import one way only, and so read tables one way only.

Layers, bottom to top: sources <- quality <- bench <- training <- release, with grading (the
rules measured against planted truth and hand labels) beside bench on top of quality. A library
imports only the layers below it, never Dagster, nor the layers that wire them (assets,
worldtrace). Every .py file is parsed (AST), so an import inside a function or under
`if TYPE_CHECKING` counts as much as one at the top.

Tables follow the same rule: each is declared in the `tables.py` of the layer that builds it
(sources/tables.py is the registry), so a layer never reads a table built above it, and no
library names a table by a string (which would go around the declarations).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from sources import tables

REPO_ROOT = Path(__file__).resolve().parent.parent
BELOW: dict[str, tuple[str, ...]] = {  # layer -> the layers it may import
    "sources": (),
    "quality": ("sources",),
    "grading": ("sources", "quality"),
    "bench": ("sources", "quality"),
    "training": ("sources", "quality", "bench"),
    "release": ("sources", "quality", "bench", "training"),
}
LAYERS = tuple(BELOW)
FORBIDDEN_EVERYWHERE = ("dagster", "dagster_webserver", "assets", "worldtrace")
TABLE_MODULES = {layer: f"{layer}.tables" for layer in tables.LAYERS}  # where each layer declares


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
    """Imports in `layer` of a layer not below it, of Dagster, or of the layers that wire them."""
    allowed = {layer, *BELOW[layer]}
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            top = module.split(".")[0]
            if (top in BELOW and top not in allowed) or top in FORBIDDEN_EVERYWHERE:
                bad.append(f"{path.relative_to(root)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("layer", LAYERS)
def test_a_library_never_imports_upward_nor_dagster(layer: str) -> None:
    assert violations(layer) == []


def test_the_walk_sees_imports_inside_functions(tmp_path: Path) -> None:
    """The check can fail: a hidden upward import in a function is reported with its line."""
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "leaky.py").write_text(
        "import json\n\n\ndef f():\n    from grading.planted import grade\n    import dagster\n"
        "    return grade, dagster, json\n")
    assert violations("sources", tmp_path) == [
        "sources/leaky.py:5 imports grading.planted", "sources/leaky.py:6 imports dagster"]


def declared_tables() -> list[tables.Table]:
    for module in TABLE_MODULES.values():
        importlib.import_module(module)
    return tables.registered()


def test_each_table_is_declared_in_the_tables_module_of_the_layer_that_builds_it() -> None:
    for table in declared_tables():
        declaring = importlib.import_module(TABLE_MODULES[table.layer])
        assert any(value is table for value in vars(declaring).values()), (
            f"{table.name} (layer {table.layer}) is not declared in {declaring.__name__}")


PATH_CALLS = {"partition_path", "partition_dir", "table_glob", "table"}


def _named_by_string(tree: ast.AST, names: set[str]) -> list[ast.Constant]:
    """String literals spelling a table's name where a path is built from them: an argument of
    partition_path / table_glob / tables.table(...), or a side of `/` (a path join)."""
    found = []
    for node in ast.walk(tree):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called in PATH_CALLS:
                operands = list(node.args)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            operands = [node.left, node.right]
        found += [o for o in operands if isinstance(o, ast.Constant) and o.value in names]
    return found


def table_reads(layer: str, root: Path = REPO_ROOT) -> list[str]:
    """Tables a layer's code names that are built by a layer it may not import, and table
    names written as strings where a path is built (a read around the registry)."""
    by_constant = {}
    for module in TABLE_MODULES.values():
        for name, value in vars(importlib.import_module(module)).items():
            if isinstance(value, tables.Table):
                by_constant[name] = value
    names = {t.name for t in declared_tables()}
    allowed = {layer, *BELOW[layer]}
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        if path.name == "tables.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(root)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute):
                name = node.id if isinstance(node, ast.Name) else node.attr
                table = by_constant.get(name)
                if table is not None and table.layer not in allowed:
                    bad.append(f"{where}:{node.lineno} reads {table.name} "
                               f"(built by {table.layer})")
        bad += [f"{where}:{node.lineno} names table {node.value!r} by a string"
                for node in _named_by_string(tree, names)]
    return sorted(bad)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_library_never_reads_a_table_built_above_it_nor_by_name(layer: str) -> None:
    assert table_reads(layer) == []


def test_the_table_walk_sees_an_upward_read_and_a_name(tmp_path: Path) -> None:
    """The check can fail: quality code naming the sft split, and a table name as a string."""
    (tmp_path / "quality").mkdir()
    (tmp_path / "quality" / "leaky.py").write_text(
        '"""raw_turns in a docstring is fine."""\n\n\ndef f(data, tables):\n'
        "    print('raw_turns')\n"
        "    return tables.SFT_SPLIT.path(data, 'mcp'), data / 'raw_turns' / 'domain=mcp'\n")
    assert table_reads("quality", tmp_path) == [
        "quality/leaky.py:6 names table 'raw_turns' by a string",
        "quality/leaky.py:6 reads sft_split (built by training)"]
