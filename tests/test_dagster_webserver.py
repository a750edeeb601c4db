"""The real Dagster webserver on 127.0.0.1, started as `make ui` starts it (`dg dev`), over a
small materialized dataset, serves the code location: every asset with its description,
owners, kinds and code version, the full lineage from raw_turns to dataset_release and
leaderboard, the checks (described, blocking where they guard what is published, per domain),
the jobs, and the runs `worldtrace run` launched; what it says is what is true (GraphQL)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_markdown import ui_problems

from assets.definitions import defs

REPO_ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 180
ASSET_QUERY = """{ assetNodes {
  assetKey { path } description groupName isPartitioned opVersion kinds
  owners { ... on TeamAssetOwner { team } ... on UserAssetOwner { email } }
  dependencyKeys { path }
  assetChecksOrError { ... on AssetChecks { checks {
    name description blocking partitionDefinition { description } } } }
} }"""
JOBS_QUERY = """{ repositoriesOrError { ... on RepositoryConnection { nodes {
  jobs { name description } } } } }"""


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
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


RUNS_QUERY = """{ runsOrError { ... on Runs { results {
  pipelineName status assetSelection { path } tags { key value } } } } }"""
# A small materialized dataset in the server's instance, made in its own process as
# `worldtrace run` would: raw_traces for shard 0 of two domains of the real fixtures (and the
# swe domain's features and labels), then the cross-domain step trajectory_dedup through
# worldtrace.launch.
SEED_RUNS = """
import dagster as dg
from assets.ingest import raw_traces
from assets.partitions import register_shards, shard_key
from assets.quality import staged_turn_features, turn_features, turn_labels
from assets.resources import storage_from_environment
from worldtrace.launch import run_corpus_step

instance = dg.DagsterInstance.get()
resources = {"storage": storage_from_environment()}
register_shards(instance, ["0"])
assert dg.materialize([raw_traces], partition_key=shard_key("swe", "0"), instance=instance,
                      resources=resources).success
assert dg.materialize([staged_turn_features], partition_key=shard_key("swe", "0"),
                      instance=instance, resources=resources).success
assert dg.materialize([turn_features, turn_labels], partition_key="swe", instance=instance,
                      resources=resources).success
assert dg.materialize([raw_traces], partition_key=shard_key("web", "0"), instance=instance,
                      resources=resources).success
outcome = run_corpus_step("trajectory_dedup", [dg.AssetKey("trajectory_dedup")])
assert outcome.success, outcome.error
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's DAGSTER_HOME; its data directory is home/data."""
    return tmp_path_factory.mktemp("dagster_home")


