"""Shared test fixtures: where the real public traces live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_traces_dir() -> Path:
    """../shared/traces beside the checkout, or $WORLDTRACE_TRACES."""
    return Path(os.environ.get("WORLDTRACE_TRACES", REPO_ROOT.parent / "shared" / "traces"))


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The real public trajectories (../shared/traces); skips when they are not there."""
    path = shared_traces_dir()
    if not (path / "SOURCES.md").exists():
        pytest.skip(f"real trace fixtures not found at {path} (set WORLDTRACE_TRACES)")
    return path


def shared_realdev_dir() -> Path:
    """../shared/realdev beside the checkout, or $WORLDTRACE_REALDEV."""
    return Path(os.environ.get("WORLDTRACE_REALDEV", REPO_ROOT.parent / "shared" / "realdev"))


@pytest.fixture(scope="session")
def realdev_dir() -> Path:
    """The real development trajectories (../shared/realdev); skips when they are not there."""
    path = shared_realdev_dir()
    if not (path / "README.md").exists():
        pytest.skip(f"real dev corpus not found at {path} (set WORLDTRACE_REALDEV)")
    return path


def shared_official_dir() -> Path:
    """../shared/official-agentworld beside the checkout (the released evaluation code and
    prompts), or $WORLDTRACE_OFFICIAL."""
    return Path(os.environ.get("WORLDTRACE_OFFICIAL",
                               REPO_ROOT.parent / "shared" / "official-agentworld"))


@pytest.fixture(scope="session")
def official_dir() -> Path:
    """The released AgentWorldBench evaluation checkout; skips when it is not there."""
    path = shared_official_dir()
    if not (path / "prompts").is_dir():
        pytest.skip(f"released AgentWorldBench code not found at {path} "
                    "(set WORLDTRACE_OFFICIAL)")
    return path


def shared_realdev2_dir() -> Path:
    """../shared/realdev2 beside the checkout, or $WORLDTRACE_REALDEV2."""
    return Path(os.environ.get("WORLDTRACE_REALDEV2", REPO_ROOT.parent / "shared" / "realdev2"))


@pytest.fixture(scope="session")
def realdev2_dir() -> Path:
    """The second real development corpus (../shared/realdev2); skips when it is not there."""
    path = shared_realdev2_dir()
    if not (path / "README.md").exists():
        pytest.skip(f"second real dev corpus not found at {path} (set WORLDTRACE_REALDEV2)")
    return path


@pytest.fixture(scope="session")
def bench_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated corpus, ingested and labelled (tests/bench_corpus.py), shared by the
    bench tests: 8 trajectories per domain."""
    from bench_corpus import make_corpus

    return make_corpus(tmp_path_factory.mktemp("bench_corpus"))


@pytest.fixture(scope="session")
def curated_pipeline(tmp_path_factory: pytest.TempPathFactory):
    """The data assets materialized one by one on a small seeded corpus, with the tables each
    located (tests/curated_pipeline.py)."""
    from curated_pipeline import materialize

    return materialize(tmp_path_factory.mktemp("curated"))
