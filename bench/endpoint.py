"""One OpenAI-compatible chat endpoint, spoken to with the official `openai` client.

Shared by the openai_compatible predictor and the LLM judge. The client's own retries are off
(max_retries=0) so that every retry is ours: counted, logged in the stats, and paced by an
exponential backoff that honours the server's Retry-After. Retried: connection errors and
timeouts, 408 / 409 / 429 and 5xx (what is worth asking again); anything else is a request the
endpoint will never accept, so it is raised at once.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import openai

RETRY_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class EndpointConfig:
    """Where to send requests and how hard to try. model None = the first id the server lists."""

    base_url: str
    model: str | None = None
    api_key: str = field(default_factory=lambda: os.environ.get("OPENAI_API_KEY", "EMPTY"),
                         repr=False)
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_s: float = 1.0  # the first wait; doubled on each further retry
    max_backoff_s: float = 30.0
    concurrency: int = 4


@dataclass
class EndpointStats:
    """Counters kept as requests run (thread-safe through `add`)."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class EndpointError(RuntimeError):
    """A request that failed for good (after retries, or not retryable)."""


class ChatEndpoint:
    """`complete(messages, **settings) -> text` with retries and backoff."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.stats = EndpointStats()
        self.client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key,
                                    timeout=config.timeout_s, max_retries=0)
        self._model = config.model

    @property
    def model(self) -> str:
        """The model name sent with each request (asked of /v1/models once when not given)."""
        if self._model is None:
            listed = self._with_retries(lambda: self.client.models.list().data)
            if not listed:
                raise EndpointError(f"{self.config.base_url}: /models lists no model")
            self._model = listed[0].id
        return self._model

    def check(self) -> None:
        """One /models request, not retried: EndpointError naming the URL when nothing answers
        there. A start-up check, so that a wrong URL fails before hours of work, not after."""
        self.stats.add(requests=1)
        try:
            listed = self.client.models.list().data
        except openai.APIError as error:
            self.stats.add(failures=1)
            raise EndpointError(f"{self.config.base_url}: {_describe(error)}") from error
        if self._model is None:
            if not listed:
                raise EndpointError(f"{self.config.base_url}: /models lists no model")
            self._model = listed[0].id

    def complete(self, messages: Sequence[Mapping[str, str]], **settings) -> str:
        """The first choice's text for one conversation (settings: temperature, max_tokens, ...)."""
        return self.complete_all(messages, **settings)[0]

    def complete_all(self, messages: Sequence[Mapping[str, str]], **settings) -> list[str]:
        """Every choice's text for one conversation, in order (settings may ask for n > 1)."""
        model = self.model
        response = self._with_retries(lambda: self.client.chat.completions.create(
            model=model, messages=[dict(m) for m in messages], **settings))
        if response.usage is not None:
            self.stats.add(prompt_tokens=response.usage.prompt_tokens,
                           completion_tokens=response.usage.completion_tokens)
        return [choice.message.content or "" for choice in response.choices]

    def _with_retries(self, call):
        for attempt in range(self.config.max_retries + 1):
            self.stats.add(requests=1)
            try:
                return call()
            except openai.APIError as error:
                if not _retryable(error) or attempt == self.config.max_retries:
                    self.stats.add(failures=1)
                    raise EndpointError(f"{self.config.base_url}: {_describe(error)} "
                                        f"(after {attempt + 1} attempts)") from error
                self.stats.add(retries=1)
                time.sleep(self._wait_s(attempt, error))
        raise AssertionError("unreachable")

    def _wait_s(self, attempt: int, error: openai.APIError) -> float:
        wait = self.config.backoff_s * 2 ** attempt
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after is not None:
            try:
                wait = max(wait, float(retry_after))
            except ValueError:  # an HTTP date: keep our own backoff
                pass
        return min(wait, self.config.max_backoff_s)


def _retryable(error: openai.APIError) -> bool:
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    status = getattr(error, "status_code", None)
    return status is not None and (status in RETRY_STATUSES or status >= 500)


def _describe(error: openai.APIError) -> str:
    status = getattr(error, "status_code", None)
    return f"HTTP {status}: {error.message}" if status else f"{type(error).__name__}: {error}"


def error_code(error: BaseException) -> str | None:
    """The OpenAI error code behind an EndpointError (e.g. 'context_length_exceeded')."""
    cause = error.__cause__
    return getattr(cause, "code", None) if isinstance(cause, openai.APIError) else None
