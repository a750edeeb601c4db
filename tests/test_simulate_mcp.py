"""`worldtrace simulate-mcp`: a real MCP server answered by a tiny world model, free-running and
anchored on the trace factory's SQLite shop server, its replay of a recorded session, and the
errors a user can make."""

from __future__ import annotations

import csv
import json
import random
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from bench.parsing import parse_prediction
from bench.serve.run import ServeConfig, model_app, serve_in_background
from bench.simulate.anchor import connect
from bench.simulate.server import build_server
from bench.simulate.simulation import ANCHOR, MODEL, Simulation
from bench.simulate.tools import read_tools_file
from bench.simulate.wire import call_line, tool_result
from bench.simulate.world_model import WorldModel, WorldModelConfig
from sources.factory.collect_mcp import collect_one
from sources.factory.mcp_scenarios import seed_state
from tests.conftest import REPO_ROOT
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)
from worldtrace.cli import main

pytestmark = pytest.mark.usefixtures("torch_one_thread")
NEW_TOKENS = 16
TOOLS = {
    "serverInfo": {"name": "inventory", "version": "1.0"},
    "tools": [
        {"name": "count_items", "description": "How many items a shelf holds.",
         "inputSchema": {"type": "object", "properties": {"shelf": {"type": "string"}},
                         "required": ["shelf"]}, "annotations": {"readOnlyHint": True}},
        {"name": "add_item", "description": "Put an item on a shelf.",
         "inputSchema": {"type": "object", "properties": {"shelf": {"type": "string"},
                                                          "item": {"type": "string"}}}},
    ],
}


@pytest.fixture()
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


@pytest.fixture()
def shop(tmp_path: Path) -> Path:
    """A seeded shop database, as the trace factory seeds one for a session."""
    folder = tmp_path / "shop"
    folder.mkdir()
    seed_state("shopdb", folder, random.Random(3))
    return folder


def shop_command(folder: Path) -> str:
    return f"{sys.executable} -m sources.factory.mcp_servers shopdb --data {folder}"


def world_model(folder: Path | str, timeout_s: float = 120.0) -> WorldModel:
    return WorldModel.load(WorldModelConfig(str(folder), max_new_tokens=NEW_TOKENS,
                                            timeout_s=timeout_s))


def test_a_real_stdio_client_lists_the_tools_and_gets_the_models_answer(tiny_model_dir,  # noqa: F811
                                                                        tools_file):
    params = StdioServerParameters(
        command=sys.executable, cwd=str(REPO_ROOT), env={"PYTHONPATH": str(REPO_ROOT)},
        args=["-m", "worldtrace", "simulate-mcp", "--model", str(tiny_model_dir),
              "--tools", str(tools_file), "--max-new-tokens", str(NEW_TOKENS)])

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            initialized = await client.initialize()
            listed = await client.list_tools()
            answer = await client.call_tool("add_item", {"shelf": "B2", "item": "lamp"})
            return initialized, listed, answer

    initialized, listed, answer = anyio.run(session)
    assert initialized.server_info.name == "inventory"
    assert [tool.name for tool in listed.tools] == ["count_items", "add_item"]
    assert listed.tools[0].annotations.read_only_hint is True
    # The same session asked of the same model in this process: the server sent its answer.
    simulation = Simulation(read_tools_file(tools_file), world_model(tiny_model_dir))
    raw = simulation.model.predict_now(simulation.sample(
        call_line(3, "add_item", {"shelf": "B2", "item": "lamp"})))
    expected = tool_result(parse_prediction(raw).judged_text)
    assert answer.content == expected.content and answer.is_error == expected.is_error
    assert answer.content[0].text  # the tiny model says something


