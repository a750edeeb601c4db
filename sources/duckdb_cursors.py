"""Cursors of one in-process DuckDB database a process (and role), instead of a database a call.

`duckdb.connect()` builds a database (its buffer pool, its thread pool) each call, about 30 ms
of CPU; a cursor takes 1-2 ms, and the quality stage opened a connection for every domain's
labels, every shard's turn features and the dedup's.
"""

from __future__ import annotations

import os
import threading
from functools import cache

import duckdb


def duckdb_cursor(role: str = "default") -> duckdb.DuckDBPyConnection:
    """A connection of its own to this process's in-memory DuckDB database for `role` (close
    it when done): its temp views and tables are its own, as a new database's would be.
    `duckdb.connect()` builds a database (its buffer pool, its thread pool) each call, about
    30 ms of CPU; a cursor takes 1-2 ms, and the stage opened one for every domain's labels,
    every shard's and the dedup's. The "default" database keeps the settings
    `duckdb.connect()` gives; a role that sets its own (the turn features' threads and memory
    limit) has a database of its own, so its settings never reach the others."""
    with _DATABASE_LOCK:
        return _database(os.getpid(), role).cursor()


_DATABASE_LOCK = threading.Lock()


@cache
def _database(pid: int, role: str) -> duckdb.DuckDBPyConnection:
    """The process's database for `role` (keyed by pid: a forked child builds its own, since a
    database's threads do not survive a fork)."""
    return duckdb.connect()
