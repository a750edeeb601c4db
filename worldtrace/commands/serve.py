"""`worldtrace serve --model DIR [--host 127.0.0.1 --port P]`: an OpenAI-compatible server over
a local transformers causal-LM folder, so any client (the openai_compatible predictor, the LLM
judge, the `openai` SDK, curl) can use a trained world model."""

from __future__ import annotations

import argparse
from pathlib import Path

USER_ERRORS: tuple[type[Exception], ...] = (FileNotFoundError,)


def run(args: argparse.Namespace) -> int:
    from bench.model_folder import check_model_folder

    check_model_folder(args.model)  # one line naming the folder, before torch is imported
    from bench.serve.run import ServeConfig, serve

    print(f"serving {args.model} as {args.model_id or args.model.name} on "
          f"http://{args.host}:{args.port}/v1 (Ctrl-C stops)")
    serve(ServeConfig(args.model, host=args.host, port=args.port, model_id=args.model_id,
                      max_batch=args.max_batch, default_max_tokens=args.max_tokens,
                      dtype=args.dtype, device=args.device,
                      threads=args.threads))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("serve", help="serve a local model folder over the OpenAI API",
                                 description=__doc__)
    parser.add_argument("--model", type=Path, required=True,
                        help="a model folder (config.json, weights, tokenizer with a chat "
                             "template), e.g. data/models/sft_model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model-id", help="the name clients send (default: the folder's name)")
    parser.add_argument("--max-batch", type=int, default=8,
                        help="concurrent requests generated together in one batch")
    parser.add_argument("--max-tokens", type=int, default=512,
                        help="max_tokens when a request names none")
    parser.add_argument("--dtype", default="auto", help="auto, float32, bfloat16, float16")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 (default: cuda when available)")
    parser.add_argument("--threads", type=int,
                        help="CPU threads for torch (fewer is faster on a shared machine)")
    parser.set_defaults(run=run)
