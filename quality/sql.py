"""The SQL files of quality/ and a helper to run one into an Arrow table."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb
import pyarrow as pa

_HERE = Path(__file__).resolve().parent


@cache
def load_sql(name: str) -> str:
    """The text of quality/<name>."""
    return (_HERE / name).read_text(encoding="utf-8")


def query_arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None
                ) -> pa.Table:
    """Run a query and read its result fully into an Arrow table."""
    return con.sql(sql, params=params).to_arrow_table()
