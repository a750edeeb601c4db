"""$WORLDTRACE_EXECUTOR picks the executor of every job (assets/executors.py); `worldtrace run`,
whose runs execute in its own processes, refuses to start under another executor."""

from __future__ import annotations

from pathlib import Path

import pytest

from assets.executors import DASK_CLUSTERS, EXECUTOR_VARIABLE, executor_from_environment
from worldtrace.cli import main


def test_unset_is_dagsters_default_and_an_unknown_name_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTOR_VARIABLE, raising=False)
    assert executor_from_environment() is None
    monkeypatch.setenv(EXECUTOR_VARIABLE, "celery")
    with pytest.raises(ValueError, match="celery.*known executors are \\('dask',\\)"):
        executor_from_environment()


def test_dask_takes_dagster_dasks_config(monkeypatch: pytest.MonkeyPatch) -> None:
    dagster_dask = pytest.importorskip("dagster_dask", reason="the dask extra is not installed")
    monkeypatch.setenv(EXECUTOR_VARIABLE, "dask")
    executor = executor_from_environment()
    assert executor.name == "dask"
    assert executor.config_schema.as_field().config_type.key == (
        dagster_dask.dask_executor.config_schema.as_field().config_type.key)
    assert set(DASK_CLUSTERS) | {"existing"} == set(
        dagster_dask.dask_executor.config_schema.as_field().config_type.fields["cluster"]
        .config_type.fields)


def test_worldtrace_run_refuses_another_executor(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setenv(EXECUTOR_VARIABLE, "dask")
    assert main(["run"]) == 2
    assert "unset WORLDTRACE_EXECUTOR (=dask)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing ran
