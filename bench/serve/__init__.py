"""`worldtrace serve`: an OpenAI-compatible chat server over a local transformers model folder.

- batcher.py   one worker thread owns the model; concurrent equal-settings requests share a batch
- protocol.py  the request schema and the response / chunk bodies of the OpenAI chat API
- app.py       the FastAPI app: /v1/models, /v1/chat/completions (streaming and not), /health
- run.py       serve in the foreground (CLI) or in a background thread (tests, benchmarks)
"""