def test_anchored_reads_come_from_the_real_shop_and_enter_the_models_context(
        tiny_model_dir, shop):  # noqa: F811
    with sqlite3.connect(shop / "shop.db") as db:
        real = [{"name": n, "stock": s} for n, s in
                db.execute("SELECT name, stock FROM products ORDER BY id LIMIT 3")]
        products = db.execute("SELECT count(*) FROM products").fetchone()[0]
    model = world_model(tiny_model_dir)

    async def session():
        async with connect(shop_command(shop), cwd=str(REPO_ROOT)) as anchor:
            simulation = Simulation(anchor.toolset, model, anchor,
                                    anchor.toolset.read_only())
            async with Client(build_server(simulation)) as client:
                read = await client.call_tool(
                    "read_query", {"sql": "SELECT name, stock FROM products ORDER BY id LIMIT 3"})
                write = await client.call_tool("write_query", {"sql": "DELETE FROM products"})
                again = await client.call_tool("read_query",
                                               {"sql": "SELECT count(*) AS n FROM products"})
            return simulation, read, write, again

    simulation, read, write, again = anyio.run(session)
    assert simulation.read_only == {"list_tables", "describe_table", "read_query"}
    assert read.structured_content == {"result": real} and not read.is_error
    assert [step.answered_by for step in simulation.steps] == [ANCHOR, MODEL, ANCHOR]
    # The real answer is in the history the model read when it predicted the write.
    real_line = simulation.steps[0].observation
    assert json.loads(real_line)["result"]["structuredContent"] == {"result": real}
    assert simulation.history[-3][1] == real_line
    assert write.content[0].text == tool_result(simulation.steps[1].observation).content[0].text
    # Writes are predicted, never sent to the real server: the shop is unchanged.
    assert again.structured_content == {"result": [{"n": products}]}


def test_an_openai_compatible_url_answers_as_the_folder_does(tiny_model_dir,  # noqa: F811
                                                             tools_file):
    """`--model URL`: the same session through `worldtrace serve` and the `openai` client gets
    the answer the folder gives in process (one generation path, greedy)."""
    toolset = read_tools_file(tools_file)
    call = ("count_items", {"shelf": "C1"})

    async def ask(model: WorldModel):
        simulation = Simulation(toolset, model)
        async with Client(build_server(simulation)) as client:
            return await client.call_tool(*call), simulation

    with model_app(ServeConfig(tiny_model_dir, dtype="float32")) as app, \
            serve_in_background(app) as url:
        remote, simulation = anyio.run(ask, world_model(url))
    local, _ = anyio.run(ask, world_model(tiny_model_dir))
    assert simulation.model.name == "openai_compatible:tiny_lm"
    assert remote.content == local.content and remote.content[0].text


def test_a_reply_not_ready_in_time_is_an_mcp_error(tiny_model_dir, tools_file):  # noqa: F811
    simulation = Simulation(read_tools_file(tools_file), world_model(tiny_model_dir, 1e-4))

    async def session() -> MCPError | None:
        async with Client(build_server(simulation)) as client:
            try:
                await client.call_tool("add_item", {"shelf": "A", "item": "cup"})
            except MCPError as error:
                return error
        return None

    error = anyio.run(session)
    assert error is not None and "did not answer within 0.0001 s" in str(error)
    assert simulation.history == list(simulation.toolset.opening)  # no turn left behind


def test_replay_judges_a_recorded_shop_session_free_and_anchored(tiny_model_dir,  # noqa: F811
                                                                 tmp_path, capsys):
    transcripts = tmp_path / "recorded"
    collect_one(1, 0, transcripts, tmp_path / "work")  # index 1: the SQLite shop
    out = tmp_path / "replay"
    assert main(["simulate-mcp", "--model", str(tiny_model_dir), "--replay", str(transcripts),
                 "--out", str(out), "--calls", "3", "--max-new-tokens", str(NEW_TOKENS)]) == 0
    with (out / "replay_steps.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["mode"], r["depth"]) for r in rows] == [
        (mode, str(depth)) for mode in ("free", "anchored") for depth in (1, 2, 3)]
    assert {r["answered_by"] for r in rows if r["mode"] == "free"} == {MODEL}
    anchored_reads = [r for r in rows if r["mode"] == "anchored" and r["kind"] == "read"]
    assert anchored_reads and {r["answered_by"] for r in anchored_reads} == {ANCHOR}
    assert all(float(r["score"]) == 100.0 for r in anchored_reads)  # the real answer itself
    with (out / "fidelity.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert {(r["mode"], r["depth"]) for r in table} >= {("free", ""), ("anchored", "")}
    assert (out / "fidelity.png").stat().st_size > 1000
    printed = capsys.readouterr()
    assert "| anchored |" in printed.out
    # Progress after each session, its tables already written (a stopped replay keeps them).
    assert "1/1 " in printed.err and ": 6 calls judged, " in printed.err


def test_predicted_errors_come_back_as_tool_errors(tmp_path):
    """Response lines as the recorded shop session holds them, read as the client gets them."""
    collect_one(1, 0, tmp_path / "recorded", tmp_path / "work")
    lines = (tmp_path / "recorded").glob("*.txt").__next__().read_text().splitlines()
    answers = [line[4:] for line in lines if line.startswith("<-- ") and '"isError"' in line]
    failed = [a for a in answers if '"isError":true' in a]
    assert failed and answers != failed
    for line in answers:
        result, recorded = tool_result(line), json.loads(line)["result"]
        assert result.is_error == recorded["isError"]
        assert [c.text for c in result.content] == [c["text"] for c in recorded["content"]]
    protocol = tool_result('{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad sql"}}')
    assert protocol.is_error and protocol.content[0].text == "bad sql"
    prose = tool_result("The table has 3 rows.")
    assert not prose.is_error and prose.content[0].text == "The table has 3 rows."


@pytest.mark.parametrize("content, expected", [
    ('{"tool": "x"}', "without a 'tools' list"),
    ('[{"name": 3}]', r"\$\[0\]: not an MCP tool"),
    ("not json", "not JSON and not an MCP transcript"),
])
def test_a_tools_file_that_is_not_a_tool_list_is_refused(tiny_model_dir, tmp_path, capsys,  # noqa: F811
                                                         content, expected):
    bad = tmp_path / "bad-tools.json"
    bad.write_text(content)
    assert main(["simulate-mcp", "--model", str(tiny_model_dir), "--tools", str(bad)]) == 2
    error = capsys.readouterr().err
    assert str(bad) in error and pytest.importorskip("re").search(expected, error)


def test_a_folder_that_is_not_a_model_is_refused(tools_file, tmp_path, capsys):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "notes.txt").write_text("weights elsewhere")
    assert main(["simulate-mcp", "--model", str(folder), "--tools", str(tools_file)]) == 2
    assert f"{folder}: not a model folder (no config.json)" in capsys.readouterr().err


