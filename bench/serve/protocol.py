"""The slice of the OpenAI chat-completions API that a world model needs, as FastAPI speaks it.

Request fields honoured: messages, temperature, top_p, max_tokens / max_completion_tokens, n,
stop, seed, stream (+ stream_options.include_usage). Other fields the official client may send
are accepted and ignored, as vLLM does. Responses are `chat.completion` objects; a stream is
`chat.completion.chunk` events (server-sent), then `data: [DONE]`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bench.local_model import ChatResult, SamplingSettings

# OpenAI's own default when a request names no temperature / top_p.
DEFAULT_TEMPERATURE = 1.0
DEFAULT_TOP_P = 1.0


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """Content as plain text; a world model reads text only."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(part.type != "text" for part in self.content):
            raise ValueError("only text content parts are supported")
        return "".join(part.text or "" for part in self.content)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    n: int = Field(default=1, ge=1, le=16)
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None

    def chat(self) -> list[dict[str, str]]:
        # "developer" is the newer name of "system"; chat templates know only the latter.
        return [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                for m in self.messages]

    def settings(self, default_max_tokens: int) -> SamplingSettings:
        stop = [self.stop] if isinstance(self.stop, str) else (self.stop or [])
        return SamplingSettings(
            max_new_tokens=self.max_completion_tokens or self.max_tokens or default_max_tokens,
            temperature=DEFAULT_TEMPERATURE if self.temperature is None else self.temperature,
            top_p=DEFAULT_TOP_P if self.top_p is None else self.top_p,
            n=self.n, stop=tuple(s for s in stop if s), seed=self.seed)


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def completion_body(result: ChatResult, model: str) -> dict[str, Any]:
    """A `chat.completion` object for one request's replies."""
    choices = [{"index": i, "message": {"role": "assistant", "content": c.text},
                "finish_reason": c.finish_reason, "logprobs": None}
               for i, c in enumerate(result.choices)]
    generated = sum(c.completion_tokens for c in result.choices)
    return {"id": completion_id(), "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": choices, "usage": usage(result.prompt_tokens, generated)}


def chunk_body(chunk_id: str, model: str, created: int, choices: list[dict[str, Any]],
               usage_counts: dict[str, int] | None = None) -> dict[str, Any]:
    """A `chat.completion.chunk` event."""
    body: dict[str, Any] = {"id": chunk_id, "object": "chat.completion.chunk",
                            "created": created, "model": model, "choices": choices}
    if usage_counts is not None:
        body["usage"] = usage_counts
    return body


def delta_choice(index: int, delta: dict[str, str], finish_reason: str | None = None
                 ) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish_reason, "logprobs": None}


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape, which the official client turns into a typed exception."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
