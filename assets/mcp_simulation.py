"""The world model as an MCP environment: scrubbed MCP sessions + models -> mcp_simulation_report.

Bench-pool MCP sessions are replayed against `worldtrace simulate-mcp`'s simulation, free-running
and anchored (bench/simulate/replay.py), for each configured model; the per-call scores and the
fidelity by depth are written under {data}/mcp_simulation/. A bounded, deterministic subset of
sessions and calls keeps `make run` short: each call is two predictions (one per mode).
"""

import base64

import dagster as dg
import pyarrow as pa

from assets.resources import WorldtraceStorage
from assets.table_metadata import reads, records_table, table_metadata
from bench.simulate.errors import SessionsError
from bench.simulate.fidelity import fidelity_table, write_fidelity_chart
from bench.simulate.replay import ReplayConfig, SessionSet, read_sessions, replay_all
from bench.simulate.world_model import WorldModel, WorldModelConfig
from bench.tables import MCP_SIMULATION_REPORT, MCP_SIMULATION_STEPS
from quality.tables import SCRUBBED_TURNS, TRAJECTORY_SPLIT
from sources.storage import write_parquet
from sources.tables import Table
from training.sft_split import TINY_BUDGETS
from training.tables import MODELS, RL_MODEL, SFT_MODEL, model_folders


class SimulationSettings(dg.Config):
    """Which models (folders under {data}/models), how many bench-pool sessions (spread over
    the sources) and calls per session, and the generation budget (the tiny model's by
    default; the real base's prompt budget for a real base). Named folders that hold no model
    (not trained in this run) are left out."""

    models: list[str] = [SFT_MODEL.name, RL_MODEL.name]
    sessions: int = 4
    calls: int = 6
    max_new_tokens: int = 128
    model_max_prompt_tokens: int = TINY_BUDGETS.prompt_tokens
    timeout_s: float = 300.0


@dg.asset(group_name="bench", deps=reads(SCRUBBED_TURNS, TRAJECTORY_SPLIT, *MODELS))
def mcp_simulation_report(context: dg.AssetExecutionContext, config: SimulationSettings,
                          storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Free-running vs anchored MCP simulation: bench-pool sessions replayed against the world
    model as an MCP server, every simulated observation judged against the real one, fidelity
    by depth with bootstrap intervals (anchored: read-only calls answered by the real server)."""
    data = storage.data_path
    replay = ReplayConfig(sessions=config.sessions, calls=config.calls)
    try:
        sessions = read_sessions(data, replay)
    except SessionsError as error:  # the run left the MCP domain out: nothing to replay
        context.log.warning(f"no MCP session replayed: {error}")
        sessions = SessionSet(skipped={"mcp": str(error)})
    for session_id, reason in sessions.skipped.items():
        context.log.info(f"not replayed: {session_id}: {reason}")
    folders = [f for f in model_folders(data, config.models) if (f / "config.json").is_file()]
    rows = []
    for folder in folders if sessions.sessions else []:
        model = WorldModel.load(WorldModelConfig(
            str(folder), max_new_tokens=config.max_new_tokens,
            max_prompt_tokens=config.model_max_prompt_tokens or None,
            timeout_s=config.timeout_s))
        rows += replay_all(sessions, model, replay, on_session=lambda i, s, _, name=model.name:
                           context.log.info(f"{name}: session {i}/{len(sessions)} "
                                            f"({s.session_id})"))
    table = fidelity_table(rows)
    write_parquet(_arrow(rows, MCP_SIMULATION_STEPS), MCP_SIMULATION_STEPS.path(data))
    write_parquet(_arrow(table, MCP_SIMULATION_REPORT), MCP_SIMULATION_REPORT.path(data))
    chart = write_fidelity_chart(table, MCP_SIMULATION_REPORT.dir(data) / "fidelity.png")
    encoded = base64.b64encode(chart.read_bytes()).decode()
    overall = [r for r in table if r["depth"] is None]
    return dg.MaterializeResult(metadata={
        **table_metadata(MCP_SIMULATION_REPORT, data),
        "models": dg.MetadataValue.md(", ".join(f.name for f in folders) or "_none trained_"),
        "sessions": len(sessions), "sessions_skipped": len(sessions.skipped),
        "calls_replayed": len(rows),
        "overall": dg.MetadataValue.md(records_table(overall)),
        "chart": dg.MetadataValue.md(f"![fidelity](data:image/png;base64,{encoded})"),
    })


def _arrow(rows: list[dict], table: Table) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=table.schema)
