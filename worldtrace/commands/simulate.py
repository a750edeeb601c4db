"""`worldtrace simulate-mcp`: the world model as an MCP server, and its fidelity on recordings.

    worldtrace simulate-mcp --model DIR|URL (--tools FILE | --like-server CMD)
                            [--anchor-server CMD [--read-only T1,T2] [--forward-writes]]
        an MCP server over stdio: tools/list gives the tools of FILE (a JSON tool list or a
        recorded transcript) or of the server CMD; each tools/call is answered by the model
        (a model folder, or an OpenAI-compatible URL such as http://127.0.0.1:8000/v1) from the
        session so far. With --anchor-server, read-only tools (readOnlyHint, --read-only, the
        trace factory's declarations) are answered by that real server instead, and their
        answers enter the model's context; writes are predicted (and sent to the real server
        only with --forward-writes).
    worldtrace simulate-mcp --model DIR|URL --replay SESSIONS --out DIR
                            [--sessions N] [--calls N]
                            [--llm-judge URL [--judge-model M] [--judge-prompts DIR]
                             [--judge-max-tokens N] [--judge-attempts N]]
        recorded MCP sessions (a data directory's bench-pool MCP trajectories, or transcript
        files) replayed free-running and anchored; every simulated observation judged against
        the real one (rubric and rule verifier: `score`; with --llm-judge also by the bench's
        LLM judge behind that OpenAI-compatible URL: `llm_score`) and the fidelity by depth
        printed with bootstrap intervals (replay_steps.csv, fidelity.csv, fidelity.png in
        --out; the judge's verdicts cached in --out/cache, so a rerun asks nothing twice).

A tools file that is not a tool list, a folder that is not a model, a server command that
exits, or a judge URL where nothing answers is reported on one line naming it, with exit
status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.simulate.errors import USER_ERRORS as SIMULATE_ERRORS
from worldtrace.judge_options import (
    JudgeSetupError,
    add_llm_judge_arguments,
    llm_judge_config,
    start_llm_judge,
)

USER_ERRORS: tuple[type[Exception], ...] = (*SIMULATE_ERRORS, JudgeSetupError)


def _model_config(args: argparse.Namespace):
    from bench.simulate.world_model import WorldModelConfig

    return WorldModelConfig(args.model, model_name=args.model_name,
                            max_new_tokens=args.max_new_tokens,
                            max_prompt_tokens=args.max_prompt_tokens or None,
                            temperature=args.temperature, timeout_s=args.timeout)


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def run_server(args: argparse.Namespace) -> int:
    import anyio

    from bench.simulate.server import SimulateConfig, run

    if args.llm_judge or args.judge_prompts:
        raise JudgeSetupError("--llm-judge judges a --replay (the server answers a live client "
                              "with no real observation to judge against)")
    if (args.tools is None) == (args.like_server is None):
        print("worldtrace simulate-mcp: give --tools FILE or --like-server CMD (one of them)",
              file=sys.stderr)
        return 2
    config = SimulateConfig(_model_config(args), tools_file=args.tools,
                            like_server=args.like_server, anchor_server=args.anchor_server,
                            read_only=_names(args.read_only), forward_writes=args.forward_writes)
    anyio.run(run, config)
    return 0


def _write_replay(rows: list[dict], out: Path) -> list[dict]:
    """replay_steps.csv, fidelity.csv and fidelity.png of the rows so far (atomic writes)."""
    from bench.simulate.fidelity import fidelity_table, write_fidelity_chart, write_rows_csv

    table = fidelity_table(rows)
    out.mkdir(parents=True, exist_ok=True)
    write_rows_csv(rows, out / "replay_steps.csv")
    write_rows_csv(table, out / "fidelity.csv")
    write_fidelity_chart(table, out / "fidelity.png")
    return table


def run_replay(args: argparse.Namespace) -> int:
    import time

    from bench.simulate.replay import ReplayConfig, read_sessions, replay_all
    from bench.simulate.world_model import WorldModel

    if args.out is None:
        print("worldtrace simulate-mcp --replay: --out DIR is required", file=sys.stderr)
        return 2
    config = ReplayConfig(sessions=args.sessions, calls=args.calls,
                          read_only=_names(args.read_only))
    sessions = read_sessions(args.replay, config)
    judge_config = llm_judge_config(args, args.out / "cache")
    llm = start_llm_judge(judge_config) if judge_config is not None else None  # before the model
    model = WorldModel.load(_model_config(args))
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    print(f"replaying {len(sessions)} sessions with {model.name} (free-running and anchored)",
          file=sys.stderr)
    start = time.perf_counter()

    reported = 0

    def progress(number: int, session, rows: list[dict]) -> None:
        nonlocal reported
        # The tables so far after every session: a replay stopped early keeps what finished.
        _write_replay(rows, args.out)
        for row in rows[reported:]:
            if row["llm_failure_reason"] and not row["failed"]:
                print(f"  llm judge could not grade {row['session']} {row['mode']} call "
                      f"{row['depth']}: {row['llm_failure_reason']}", file=sys.stderr)
        reported = len(rows)
        print(f"  {number}/{len(sessions)} {session.session_id}: {len(rows)} calls judged, "
              f"{model.calls} predictions in {time.perf_counter() - start:.0f} s",
              file=sys.stderr)

    rows = replay_all(sessions, model, config, on_session=progress, llm_judge=llm)
    table = _write_replay(rows, args.out)
    if llm is not None:
        graded = sum(row["llm_score"] is not None for row in rows)
        print(f"{llm.name} graded {graded} of {len(rows)} calls ({llm.unparseable_answers} "
              "unreadable answers)", file=sys.stderr)
    _print_report(table, llm.name if llm is not None else None)
    return 0


def _print_report(table: list[dict], llm_name: str | None) -> None:
    """The fidelity table, under a line saying which judge gave which score column (the LLM
    columns only when a judge was given; its name is that line's, not every row's)."""
    from bench.evaluate import RUBRIC_JUDGE
    from bench.leaderboard import to_markdown

    if not table:
        print("no calls replayed")
        return
    legend = f"score: {RUBRIC_JUDGE} + the MCP rule verifier"
    columns = [c for c in table[0] if c != "llm_judge"]
    if llm_name is None:
        columns = [c for c in columns if not c.startswith("llm_")]
    else:
        legend += f"; llm_score: {llm_name}"
    print(legend)
    print(to_markdown(table, columns))


def run(args: argparse.Namespace) -> int:
    return run_replay(args) if args.replay is not None else run_server(args)


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("simulate-mcp", help="the world model as an MCP server",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True,
                        help="a model folder (any Hugging Face causal-LM folder with a chat "
                             "template, e.g. data/models/sft_model) or an OpenAI-compatible URL")
    parser.add_argument("--model-name", help="the model name sent to a URL (default: the "
                                             "first it lists)")
    parser.add_argument("--tools", type=Path, help="a JSON tool list or a recorded transcript")
    parser.add_argument("--like-server", help="imitate this MCP server (a command line): list "
                                              "its tools")
    parser.add_argument("--anchor-server", help="a real MCP server (a command line) that "
                                                "answers the read-only calls")
    parser.add_argument("--read-only", help="comma-separated tools the anchor answers, beyond "
                                            "those annotated readOnlyHint")
    parser.add_argument("--forward-writes", action="store_true",
                        help="also send writing calls to the anchor (its state follows them)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds the model may take per call before an MCP error")
    parser.add_argument("--max-new-tokens", type=int, default=512)
    parser.add_argument("--max-prompt-tokens", type=int, default=0,
                        help="fit the session into this many prompt tokens, oldest turns "
                             "first (0: the whole session, failing when over the context)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads for a model folder (0: the predictor's own)")
    parser.add_argument("--replay", type=Path, help="replay recorded sessions: a data directory "
                                                    "or transcript files")
    parser.add_argument("--out", type=Path, help="where --replay writes its tables")
    parser.add_argument("--sessions", type=int, default=0,
                        help="--replay: at most this many sessions (0: all)")
    parser.add_argument("--calls", type=int, default=0,
                        help="--replay: at most this many calls a session (0: all)")
    add_llm_judge_arguments(parser)
    parser.set_defaults(run=run)
