"""AgentWorldBench: build the benchmark from the bench pool, run predictors, judge, score.

Plain Python (no Dagster; `assets/bench.py` wires it). Imports sources and quality only.

- sample.py       `BenchSample`: one teacher-forced, one-step prediction task
- official.py     the official JSONL layout (`<domain>_test.jsonl`): export, import, the messages
                  sent (the record's own strings, the released construction)
- parsing.py      `parse_prediction(text) -> ParsedPrediction`: the released extraction, and
                  the strict `malformed` diagnostic
- scoring.py      `AxisScores`, failed samples, domain scores, overall_macro and overall_pooled,
                  the published rows
- progress.py     samples done / total, rate and time left per predictor
- predictors/     `Predictor` protocol; baselines copy_last, empty, retrieval; hf_local,
                  openai_compatible (`build_predictor("name:argument", context)`)
- judges/         rule verifiers per domain, the reference-grounded rubric judge (an offline
                  approximation), the LLM judge, the official judge prompts loaded from a
                  checkout (`official_prompts.py`)
- reward.py       the hybrid reward (rubric + rule, each 5-25; malformed 0) for RL
- local_model.py  a local causal-LM folder as a chat model (shared by hf_local and serve/)
- serve/          `worldtrace serve`: an OpenAI-compatible server over a local model folder
- endpoint.py     one OpenAI-compatible endpoint with retries and backoff (predictor, LLM judge)
- result_cache.py resumable runs: finished results in JSONL, keyed by id and input hash
- rollout.py      free-running mode: own predictions fed back for K steps, decay by depth
- diagnostics.py  LLM-judge rows, rubric-vs-LLM agreement, rollout for a run folder
"""
