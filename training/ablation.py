"""The ablation the paper did not publish: which training stage buys what, on one bench.

Variants (each a model folder under {data}/models/ablation/, trained with the same code and
settings as the assets; a finished folder is reused, an interrupted one resumes):

| variant | training |
|---|---|
| untrained | the initial tiny model (or the pretrained base), no training (the floor) |
| cpt | CPT, loss weighted per token |
| cpt_unweighted | CPT, every token weight 1 |
| cpt_sft | CPT, then SFT on sft_split |
| cpt_unweighted_sft | CPT without weights, then the same SFT (weighting, with the format learnt) |
| cpt_sft_rl | CPT, SFT, then GSPO with the hybrid reward |
| sft_one_turn | CPT, then SFT on rl_split (one target turn per trajectory) |
| sft_all_turns | CPT, then SFT on rl_split_all_turns (every turn: the Echo Trap setting) |
| cpt_knowledge | CPT on cpt_corpus plus knowledge documents (knowledge_ratio of the tokens) |
| cpt_knowledge_sft | that, then the same SFT (the knowledge mix, with the format learnt) |

plus the copy-last-observation baseline. Every variant is scored on the same bench samples by
the bench's own loop (hf_local predictor, offline rubric and rule judges, official scoring);
training/ablation_report.py turns the scores into the table (per-domain scores and the macro
Overall with bootstrap intervals, echo and malformed rates) and the paired differences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from datasets import Dataset, concatenate_datasets

from bench.evaluate import run_predictor, summarize
from bench.official import REFERENCE_TEMPERATURE, read_official
from bench.predictors.base import PredictorContext, build_predictor
from bench.sample import BenchSample, first_per_domain
from bench.store import official_dir
from training.ablation_report import (
    BASELINE,
    AblationReport,
    paired_rows,
    score_rows,
    variant_row,
)
from training.cpt import CptConfig, read_cpt_corpus, train_cpt
from training.cpt_corpus import knowledge_rows
from training.gspo import GspoConfig
from training.model_config import load_tokenizer, use_cpu_threads
from training.reward import hybrid_scorer
from training.sft import SftConfig
from training.sft_split import REAL_BASE_BUDGETS
from training.stages import (
    partitions,
    run_cpt,
    run_rl,
    run_sft,
    save_untrained,
    with_steps,
)
from training.stages import tokenizer_dir as stage_tokenizer_dir
from training.tables import CPT_CORPUS, RL_SPLIT, RL_SPLIT_ALL_TURNS, model_dir
from training.training_log import LOG_FILE

PREFIX = "ablation"


@dataclass(frozen=True)
class AblationConfig:
    """Stage settings shared by every variant, and how the bench is asked."""

    cpt: CptConfig = field(default_factory=CptConfig)
    sft: SftConfig = field(default_factory=SftConfig)
    rl: GspoConfig = field(default_factory=GspoConfig)
    max_new_tokens: int = 128
    variants: tuple[str, ...] = ()  # empty: all (the knowledge ones when a path is given)
    # The CPT knowledge mix (training/knowledge.py): cpt_knowledge trains on cpt_corpus plus
    # documents of this text dataset making up knowledge_ratio of the tokens.
    knowledge_path: str | None = None
    knowledge_ratio: float = 0.2


def _untrained(data: Path, config: AblationConfig, name: str) -> None:
    save_untrained(data, config.cpt.model, name)


def _cpt_knowledge(data: Path, config: AblationConfig, name: str) -> Any:
    """CPT on cpt_corpus with the knowledge documents added, packed at the corpus's length."""
    if not config.knowledge_path:
        raise ValueError("the cpt_knowledge variants need a knowledge dataset (--knowledge)")
    corpus = read_cpt_corpus(partitions(data, CPT_CORPUS))
    tokens = sum(len(ids) for ids in corpus["input_ids"])
    tokenizer_dir = stage_tokenizer_dir(data, config.cpt.model)
    rows = knowledge_rows(load_tokenizer(tokenizer_dir), Path(config.knowledge_path),
                          int(tokens * config.knowledge_ratio / (1 - config.knowledge_ratio)),
                          len(corpus[0]["input_ids"]))
    mixed = concatenate_datasets([corpus, Dataset.from_list(rows).cast(corpus.features)])
    print(f"ablation: cpt_knowledge on {tokens:,} corpus tokens + "
          f"{sum(len(r['input_ids']) for r in rows):,} knowledge tokens", flush=True)
    return train_cpt(mixed, tokenizer_dir, model_dir(data, name), config.cpt)


def _name(variant: str) -> str:
    return f"{PREFIX}/{variant}"


# variant -> (variant it starts from, how to train it)
Trainer = Callable[[Path, AblationConfig, str], Any]
VARIANTS: dict[str, tuple[str | None, Trainer]] = {
    "untrained": (None, _untrained),
    "cpt": (None, lambda d, c, n: run_cpt(d, c.cpt, n)),
    "cpt_unweighted": (None, lambda d, c, n: run_cpt(d, replace(c.cpt, use_loss_weights=False),
                                                     n)),
    "cpt_sft": ("cpt", lambda d, c, n: run_sft(d, c.sft, _name("cpt"), n)),
    "cpt_unweighted_sft": ("cpt_unweighted",
                           lambda d, c, n: run_sft(d, c.sft, _name("cpt_unweighted"), n)),
    "cpt_sft_rl": ("cpt_sft", lambda d, c, n: run_rl(d, c.rl, hybrid_scorer, _name("cpt_sft"),
                                                     n)),
    "sft_one_turn": ("cpt", lambda d, c, n: run_sft(d, c.sft, _name("cpt"), n, RL_SPLIT)),
    "sft_all_turns": ("cpt", lambda d, c, n: run_sft(d, c.sft, _name("cpt"), n,
                                                     RL_SPLIT_ALL_TURNS)),
    "cpt_knowledge": (None, _cpt_knowledge),
    "cpt_knowledge_sft": ("cpt_knowledge",
                          lambda d, c, n: run_sft(d, c.sft, _name("cpt_knowledge"), n)),
}
KNOWLEDGE_VARIANTS = ("cpt_knowledge", "cpt_knowledge_sft")


