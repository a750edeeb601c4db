"""`worldtrace ablation`: which training stage buys what, scored on one bench.

    worldtrace ablation --data DIR [--bench-dir BENCH_DIR] [--per-domain N] [--variant V ...]
                        [--cpt-steps N] [--sft-steps N] [--rl-steps N] [--max-new-tokens N]
                        [--out DIR] [--base DIR] [--knowledge PATH]

Trains (or reuses, under DIR/models/ablation/) CPT only, CPT + SFT, CPT + SFT + RL, CPT
without loss weighting, SFT on every turn vs one turn per trajectory (training/ablation.py),
scores each and the copy-last baseline on the bench samples (default
DIR/agentworldbench/official, the agentworldbench asset's export; or any folder made by
`worldtrace bench build`), and prints the table (per-domain scores and Overall, each with its
bootstrap 95 % interval, echo and malformed rates) and the paired differences that answer the
ablation's questions (weighted against unweighted CPT after the same SFT, RL after SFT, ...);
writes them and every sample's score to --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

USER_ERRORS: tuple[type[Exception], ...] = (FileNotFoundError,)


def run(args: argparse.Namespace) -> int:
    from training.ablation import bench_samples, configure, run_ablation
    from training.ablation_report import markdown, write_report

    data = Path(args.data)
    samples, problems = bench_samples(data, Path(args.bench_dir) if args.bench_dir else None,
                                      args.per_domain or None)
    for problem in problems:
        print(f"skipped {problem}", file=sys.stderr)
    config = configure(args.variant or (), args.cpt_steps, args.sft_steps, args.rl_steps,
                       args.max_new_tokens, args.base, args.knowledge)
    report = run_ablation(data, samples, config)
    print(markdown(report))
    path = write_report(report, Path(args.out) if args.out else data / "ablation")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("ablation", help="train the CPT/SFT/RL variants, score each")
    parser.add_argument("--data", required=True, help="worldtrace data directory (splits)")
    parser.add_argument("--bench-dir", help="folder of <domain>_test.jsonl (default: "
                                            "DATA/agentworldbench/official)")
    parser.add_argument("--variant", action="append",
                        help="only this variant (and what it starts from); repeatable: untrained, "
                             "cpt, cpt_unweighted, cpt_sft, cpt_unweighted_sft, cpt_sft_rl, "
                             "sft_one_turn, sft_all_turns, cpt_knowledge, cpt_knowledge_sft "
                             "(these two with --knowledge)")
    parser.add_argument("--per-domain", type=int, default=20,
                        help="bench samples per domain, first by id (0 = all; default 20)")
    parser.add_argument("--cpt-steps", type=int)
    parser.add_argument("--sft-steps", type=int)
    parser.add_argument("--rl-steps", type=int)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--out", help="folder for ablation.parquet / .md (default DATA/ablation)")
    parser.add_argument("--base", type=Path,
                        help="a pretrained base folder to start from (worldtrace base-model); "
                             "DATA's splits must be built with its tokenizer (worldtrace run "
                             "--base)")
    parser.add_argument("--knowledge", type=Path,
                        help="a text dataset (worldtrace knowledge-corpus) for the cpt_knowledge "
                             "variants (CPT with 20 %% knowledge text, then SFT)")
    parser.set_defaults(run=run)
