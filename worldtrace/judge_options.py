"""The LLM-judge options of `bench run` and `simulate-mcp --replay`, and the judge they start.

One set of option names and settings for both commands, and one start-up check: the judge URL
must answer before any prediction is made, so a wrong URL is an error naming it at once, not a
column of failures hours later.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from bench.official import OFFICIAL_MAX_TOKENS, REFERENCE_TEMPERATURE


class JudgeSetupError(ValueError):
    """Judge options that do not go together, or a judge URL where no judge answers."""


def add_llm_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """--llm-judge URL and the options that shape how it is asked."""
    parser.add_argument("--llm-judge", metavar="URL",
                        help="also judge with the model behind this OpenAI-compatible base URL")
    parser.add_argument("--judge-model", help="model name for --llm-judge (default: the first "
                                              "the endpoint lists)")
    parser.add_argument("--judge-prompts", metavar="DIR",
                        help="the prompts/ folder of a checkout of the released AgentWorldBench "
                             "repository: --llm-judge becomes the official judge (its prompts, "
                             "temperature 0.6, the whole history, forgiving answer parsing)")
    parser.add_argument("--judge-max-tokens", type=int, default=None,
                        help=f"the most tokens of one LLM-judge answer (default "
                             f"{OFFICIAL_MAX_TOKENS} with --judge-prompts, else 2048)")
    parser.add_argument("--judge-attempts", type=int, default=3,
                        help="how often the LLM judge is asked for a readable verdict")


def llm_judge_config(args: argparse.Namespace, cache_dir: Path, concurrency: int = 4,
                     scoring: str = "official"):
    """The LLM judge's settings (None without --llm-judge): the released judge's (its prompts
    from --judge-prompts, temperature 0.6, 32,768 answer tokens) or ours (temperature 0, 2,048
    tokens). A bad --judge-prompts DIR fails here, before any work."""
    from bench.endpoint import EndpointConfig
    from bench.judges.llm_judge import LLMJudgeConfig
    from bench.judges.official_prompts import load_official_prompts

    if args.judge_prompts and not args.llm_judge:
        raise JudgeSetupError("--judge-prompts needs --llm-judge URL (the judge to ask)")
    if not args.llm_judge:
        return None
    official = load_official_prompts(args.judge_prompts) if args.judge_prompts else None
    default_tokens = OFFICIAL_MAX_TOKENS if official else 2048
    return LLMJudgeConfig(
        EndpointConfig(args.llm_judge, model=args.judge_model, concurrency=concurrency),
        temperature=REFERENCE_TEMPERATURE if official else 0.0,
        max_tokens=args.judge_max_tokens or default_tokens, max_attempts=args.judge_attempts,
        cache_dir=cache_dir, official=official, scoring=scoring)


def start_llm_judge(config):
    """The LLMJudge of `config`, once its URL has answered (JudgeSetupError naming the URL
    when it does not: one request, not retried)."""
    from bench.endpoint import ChatEndpoint, EndpointError
    from bench.judges.llm_judge import LLMJudge

    url = config.endpoint.base_url
    probe = ChatEndpoint(config.endpoint)
    try:
        probe.check()
    except EndpointError as error:
        raise JudgeSetupError(f"--llm-judge {url}: no judge answers there "
                              f"({str(error).removeprefix(f'{url}: ')})") from error
    # The model the probe found is named, so the judge does not ask /models again.
    return LLMJudge(dataclasses.replace(
        config, endpoint=dataclasses.replace(config.endpoint, model=probe.model)))
