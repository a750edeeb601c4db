"""The official AgentWorldBench JSONL layout: one `<domain>_test.jsonl` per domain.

A record (see ../shared/notes/agentworldbench.md):

    {"task": "terminal", "id": "...", "turn_idx": 3, "total_turns": 9,
     "prompt": ["### Turn 1\\n**Action:**\\nls", "### Turn 2\\n**Action:**\\n...", "### Turn 3..."],
     "response": ["**Environment Observation:**\\nREADME.md\\nsrc", "...", "<the reference>"],
     "current_prompt": "### Turn 3\\n**Action:**\\n...", "system_str": "..."}

`prompt[k]` / `response[k]` are turn k+1's action and real observation; the predicted turn is
`turn_idx` (1-based): its history is the first `turn_idx - 1` pairs and its reference is
`response[turn_idx - 1]`. GUI prompts (android, web, os) read
"**Task Instruction:**\\n<task>\\n\\n**Current State:**\\n<screen>\\n\\n**Action:**\\n<action>",
the screen being the previous observation (the initial screen on turn 1).

We write our own keys beside the official ones (`trajectory_id`, `source`, `category`); the
official evaluation ignores them, and files without them (the official benchmark) import with
`trajectory_id` "agentworldbench:<domain>:<id>" and source "agentworldbench".
`chat_messages` is what every model predictor sends: the released evaluation's construction
over the sample's record (`official_messages`): `system_str`, each earlier `prompt[i]` /
`response[i]` as user / assistant, then `prompt[turn_idx - 1]`, verbatim. A sample read from a
file keeps its record, so nothing is re-rendered (a terminal prompt's **Current State:**, a
**Historical Context:** section, a GUI state that differs from the previous observation all
reach the model as written); samples we built are rendered once, by `to_record`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.predictors.messages import conversation
from bench.sample import GUI_DOMAINS, BenchSample
from sources.readers.agentworldbench import OBSERVATION_MARKER, split_prompt, strip_observation
from sources.schema import DOMAINS
from sources.storage import atomic_path

# The official evaluation's sampling temperature (agentworldbench.md: "Reference settings:
# temperature 0.6"); model predictors default to it, seeded per batch so runs repeat.
REFERENCE_TEMPERATURE = 0.6
# The released evaluation's answer budget (eval.py --max-tokens), capped by the model's context.
OFFICIAL_MAX_TOKENS = 32_768

OFFICIAL_SUFFIX = "_test.jsonl"
DEFAULT_SOURCE = "agentworldbench"


def official_file(bench_dir: Path | str, domain: str) -> Path:
    """Where one domain's samples live: <dir>/<domain>_test.jsonl."""
    return Path(bench_dir) / f"{domain}{OFFICIAL_SUFFIX}"


def render_prompt(sample: BenchSample, turn: int) -> str:
    """The official prompt text of turn `turn` (1-based, up to and including turn_idx) of a
    sample we built (a sample read from a file sends its record's own strings instead)."""
    action = sample.history[turn - 1][0] if turn < sample.turn_idx else sample.current_action
    if sample.domain not in GUI_DOMAINS:
        return f"### Turn {turn}\n**Action:**\n{action}"
    state = sample.history[turn - 2][1] if turn > 1 else sample.initial_state
    return (f"### Turn {turn}\n**Task Instruction:**\n{sample.task}\n\n"
            f"**Current State:**\n{state}\n\n**Action:**\n{action}")


def render_response(observation: str) -> str:
    """The official response text of an observation."""
    return f"{OBSERVATION_MARKER}\n{observation}"


def official_messages(record: dict[str, Any]) -> list[dict[str, str]]:
    """The messages the released evaluation sends for a record, string for string: the
    `system_str` (when not empty), each earlier `prompt[i]` / `response[i]` as user /
    assistant, then `prompt[turn_idx - 1]` (not `current_prompt`) as the last user message."""
    position = record["turn_idx"] - 1
    prompts, responses = _strings(record, "prompt"), _strings(record, "response")
    return conversation(record.get("system_str") or "",
                        zip(prompts[:position], responses[:position], strict=True),
                        prompts[position])


def to_record(sample: BenchSample) -> dict[str, Any]:
    """The official record of a sample: the one it was read from, verbatim, else ours rendered
    (with our provenance keys beside the official ones)."""
    if sample.record is not None:
        return dict(sample.record)
    prompts = [render_prompt(sample, turn) for turn in range(1, sample.turn_idx + 1)]
    responses = [render_response(obs) for _, obs in sample.history]
    responses.append(render_response(sample.reference))
    return {
        "task": sample.domain, "id": sample.id, "prompt": prompts, "response": responses,
        "current_prompt": prompts[-1], "system_str": sample.system_prompt,
        "turn_idx": sample.turn_idx, "total_turns": sample.total_turns,
        "trajectory_id": sample.trajectory_id, "source": sample.source,
        "category": sample.category,
    }


def chat_messages(sample: BenchSample) -> list[dict[str, str]]:
    """What a model is sent for a sample: the official construction over its record."""
    return official_messages(to_record(sample))


class RecordError(ValueError):
    """A record that is not a valid official sample (the message says which field and why)."""


