"""The official judge's prompts, loaded at run time from a checkout of the released repository,
and its forgiving reading of the judge's answer.

`load_official_prompts(DIR)`: DIR is the repository's `prompts/` folder (`--judge-prompts`).
Each domain's system prompt is `DIR/<domain>/judge_system_prompt.txt`; the user prompt template
is the `JUDGE_USER_PROMPT` string of `DIR/../eval/lwm_eval_utils/task_configs.py`, read as a
literal (never executed). Nothing of either is copied into this project.

`official_judge_messages` fills the template's fields as the released `eval.py` does: the whole
history (each earlier prompt and response, verbatim, under "# Context (Historical
Interactions):"), the current prompt (the record's `current_prompt`), the simulated output (the
official extraction) and the ground truth, both without the observation marker.

`read_verdict` reads an answer the way the released judge parser does: thinking removed; the
last `<final_evaluation>` block if there is one (to its close or the end), else the whole text;
JSON from a fenced block (the last holding "scores"), else the last balanced object holding
"scores", else the last balanced object; trailing commas, single-quoted and bare keys repaired;
when that still fails, the "scores" object alone. A score may be an integer, a float (rounded),
or a string such as "4/5" (its number before the slash); anything else is 0 (missing); scores
above 0 are clamped to 1..5. No "scores" object: unreadable (the caller asks again, 3 times in
all, then the sample fails).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.parsing import last_tagged_block, remove_marker, remove_thinking
from bench.scoring import AXES
from sources.schema import DOMAINS

VERDICT_TAG = "final_evaluation"
TEMPLATE_FILE = Path("eval") / "lwm_eval_utils" / "task_configs.py"
TEMPLATE_NAME = "JUDGE_USER_PROMPT"
TEMPLATE_FIELDS = ("context", "world_model_input", "predicted_observation", "ground_truth")


class OfficialPromptsError(FileNotFoundError):
    """A --judge-prompts folder that is not a checkout of the released prompts."""


@dataclass(frozen=True)
class OfficialPrompts:
    """The per-domain judge system prompts and the user prompt template, with where they came
    from (recorded in every verdict)."""

    system: Mapping[str, str]
    user_template: str
    source: str


def _template(path: Path) -> str:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as error:
        raise OfficialPromptsError(f"{path}: cannot read the judge user prompt ({error})"
                                   ) from None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == TEMPLATE_NAME
                                                 for t in node.targets)):
            value = ast.literal_eval(node.value)
            missing = [f for f in TEMPLATE_FIELDS if "{" + f + "}" not in value]
            if missing:
                raise OfficialPromptsError(f"{path}: {TEMPLATE_NAME} lacks the fields {missing}")
            return value
    raise OfficialPromptsError(f"{path}: no {TEMPLATE_NAME} string")


def load_official_prompts(prompts_dir: Path | str) -> OfficialPrompts:
    """The released judge prompts of a checkout (OfficialPromptsError naming what is missing)."""
    folder = Path(prompts_dir)
    paths = {domain: folder / domain / "judge_system_prompt.txt" for domain in DOMAINS}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise OfficialPromptsError(f"--judge-prompts {folder}: no judge prompt at "
                                   + ", ".join(missing))
    template_path = folder.resolve().parent / TEMPLATE_FILE
    if not template_path.is_file():
        raise OfficialPromptsError(f"--judge-prompts {folder}: the judge user prompt is read "
                                   f"from {template_path}, which is missing (point at the "
                                   "prompts/ folder of a full checkout)")
    return OfficialPrompts({d: p.read_text(encoding="utf-8") for d, p in paths.items()},
                           _template(template_path), str(folder.resolve()))


def official_judge_messages(record: Mapping[str, Any], domain: str, observation: str,
                            prompts: OfficialPrompts) -> list[dict[str, str]]:
    """System = the domain's official judge prompt; user = the official template over the
    record's own strings (`observation`: the official extraction, marker removed)."""
    prompt_list, responses = list(record.get("prompt") or []), list(record.get("response") or [])
    position = max(int(record.get("turn_idx", 1)) - 1, 0)
    context = "".join(f"{prompt_list[i]}\n{responses[i]}\n\n"
                      for i in range(min(position, len(prompt_list), len(responses))))
    if context:
        context = f"# Context (Historical Interactions):\n\n{context}"
    current = record.get("current_prompt") or (
        prompt_list[position] if position < len(prompt_list) else "")
    truth = remove_marker(responses[position] if position < len(responses) else "")
    user = prompts.user_template.format(
        context=context, world_model_input=f"# Current Turn:\n\n{current}",
        predicted_observation=f"**World Model Output (Simulated):**\n```\n{observation}\n```",
        ground_truth=f"**Ground Truth (Real Output):**\n```\n{truth}\n```").strip()
    return [{"role": "system", "content": prompts.system[domain]},
            {"role": "user", "content": user}]


