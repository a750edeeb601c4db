"""Judges of a predicted observation against the real one.

- evidence.py  measurements both judges share (line and token overlap, errors, JSON keys, shapes)
- gui.py       element lists and accessibility trees: parse, touched element, changed elements
- rules.py     rule verifiers per domain: `verify(sample_or_spec, observation) -> RuleResult`
- rubric.py    the offline reference-grounded rubric: `judge(sample, text) -> AxisScores`
- llm_judge.py the same rubric asked of an OpenAI-compatible model (our prompts in prompts/)
- agreement.py rubric-vs-LLM-judge Spearman rank correlation per domain
"""
