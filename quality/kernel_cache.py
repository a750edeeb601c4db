"""numba's on-disk cache for the line-shares kernel, keyed on all of the kernel's source files.

numba keys a cached function on its own file (that file's sha256) and its own bytecode only,
yet compiles the loops it calls from other files, and the constants it imports, into its
machine code: after an edit to quality/line_sets.py or utf8_lines.py the kernel in
line_shares_kernel.py would be served as compiled from the old source. `kernel_jit` is
`numba.njit(cache=True, nogil=True)` with the sha256 of every file in KERNEL_SOURCES added to
each function's cache key, so an edit to any of them compiles the kernel afresh
(tests/test_kernel_cache.py).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core.caching import FunctionCache

# (line_shares.py: the constants the loops read, MIN_VALUE_CHARS and MIN_ECHO_LINE)
KERNEL_SOURCES = ("line_shares.py", "utf8_lines.py", "line_sets.py", "line_shares_kernel.py")


@functools.cache
def sources_digest() -> str:
    """sha256 over the kernel's source files as they are on disk now."""
    digest = hashlib.sha256()
    for name in KERNEL_SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()


class _SourcesCache(FunctionCache):
    """numba's per-function cache, with sources_digest() in its index key."""

    def _index_key(self, sig: Any, codegen: Any) -> tuple:
        return (*super()._index_key(sig, codegen), sources_digest())


def kernel_jit(func: Callable) -> Any:
    """numba.njit(cache=True, nogil=True)(func), cached under sources_digest()."""
    dispatcher = numba.njit(nogil=True)(func)
    # (what cache=True sets, Dispatcher.enable_caching, with the wider key)
    dispatcher._cache = _SourcesCache(func)
    return dispatcher
