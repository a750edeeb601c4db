"""VisualWebArena render pages of runs that stopped before their first step
(../shared/realdev2/web/visualwebarena): recognised, and quarantined with that reason."""

from __future__ import annotations

from pathlib import Path

from sources.catalog import make_spec
from sources.ingest import IngestStats, ingest_source
from sources.readers import detect

FOLDER = "web/visualwebarena"


def test_a_page_with_only_the_task_config_is_quarantined_with_why(realdev2_dir: Path) -> None:
    folder = realdev2_dir / FOLDER
    assert {detect(page).name for page in folder.iterdir()} == {"webarena_render"}
    stats = IngestStats()
    rows = [item.row for item in ingest_source(make_spec("vwa", folder), stats)]
    assert stats.counts("vwa").trajectories == 0
    assert [(row["source_path"], row["source_format"], row["position"]) for row in rows] == [
        ("render_0_bef41ec_classifieds.html", "webarena_render", "$"),
        ("render_1_5e49927_shopping.html", "webarena_render", "$"),
    ]
    assert {row["reason"] for row in rows} == {
        "webarena_render: no 'New Page' step in the render HTML: the run stopped before its "
        "first step (the page renders only the task config)"}
