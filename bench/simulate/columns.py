"""The columns of the simulation's two tables (light: the table registry imports them)."""

import pyarrow as pa

# One row per replayed call (what replay_session returns).
REPLAY_STEP_SCHEMA = pa.schema([
    ("model", pa.string()), ("session", pa.string()), ("source", pa.string()),
    ("mode", pa.string()), ("depth", pa.int32()), ("tool", pa.string()), ("kind", pa.string()),
    ("answered_by", pa.string()), ("score", pa.float64()), ("rule_score", pa.float64()),
    ("failed", pa.bool_()), ("failure_reason", pa.string()), ("seconds", pa.float64()),
    ("prediction", pa.large_string()),
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
    "score": "sample score of the simulated observation against the real one (0-100)",
    "rule_score": "the MCP rule verifier's score (0-1)",
    "failed": "no answer in time (left out of the means)",
    "failure_reason": "why there was no answer",
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
}
