"""Dataset releases over the real fixtures: loadable by `datasets`, byte-identical across builds,
verified file by file, never overwritten, refused while a secret is left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ui_markdown import ui_problems

from quality.features import compute_turn_features
from quality.labels import label_turns, load_policy
from quality.scrub import scrub_partition
from quality.split import split_trajectories
from quality.stage import dedup_across_partitions
from quality.tables import TRAJECTORY_SPLIT
from release import ReleaseError
from release.build import ReleaseConfig, build_release
from release.manifest import verify_release
from sources.catalog import load_catalog
from sources.ingest import write_tables
from sources.schema import DOMAINS
from sources.storage import partition_path
from sources.tables import RAW_TURNS
from worldtrace.cli import main as worldtrace

REPO_ROOT = Path(__file__).resolve().parent.parent
DOMAINS_USED = ("mcp", "swe", "web")  # e-mail addresses to scrub, commit ids to leave, pages


@pytest.fixture(scope="module")
def data_dir(traces_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures through ingest, features, labels, scrubbing, dedup and the split."""
    data = tmp_path_factory.mktemp("data")
    specs = [s for s in load_catalog(REPO_ROOT / "sources.example.toml", data)
             if s.domain in DOMAINS_USED]
    write_tables(specs, data, domains=DOMAINS_USED)
    policy = load_policy()
    for domain in DOMAINS_USED:
        path = lambda table, d=domain: partition_path(data, table, d, "0")  # noqa: E731
        compute_turn_features(path("raw_turns"), path("turn_features"))
        label_turns(path("turn_features"), path("turn_labels"), policy)
        scrub_partition(path("raw_trajectories"), path("raw_turns"),
                        path("scrubbed_trajectories"), path("scrubbed_turns"),
                        path("scrub_findings"))
    dedup_across_partitions(data, data, DOMAINS)
    split_trajectories(data, DOMAINS)
    return data


