"""The ablation on tiny split tables: variants train from their parents, reuse finished folders,
and every variant plus the copy-last baseline is scored by the bench's own loop in one table."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from training_fixtures import TEXTS, write_split_tables

from bench.sample import BenchSample
from training.ablation import AblationConfig, run_ablation, wanted
from training.ablation_report import write_report
from training.cpt import CptConfig
from training.gspo import GspoConfig
from training.runner import StepConfig
from training.sft import SftConfig

TINY = StepConfig(max_steps=2, batch_size=4, logging_steps=1, save_steps=10)


def bench_samples_fixture() -> list[BenchSample]:
    samples = []
    for i, text in enumerate(TEXTS[:4]):
        action, observation = text.split("\n", 1)
        domain = ("terminal", "search")[i % 2]
        samples.append(BenchSample(domain=domain, id=f"{domain}-{i}", history=[("pwd", "/home")],
                                   current_action=action, reference=observation,
                                   system_prompt="", turn_idx=2, total_turns=2,
                                   trajectory_id=f"t{i}", source="test"))
    return samples


def test_wanted_adds_parents_in_training_order() -> None:
    assert wanted(AblationConfig(variants=("cpt_sft_rl",))) == ["cpt", "cpt_sft", "cpt_sft_rl"]
    assert wanted(AblationConfig(variants=("sft_all_turns", "cpt_unweighted"))) == [
        "cpt", "cpt_unweighted", "sft_all_turns"]


def test_ablation_table_scores_variants_and_baseline(tmp_path: Path) -> None:
    write_split_tables(tmp_path)
    config = AblationConfig(cpt=CptConfig(steps=TINY), sft=SftConfig(steps=TINY),
                            rl=GspoConfig(steps=TINY), max_new_tokens=8,
                            variants=("untrained", "sft_all_turns"))
    report = run_ablation(tmp_path, bench_samples_fixture(), config)
    rows = report.rows
    assert [row["variant"] for row in rows] == ["untrained", "cpt", "sft_all_turns", "copy_last"]
    for row in rows:
        assert row["samples"] == 4 and 0 <= row["overall_macro"] <= 100
        assert row["overall_ci_low"] <= row["overall_macro"] <= row["overall_ci_high"]
        assert row["terminal"] is not None and row["search"] is not None and row["web"] is None
        assert row["terminal_low"] <= row["terminal"] <= row["terminal_high"]
        assert row["web_low"] is None
        assert 0 <= row["echo_rate"] <= 1 and 0 <= row["malformed_rate"] <= 1
    assert rows[-1]["malformed_rate"] == 0  # copy-last always answers in the format
    # no question of QUESTIONS has both variants here: only each one against copy-last
    assert [(p["a"], p["b"]) for p in report.paired] == [
        ("untrained", "copy_last"), ("cpt", "copy_last"), ("sft_all_turns", "copy_last")]
    assert len(report.scores) == 4 * 4
    path = write_report(report, tmp_path / "out")
    assert pq.read_table(path).num_rows == 4
    assert pq.read_table(tmp_path / "out" / "ablation_paired.parquet").num_rows == 3
    assert pq.read_table(tmp_path / "out" / "ablation_scores.parquet").num_rows == 16
    text = (tmp_path / "out" / "ablation.md").read_text()
    overall = f"{rows[0]['overall_macro']} [{rows[0]['overall_ci_low']}, "
    assert overall in text and "Paired differences" in text and "untrained - copy_last" in text
    folder = tmp_path / "models" / "ablation" / "sft_all_turns"
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    run_ablation(tmp_path, bench_samples_fixture(), config)  # second run reuses the folders
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_configure_on_a_base_starts_cpt_from_it_at_real_base_lengths(tmp_path: Path) -> None:
    from training.ablation import configure
    from training.sft_split import REAL_BASE_BUDGETS

    config = configure(sft_steps=5, base_model=tmp_path / "smollm2")
    assert config.cpt.model.checkpoint == str(tmp_path / "smollm2")
    assert config.sft.model.checkpoint is None and config.rl.model.checkpoint is None  # chain on
    assert config.sft.max_length == REAL_BASE_BUDGETS.sample_tokens
    assert config.rl.max_prompt_tokens == REAL_BASE_BUDGETS.prompt_tokens
    assert config.max_new_tokens == REAL_BASE_BUDGETS.answer_tokens
    assert config.sft.steps.max_steps == 5


def test_the_knowledge_variant_adds_documents_to_cpt(tmp_path: Path, capsys) -> None:
    """cpt_knowledge trains on cpt_corpus plus knowledge rows (a fifth of the tokens at ratio
    0.2), and the knowledge variants run only when a dataset is given."""
    import json

    from training.training_log import TrainingLog

    write_split_tables(tmp_path)
    knowledge = tmp_path / "knowledge.jsonl"
    knowledge.write_text("".join(json.dumps({"text": f"ls lists files {k} " * 4}) + "\n"
                                 for k in range(20)))
    config = AblationConfig(cpt=CptConfig(steps=TINY), knowledge_path=str(knowledge),
                            variants=("cpt_knowledge",))
    assert wanted(config) == ["cpt_knowledge"]
    assert "cpt_knowledge" not in wanted(AblationConfig())
    from training.ablation import train_variants

    train_variants(tmp_path, config)
    log = TrainingLog.read(tmp_path / "models" / "ablation" / "cpt_knowledge")
    assert log.steps == 2
    line = next(x for x in capsys.readouterr().out.splitlines() if "knowledge tokens" in x)
    corpus, added = (int(w.replace(",", "")) for w in line.split() if w[0].isdigit())
    assert corpus * 0.25 <= added < corpus * 0.25 + 60  # whole documents: at most one over


def test_bench_samples_takes_first_per_domain(tmp_path: Path) -> None:
    from bench.official import write_official
    from training.ablation import bench_samples

    write_official(bench_samples_list := bench_samples_fixture(), tmp_path / "awb")
    samples, problems = bench_samples(tmp_path, tmp_path / "awb", per_domain=1)
    assert problems == []
    assert [(s.domain, s.id) for s in samples] == [("search", "search-1"),
                                                    ("terminal", "terminal-0")]
    assert len(bench_samples(tmp_path, tmp_path / "awb")[0]) == len(bench_samples_list)


def test_cli_ablation_without_a_bench_is_a_user_error(tmp_path: Path, capsys) -> None:
    from worldtrace.cli import main

    assert main(["ablation", "--data", str(tmp_path)]) == 2
    assert "no bench folder" in capsys.readouterr().err


def _scored(scores: dict[str, float]) -> list[dict]:
    return [{"id": sample_id, "domain": sample_id.split("-")[0], "score": score}
            for sample_id, score in scores.items()]


def test_the_report_answers_the_weighting_question_with_a_paired_interval(tmp_path: Path
                                                                          ) -> None:
    """Weighted CPT + SFT 10 points above unweighted on every sample: the paired difference is
    exactly 10 with no spread, though the two marginal intervals overlap; a question whose
    variants were not both scored is left out."""
    from bench.bootstrap import score_intervals
    from training.ablation_report import paired_rows

    unweighted = {f"{d}-{i}": 20.0 + 15 * i for d in ("terminal", "swe") for i in range(4)}
    scored = {"cpt_sft": _scored({k: v + 10 for k, v in unweighted.items()}),
              "cpt_unweighted_sft": _scored(unweighted),
              "copy_last": _scored(dict.fromkeys(unweighted, 40.0))}
    a, b = (score_intervals(scored[v])["overall"] for v in ("cpt_sft", "cpt_unweighted_sft"))
    assert a.low < b.high  # the marginal intervals overlap ...
    paired = paired_rows(scored)
    weighting = paired[0]
    assert (weighting["a"], weighting["b"]) == ("cpt_sft", "cpt_unweighted_sft")
    assert (weighting["difference"], weighting["low"], weighting["high"]) == (10, 10, 10)
    assert weighting["clear_of_zero"]  # ... the paired one is clear of zero
    assert [(p["a"], p["b"]) for p in paired[1:]] == [("cpt_sft", "copy_last"),
                                                       ("cpt_unweighted_sft", "copy_last")]
