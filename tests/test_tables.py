"""The table registry: every asset's table declared once, the files as declared, and every
step reading only what its asset declares."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from assets.definitions import defs
from sources import tables
from sources.schema import DOMAINS

NOT_TABLES = {"generated_traces", "dataset_release"}  # source files, and the release folder


def test_every_asset_is_a_declared_table_and_every_table_has_its_asset() -> None:
    assets = {key.to_user_string() for asset in defs.assets for key in asset.keys}
    declared = {table.name for table in tables.registered()}
    assert assets - NOT_TABLES <= declared
    assert {table.asset_name for table in tables.registered()} <= assets


def test_a_table_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        tables.Table("raw_turns", "sources", "again")


def test_a_column_without_a_description_is_refused() -> None:
    with pytest.raises(ValueError, match="without a description"):
        tables.Table("undocumented_example", "sources", "x", tables.RAW_TURNS.schema, {})


def test_paths_follow_the_declared_layout(tmp_path) -> None:
    turns = tables.table("raw_turns")
    assert turns.path(tmp_path, "swe", "0") == (
        tmp_path / "raw_turns" / "domain=swe" / "shard=0" / "part-0.parquet")
    with pytest.raises(TypeError, match="sharded"):
        turns.path(tmp_path, "swe")
    signatures = tables.table("dedup_signatures")
    assert signatures.path(tmp_path) == tmp_path / "trajectory_dedup" / "signatures.parquet"
    with pytest.raises(TypeError, match="partitioned"):
        turns.path(tmp_path)
    with pytest.raises(KeyError, match="no table named"):
        tables.table("no_such_table")


def test_the_domains_present_are_those_with_a_partition_on_disk(tmp_path) -> None:
    """One rule for "every domain there is" (the split reads raw_trajectories', the bench
    trajectory_split's): a sharded domain counts with any shard's part file, in the order
    asked for; an empty shard folder does not count."""
    turns, split = tables.table("raw_turns"), tables.table("trajectory_split")
    for domain, shard in (("web", "3"), ("mcp", "0")):
        path = turns.path(tmp_path, domain, shard)
        path.parent.mkdir(parents=True)
        path.write_bytes(b"")
    (turns.dir(tmp_path) / "domain=swe" / "shard=0").mkdir(parents=True)
    split.path(tmp_path, "terminal").parent.mkdir(parents=True)
    split.path(tmp_path, "terminal").write_bytes(b"")
    assert turns.domains_present(tmp_path) == ["mcp", "web"]
    assert turns.domains_present(tmp_path, ["web", "swe", "mcp"]) == ["web", "mcp"]
    assert split.domains_present(tmp_path) == ["terminal"]
    assert split.domains_present(tmp_path, ["mcp"]) == []


def test_a_domain_is_removed_whole_by_the_layout_rule(tmp_path) -> None:
    """Every shard of the domain goes, the other domains stay, nothing hidden is left; a table
    without domains refuses."""
    turns = tables.table("raw_turns")
    for domain, shard in (("web", "0"), ("web", "1"), ("mcp", "0")):
        path = turns.path(tmp_path, domain, shard)
        path.parent.mkdir(parents=True)
        path.write_bytes(b"")
    assert turns.remove_domain(tmp_path, "web") and not turns.remove_domain(tmp_path, "web")
    assert turns.domains_present(tmp_path) == ["mcp"]
    assert sorted(p.name for p in turns.dir(tmp_path).iterdir()) == ["domain=mcp"]
    with pytest.raises(TypeError, match="not partitioned"):
        tables.table("dedup_signatures").remove_domain(tmp_path, "web")


def test_written_files_have_the_declared_columns(curated_pipeline) -> None:
    checked, mismatches = [], []
    for table in tables.registered():
        if table.storage != "parquet":
            continue
        files = (table.paths(curated_pipeline.data, DOMAINS) if table.partitioned
                 else [table.path(curated_pipeline.data)])
        for path in [p for p in files if p.exists()][:1]:
            checked.append(table.name)
            mismatches += table.mismatches(pq.read_schema(path))
    assert mismatches == []
    assert len(checked) >= 18  # every Parquet table this pipeline builds


def test_each_step_reads_only_the_tables_its_asset_declares(curated_pipeline) -> None:
    """What a step located (read, or wrote as one of its own keys) is declared as a dep."""
    undeclared = {}
    for key, located in curated_pipeline.located.items():
        allowed = curated_pipeline.deps[key] | curated_pipeline.siblings[key]
        extra = sorted(name for name in located if tables.table(name).asset_name not in allowed)
        if extra:
            undeclared[key] = extra
    assert undeclared == {}
    assert len(curated_pipeline.located) >= 15


def test_the_recording_sees_an_undeclared_read(tmp_path) -> None:
    """The check can fail: locating a table inside a recording names it."""
    with tables.recording() as located:
        tables.table("turn_labels").path(tmp_path, "mcp", "0")
    assert located == {"turn_labels"}
