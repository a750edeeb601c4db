"""numba's on-disk cache, keyed on every source file a compiled loop can depend on.

numba keys a cached function on its own file (that file's sha256) and its own bytecode only,
yet compiles the loops it calls from other files, and the constants it imports, into its
machine code: after an edit to quality/utf8_lines.py a loop of quality/line_sets.py calling it
would be served as compiled from the old source. `cached_njit` is `numba.njit(cache=True,
nogil=True)` with one more part in each function's cache key: the sha256 of the function's own
module and of every module of this package it imports, followed transitively through their
`import` statements (read with `ast`, so nothing is imported to find them). An edit to any of
those files compiles the loop afresh (tests/test_kernel_cache.py); an edit elsewhere does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core.caching import FunctionCache


@functools.cache  # (each file parsed once a process: the modules' closures overlap)
def _package_imports(path: Path, package: str) -> frozenset[str]:
    """The modules of `package` that the file at `path` imports (`from P.m import ...`,
    `from P import m`, `import P.m`)."""
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_bytes(), str(path)).body):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith(package + "."):
                found.add(node.module)
            elif node.module == package:
                found.update(f"{package}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(package + "."))
    return frozenset(found)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # (fields holding statements)


def _statements(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Every statement under `nodes`, nested blocks included (an import is a statement: the
    expressions, most of a tree, need no visit)."""
    for node in nodes:
        yield node
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from _statements(block)


def _module_file(module: str) -> Path | None:
    """The source file of a module of the package (None for a name that is no file there,
    such as a class imported by `from P import Name`)."""
    package, _, rest = module.partition(".")
    root = Path(sys.modules[package].__file__).parent
    path = root.joinpath(*rest.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def source_files(module: str) -> dict[str, Path]:
    """`module`'s source file and those of every package module it imports, transitively, by
    module name."""
    package = module.partition(".")[0]
    files: dict[str, Path] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        path = _module_file(name)
        if name in files or path is None:
            continue
        files[name] = path
        pending.extend(_package_imports(path, package) - set(files))
    return files


@functools.cache
def sources_digest(module: str) -> str:
    """sha256 over source_files(module) as they are on disk now (in module-name order)."""
    files = source_files(module)
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes() + b"\0")
    return digest.hexdigest()


class _SourcesCache(FunctionCache):
    """numba's per-function cache, with the function's sources_digest() in its index key."""

    def _index_key(self, sig: Any, codegen: Any) -> tuple:
        digest = sources_digest(self._py_func.__module__)
        return (*super()._index_key(sig, codegen), digest)


def cached_njit(func: Callable | None = None, **options: Any) -> Any:
    """numba.njit(nogil=True, **options) cached under sources_digest(); as `@cached_njit` or
    `@cached_njit(inline="always")`."""
    if func is None:
        return functools.partial(cached_njit, **options)
    dispatcher = numba.njit(nogil=True, **options)(func)
    # (what cache=True sets, Dispatcher.enable_caching, with the wider key)
    dispatcher._cache = _SourcesCache(func)
    return dispatcher