@pytest.fixture(scope="module")
def release(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("releases")
    stats = build_release(data_dir, out, ReleaseConfig(version="0.1.0"))
    assert stats.path == out / "worldtrace-0.1.0"
    return stats.path


def test_release_holds_every_published_table_and_datasets_loads_it(release: Path,
                                                                   tmp_path: Path) -> None:
    shards = {p.relative_to(release).as_posix() for p in (release / "data").rglob("*.parquet")}
    for config in ("trajectories", "turns", "dedup", "split", "scrub_findings"):
        for domain in DOMAINS_USED:
            assert f"data/{config}/{domain}-00000-of-00001.parquet" in shards
    # its own cache: datasets keys the cache by the folder's name and file names, so a shared
    # cache hands back the columns of an earlier release with the same version
    turns = datasets.load_dataset(str(release), "turns", cache_dir=str(tmp_path / "hf-cache"))
    assert set(turns) == set(DOMAINS_USED)
    assert {"category", "loss_weight", "rule", "ambiguous", "observation"} <= set(
        turns["mcp"].column_names)
    on_disk = datasets.load_from_disk(str(release / "hf" / "turns"))
    assert on_disk["swe"].num_rows == turns["swe"].num_rows > 0


def test_card_has_front_matter_and_the_statistics(release: Path) -> None:
    card = (release / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: other\n")
    assert "- config_name: turns\n  default: true" in card
    for heading in ("## Per-domain statistics", "## Category distribution",
                    "## Deduplication", "## Train / bench split and decontamination",
                    "## Scrubbing", "## Sources and licenses", "## How to rebuild"):
        assert heading in card
    assert "| mcp | email |" in card  # the Toolathlon addresses, counted per kind
    assert (release / "plots" / "categories.png").read_bytes().startswith(b"\x89PNG")


def test_no_email_of_the_fixtures_survives(data_dir: Path, release: Path) -> None:
    raw = pq.read_table(RAW_TURNS.path(data_dir, "mcp", "0"))["observation"]
    published = pq.read_table(release / "data/turns/mcp-00000-of-00001.parquet")["observation"]
    assert any("@mcp.com" in text for text in raw.to_pylist())
    assert not any("@mcp.com" in text for text in published.to_pylist())


def test_two_builds_are_byte_identical(data_dir: Path, release: Path, tmp_path: Path) -> None:
    again = build_release(data_dir, tmp_path, ReleaseConfig(version="0.1.0")).path
    first = sorted(p.relative_to(release) for p in release.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    different = [p for p in first if (release / p).read_bytes() != (again / p).read_bytes()]
    assert different == []


def test_verify_names_a_changed_file(release: Path, tmp_path: Path) -> None:
    copy = tmp_path / release.name
    shutil.copytree(release, copy)
    assert verify_release(copy) == []
    shard = copy / "data/turns/swe-00000-of-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    (copy / "extra.txt").write_text("not released")
    problems = verify_release(copy)
    assert any(p.startswith("data/turns/swe-00000-of-00001.parquet: changed") for p in problems)
    assert "extra.txt: not in the manifest" in problems
    assert worldtrace(["release", "verify", str(copy)]) == 1
    assert worldtrace(["release", "verify", str(release)]) == 0


def test_a_release_is_never_overwritten(data_dir: Path, release: Path, tmp_path: Path) -> None:
    """Asking again with the same tables keeps it (library and CLI alike); with changed
    tables it is refused and stays as it was."""
    before = (release / "manifest.json").read_bytes()
    again = build_release(data_dir, release.parent, ReleaseConfig(version="0.1.0"))
    assert again.kept and again.path == release
    assert worldtrace(["release", "--version", "0.1.0", "--data", str(data_dir),
                       "--out", str(release.parent)]) == 0
    changed = tmp_path / "changed"
    shutil.copytree(data_dir, changed)
    shutil.rmtree(changed / "trajectory_split")  # the split config is no longer published
    with pytest.raises(ReleaseError, match="differs .*never overwritten"):
        build_release(changed, release.parent, ReleaseConfig(version="0.1.0"))
    assert worldtrace(["release", "--version", "0.1.0", "--data", str(changed),
                       "--out", str(release.parent)]) == 2
    assert (release / "manifest.json").read_bytes() == before


def test_a_secret_left_in_a_published_table_is_scrubbed_on_the_way_out(
        data_dir: Path, tmp_path: Path) -> None:
    """A split table built from unscrubbed text: the release pass replaces and counts it."""
    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy)
    path = TRAJECTORY_SPLIT.path(copy, "swe")
    split = pq.read_table(path)
    rows = split.to_pylist()
    rows[0]["group_key"] = "deploy key for ops@corp-mail.com"
    pq.write_table(pa.Table.from_pylist(rows, schema=split.schema), path)
    stats = build_release(copy, tmp_path / "out", ReleaseConfig(version="0.2.0"))
    assert stats.rescrubbed == {"email": 1}
    published = pq.read_table(stats.path / "data/split/swe-00000-of-00001.parquet")
    assert "ops@corp-mail.com" not in str(published.to_pylist())
    assert verify_release(stats.path) == []


def test_bad_version_is_refused(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="letters, digits"):
        build_release(data_dir, tmp_path, ReleaseConfig(version="../0.1"))


def test_dataset_release_asset_builds_then_keeps_an_identical_release(data_dir: Path,
                                                                      tmp_path: Path) -> None:
    import dagster as dg

    from assets.release import dataset_release
    from assets.resources import WorldtraceStorage

    storage = WorldtraceStorage(data_dir=str(data_dir))
    config = {"ops": {"dataset_release": {"config": {"version": "0.3.0",
                                                     "releases_dir": str(tmp_path)}}}}
    for _ in range(2):  # the second run rebuilds, finds it byte-identical and keeps it
        result = dg.materialize([dataset_release], resources={"storage": storage},
                                run_config=config)
        assert result.success
        assert [c.passed for c in result.get_asset_check_evaluations()] == [True]
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert metadata["files"].value > 10 and "## Per-domain statistics" in metadata["card"].value
    assert verify_release(tmp_path / "worldtrace-0.3.0") == []
    # what the UI shows is true: the card's plot loads (inlined, not a link to a file the UI
    # does not serve), and one code version, the asset's, is the manifest's
    card = metadata["card"].value
    assert ui_problems(card) == [] and "![categories](data:image/png;base64," in card
    manifest = json.loads((tmp_path / "worldtrace-0.3.0" / "manifest.json").read_text())
    spec = next(iter(dataset_release.specs))
    assert metadata["code_version"].value == manifest["code_version"] == spec.code_version
