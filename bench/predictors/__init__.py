"""World-model predictors: anything that turns BenchSamples into raw model text.

- base.py              `Predictor` protocol, `PredictorContext`, `build_predictor("name[:arg]")`
- baselines.py         copy_last, empty (no model: floors any real model must beat)
- retrieval.py         retrieval: the observation of the nearest training turn (MinHash)
- hf_local.py          a local transformers causal LM folder
- openai_compatible.py any OpenAI-compatible chat endpoint
"""
