"""Training data: trajectory_dedup -> trajectory_split -> tokenizer, cpt_corpus, sft_split,
rl_split, rl_split_all_turns.

These assets are not partitioned: the split, the tokenizer and the corpora are built over every
domain present at once (a tokenizer trained on one domain would not fit the others), and each
writes its tables in the usual per-domain layout, {data}/{table}/domain={d}/part-0.parquet.
"""

import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from assets.resources import WorldtraceStorage
from assets.table_metadata import check_result, reads, records_table, table_metadata
from quality.decontaminate import DecontaminationConfig
from quality.split import SplitConfig, groups_in_one_pool, split_trajectories
from quality.tables import (
    SCRUBBED_TRAJECTORIES,
    SCRUBBED_TURNS,
    TRAJECTORY_DEDUP,
    TRAJECTORY_SPLIT,
    TURN_LABELS,
)
from sources.schema import DOMAINS
from sources.tables import RAW_TRAJECTORIES, Table
from training.cpt_corpus import CptCorpusConfig, build_cpt_corpus
from training.export import HF_FOLDER
from training.model_config import load_tokenizer as load_model_tokenizer
from training.rl_split import RlConfig, build_rl_split
from training.sample_stats import SampleStats
from training.sft_split import SftSplitConfig, build_sft_split
from training.tables import CPT_CORPUS, SFT_SPLIT, TOKENIZER
from training.teacher import OpenAITeacher
from training.tokenizer import SPECIAL_TOKENS, TokenizerConfig, load_tokenizer, train_tokenizer

GROUP = "training"
# What the training text is rendered from: the pool of each trajectory, the scrubbed text, the
# loss weights (training/render.py).
TRAIN_POOL_TEXT = (TRAJECTORY_SPLIT, SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS, TURN_LABELS)


def split_tokenizer(storage: WorldtraceStorage, base: str):
    """The tokenizer a corpus or split is built with, and its folder: a pretrained base's own
    (run config `base`, e.g. data/base_models/smollm2) so its token ids and budgets are the
    model's, else the project's {data}/tokenizer."""
    if base:
        return load_model_tokenizer(Path(base)), Path(base)
    folder = TOKENIZER.dir(storage.data_path)
    return load_tokenizer(folder), folder


class SplitSettings(dg.Config):
    """Bench share, seed of the pool hash, decontamination threshold (MinHash Jaccard)."""

    bench_share: float = 0.15
    seed: int = 0
    contamination_threshold: float = 0.5


# The split is curation (quality/split.py, below the bench and training that both read it), so
# its asset is in the quality group, beside the dedup it is built from.
@dg.asset(group_name="quality", deps=reads(RAW_TRAJECTORIES, TRAJECTORY_DEDUP),
          check_specs=[dg.AssetCheckSpec(
              "groups_in_one_pool", asset="trajectory_split",
              description="Every source task (group_key) sits in one pool only: runs of one "
                          "task never straddle the train / bench split.")])
def trajectory_split(context: dg.AssetExecutionContext, config: SplitSettings,
                     storage: WorldtraceStorage) -> Iterator[dg.MaterializeResult
                                                             | dg.AssetCheckResult]:
    """Every trajectory kept by dedup in the train or the bench pool, by a stable hash of its
    source task (runs of one task never straddle the split); train runs that are near copies
    of a bench run (MinHash over the stored dedup signatures) move to `contaminated`."""
    split_config = SplitConfig(
        bench_share=config.bench_share, seed=config.seed,
        decontamination=DecontaminationConfig(threshold=config.contamination_threshold))
    started = time.perf_counter()
    stats = split_trajectories(storage.data_path, DOMAINS, split_config)
    seconds = time.perf_counter() - started
    rows = stats.rows()
    context.log.info(f"split {stats.trajectories} trajectories in {seconds:.1f}s: "
                     + ", ".join(f"{r['domain']} {r['train']}/{r['bench']}/{r['contaminated']}"
                                 for r in rows))
    yield dg.MaterializeResult(metadata={
        **table_metadata(TRAJECTORY_SPLIT, storage.data_path),
        "config": str(split_config),
        "pools_per_domain": dg.MetadataValue.md(records_table(rows)),
        **{f"{pool}_trajectories": sum(r[pool] for r in rows)
           for pool in ("train", "bench", "contaminated")},
        **{f"contaminated_{r['domain']}": r["contaminated"] for r in rows},
        **{f"{pool}_groups": n for pool, n in stats.groups.items()},
        "seconds": round(seconds, 2),
    })
    yield check_result("groups_in_one_pool", groups_in_one_pool(storage.data_path))