def _strings(record: dict[str, Any], key: str) -> list[str]:
    value = record.get(key, [])
    if isinstance(value, str):
        value = [value]  # the official loader accepts a bare string for one turn
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RecordError(f"$.{key} must be a list of strings")
    return value


def _positive_int(record: dict[str, Any], key: str, default: int | None = None) -> int:
    value = record.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RecordError(f"$.{key} must be an integer >= 1, got {value!r}")
    return value


def from_record(record: Any) -> BenchSample:
    """An official record as a BenchSample (RecordError naming the bad field otherwise)."""
    if not isinstance(record, dict):
        raise RecordError(f"record must be an object, got {type(record).__name__}")
    task = record.get("task")
    domain = task.split("/")[-1] if isinstance(task, str) else None
    if domain not in DOMAINS:
        raise RecordError(f"$.task {task!r} names no domain of {', '.join(DOMAINS)}")
    prompts, responses = _strings(record, "prompt"), _strings(record, "response")
    turn_idx = _positive_int(record, "turn_idx")
    if len(responses) < turn_idx:
        raise RecordError(f"$.response has {len(responses)} entries, turn_idx {turn_idx} needs "
                          f"the reference at position {turn_idx}")
    if len(prompts) < turn_idx:
        raise RecordError(f"$.prompt has {len(prompts)} entries; turn_idx {turn_idx} sends "
                          f"the one at position {turn_idx}")
    current = record.get("current_prompt") or prompts[turn_idx - 1]
    if not isinstance(current, str):
        raise RecordError("$.current_prompt must be a string")
    parts = [split_prompt(p) for p in [*prompts[: turn_idx - 1], current]]
    history = [(action, strip_observation(responses[k]))
               for k, (action, _) in enumerate(parts[:-1])]
    instructions = [s.get("Task Instruction", "").strip() for _, s in parts]
    total_turns = _positive_int(record, "total_turns", default=max(len(prompts), turn_idx))
    record_id = record.get("id")
    if record_id is None or isinstance(record_id, (dict, list)):
        raise RecordError(f"$.id must be a string or number, got {record_id!r}")
    system = record.get("system_str", "")
    if not isinstance(system, str):
        raise RecordError("$.system_str must be a string")
    return BenchSample(
        domain=domain, id=str(record_id), history=history, current_action=parts[-1][0],
        reference=strip_observation(responses[turn_idx - 1]), system_prompt=system,
        turn_idx=turn_idx, total_turns=max(total_turns, turn_idx),
        trajectory_id=str(record.get("trajectory_id") or f"{DEFAULT_SOURCE}:{domain}:{record_id}"),
        source=str(record.get("source") or DEFAULT_SOURCE),
        task=next((t for t in instructions if t), ""),
        initial_state=parts[0][1].get("Current State", ""),
        category=str(record.get("category") or ""), record=record,
    )


@dataclass(frozen=True)
class ImportProblem:
    """A record that could not be imported: file, 1-based line, reason."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def read_official_file(path: Path | str) -> Iterator[BenchSample | ImportProblem]:
    """Stream one official JSONL file: a sample per good line, a problem per bad one."""
    path = Path(path)
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield from_record(json.loads(raw))
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                yield ImportProblem(str(path), line_no, f"invalid JSON: {error}")
            except (RecordError, ValueError) as error:
                yield ImportProblem(str(path), line_no, str(error))


def official_files(bench_dir: Path | str) -> list[Path]:
    """The `*_test.jsonl` files of a folder, sorted (FileNotFoundError when there are none)."""
    files = sorted(Path(bench_dir).glob(f"*{OFFICIAL_SUFFIX}"))
    if not files:
        raise FileNotFoundError(f"no *{OFFICIAL_SUFFIX} files in {bench_dir}")
    return files


def read_official(bench_dir: Path | str) -> tuple[list[BenchSample], list[ImportProblem]]:
    """Every sample of a benchmark folder, and every record that could not be read."""
    samples: list[BenchSample] = []
    problems: list[ImportProblem] = []
    for path in official_files(bench_dir):
        for item in read_official_file(path):
            (problems if isinstance(item, ImportProblem) else samples).append(item)
    return samples, problems


def write_official(samples: Iterable[BenchSample], out_dir: Path | str,
                   domains: Iterable[str] = ()) -> dict[str, int]:
    """Write samples as <out_dir>/<domain>_test.jsonl (atomically, one file per domain present,
    in the order given); returns the count per domain. Each of `domains` without a sample (a
    build's domain that drew none) has its file removed: an earlier build's would be read as
    this one's."""
    by_domain: dict[str, list[BenchSample]] = {}
    for sample in samples:
        by_domain.setdefault(sample.domain, []).append(sample)
    for domain in set(domains) - set(by_domain):
        official_file(out_dir, domain).unlink(missing_ok=True)
    for domain, group in by_domain.items():
        with atomic_path(official_file(out_dir, domain)) as tmp:
            with tmp.open("w", encoding="utf-8") as handle:
                for sample in group:
                    handle.write(json.dumps(to_record(sample), ensure_ascii=False) + "\n")
    return {domain: len(group) for domain, group in by_domain.items()}