def wanted(config: AblationConfig) -> list[str]:
    """The variants asked for plus everything they start from, in training order."""
    asked = config.variants or tuple(
        v for v in VARIANTS if config.knowledge_path or v not in KNOWLEDGE_VARIANTS)
    unknown = sorted(set(asked) - set(VARIANTS))
    if unknown:
        raise ValueError(f"unknown ablation variants {unknown}; known: {sorted(VARIANTS)}")
    needed: set[str] = set()
    for variant in asked:
        while variant is not None and variant not in needed:
            needed.add(variant)
            variant = VARIANTS[variant][0]
    return [variant for variant in VARIANTS if variant in needed]


def train_variants(data_dir: Path, config: AblationConfig) -> dict[str, Path]:
    """Train (or reuse) every variant's folder; returns variant -> folder."""
    folders = {}
    for variant in wanted(config):
        folder = model_dir(data_dir, _name(variant))
        finished = (folder / LOG_FILE).exists() or (variant == "untrained" and folder.is_dir())
        if finished:
            print(f"ablation: {variant} already trained at {folder}", flush=True)
        else:
            print(f"ablation: training {variant}", flush=True)
            VARIANTS[variant][1](Path(data_dir), config, _name(variant))
        folders[variant] = folder
    return folders


def score(data_dir: Path, folders: dict[str, Path], samples: Sequence[BenchSample],
          config: AblationConfig) -> AblationReport:
    """Every variant and the copy-last baseline scored by the bench's own loop on the same
    samples: their rows with intervals, the paired differences, every sample's score."""
    context = PredictorContext(data_dir=Path(data_dir), max_new_tokens=config.max_new_tokens,
                               max_prompt_tokens=config.rl.max_prompt_tokens,
                               temperature=REFERENCE_TEMPERATURE)
    use_cpu_threads(config.cpt.model)  # generation is as thread-bound as training
    specs = {variant: f"hf_local:{folder}" for variant, folder in folders.items()}
    specs[BASELINE] = BASELINE
    report, scored_by_variant = AblationReport(), {}
    for variant, spec in specs.items():
        print(f"ablation: scoring {variant} on {len(samples)} bench samples", flush=True)
        _, scored, _ = run_predictor(build_predictor(spec, context), samples,
                                     log=lambda line: print(line, flush=True))
        (summary,) = summarize(scored)
        report.rows.append(variant_row(variant, summary, scored))
        scored_by_variant[variant] = scored
    report.paired = paired_rows(scored_by_variant)
    report.scores = score_rows(scored_by_variant)
    return report


def run_ablation(data_dir: Path, samples: Sequence[BenchSample],
                 config: AblationConfig = AblationConfig()) -> AblationReport:
    """Train every variant, score all on `samples`."""
    if not samples:
        raise ValueError("no bench samples to score the ablation on: build the bench first")
    return score(data_dir, train_variants(data_dir, config), samples, config)


def configure(variants: Sequence[str] = (), cpt_steps: int | None = None,
              sft_steps: int | None = None, rl_steps: int | None = None,
              max_new_tokens: int = 128, base_model: Path | None = None,
              knowledge_path: Path | None = None) -> AblationConfig:
    """The default config with the step counts the CLI or run config give; with `base_model`
    (a pretrained base folder) CPT and the untrained variant start from it, SFT and RL
    continue from the previous variant, all on two threads, at the real-base lengths
    (REAL_BASE_BUDGETS; the data's splits must be built with the base's tokenizer, as
    `worldtrace run --base` builds them)."""
    config = AblationConfig(max_new_tokens=max_new_tokens, variants=tuple(variants),
                            knowledge_path=str(knowledge_path) if knowledge_path else None)
    if base_model:
        budgets = REAL_BASE_BUDGETS
        threads = replace(config.cpt.model, cpu_threads=2)
        config = replace(
            config, max_new_tokens=budgets.answer_tokens,
            cpt=replace(config.cpt, model=replace(threads, checkpoint=str(base_model))),
            sft=replace(config.sft, model=threads, max_length=budgets.sample_tokens),
            rl=replace(config.rl, model=threads, max_prompt_tokens=budgets.prompt_tokens,
                       max_completion_length=budgets.answer_tokens))
    return replace(
        config,
        cpt=replace(config.cpt, steps=with_steps(config.cpt.steps, cpt_steps, None)),
        sft=replace(config.sft, steps=with_steps(config.sft.steps, sft_steps, None)),
        rl=replace(config.rl, steps=with_steps(config.rl.steps, rl_steps, None)))


def bench_samples(data_dir: Path, bench_dir: Path | None = None,
                  per_domain: int | None = None) -> tuple[list[BenchSample], list]:
    """Samples of the bench export (default {data}/agentworldbench/official), at most
    `per_domain` of each domain (the first by id: a stable subset, since every variant is
    generated on CPU), and the records that could not be read."""
    folder = Path(bench_dir) if bench_dir else official_dir(data_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"no bench folder {folder}: materialize agentworldbench or run "
                                "`worldtrace bench build`")
    samples, problems = read_official(folder)
    if per_domain is not None:
        samples = first_per_domain(samples, per_domain)
    return samples, problems
