"""Build a release folder: releases/<name>-<version>/ (see release/__init__.py).

    data/<config>/<domain>-00000-of-00001.parquet   every published table, one shard a domain
    hf/turns/                                       the turns as a datasets.DatasetDict
    bench/official/<domain>_test.jsonl              AgentWorldBench, official layout (if built)
    leaderboard/leaderboard.{md,csv,png}            bench scores (if built)
    plots/categories.png, README.md, manifest.json, manifest.sha256
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import datasets
import pyarrow.parquet as pq

from bench.store import official_dir
from bench.tables import LEADERBOARD
from quality.labels import DEFAULT_POLICY, load_policy
from quality.nested import strings_in
from quality.scrub import Placeholders, scrub_text
from quality.secrets import find_sensitive, gated_kinds
from release import ReleaseError
from release.card import card, category_plot, licenses_for, shard_path
from release.manifest import (
    MANIFEST,
    package_versions,
    release_code_version,
    sha256_file,
    verify_release,
    write_manifest,
)
from release.published import (
    PUBLISHED,
    ExportStats,
    domains_present,
    write_shard,
)
from sources.storage import atomic_path
from training.export import save_dataset_dict

VERSION_PATTERN = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")
LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.png")
LEADERBOARD_FOLDER = "leaderboard"  # in a release: the copy of the data's leaderboard files


@dataclass(frozen=True)
class ReleaseConfig:
    """What to call the release, and the license of each source (default: the factory's
    Apache-2.0 for generated and collected data, else unknown)."""

    name: str = "worldtrace"
    version: str = "0.1.0"
    licenses: dict[str, str] = field(default_factory=dict)
    policy_file: str = str(DEFAULT_POLICY)

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass
class ReleaseStats:
    path: Path
    rows: dict[str, dict[str, int]]
    rescrubbed: dict[str, int]
    files: int
    bytes: int
    kept: bool = False  # the release existed and a rebuild gave the same bytes


def build_release(data_dir: Path, out_root: Path, config: ReleaseConfig,
                  log: Callable[[str], None] = lambda line: None) -> ReleaseStats:
    """Write releases/<name>-<version>/ from the tables under data_dir. A release is never
    overwritten: when the folder exists, the release is rebuilt in a scratch folder and the
    existing one is kept if it is byte-identical (the same inputs, settings and code: asking
    twice is not an error), else refused (the asset, `worldtrace release` and the library
    behave alike)."""
    for part in (config.name, config.version):
        if not VERSION_PATTERN.fullmatch(part):
            raise ReleaseError(f"{part!r}: a release name or version is letters, digits and "
                               ". + _ - (no spaces or slashes)")
    target = Path(out_root) / config.folder_name
    if target.exists():
        return _confirm_existing(data_dir, target, config, log)
    return _build(Path(data_dir), target, config, log)


def _confirm_existing(data_dir: Path, target: Path, config: ReleaseConfig,
                      log: Callable[[str], None]) -> ReleaseStats:
    """The existing release, if a rebuild equals it file for file; else ReleaseError."""
    scratch = Path(tempfile.mkdtemp(prefix="worldtrace-release-"))
    try:
        rebuilt = _build(Path(data_dir), scratch / config.folder_name, config, lambda line: None)
        same = ((rebuilt.path / MANIFEST).read_bytes() == (target / MANIFEST).read_bytes()
                and not verify_release(target))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not same:
        raise ReleaseError(f"{target} exists and differs from what the current tables give: a "
                           "release is never overwritten; choose a new version (--version)")
    log(f"{target} exists and a rebuild is byte-identical: kept as it is")
    return replace(rebuilt, path=target, kept=True)


def _build(data_dir: Path, target: Path, config: ReleaseConfig,
           log: Callable[[str], None]) -> ReleaseStats:
    with atomic_path(target) as tmp:
        tmp.mkdir(parents=True)
        stats = ExportStats()
        inputs = _export_tables(data_dir, tmp, stats, log)
        if not stats.rows:
            raise ReleaseError(f"{data_dir}: no published table to release (run the pipeline)")
        _refuse_if_secrets_remain(tmp, stats.rows)
        _export_dataset_dict(tmp, stats.rows.get("turns", {}))
        inputs.update(_copy_bench(data_dir, tmp, stats))
        leaderboard = _read_leaderboard(tmp)
        plot = category_plot_bytes(tmp, stats.rows)
        sources = _sources(tmp, stats.rows)
        licenses = licenses_for(sources, config.licenses)
        (tmp / "README.md").write_text(
            card(config.name, config.version, tmp, stats.rows, licenses,
                 dict(stats.rescrubbed), leaderboard, plot is not None), encoding="utf-8")
        manifest = write_manifest(tmp, _manifest_content(config, stats, inputs, licenses))
        log(f"release {config.folder_name}: {len(manifest['files'])} files")
    files = manifest["files"]
    return ReleaseStats(target, stats.rows, dict(stats.rescrubbed), len(files),
                        sum(entry["bytes"] for entry in files.values()))


def _export_tables(data_dir: Path, root: Path, stats: ExportStats,
                   log: Callable[[str], None]) -> dict[str, str]:
    """Every published table present, one shard a domain; the inputs' fingerprints."""
    inputs: dict[str, str] = {}
    for table in PUBLISHED:
        for domain in domains_present(table, data_dir):
            rows = write_shard(table, data_dir, domain, root / shard_path(table.config, domain),
                               stats)
            for path in table.inputs(data_dir, domain):
                inputs[path.relative_to(data_dir).as_posix()] = sha256_file(path)
            log(f"  {table.config}/{domain}: {rows:,} rows")
    return inputs


