"""Versioned dataset releases: Parquet shards, a DatasetDict, a dataset card, a manifest.

    build_release(data_dir, out_root, ReleaseConfig(name, version)) -> ReleaseStats
    verify_release(release_dir) -> list[str]  (the files that differ; empty when intact)

A release is built from whatever published tables exist when it runs, re-scrubbed on the way
out (a no-op on text the scrub stage already cleaned), refused while a final pass still finds a
secret, written to a temporary folder and moved into place; an existing release is never
overwritten. Two builds from the same inputs are byte-identical, manifest included.
"""

import os
from pathlib import Path

RELEASES_ENV = "WORLDTRACE_RELEASES"


def default_releases_dir(data_dir: Path | str) -> Path:
    """Where releases go unless told: $WORLDTRACE_RELEASES, else `releases/` beside the data
    directory (the asset, `worldtrace release` and `worldtrace run` all use this)."""
    return Path(os.environ.get(RELEASES_ENV) or Path(data_dir).resolve().parent / "releases")


class ReleaseError(Exception):
    """A release that must not be written: it exists, or a secret is still in it."""
