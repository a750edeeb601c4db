"""An OpenHands file store session (../shared/realdev2/swe/openhands_filestore): fourteen event
files are one trajectory."""

from __future__ import annotations

import shutil
from pathlib import Path

from reader_checks import read_checked

from sources.catalog import make_spec
from sources.ingest import IngestStats, ingest_source
from sources.readers import detect
from sources.readers.openhands_filestore import OpenHandsFileStoreReader

STORE = "swe/openhands_filestore"
SESSION = f"{STORE}/63b4315947a049e2b7a51249b3d4fcc3"
CODE = ('import random\nresult = "Heads" if random.random() < 0.5 else "Tails"\n'
        'print(f"The coin flip result is: {result}")')


def test_session_folder_is_one_trajectory(realdev2_dir: Path) -> None:
    folder = realdev2_dir / SESSION
    assert detect(folder).name == "openhands_filestore"
    (trajectory,), quarantined = read_checked(OpenHandsFileStoreReader(), folder)
    assert quarantined == [] and trajectory.position == "folder"
    assert trajectory.task == "Flip a coin!"
    assert trajectory.system_prompt.startswith("You are OpenHands agent, a helpful AI assistant")
    assert trajectory.metadata["event_files"] == 14
    assert trajectory.metadata["final_message"] == "The coin flip result is: Heads"
    first, second = trajectory.turns
    assert (first.action, first.action_kind, first.tool_name) == (CODE, "code",
                                                                  "execute_ipython_cell")
    assert first.observation.startswith("[Code executed successfully with no output]\n")
    assert second.action == CODE
    assert second.observation.startswith("The coin flip result is: Heads\n")


def test_ingest_reads_the_store_as_one_input(realdev2_dir: Path) -> None:
    stats = IngestStats()
    rows = list(ingest_source(make_spec("store", realdev2_dir / STORE), stats))
    counts = stats.counts("store")
    assert (counts.inputs, counts.trajectories, counts.turns, counts.quarantined) == (1, 1, 2, 0)
    assert dict(counts.formats) == {"openhands_filestore": 1}
    assert rows[0].trajectory["source_path"] == "63b4315947a049e2b7a51249b3d4fcc3"


def test_a_broken_event_file_is_quarantined_and_the_rest_read(
    realdev2_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "session"
    shutil.copytree(realdev2_dir / SESSION, folder)
    (folder / "events" / "11.json").write_text('{"id": 11, "cause": 10, ')
    (folder / "events" / "notes.txt").write_text("not an event")
    (folder / "metadata.json").write_text("{}")
    (trajectory,), (broken,) = read_checked(OpenHandsFileStoreReader(), folder)
    assert broken.position.startswith("events[11]") and "events/11.json: invalid JSON" in (
        broken.reason)
    assert len(trajectory.turns) == 1  # the second call lost its answer with the broken file
    assert trajectory.metadata["event_files"] == 14
    assert trajectory.metadata["other_session_files"] == ["metadata.json"]
