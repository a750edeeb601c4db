"""The real Dagster webserver loads the code location and shows the assets with descriptions."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ASSET_QUERY = "{ assetNodes { assetKey { path } description groupName isPartitioned } }"
STARTUP_SECONDS = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_webserver_lists_assets_with_descriptions(tmp_path: Path) -> None:
    port = free_port()
    webserver = Path(sys.executable).with_name("dagster-webserver")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "WORLDTRACE_DATA": str(tmp_path / "data")}
    (tmp_path / "dagster.yaml").write_text("")
    process = subprocess.Popen(
        [str(webserver), "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        nodes = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                nodes = graphql(port, ASSET_QUERY)["data"]["assetNodes"]
                if nodes:
                    break
            except (OSError, KeyError, TypeError):
                time.sleep(1)
        exited = process.poll() is not None
        assert nodes, f"no assets served: {process.stderr.read().decode() if exited else 'timeout'}"
        by_name = {"/".join(node["assetKey"]["path"]): node for node in nodes}
        for name in ("generated_traces", "raw_trajectories", "raw_turns", "ingest_quarantine"):
            assert by_name[name]["description"], name
            assert by_name[name]["isPartitioned"] is True
            assert by_name[name]["groupName"] == "sources"
    finally:
        process.terminate()
        process.wait(timeout=30)
