"""A real OpenAI-shaped HTTP endpoint whose replies a test scripts (for failure paths a real
model cannot be made to take on demand: overload errors, a judge's malformed answer)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

# reply(request number from 1, request body) -> the assistant's text, None to answer 503, or a
# response of its own (e.g. a 400 context_length_exceeded).
Reply = Callable[[int, dict], str | Response | None]


def scripted_endpoint(reply: Reply, model: str = "scripted") -> tuple[FastAPI, list[dict]]:
    """The app and the list of chat request bodies it received (in order)."""
    app = FastAPI()
    received: list[dict] = []
    lock = threading.Lock()

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": model, "object": "model", "created": 0,
                                            "owned_by": "test"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        with lock:
            received.append(body)
            number = len(received)
        text = reply(number, body)
        if text is None:
            return JSONResponse({"error": {"message": "overloaded", "type": "server_error"}},
                                503)
        if isinstance(text, Response):
            return text
        return {"id": f"c{number}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}

    return app, received