class TokenizerSettings(dg.Config):
    """Vocabulary size and the per-domain character budget of the training text."""

    vocab_size: int = 4096
    max_chars_per_domain: int = 400_000


@dg.asset(group_name=GROUP, deps=reads(*TRAIN_POOL_TEXT),
          kinds={"huggingface"})  # a tokenizers folder, not a Parquet table
def tokenizer(context: dg.AssetExecutionContext, config: TokenizerSettings,
              storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Byte-level BPE trained on the train pool (system prompts, actions, observations), saved
    as a PreTrainedTokenizerFast folder with the chat special tokens and a chat template."""
    tok_config = TokenizerConfig(vocab_size=config.vocab_size,
                                 max_chars_per_domain=config.max_chars_per_domain)
    out_dir = TOKENIZER.dir(storage.data_path)
    started = time.perf_counter()
    stats = train_tokenizer(storage.data_path, out_dir, DOMAINS, tok_config)
    seconds = time.perf_counter() - started
    context.log.info(f"tokenizer {tok_config}: {stats.vocab_size} tokens from {stats.chars:,} "
                     f"characters of {stats.trajectories} train trajectories in {seconds:.1f}s")
    loaded = load_tokenizer(out_dir)
    sample = loaded.apply_chat_template(
        [{"role": "system", "content": "You are a world model."},
         {"role": "user", "content": "ls -la"},
         {"role": "assistant", "content": "<think>lists files</think>"
                                          "<predicted_observation>a.txt</predicted_observation>"}],
        tokenize=False)
    tokens = loaded.convert_ids_to_tokens(loaded(sample)["input_ids"])
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(out_dir)),
        "config": str(tok_config),
        "vocab_size": stats.vocab_size,
        "special_tokens": ", ".join(SPECIAL_TOKENS),
        "training_chars": stats.chars,
        "training_trajectories": stats.trajectories,
        "seconds": round(seconds, 2),
        "preview": dg.MetadataValue.md(f"`{sample}`\n\n{len(tokens)} tokens: `"
                                       + " ".join(tokens) + "`"),
    })


class CptCorpusSettings(dg.Config):
    """Packed row length, weight of prompt and action tokens, token budget per domain."""

    seq_len: int = 512
    action_weight: float = 1.0
    max_tokens_per_domain: int = 120_000  # 0 takes every train trajectory
    base: str = ""  # a pretrained base whose tokenizer builds it (empty: {data}/tokenizer)
    # a local text dataset (datasets folder, Parquet, JSONL; e.g. `worldtrace knowledge-corpus`)
    # mixed in at knowledge_ratio of each domain's tokens; empty / 0: trajectories only
    knowledge_path: str = ""
    knowledge_ratio: float = 0.0


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, *TRAIN_POOL_TEXT))
def cpt_corpus(context: dg.AssetExecutionContext, config: CptCorpusSettings,
               storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Train trajectories as chat text, tokenized, with the turn_labels loss weight of each
    observation carried to its tokens through offsets (low-weight turns stay in the text), packed
    into rows of seq_len tokens."""
    corpus_config = CptCorpusConfig(seq_len=config.seq_len, action_weight=config.action_weight,
                                    max_tokens_per_domain=config.max_tokens_per_domain or None,
                                    knowledge_path=config.knowledge_path or None,
                                    knowledge_ratio=config.knowledge_ratio)
    started = time.perf_counter()
    tokenizer, tokenizer_dir = split_tokenizer(storage, config.base)
    stats = build_cpt_corpus(storage.data_path, tokenizer, DOMAINS, corpus_config)
    seconds = time.perf_counter() - started
    rows = stats.table()
    context.log.info(f"cpt_corpus {corpus_config}: {sum(r['tokens'] for r in rows):,} tokens "
                     f"in {sum(r['rows'] for r in rows)} rows in {seconds:.1f}s")
    return dg.MaterializeResult(metadata={
        **table_metadata(CPT_CORPUS, storage.data_path, None, ["trajectory_ids", "domain"]),
        "config": str(corpus_config),
        "tokenizer": dg.MetadataValue.path(str(tokenizer_dir)),
        "knowledge_path": config.knowledge_path or None,
        "knowledge_ratio": config.knowledge_ratio,
        "knowledge_tokens": sum(stats.knowledge_tokens.values()),
        "per_domain": dg.MetadataValue.md(records_table(rows)),
        "tokens": sum(r["tokens"] for r in rows),
        "seconds": round(seconds, 2),
        "tokens_per_second": round(sum(r["tokens"] for r in rows) / max(seconds, 1e-9)),
    })


def split_metadata(data_dir, table: Table, stats: SampleStats, seconds: float,
                   preview_columns: list[str]) -> dict:
    """Row count, schema, preview, per-domain counts and token statistics of a sample split."""
    rows = stats.table()
    return {
        **table_metadata(table, data_dir, None, preview_columns),
        "config": stats.config,
        "per_domain": dg.MetadataValue.md(records_table(rows)),
        "skipped": dg.MetadataValue.md(records_table(
            [{"domain": d, "reason": r, "targets": n} for (d, r), n in sorted(
                stats.skipped.items())])),
        "hf_dataset": dg.MetadataValue.path(str(table.dir(data_dir) / HF_FOLDER)),
        "samples": sum(r["samples"] for r in rows),
        "prompt_tokens_max": max((r["prompt_tokens_max"] for r in rows), default=0),
        "seconds": round(seconds, 2),
    }


class SftSettings(dg.Config):
    """SFT targets per trajectory, prompt budget, observation head of the target (0: the whole
    observation), rationale style (brief | full), trajectories per domain (0: all), and an
    optional teacher (OpenAI-compatible base URL and model; empty: deterministic rationale).
    Defaults are the library's (training.sft_split.SftSplitConfig), sized for the tiny CPU model."""

    turns_per_trajectory: int = SftSplitConfig.turns_per_trajectory
    max_prompt_tokens: int = SftSplitConfig.max_prompt_tokens
    max_target_observation_tokens: int = SftSplitConfig.max_target_observation_tokens or 0
    rationale: str = SftSplitConfig.rationale
    max_trajectories_per_domain: int = SftSplitConfig.max_trajectories_per_domain or 0
    validation_share: float = SftSplitConfig.validation_share  # trajectories held out for eval_loss
    teacher_base_url: str = ""
    teacher_model: str = ""
    teacher_api_key: str = "none"
    # a pretrained base whose tokenizer builds it (empty: {data}/tokenizer); give its budgets
    # too (training.sft_split.REAL_BASE_BUDGETS; `worldtrace run --base` does)
    base: str = ""


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, *TRAIN_POOL_TEXT))
def sft_split(context: dg.AssetExecutionContext, config: SftSettings,
              storage: WorldtraceStorage) -> dg.MaterializeResult:
    """Next-observation SFT samples in the conversational messages format: one of 10 system
    prompt variants, history under a token budget, the action, then the target
    `<think>reasoning</think><predicted_observation>...</predicted_observation>`; whole
    trajectories held out as split "validation" (stable hash, validation_share); Parquet per
    domain and a DatasetDict (save_to_disk: train, validation) that TRL reads as is."""
    sft_config = SftSplitConfig(turns_per_trajectory=config.turns_per_trajectory,
                           max_prompt_tokens=config.max_prompt_tokens,
                           max_target_observation_tokens=(
                               config.max_target_observation_tokens or None),
                           rationale=config.rationale,
                           max_trajectories_per_domain=config.max_trajectories_per_domain or None,
                           validation_share=config.validation_share)
    teacher = (OpenAITeacher(config.teacher_base_url, config.teacher_model,
                             config.teacher_api_key) if config.teacher_base_url else None)
    started = time.perf_counter()
    tokenizer, tokenizer_dir = split_tokenizer(storage, config.base)
    stats = build_sft_split(storage.data_path, tokenizer, DOMAINS, sft_config, teacher)
    seconds = time.perf_counter() - started
    context.log.info(f"sft_split {sft_config}: {sum(stats.samples.values())} samples "
                     f"({sum(stats.validation.values())} validation) in {seconds:.1f}s")
    metadata = split_metadata(storage.data_path, SFT_SPLIT, stats, seconds,
                              ["messages", "domain", "prompt_variant", "reasoning_source",
                               "split"])
    metadata["validation_samples"] = sum(stats.validation.values())
    metadata["tokenizer"] = dg.MetadataValue.path(str(tokenizer_dir))
    if teacher:
        metadata.update(teacher_queries=teacher.stats.queries, teacher_kept=teacher.stats.kept,
                        teacher_retention=round(teacher.stats.retention, 4))
    return dg.MaterializeResult(metadata=metadata)