def _balanced(text: str, start: int) -> str | None:
    """The brace-balanced object starting at text[start] (strings and escapes respected)."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if escaped:
            escaped = False
        elif char == "\\" and in_string:
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif not in_string and char == "{":
            depth += 1
        elif not in_string and char == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _objects(text: str) -> list[str]:
    found, position = [], 0
    while (start := text.find("{", position)) != -1:
        whole = _balanced(text, start)
        if whole:
            found.append(whole)
        position = start + (len(whole) if whole else 1)
    return found


def _last_object_backwards(text: str) -> str | None:
    """The object that ends at the last '}', matched backwards (quotes toggle, crudely)."""
    end = text.rfind("}")
    depth, in_string = 0, False
    for i in range(end, -1, -1):
        if text[i] == '"' and (i == 0 or text[i - 1] != "\\"):
            in_string = not in_string
        if not in_string and text[i] == "}":
            depth += 1
        elif not in_string and text[i] == "{":
            depth -= 1
            if depth == 0:
                return text[i:end + 1]
    return None


def _json_text(text: str) -> str | None:
    fenced = [m.group(1).strip() for m in re.finditer(r"```(?:json)?\s*([\s\S]*?)\s*```", text)]
    fenced = [f for f in fenced if f.startswith("{") and f.endswith("}")]
    if fenced:
        return next((f for f in reversed(fenced) if '"scores"' in f), fenced[-1])
    objects = _objects(text)
    if objects:
        return next((o for o in reversed(objects) if '"scores"' in o), objects[-1])
    return _last_object_backwards(text) if "}" in text else None


def _repaired(text: str) -> str:
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    text = re.sub(r"'(\w+)'(\s*:)", r'"\1"\2', text)
    return re.sub(r"([{,])\s*(\w+)\s*:", r'\1"\2":', text)


def _axis(value: Any) -> int:
    if isinstance(value, bool):
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = int(round(value))
    elif isinstance(value, str):
        try:
            number = int(value.split("/")[0].strip())
        except ValueError:
            number = 0
    else:
        number = 0
    return max(1, min(5, number)) if number > 0 else 0


def read_verdict(answer: str) -> dict[str, Any] | None:
    """The judge's scores (0 = missing axis), strengths and weaknesses; None when unreadable."""
    text = remove_thinking((answer or "").strip(), VERDICT_TAG)
    if not text:
        return None
    tagged = last_tagged_block(text, VERDICT_TAG)
    found = _json_text(tagged or text)
    if not found and tagged:
        objects = _objects(tagged)
        found = objects[-1] if objects else _last_object_backwards(tagged)
    if not found:
        return None
    found = _repaired(found)
    try:
        verdict = json.loads(found)
    except json.JSONDecodeError:
        scores_only = re.search(r'"scores"\s*:\s*\{[^}]+\}', found)
        try:
            verdict = json.loads("{" + scores_only.group(0) + "}") if scores_only else None
        except json.JSONDecodeError:
            verdict = None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("scores"), dict):
        return None
    scores = {axis: _axis(verdict["scores"].get(axis, 0)) for axis in AXES}
    return {"scores": scores, "strengths": _texts(verdict.get("strengths")),
            "weaknesses": _texts(verdict.get("weaknesses"))}


def _texts(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(item) for item in value]
    return [value] if isinstance(value, str) and value else []
