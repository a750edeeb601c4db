"""pyproject installs exactly the eight top-level packages, and the console script is the CLI's."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools.discovery import PEP420PackageFinder

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"sources", "quality", "grading", "bench", "training", "release", "assets",
            "worldtrace"}


def test_the_package_list_is_exact() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    found = PEP420PackageFinder.find(str(REPO_ROOT), include=include)
    assert {name.split(".")[0] for name in found} == PACKAGES & {
        path.name for path in REPO_ROOT.iterdir() if path.is_dir()}
    assert "sources.readers" in found and "worldtrace.commands" in found
    assert not [name for name in found if name.startswith(("benchmarks", "tests"))]
    assert project["project"]["scripts"] == {"worldtrace": "worldtrace.cli:main"}
