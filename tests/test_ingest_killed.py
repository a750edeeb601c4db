"""A step killed with SIGKILL mid-write (ingest, turn features), then run again, gives the same
bytes as a run that was never interrupted, and leaves nothing behind: no fresh, parts or
temporary file beside a partition, no `_staging-<pid>` folder of an older version, even though
the killed process cleaned nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from sources.catalog import make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.ingest import write_tables
from sources.schema import DOMAINS
from sources.storage import partition_path, remove_stale_temps
from tests.generated_sources import file_hashes, generated_specs

REPO = Path(__file__).resolve().parent.parent

# Ingests the corpus, then stops for good after 30 trajectories (sinks open, rows written in
# part) and says so on stdout, for the test to kill it there.
KILLED_INGEST = """
import sys, time
from pathlib import Path
from sources.catalog import make_spec
from sources.factory.scale import source_name
from sources.ingest import write_tables
from sources.schema import DOMAINS
corpus, data = Path(sys.argv[1]), Path(sys.argv[2])
def stall(stats):
    if stats.total("trajectories") == 30:
        print("stalled", flush=True)
        time.sleep(600)
write_tables([make_spec(source_name(d), corpus / d / source_name(d), d) for d in DOMAINS],
             data, on_trajectory=stall)
"""


def _killed_when_stalled(script: str, *args: Path) -> int:
    """Run `script` in a child process, SIGKILL it once it prints "stalled"; its pid."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", script, *map(str, args)],
                             stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "stalled"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return child.pid


def _dead_pid() -> int:
    """The id of a process that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_killed_ingest_rerun_gives_the_same_bytes_and_leaves_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    generate_corpus(corpus, list(DOMAINS), 8, 3)
    clean = tmp_path / "clean"
    write_tables(generated_specs(corpus), clean)

    data = tmp_path / "data"
    write_tables(generated_specs(corpus), data)  # a previous good run: the killed one replaces it
    pid = _killed_when_stalled(KILLED_INGEST, corpus, data)
    left = [name for name in file_hashes(data) if f".fresh-{socket.gethostname()}-{pid}" in name]
    assert left, "the kill should have left the run's fresh files behind"
    assert file_hashes(data).items() >= file_hashes(clean).items()  # the old tables are untouched
    # an older version's staging folder, of a process that is gone, goes too
    staging = data / f"_staging-{_dead_pid()}" / "raw_turns"
    staging.mkdir(parents=True)
    (staging / "part-0.parquet").write_bytes(b"half a file")

    write_tables(generated_specs(corpus), data)
    assert file_hashes(data) == file_hashes(clean)


def test_a_live_process_and_another_host_keep_their_files(tmp_path: Path) -> None:
    partition = tmp_path / "raw_turns" / "domain=swe" / "shard=0"
    partition.mkdir(parents=True)
    host = socket.gethostname()
    mine = partition / f".part-0.parquet.fresh-{host}-{os.getppid()}"  # the parent is alive
    gone = partition / f".part-0.parquet.tmp-{host}-{_dead_pid()}"
    older = partition / f".part-0.parquet.tmp-{_dead_pid()}"  # an older version's name
    elsewhere = partition / f".part-0.parquet.fresh-{host}x-{_dead_pid()}"  # another host's
    for path in (mine, gone, older, elsewhere):
        path.write_bytes(b"rows")
    assert set(remove_stale_temps(tmp_path, ["raw_turns"])) == {older, gone}
    assert mine.exists() and elsewhere.exists()


# Computes one partition's turn features in batches of 5 turns and stops for good after the
# third batch (its parts file half written), saying so on stdout.
KILLED_FEATURES = """
import sys, time
from pathlib import Path
from quality import features
from quality.features import FeatureConfig, compute_turn_features
batch_inputs = features._batch_inputs
done = []
def stalling(*args, **kwargs):
    done.append(1)
    if len(done) == 3:
        print("stalled", flush=True)
        time.sleep(600)
    return batch_inputs(*args, **kwargs)
features._batch_inputs = stalling
compute_turn_features(Path(sys.argv[1]), Path(sys.argv[2]),
                      FeatureConfig(batch_rows=5, sql_rows=5))
"""


def test_killed_feature_step_rerun_gives_the_same_bytes(tmp_path: Path) -> None:
    from quality.corpus_columns import staged_path
    from quality.features import FeatureConfig, compute_turn_features

    corpus = tmp_path / "corpus"
    generate_corpus(corpus, ["terminal"], 6, 5)
    spec = make_spec(source_name("terminal"), corpus / "terminal" / source_name("terminal"),
                     "terminal")
    write_tables([spec], tmp_path / "data")
    turns = partition_path(tmp_path / "data", "raw_turns", "terminal", "0")
    clean, out = tmp_path / "clean" / "part-0.parquet", tmp_path / "out" / "part-0.parquet"
    compute_turn_features(turns, clean, FeatureConfig(batch_rows=5))
    pid = _killed_when_stalled(KILLED_FEATURES, turns, out)
    # killed while writing the staged rows (the step before the corpus frequencies; the
    # turn SQL runs per batch here, sql_rows=5, so rows are written before the stall): only
    # their parts file, named for this host and the dead process, is left
    assert [p.name for p in out.parent.iterdir()] == [
        f".{staged_path(out).name}.parts-{socket.gethostname()}-{pid}"]
    # (the rerun queries one batch at a time, the clean run many: the same bytes)
    compute_turn_features(turns, out, FeatureConfig(batch_rows=5, sql_rows=5))
    assert [p.name for p in out.parent.iterdir()] == ["part-0.parquet"]
    assert out.read_bytes() == clean.read_bytes()
