"""sources.duckdb_cursors: one database a process and role, cursors with their own temp objects."""

from __future__ import annotations

from sources.duckdb_cursors import duckdb_cursor


def _setting(con, name: str) -> str:
    return con.execute(f"SELECT current_setting('{name}')").fetchone()[0]


def test_cursors_of_a_role_share_one_database_but_not_temp_tables() -> None:
    first, second = duckdb_cursor(), duckdb_cursor()
    try:
        first.execute("CREATE OR REPLACE TABLE shared_by_role AS SELECT 42 AS x")
        assert second.execute("SELECT x FROM shared_by_role").fetchone() == (42,)
        first.execute("CREATE TEMP TABLE only_mine AS SELECT 1 AS y")
        tables = {row[0] for row in second.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
        assert "only_mine" not in tables
    finally:
        first.execute("DROP TABLE IF EXISTS shared_by_role")
        first.close()
        second.close()


def test_a_roles_settings_stay_in_its_own_database() -> None:
    default = duckdb_cursor()
    before = _setting(default, "memory_limit")
    turn_features = duckdb_cursor("turn_features_test")
    try:
        turn_features.execute("SET memory_limit = '123MB'")
        assert _setting(turn_features, "memory_limit") != before
        assert _setting(default, "memory_limit") == before
        assert _setting(duckdb_cursor(), "memory_limit") == before
        turn_features.execute("CREATE OR REPLACE TABLE role_table AS SELECT 1 AS z")
        missing = default.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'role_table'").fetchone()
        assert missing == (0,)
    finally:
        default.close()
        turn_features.close()