def test_an_anchor_command_that_exits_is_refused(tiny_model_dir, tools_file, capsys):  # noqa: F811
    command = f"{sys.executable} -c \"import sys; sys.stderr.write('no database'); sys.exit(3)\""
    assert main(["simulate-mcp", "--model", str(tiny_model_dir), "--tools", str(tools_file),
                 "--anchor-server", command]) == 2
    error = capsys.readouterr().err
    assert "did not start or exited before answering initialize" in error
    assert "sys.exit(3)" in error and "no database" in error


def _stdio_session(model: Path, shop: Path, *flags: str, calls: list[tuple[str, dict]]):
    """`simulate-mcp --like-server SHOP --anchor-server SHOP FLAGS` as a client launches it;
    the answers to `calls`, in order."""
    params = StdioServerParameters(
        command=sys.executable, cwd=str(REPO_ROOT), env={"PYTHONPATH": str(REPO_ROOT)},
        args=["-m", "worldtrace", "simulate-mcp", "--model", str(model), "--like-server",
              shop_command(shop), "--anchor-server", shop_command(shop), *flags,
              "--max-new-tokens", str(NEW_TOKENS)])

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(session)


def _stock(shop: Path) -> list[int]:
    with sqlite3.connect(shop / "shop.db") as db:
        return [row[0] for row in db.execute("SELECT stock FROM products ORDER BY id")]


def test_forward_writes_sends_the_writes_to_the_real_server_too(tiny_model_dir, shop):  # noqa: F811
    """--forward-writes: the real state follows the simulated writes (the next real read sees
    them), while the client still gets the model's prediction for the write."""
    assert any(_stock(shop))
    write, read = _stdio_session(tiny_model_dir, shop, "--forward-writes", calls=[
        ("write_query", {"sql": "UPDATE products SET stock = 0"}),
        ("read_query", {"sql": "SELECT sum(stock) AS total FROM products"})])
    assert set(_stock(shop)) == {0}
    assert read.structured_content == {"result": [{"total": 0}]}  # the anchor answered
    assert write.structured_content is None  # the model's text, not the shop's rows_affected


def test_a_tool_declared_read_only_is_answered_by_the_real_server(tiny_model_dir, shop):  # noqa: F811
    """--read-only names tools the anchor answers beyond the declared ones: here the shop's
    write_query, whose real answer (rows changed) the client gets."""
    before = _stock(shop)
    (answer,) = _stdio_session(tiny_model_dir, shop, "--read-only", "write_query", calls=[
        ("write_query", {"sql": "UPDATE products SET stock = stock + 1"})])
    assert answer.structured_content == {"rows_affected": len(before)}
    assert _stock(shop) == [stock + 1 for stock in before]
