"""manifest.json: the SHA-256 of every file of a release, what it was built from, and verify.

No timestamp and no absolute path goes in, so two builds from the same inputs write the same
bytes. manifest.sha256 holds the manifest's own hash, so a changed manifest is named too.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from sources.code_version import REPO_ROOT, code_version

MANIFEST, MANIFEST_HASH = "manifest.json", "manifest.sha256"
CHUNK = 1 << 20
PACKAGES = ("worldtrace", "pyarrow", "duckdb", "polars", "datasets", "detect-secrets",
            "dagster", "torch", "transformers", "trl", "matplotlib")
# The code a release is built by: every library that builds the data, and the release package.
RELEASE_CODE = tuple(REPO_ROOT / library
                     for library in ("sources", "quality", "training", "bench", "release"))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_hashes(root: Path) -> dict[str, dict[str, Any]]:
    """{relative path: {sha256, bytes}} of every file under root but the manifest pair."""
    return {path.relative_to(root).as_posix(): {"sha256": sha256_file(path),
                                                "bytes": path.stat().st_size}
            for path in sorted(root.rglob("*"))
            if path.is_file() and path.name not in (MANIFEST, MANIFEST_HASH)}


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def release_code_version() -> str:
    """The version of the code a release is built by: every library that builds the data and
    the release package itself (sources.code_version's rule). dataset_release's Dagster code
    version is this same string, so the UI and the manifest show one version."""
    return code_version(*RELEASE_CODE)


def write_manifest(root: Path, content: dict[str, Any]) -> dict[str, Any]:
    """Add the file hashes to `content`, write manifest.json and manifest.sha256."""
    manifest = {**content, "files": file_hashes(root)}
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (root / MANIFEST).write_text(text, encoding="utf-8")
    (root / MANIFEST_HASH).write_text(
        f"{hashlib.sha256(text.encode()).hexdigest()}  {MANIFEST}\n", encoding="utf-8")
    return manifest


def verify_release(root: Path) -> list[str]:
    """Every difference between the release folder and its manifest, one line each, naming
    the file: changed, missing or unlisted (and a changed manifest). Empty when intact."""
    root = Path(root)
    problems = []
    manifest_path, hash_path = root / MANIFEST, root / MANIFEST_HASH
    if not manifest_path.is_file():
        return [f"{MANIFEST}: missing"]
    recorded = hash_path.read_text(encoding="utf-8").split()[0] if hash_path.is_file() else None
    if recorded != sha256_file(manifest_path):
        problems.append(f"{MANIFEST}: changed (its sha256 differs from {MANIFEST_HASH})")
    listed = json.loads(manifest_path.read_text(encoding="utf-8"))["files"]
    actual = file_hashes(root)
    for name, entry in listed.items():
        if name not in actual:
            problems.append(f"{name}: missing")
        elif actual[name]["sha256"] != entry["sha256"]:
            problems.append(f"{name}: changed (sha256 {actual[name]['sha256'][:12]}, "
                            f"manifest {entry['sha256'][:12]})")
    problems += [f"{name}: not in the manifest" for name in actual if name not in listed]
    return problems
