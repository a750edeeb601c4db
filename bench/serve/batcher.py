"""One worker thread owns the model; concurrent requests queue here.

Requests that ask for the same settings are generated together in one padded batch, which is
where a single GPU gets its throughput. A seeded sampling request runs alone, so its reply
depends on its seed only and not on whichever requests happened to share its batch (a greedy
request has no randomness: its seed is ignored and it batches). Streams run alone.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from bench.local_model import (
    CANCELLED,
    ChatResult,
    LocalChatModel,
    Message,
    SamplingSettings,
    StreamPiece,
)

# A stream's consumer receives pieces, then None at the end (or the exception that ended it).
Deliver = Callable[[StreamPiece | BaseException | None], None]


@dataclass
class _Job:
    messages: Sequence[Message]
    settings: SamplingSettings
    prompt_tokens: int
    future: Future | None = None  # a batched request
    deliver: Deliver | None = None  # a stream
    cancel: threading.Event = field(default_factory=threading.Event)


@dataclass
class WorkerStats:
    """Counters kept as the worker runs."""

    requests: int = 0
    streams: int = 0
    cancelled_streams: int = 0  # streams whose client left before the end
    batches: int = 0
    largest_batch: int = 0
    failures: int = 0


class GenerationWorker:
    """Serialises generation on one model; `submit` batches, `open_stream` streams."""

    def __init__(self, model: LocalChatModel, max_batch: int = 8) -> None:
        self.model = model
        self.max_batch = max_batch
        self.stats = WorkerStats()
        self._jobs: deque[_Job] = deque()
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="generation-worker", daemon=True)
        self._thread.start()

    def submit(self, messages: Sequence[Message], settings: SamplingSettings) -> Future:
        """A future for the ChatResult (ContextOverflow raised here, before queueing)."""
        job = self._job(messages, settings, future=Future())
        self._enqueue(job)
        return job.future

    def open_stream(self, messages: Sequence[Message], settings: SamplingSettings,
                    deliver: Deliver) -> threading.Event:
        """Queue a stream; returns the event that cancels it (e.g. when the client leaves)."""
        job = self._job(messages, settings, deliver=deliver)
        self._enqueue(job)
        return job.cancel

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join()

    def _job(self, messages, settings, **kind) -> _Job:
        prompt_tokens = self.model.prompt_tokens(messages)
        self.model.budget(prompt_tokens, settings)  # raises ContextOverflow
        return _Job(messages, settings, prompt_tokens, **kind)

    def _enqueue(self, job: _Job) -> None:
        with self._wake:
            if self._closed:
                raise RuntimeError("the generation worker is closed")
            self._jobs.append(job)
            self._wake.notify()

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            if batch[0].deliver is not None:
                self._stream(batch[0])
            else:
                self._generate(batch)

    def _next_batch(self) -> list[_Job] | None:
        """The oldest job plus, for a plain unseeded request, the queued ones it can share with."""
        with self._wake:
            while not self._jobs and not self._closed:
                self._wake.wait()
            if not self._jobs:
                return None
            first = self._jobs.popleft()
            batch = [first]
            if first.deliver is None and _batch_key(first.settings) is not None:
                for job in list(self._jobs):
                    if len(batch) >= self.max_batch:
                        break
                    if self._compatible(batch, job):
                        self._jobs.remove(job)
                        batch.append(job)
            return batch

    def _compatible(self, batch: list[_Job], job: _Job) -> bool:
        """Same settings, not a stream, and every prompt still gets its full budget."""
        if job.deliver is not None or _batch_key(job.settings) != _batch_key(batch[0].settings):
            return False
        if self.model.context_length is None:
            return True
        longest = max(job.prompt_tokens, *(j.prompt_tokens for j in batch))
        return longest + job.settings.max_new_tokens <= self.model.context_length

    def _generate(self, batch: list[_Job]) -> None:
        self.stats.batches += 1
        self.stats.requests += len(batch)
        self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
        try:
            results: list[ChatResult] = self.model.generate([j.messages for j in batch],
                                                            batch[0].settings)
        except BaseException as error:  # the request fails, the server lives on
            self.stats.failures += 1
            for job in batch:
                job.future.set_exception(error)
            return
        for job, result in zip(batch, results, strict=True):
            job.future.set_result(result)

    def _stream(self, job: _Job) -> None:
        self.stats.streams += 1
        try:
            for piece in self.model.stream(job.messages, job.settings, job.cancel):
                self.stats.cancelled_streams += piece.finish_reason == CANCELLED
                job.deliver(piece)
        except BaseException as error:
            self.stats.failures += 1
            job.deliver(error)
            return
        job.deliver(None)


def _batch_key(settings: SamplingSettings) -> SamplingSettings | None:
    """Requests with equal keys may share a batch; None: this one must run alone."""
    if settings.greedy:
        return dataclasses.replace(settings, seed=None)
    return settings if settings.seed is None else None