@pytest.fixture(scope="module")
def server(traces_dir: Path, home: Path) -> Iterator[tuple[int, dict[str, dict]]]:
    """The webserver on a free port over a small materialized dataset, and its asset nodes by
    name."""
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "WORLDTRACE_DATA": str(home / "data"),
           "WORLDTRACE_CATALOG": str(REPO_ROOT / "sources.example.toml"),
           "WORLDTRACE_TRACES": str(traces_dir)}
    seeded = subprocess.run([sys.executable, "-c", SEED_RUNS], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    # what `make ui` runs: `dg dev` (webserver and daemon) in this environment, in its own
    # process group so that the code servers it starts end with it
    log = home / "dg-dev.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("dg")), "dev", "--use-active-venv",
             "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO_ROOT, env={**env, "VIRTUAL_ENV": str(Path(sys.executable).parent.parent)},
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
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
        assert nodes, f"no assets served: {log.read_text()[-3000:]}"
        yield port, {"/".join(node["assetKey"]["path"]): node for node in nodes}
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def test_make_ui_serves_without_a_superseded_warning(server, home: Path) -> None:
    """`dg dev` as Dagster 1.13 recommends: the UI starts and nothing says it is superseded."""
    log = (home / "dg-dev.log").read_text()
    assert "Serving dagster-webserver" in log
    assert "superseded" not in log.lower()
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "\t$(BIN)/dg dev\n" in makefile and "dagster dev\n" not in makefile


def test_every_asset_is_served_with_description_owner_kinds_and_code_version(server) -> None:
    _, nodes = server
    defined = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    assert defined <= set(nodes)
    for name in defined:
        node = nodes[name]
        assert node["description"], name
        assert node["opVersion"], name
        assert node["kinds"], name
        assert node["owners"] == [{"team": "worldtrace-data"}], name
    for name in ("generated_traces", "raw_trajectories", "raw_turns", "ingest_quarantine"):
        assert nodes[name]["isPartitioned"] is True
        assert nodes[name]["groupName"] == "sources"


def _reachable(nodes: dict[str, dict], start: str) -> set[str]:
    children: dict[str, set[str]] = {}
    for name, node in nodes.items():
        for parent in node["dependencyKeys"]:
            children.setdefault("/".join(parent["path"]), set()).add(name)
    seen, todo = set(), [start]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


EDGES = [  # (parent, child): the lineage a data engineer follows in the UI
    ("generated_traces", "raw_turns"), ("raw_turns", "turn_features"),
    ("raw_turns", "staged_turn_features"), ("staged_turn_features", "turn_features"),
    ("turn_features", "turn_labels"), ("raw_turns", "scrubbed_turns"),
    ("raw_turns", "trajectory_dedup"), ("trajectory_dedup", "trajectory_split"),
    ("trajectory_split", "sft_split"), ("turn_labels", "cpt_corpus"),
    ("scrubbed_turns", "dataset_release"), ("turn_labels", "dataset_release"),
    ("trajectory_split", "dataset_release"), ("leaderboard", "dataset_release"),
    ("bench_scores", "leaderboard"),
]


def test_lineage_runs_from_raw_turns_to_the_release_and_the_leaderboard(server) -> None:
    _, nodes = server
    downstream = _reachable(nodes, "raw_turns")
    assert {"scrubbed_turns", "turn_labels", "trajectory_split", "agentworldbench",
            "leaderboard", "dataset_release"} <= downstream
    for parent, child in EDGES:
        parents = {"/".join(key["path"]) for key in nodes[child]["dependencyKeys"]}
        assert parent in parents, f"{parent} -> {child}"


def test_checks_are_present_described_blocking_and_per_domain(server) -> None:
    _, nodes = server
    checks = {(name, check["name"]): check for name, node in nodes.items()
              for check in node["assetChecksOrError"].get("checks", [])}
    for name, check in checks.items():
        assert check["description"], name
    for key in [("raw_turns", "schema"), ("turn_labels", "weights_in_unit_interval"),
                ("scrubbed_turns", "nothing_left_to_scrub"),
                ("dataset_release", "release_verifies")]:
        assert checks[key]["blocking"] is True, key
    for key in [("turn_labels", "every_turn_labelled"), ("turn_features", "features_in_range"),
                ("scrubbed_turns", "nothing_left_to_scrub"), ("raw_turns", "not_empty")]:
        assert checks[key]["partitionDefinition"], key


def test_jobs_for_the_common_runs_are_served(server) -> None:
    port, _ = server
    repositories = graphql(port, JOBS_QUERY)["data"]["repositoriesOrError"]["nodes"]
    jobs = {job["name"] for repository in repositories for job in repository["jobs"]}
    assert {"domain_job", "main_job", "domain_quality_job", "corpus_job", "ingest_job",
            "curate_job", "train_job", "bench_job", "release_job"} <= jobs


def _served_jobs(port: int) -> dict[str, str]:
    repositories = graphql(port, JOBS_QUERY)["data"]["repositoriesOrError"]["nodes"]
    return {job["name"]: job["description"] or "" for repository in repositories
            for job in repository["jobs"] if not job["name"].startswith("__")}


def test_descriptions_read_in_the_ui_as_written(server) -> None:
    """The UI renders descriptions as Markdown: a tag such as <think> would vanish, `{data}`
    outside code would be a literal placeholder."""
    port, nodes = server
    problems = {name: ui_problems(node["description"] or "") for name, node in nodes.items()}
    problems.update({f"job {name}": ui_problems(text)
                     for name, text in _served_jobs(port).items()})
    assert {name: found for name, found in problems.items() if found} == {}
    for name in ("sft_split", "sft_model"):  # the training target, tags and all
        assert "`<think>" in nodes[name]["description"], name


def test_each_stage_job_says_what_it_runs(server) -> None:
    """curate_job (scrub, per shard), curate_per_domain_job (features, labels) and
    curate_all_domains_job (dedup) each name their own assets."""
    port, nodes = server
    jobs = _served_jobs(port)
    curate, per_domain, all_domains = (jobs[name] for name in (
        "curate_job", "curate_per_domain_job", "curate_all_domains_job"))
    assert len({curate, per_domain, all_domains}) == 3
    assert "`trajectory_dedup`" in all_domains
    assert "trajectory_dedup" not in curate + per_domain
    assert "`scrubbed_turns`" in curate and "scrubbed_turns" not in per_domain + all_domains
    for name in ("turn_features", "turn_labels"):
        assert f"`{name}`" in per_domain and f"`{name}`" not in curate + all_domains
    assert "`staged_turn_features`" in curate  # a shard's features: per shard
    assert "one shard of one domain per run" in curate
    assert "for one domain per run" in per_domain
    assert "all domains" in all_domains


def test_runs_launched_by_worldtrace_run_name_their_asset(server) -> None:
    """The Runs page shows a run of Dagster's asset job by the assets it selected (a run of
    corpus_job shows only the job's name): each corpus step names its asset and its step."""
    port, _ = server
    runs = graphql(port, RUNS_QUERY)["data"]["runsOrError"]["results"]
    (dedup,) = [run for run in runs
                if {"key": "worldtrace/step", "value": "trajectory_dedup"} in run["tags"]]
    assert dedup["status"] == "SUCCESS"
    assert dedup["pipelineName"] == "__ASSET_JOB"
    assert dedup["assetSelection"] == [{"path": ["trajectory_dedup"]}]
    assert {"key": "worldtrace/command", "value": "worldtrace run"} in dedup["tags"]


NODE_QUERY = """{ assetNodes(assetKeys: [{path: ["%s"]}]) {
  metadataEntries { label ... on TableSchemaMetadataEntry { schema { columns {
    name description } } } }
  assetMaterializations(limit: 1) { partition metadataEntries { label
    ... on IntMetadataEntry { intValue } ... on MarkdownMetadataEntry { mdStr } } } } }"""


def _node(port: int, name: str) -> dict:
    (node,) = graphql(port, NODE_QUERY % name)["data"]["assetNodes"]
    return node


def test_models_tokenizer_and_leaderboard_are_not_parquet(server) -> None:
    _, nodes = server
    for name in ("untrained_model", "cpt_model", "sft_model", "rl_model"):
        assert set(nodes[name]["kinds"]) == {"pytorch", "huggingface"}, name
    assert nodes["tokenizer"]["kinds"] == ["huggingface"]
    assert set(nodes["leaderboard"]["kinds"]) == {"csv", "markdown"}


def test_leaderboard_has_a_described_column_schema(server) -> None:
    from bench.leaderboard import COLUMNS

    port, _ = server
    (schema,) = [entry["schema"] for entry in _node(port, "leaderboard")["metadataEntries"]
                 if entry["label"] == "dagster/column_schema"]
    assert [column["name"] for column in schema["columns"]] == COLUMNS
    assert all(column["description"] for column in schema["columns"])


def test_a_partitioned_assets_page_shows_the_total_over_partitions(server, home: Path
                                                                    ) -> None:
    """The UI shows the latest partition's dagster/row_count; rows_all_domains is the table."""
    import pyarrow.parquet as pq

    port, _ = server
    (latest,) = _node(port, "raw_turns")["assetMaterializations"]
    figures = {e["label"]: e.get("intValue") for e in latest["metadataEntries"]}
    data = home / "data"
    rows = {domain: pq.read_metadata(data / "raw_turns" / f"domain={domain}" / "shard=0" /
                                     "part-0.parquet").num_rows for domain in ("swe", "web")}
    domain, shard = latest["partition"].split("|")  # the partition key: domain|shard
    assert shard == "0"
    assert figures["dagster/row_count"] == figures["rows_domain"] == rows[domain]
    assert figures["rows_all_domains"] == sum(rows.values()) > rows[domain]


def test_materialized_pages_read_as_written(server) -> None:
    """Every Markdown entry of the latest materializations (previews, the turn_labels examples
    table, plots) renders without raw HTML or an unloadable image; the examples table shows
    the swe observations' leading <returncode> element."""
    from ui_markdown import rendered_table

    port, _ = server
    pages = {name: _node(port, name)["assetMaterializations"][0]["metadataEntries"]
             for name in ("raw_turns", "turn_features", "turn_labels", "trajectory_dedup")}
    markdown = {(name, entry["label"]): entry["mdStr"] for name, entries in pages.items()
                for entry in entries if entry.get("mdStr")}
    assert ("turn_labels", "examples") in markdown and len(markdown) >= 6
    assert {key: ui_problems(text) for key, text in markdown.items() if ui_problems(text)} == {}
    observations = [row[3] for row in rendered_table(markdown[("turn_labels", "examples")])]
    assert any(cell.startswith("<returncode>") for cell in observations), observations