class RlSettings(dg.Config):
    """Prompt token budget (the recipe caps at 128K) and trajectories per domain (0: all)."""

    max_prompt_tokens: int = 131_072
    max_trajectories_per_domain: int = 24
    base: str = ""  # a pretrained base whose tokenizer builds it (empty: {data}/tokenizer)


def _rl_asset(context: dg.AssetExecutionContext, config: RlSettings,
              storage: WorldtraceStorage, all_turns: bool) -> dg.MaterializeResult:
    rl_config = RlConfig(all_turns=all_turns, max_prompt_tokens=config.max_prompt_tokens,
                         max_trajectories_per_domain=config.max_trajectories_per_domain or None)
    started = time.perf_counter()
    tokenizer, tokenizer_dir = split_tokenizer(storage, config.base)
    stats = build_rl_split(storage.data_path, tokenizer, DOMAINS, rl_config)
    seconds = time.perf_counter() - started
    context.log.info(f"{rl_config.table.name} {rl_config}: {sum(stats.samples.values())} samples "
                     f"in {seconds:.1f}s")
    return dg.MaterializeResult(metadata={**split_metadata(
        storage.data_path, rl_config.table, stats, seconds,
        ["prompt", "reference_observation", "turn_index", "verifier", "prompt_tokens"]),
        "tokenizer": dg.MetadataValue.path(str(tokenizer_dir))})


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, *TRAIN_POOL_TEXT))
def rl_split(context: dg.AssetExecutionContext, config: RlSettings,
             storage: WorldtraceStorage) -> dg.MaterializeResult:
    """RL prompts, exactly one target turn per train trajectory (seeded, among judgeable
    turns), history under the token budget (oldest turns dropped), with the reference
    observation, the domain's verifier spec and the prompt's token count."""
    return _rl_asset(context, config, storage, all_turns=False)


@dg.asset(group_name=GROUP, deps=reads(TOKENIZER, *TRAIN_POOL_TEXT))
def rl_split_all_turns(context: dg.AssetExecutionContext, config: RlSettings,
                       storage: WorldtraceStorage) -> dg.MaterializeResult:
    """rl_split with a sample for every judgeable turn of the same trajectories: many
    near-identical long prefixes, for the Echo Trap ablation."""
    return _rl_asset(context, config, storage, all_turns=True)
