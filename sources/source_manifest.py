"""Which path each source in the output was read from: one small JSON per shard of a domain.

    {data}/_sources/domain=swe/shard=0.json   {"A": {"path": "/abs/A", "format": "auto"}, ...}

A shard's manifest lists exactly the sources whose rows its partition files hold (an empty
shard: `{}`), and only the run that writes that shard rewrites it. Per-shard files rather than
one file per domain guarded by a lock: two shard steps of one domain run at once (two Dagster
steps, on two machines of a cluster), and a lock file on shared storage (NFS, an object store
mount) is not reliable, while files that no two writers share need none. A domain's manifest is
the union of its shards'. A data directory written before the per-shard manifests has one
`_sources/domain=<d>.json`; it is read as well (for the sources no shard manifest names) and
removed once every shard of the domain on disk has its own manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

from sources.storage import atomic_path, shard_order

MANIFEST_DIR = "_sources"  # leading "_": hive readers (DuckDB, pyarrow) skip it
Manifest = dict[str, dict[str, str]]  # source name -> {"path", "format"}


def manifest_path(data_dir: Path, domain: str, shard: str) -> Path:
    """The manifest of one shard of a domain."""
    return data_dir / MANIFEST_DIR / f"domain={domain}" / f"shard={shard}.json"


def legacy_manifest_path(data_dir: Path, domain: str) -> Path:
    """The one manifest per domain of an older data directory."""
    return data_dir / MANIFEST_DIR / f"domain={domain}.json"


def _read(path: Path) -> Manifest:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def manifest_shards(data_dir: Path, domain: str) -> list[str]:
    """The shards of a domain that have a manifest, in shard order."""
    folder = data_dir / MANIFEST_DIR / f"domain={domain}"
    keys = [p.stem.removeprefix("shard=") for p in folder.glob("shard=*.json")]
    return sorted(keys, key=shard_order)


def load_shard_manifest(data_dir: Path, domain: str, shard: str) -> Manifest:
    """The sources one shard holds (an older domain manifest's entry when it has none yet)."""
    path = manifest_path(data_dir, domain, shard)
    return _read(path) if path.is_file() else _read(legacy_manifest_path(data_dir, domain))


def load_manifest(data_dir: Path, domain: str) -> Manifest:
    """Sources recorded in one domain of the output (every shard): name -> {"path", "format"}.
    Shards are read in order, so two shards that disagree (a re-read from a new path that has
    reached one shard so far) give the later shard's entry."""
    merged = _read(legacy_manifest_path(data_dir, domain))
    for shard in manifest_shards(data_dir, domain):
        merged.update(_read(manifest_path(data_dir, domain, shard)))
    return merged


def recorded_domains(data_dir: Path) -> list[str]:
    """Domains the output already records sources for."""
    folder = data_dir / MANIFEST_DIR
    names = {p.name.removesuffix(".json").removeprefix("domain=")
             for p in folder.glob("domain=*")}
    return sorted(names)


def write_shard_manifest(data_dir: Path, domain: str, shard: str, run: Manifest,
                         present: set[str]) -> None:
    """Record the sources one shard's files now hold: this run's with the run's entry, the
    others as they were recorded."""
    old = load_shard_manifest(data_dir, domain, shard)
    entries = {name: run[name] if name in run else old[name]
               for name in sorted(present) if name in run or name in old}
    with atomic_path(manifest_path(data_dir, domain, shard)) as tmp:
        tmp.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def retire_legacy_manifest(data_dir: Path, domain: str, shards_on_disk: list[str]) -> None:
    """Remove a domain's old single manifest once every shard on disk has its own."""
    legacy = legacy_manifest_path(data_dir, domain)
    if legacy.is_file() and set(shards_on_disk) <= set(manifest_shards(data_dir, domain)):
        legacy.unlink(missing_ok=True)
