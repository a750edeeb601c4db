"""The FastAPI app: /v1/models, /v1/chat/completions (streaming and not), /health."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from bench.local_model import ContextOverflow, SamplingSettings
from bench.serve.batcher import GenerationWorker
from bench.serve.protocol import (
    ChatCompletionRequest,
    chunk_body,
    completion_body,
    completion_id,
    delta_choice,
    error_body,
    usage,
)


def create_app(worker: GenerationWorker, model_id: str, default_max_tokens: int = 512) -> FastAPI:
    """An OpenAI-compatible app serving one model under the name `model_id`."""
    app = FastAPI(title="worldtrace serve", description=f"world model {model_id}")
    created = int(time.time())

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(str(error.errors()), "invalid_request_error"), 400)

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "model": model_id, "worker": vars(worker.stats)}

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": model_id, "object": "model",
                                            "created": created, "owned_by": "worldtrace"}]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: ChatCompletionRequest):
        if request.model != model_id:
            return JSONResponse(error_body(f"model {request.model!r} is not served here; "
                                           f"this server serves {model_id!r}",
                                           "invalid_request_error", "model_not_found"), 404)
        try:
            messages = request.chat()
            settings = request.settings(default_max_tokens)
            if request.stream:
                include_usage = bool(request.stream_options and
                                     request.stream_options.include_usage)
                events = _open_streams(worker, messages, settings, model_id, include_usage)
                return StreamingResponse(events, media_type="text/event-stream")
            future = worker.submit(messages, settings)
        except ContextOverflow as error:
            return JSONResponse(error_body(str(error), "invalid_request_error",
                                           "context_length_exceeded"), 400)
        except ValueError as error:
            return JSONResponse(error_body(str(error), "invalid_request_error"), 400)
        return completion_body(await asyncio.wrap_future(future), model_id)

    return app


def _open_streams(worker: GenerationWorker, messages: list[dict[str, str]],
                  settings: SamplingSettings, model_id: str, include_usage: bool
                  ) -> AsyncIterator[str]:
    """Queue one stream per choice now (so errors surface as HTTP errors), send them as SSE."""
    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue = asyncio.Queue()
    one = dataclasses.replace(settings, n=1)
    cancels = []
    for index in range(settings.n):
        # Choice i of a seeded request uses seed + i: each choice reproducible on its own.
        seeded = one if settings.seed is None else \
            dataclasses.replace(one, seed=settings.seed + index)
        cancels.append(worker.open_stream(
            messages, seeded,
            lambda item, i=index: loop.call_soon_threadsafe(pieces.put_nowait, (i, item))))
    prompt_tokens = worker.model.prompt_tokens(messages)
    return _events(pieces, cancels, settings.n, model_id, prompt_tokens, include_usage)


async def _events(pieces: asyncio.Queue, cancels: list, choices: int, model_id: str,
                  prompt_tokens: int, include_usage: bool) -> AsyncIterator[str]:
    chunk_id, created = completion_id(), int(time.time())

    def event(choice_list: list, usage_counts: dict | None = None) -> str:
        body = chunk_body(chunk_id, model_id, created, choice_list, usage_counts)
        return f"data: {json.dumps(body)}\n\n"

    generated, open_choices = 0, choices
    try:
        for index in range(choices):
            yield event([delta_choice(index, {"role": "assistant", "content": ""})])
        while open_choices:
            index, item = await pieces.get()
            if item is None:
                open_choices -= 1
            elif isinstance(item, BaseException):  # the official client raises on this event
                yield f"data: {json.dumps(error_body(str(item), 'server_error'))}\n\n"
                return
            elif item.finish_reason is not None:
                generated += item.completion_tokens
                yield event([delta_choice(index, {}, item.finish_reason)])
            else:
                yield event([delta_choice(index, {"content": item.text})])
        if include_usage:
            yield event([], usage(prompt_tokens, generated))
        yield "data: [DONE]\n\n"
    finally:  # also on client disconnect: stop generating for nobody
        for cancel in cancels:
            cancel.set()