def _refuse_if_secrets_remain(root: Path, rows: dict[str, dict[str, int]]) -> None:
    """The final pass: every string of every shard (gated a batch at a time); a finding
    stops the release."""
    found = []
    for config, splits in rows.items():
        for domain in splits:
            for batch in pq.ParquetFile(root / shard_path(config, domain)).iter_batches():
                texts = [t for row in batch.to_pylist() for t in strings_in(row)]
                found += [(config, domain, f.kind) for text, kinds in
                          zip(texts, gated_kinds(texts), strict=True) if kinds
                          for f in find_sensitive(text, kinds)]
    if found:
        first = ", ".join(f"{c}/{d}: {k}" for c, d, k in found[:5])
        raise ReleaseError(f"refused: a final scrubbing pass still finds {len(found)} "
                           f"value(s) ({first})")


def _export_dataset_dict(root: Path, splits: dict[str, int]) -> None:
    """hf/turns: the turns config as a DatasetDict (one split a domain); the fingerprint is
    the shard's hash, so the files are the same on every build."""
    if not splits:
        return
    datasets.disable_progress_bars()
    shards = {domain: root / shard_path("turns", domain) for domain in splits}
    save_dataset_dict({domain: pq.read_table(path) for domain, path in shards.items()},
                      root / "hf" / "turns",
                      {domain: sha256_file(path)[:16] for domain, path in shards.items()})


def _copy_bench(data_dir: Path, root: Path, stats: ExportStats) -> dict[str, str]:
    """The official JSONL layout (each record scrubbed again) and the leaderboard files."""
    inputs = {}
    official = official_dir(data_dir)
    for path in sorted(official.glob("*.jsonl")) if official.is_dir() else []:
        out = root / "bench" / "official" / path.name
        out.parent.mkdir(parents=True, exist_ok=True)
        with path.open(encoding="utf-8") as source, out.open("w", encoding="utf-8") as sink:
            for line in source:
                record = _scrub_json(json.loads(line), Placeholders(), stats)
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
        inputs[path.relative_to(data_dir).as_posix()] = sha256_file(path)
    for name in LEADERBOARD_FILES:
        path = LEADERBOARD.dir(data_dir) / name
        if path.is_file():
            (root / LEADERBOARD_FOLDER).mkdir(exist_ok=True)
            shutil.copyfile(path, root / LEADERBOARD_FOLDER / name)
            inputs[path.relative_to(data_dir).as_posix()] = sha256_file(path)
    return inputs


def _scrub_json(value, placeholders: Placeholders, stats: ExportStats):
    if isinstance(value, str):
        text, replaced = scrub_text(value, placeholders)
        stats.rescrubbed.update(kind for kind, _ in replaced)
        return text
    if isinstance(value, dict):
        return {key: _scrub_json(item, placeholders, stats) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_json(item, placeholders, stats) for item in value]
    return value


def _read_leaderboard(root: Path) -> str | None:
    path = root / LEADERBOARD_FOLDER / "leaderboard.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def category_plot_bytes(root: Path, rows: dict[str, dict[str, int]]) -> bytes | None:
    from release.card import category_shares

    data = category_plot(category_shares(root, rows))
    if data is not None:
        (root / "plots").mkdir(exist_ok=True)
        (root / "plots" / "categories.png").write_bytes(data)
    return data


def _sources(root: Path, rows: dict[str, dict[str, int]]) -> list[str]:
    names: set[str] = set()
    for domain in rows.get("trajectories", {}):
        table = pq.read_table(root / shard_path("trajectories", domain), columns=["source"])
        names.update(table["source"].to_pylist())
    return sorted(names)


def _manifest_content(config: ReleaseConfig, stats: ExportStats, inputs: dict[str, str],
                      licenses: dict[str, str]) -> dict:
    policy_path = Path(config.policy_file)
    policy = load_policy(policy_path)
    return {
        "name": config.name, "version": config.version,
        "config": {**asdict(config), "policy_file": policy_path.name},
        "rows": stats.rows,
        "rescrubbed_in_release": dict(sorted(stats.rescrubbed.items())),
        "policy": {"file": policy_path.name, "version": policy.version, "hash": policy.hash,
                   "sha256": sha256_file(policy_path),
                   "text": policy_path.read_text(encoding="utf-8")},
        "inputs": dict(sorted(inputs.items())),
        "licenses": licenses,
        "packages": package_versions(),
        "code_version": release_code_version(),
    }
