"""Reading a source's inputs in worker processes, the output order kept.

Readers are pure Python (JSON decoding, rendering), so one process is bound to one core. An
`InputPool` hands small inputs (files or run folders up to `max_input_bytes`) to a worker in
batches of consecutive inputs (up to `inputs_per_task` of them and `max_input_bytes` together:
one task a file cost about as much CPU in hand-offs as reading a small file), which reads them
whole and returns their records; the parent takes the results in input order and writes them,
so the tables are the same bytes as a one-process run. A larger input (a big JSONL file) is
read in the parent, streaming, once the inputs before it are written: memory stays bounded by
`max_input_bytes` times the `window` of batches in flight.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from sources.catalog import SourceSpec

if TYPE_CHECKING:
    from sources.ingest import IngestedTrajectory, Input, QuarantinedRecord, SourceCounts

Records = list["IngestedTrajectory | QuarantinedRecord"]


@dataclass(frozen=True)
class PoolConfig:
    """Worker processes, the largest input (and batch) a worker reads whole, inputs in a batch,
    batches in flight per worker."""

    workers: int = 2
    max_input_bytes: int = 8 << 20
    inputs_per_task: int = 8
    window_per_worker: int = 4


def input_bytes(path: Path) -> int:
    """Size of a file, or of all files in a run folder."""
    status = os.stat(path)  # one system call for a file (the plan asks this of every input)
    if stat.S_ISDIR(status.st_mode):
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return status.st_size


def _read_whole(spec: SourceSpec, entries: list[Input]) -> tuple[Records, SourceCounts]:
    """In a worker: every record of a batch of inputs, in order, and their input and format
    counts."""
    from sources.ingest import SourceCounts, input_records

    counts = SourceCounts()
    return [record for entry in entries for record in input_records(spec, entry, counts)], counts


class InputPool:
    """`with InputPool(config) as pool:` then `pool.records(spec, inputs, counts)`."""

    def __init__(self, config: PoolConfig = PoolConfig()) -> None:
        self.config = config
        context = multiprocessing.get_context("spawn")  # no inherited threads or open files
        self.executor = ProcessPoolExecutor(max_workers=config.workers, mp_context=context)

    def records(self, spec: SourceSpec, inputs: Iterable[Input], counts: SourceCounts
                ) -> Iterator[IngestedTrajectory | QuarantinedRecord]:
        """The records of every input, in input order."""
        from sources.ingest import input_records

        config = self.config
        window = config.workers * config.window_per_worker
        pending: deque[Future[tuple[Records, SourceCounts]]] = deque()
        batch: list[Input] = []
        batch_bytes = 0
        for entry in inputs:
            size = self._size(entry.path)
            if batch and (size is None or batch_bytes + size > config.max_input_bytes
                          or len(batch) == config.inputs_per_task):
                pending.append(self.executor.submit(_read_whole, spec, batch))
                batch, batch_bytes = [], 0
                if len(pending) >= window:
                    yield from _collect(pending.popleft(), counts)
            if size is not None:
                batch.append(entry)
                batch_bytes += size
                continue
            while pending:
                yield from _collect(pending.popleft(), counts)
            yield from input_records(spec, entry, counts)
        if batch:
            pending.append(self.executor.submit(_read_whole, spec, batch))
        while pending:
            yield from _collect(pending.popleft(), counts)

    def _size(self, path: Path) -> int | None:
        """The input's bytes when a worker may read it whole, else None (the parent streams
        it)."""
        try:
            size = input_bytes(path)
        except OSError:  # unreadable: the parent reads it and quarantines it with the reason
            return None
        return size if size <= self.config.max_input_bytes else None

    def __enter__(self) -> InputPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.executor.shutdown(wait=True, cancel_futures=exc_type is not None)


def _collect(future: Future[tuple[Records, SourceCounts]], counts: SourceCounts
             ) -> Iterator[IngestedTrajectory | QuarantinedRecord]:
    records, worker_counts = future.result()
    counts.add(worker_counts)  # a worker counts inputs and formats; the parent the records
    yield from records
