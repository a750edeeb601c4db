"""The columns of the simulation's two tables (light: the table registry imports them)."""

import pyarrow as pa

# One row per replayed call (what replay_session returns).
REPLAY_STEP_SCHEMA = pa.schema([
    ("model", pa.string()), ("session", pa.string()), ("source", pa.string()),
    ("mode", pa.string()), ("depth", pa.int32()), ("tool", pa.string()), ("kind", pa.string()),
    ("answered_by", pa.string()), ("score", pa.float64()), ("rule_score", pa.float64()),
    ("failed", pa.bool_()), ("failure_reason", pa.string()),
    ("llm_judge", pa.string()), ("llm_score", pa.float64()), ("llm_failure_reason", pa.string()),
    ("seconds", pa.float64()), ("prediction", pa.large_string()),
])
REPLAY_STEP_DOCS = {
    "model": "the world model (predictor name)",
    "session": "the recorded session (trajectory id, or file:position)",
    "source": "catalog source of the session",
    "mode": "free or anchored",
    "depth": "the call's position in its session (1 = first tools/call)",
    "tool": "the tool called",
    "kind": "read (a read-only tool: answered by the anchor in anchored mode) or write",
    "answered_by": "model, anchor (the real server's recorded answer) or none (no answer)",
    "score": "sample score of the simulated observation against the real one (0-100), by the "
             "offline rubric + the MCP rule verifier",
    "rule_score": "the MCP rule verifier's score (0-1)",
    "failed": "no answer in time (left out of the means)",
    "failure_reason": "why there was no answer",
    "llm_judge": "the LLM judge that gave llm_score (llm_judge:<model> [prompts]); empty: none "
                 "given",
    "llm_score": "the LLM judge's sample score of the same observation (0-100); null: no judge, "
                 "or no verdict (llm_failure_reason says why)",
    "llm_failure_reason": "why the LLM judge gave no verdict (no answer to judge, or the judge "
                          "failed: its reason)",
    "seconds": "time to answer the call",
    "prediction": "the observation the simulation gave (its response line)",
}

# One row per (model, mode, depth) and per (model, mode) over all depths (fidelity.py).
FIDELITY_SCHEMA = pa.schema([
    ("model", pa.string()), ("mode", pa.string()), ("depth", pa.int32()),
    ("calls", pa.int64()), ("failed", pa.int64()),
    ("score", pa.float64()), ("score_low", pa.float64()), ("score_high", pa.float64()),
    ("write_calls", pa.int64()), ("write_score", pa.float64()),
    ("anchored_minus_free", pa.float64()), ("difference_low", pa.float64()),
    ("difference_high", pa.float64()),
    ("llm_judge", pa.string()), ("llm_calls", pa.int64()), ("llm_failed", pa.int64()),
    ("llm_score", pa.float64()), ("llm_score_low", pa.float64()),
    ("llm_score_high", pa.float64()), ("llm_anchored_minus_free", pa.float64()),
    ("llm_difference_low", pa.float64()), ("llm_difference_high", pa.float64()),
])
FIDELITY_DOCS = {
    "model": "the world model (predictor name: hf_local:<folder>, openai_compatible:<name>)",
    "mode": "free (the model answers every call from its own answers) or anchored (read-only "
            "calls answered by the real server)",
    "depth": "the call's position in its session (1 = first tools/call); empty: all depths",
    "calls": "judged calls",
    "failed": "calls with no answer (the model's deadline), left out of the means",
    "score": "mean sample score of the simulated observations (0-100, rubric + rule verifier)",
    "score_low": "bootstrap 95 % interval, low end",
    "score_high": "bootstrap 95 % interval, high end",
    "write_calls": "judged calls to writing tools (the model answers them in both modes)",
    "write_score": "mean score over the calls to writing tools",
    "anchored_minus_free": "paired difference over the same sessions' calls (anchored rows)",
    "difference_low": "bootstrap 95 % interval of the difference, low end",
    "difference_high": "bootstrap 95 % interval of the difference, high end",
    "llm_judge": "the LLM judge of the llm_ columns (empty: none given, the llm_ columns null)",
    "llm_calls": "calls the LLM judge graded",
    "llm_failed": "calls with no LLM verdict (no answer, or the judge failed), out of its means",
    "llm_score": "mean LLM-judge sample score of the simulated observations (0-100)",
    "llm_score_low": "bootstrap 95 % interval of llm_score, low end",
    "llm_score_high": "bootstrap 95 % interval of llm_score, high end",
    "llm_anchored_minus_free": "paired difference of the LLM-judge scores (anchored rows)",
    "llm_difference_low": "bootstrap 95 % interval of the LLM-judge difference, low end",
    "llm_difference_high": "bootstrap 95 % interval of the LLM-judge difference, high end",
}
