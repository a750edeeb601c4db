"""The diagnostics beyond the official scores, for a run folder: a second opinion from the LLM
judge (with its agreement with the rubric) and free-running decay.

- `llm_judge_rows`: the LLM judge's score rows (SCORE_SCHEMA, judge = "llm_judge:<model>");
  a sample the judge could not grade is a failed row (no score, out of every average) and is
  listed as unjudged with the reason.
- `agreement_rows`: Spearman per domain between the rubric's and the LLM judge's sample scores
  of the same predictor and sample (bench.judges.agreement).
- `rollout_steps`: `--rollout K` for one predictor (bench.rollout), judged by the rubric.
- `write_diagnostics`: llm_scores.csv, llm_unjudged.csv, agreement.csv, rollout.csv into the
  run folder.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.evaluate import SCORE_SCHEMA, failed_row, failure_reason
from bench.judges.agreement import judge_agreement
from bench.judges.llm_judge import JudgeFailure, LLMJudge
from bench.judges.rubric import copies_history, judge
from bench.parsing import parse_prediction
from bench.predictors.base import Predictor
from bench.rollout import (
    RolloutChain,
    RolloutStep,
    chains_from_samples,
    chains_from_turns,
    decay_table,
    free_run,
    read_trajectory_turns,
)
from bench.sample import BenchSample
from quality.tables import SCRUBBED_TURNS
from sources.storage import atomic_path

UNJUDGED_COLUMNS = ("predictor", "id", "domain", "judge", "reason")
JUDGE_FAILED = "Judge scoring failed"  # the released evaluation's reason


def llm_judge_rows(llm_judge: LLMJudge, samples: Sequence[BenchSample], outputs: Sequence[str],
                   predictor: str, failures: dict[str, str] | None = None
                   ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(score rows, one UNJUDGED_COLUMNS row per sample the judge could not grade). As in the
    released evaluation, an empty generation is a failed row the judge is never asked about,
    and a sample the judge never answered readably is a failed row too."""
    reasons = [failure_reason(output, (failures or {}).get(s.id, ""))
               for s, output in zip(samples, outputs, strict=True)]
    asked = [i for i, reason in enumerate(reasons) if not reason]
    results = dict(zip(asked, llm_judge.judge_all([samples[i] for i in asked],
                                                  [outputs[i] for i in asked]), strict=True))
    rows, unjudged = [], []
    for i, (sample, output) in enumerate(zip(samples, outputs, strict=True)):
        parsed = parse_prediction(output)
        echo = copies_history(parsed.judged_text, sample)
        result = results.get(i)
        if result is None or isinstance(result, JudgeFailure):
            reason = reasons[i] or f"{JUDGE_FAILED}: {result}"
            rows.append(failed_row(sample, predictor, llm_judge.name, reason, parsed.malformed,
                                   echo, llm_judge.config.scoring))
            if result is not None:
                unjudged.append({"predictor": predictor, "id": sample.id,
                                 "domain": sample.domain, "judge": llm_judge.name,
                                 "reason": str(result)})
            continue
        rows.append({
            "id": sample.id, "domain": sample.domain, "source": sample.source,
            "category": sample.category, "predictor": predictor, "judge": llm_judge.name,
            "scoring": llm_judge.config.scoring, **result.as_dict(), "score": result.score,
            "failed": False, "failure_reason": "",
            "rule_score": None, "malformed": parsed.malformed, "copies_history": echo,
            "evidence": json.dumps(result.evidence, sort_keys=True)})
    return rows, unjudged


def agreement_rows(rubric_rows: Sequence[dict[str, Any]], llm_rows: Sequence[dict[str, Any]]
                   ) -> list[dict[str, Any]]:
    """Per predictor, the rubric-vs-LLM Spearman per domain (and over all its samples)."""
    rubric = {(row["predictor"], row["id"]): row for row in rubric_rows if not row["failed"]}
    out = []
    for predictor in sorted({row["predictor"] for row in llm_rows}):
        pairs = [(row["domain"], rubric[(predictor, row["id"])]["score"], row["score"])
                 for row in llm_rows if row["predictor"] == predictor and not row["failed"]
                 and (predictor, row["id"]) in rubric]
        out += [{"predictor": predictor, **a.row()} for a in judge_agreement(pairs)]
    return out


def rollout_chains(samples: Sequence[BenchSample], data_dir: Path | None) -> list[RolloutChain]:
    """Chains from the data dir's scrubbed_turns where it has them, else from later samples."""
    chains = []
    for domain in sorted({s.domain for s in samples}):
        of_domain = [s for s in samples if s.domain == domain]
        if data_dir is not None and SCRUBBED_TURNS.has(data_dir, domain):
            turns = read_trajectory_turns(data_dir, domain, {s.trajectory_id for s in of_domain})
            known = [s for s in of_domain if s.trajectory_id in turns]
            chains += chains_from_turns(known, turns)
        else:
            chains += chains_from_samples(of_domain)
    return chains


def rollout_steps(predictor: Predictor, samples: Sequence[BenchSample], depth: int,
                  data_dir: Path | None = None) -> list[RolloutStep]:
    """Free-running steps of one predictor, judged by the offline rubric."""
    return free_run(predictor, rollout_chains(samples, data_dir), depth, judge)


def _write_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str], path: Path) -> Path:
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_diagnostics(out_dir: Path, llm_rows: Sequence[dict[str, Any]] = (),
                      agreement: Sequence[dict[str, Any]] = (),
                      rollout: dict[str, list[RolloutStep]] | None = None,
                      unjudged: Sequence[dict[str, str]] = ()) -> dict[str, Path]:
    """llm_scores.csv and agreement.csv (when the LLM judge graded something), llm_unjudged.csv
    (the samples it could not grade, and why), rollout.csv (per predictor, domain and depth)
    when free-running ran."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    if llm_rows:
        paths["llm_scores"] = _write_csv(llm_rows, SCORE_SCHEMA.names, out_dir / "llm_scores.csv")
    if unjudged:
        paths["llm_unjudged"] = _write_csv(unjudged, UNJUDGED_COLUMNS,
                                           out_dir / "llm_unjudged.csv")
    if agreement:
        paths["agreement"] = _write_csv(agreement, list(agreement[0]), out_dir / "agreement.csv")
    rows = [{"predictor": name, **row} for name, steps in (rollout or {}).items()
            for row in decay_table(steps)]
    if rows:
        paths["rollout"] = _write_csv(rows, list(rows[0]), out_dir / "rollout.csv")
    return paths


def write_decay_chart(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Score by depth over all domains, one colour per predictor: free-running solid,
    teacher-forced dashed (rows: decay_table rows with a `predictor` key)."""
    from sources.plots import plt, write_png  # matplotlib only when a chart is drawn

    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for index, name in enumerate(sorted({row["predictor"] for row in rows})):
        mine = sorted((r for r in rows if r["predictor"] == name and r["domain"] == "all"),
                      key=lambda r: r["depth"])
        depths = [r["depth"] for r in mine]
        colour = f"C{index % 10}"
        axes.plot(depths, [r["free_running"] for r in mine], "-o", color=colour,
                  label=f"{name} free-running")
        axes.plot(depths, [r["teacher_forced"] for r in mine], "--", color=colour,
                  label=f"{name} teacher-forced")
    axes.set_xlabel("depth (steps since the last real observation + 1)")
    axes.set_ylabel("score (0-100)")
    axes.set_ylim(0, 100)
    axes.set_title("Free-running decay: own predictions fed back")
    axes.legend(fontsize=7)
    figure.tight_layout()
    return write_png(figure, path)
