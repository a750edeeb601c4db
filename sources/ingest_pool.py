"""Reading a source's inputs in worker processes, the output order kept.

Readers are pure Python (JSON decoding, rendering), so one process is bound to one core. An
`InputPool` hands each small input (a file or run folder up to `max_input_bytes`) to a worker,
which reads it whole and returns its records; the parent takes the results in input order and
writes them, so the tables are the same bytes as a one-process run. A larger input (a big JSONL
file) is read in the parent, streaming, once the inputs before it are written: memory stays
bounded by `max_input_bytes` times the `window` of inputs in flight.
"""

from __future__ import annotations

import multiprocessing
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
    """Worker processes, the largest input a worker reads whole, inputs in flight per worker."""

    workers: int = 2
    max_input_bytes: int = 8 << 20
    window_per_worker: int = 4


def input_bytes(path: Path) -> int:
    """Size of a file, or of all files in a run folder."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _read_whole(spec: SourceSpec, entry: Input) -> tuple[Records, SourceCounts]:
    """In a worker: every record of one input, and its input and format counts."""
    from sources.ingest import SourceCounts, input_records

    counts = SourceCounts()
    return list(input_records(spec, entry, counts)), counts


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

        window = self.config.workers * self.config.window_per_worker
        pending: deque[Future[tuple[Records, SourceCounts]]] = deque()
        for entry in inputs:
            if self._small(entry.path):
                pending.append(self.executor.submit(_read_whole, spec, entry))
                if len(pending) >= window:
                    yield from _collect(pending.popleft(), counts)
                continue
            while pending:
                yield from _collect(pending.popleft(), counts)
            yield from input_records(spec, entry, counts)
        while pending:
            yield from _collect(pending.popleft(), counts)

    def _small(self, path: Path) -> bool:
        try:
            return input_bytes(path) <= self.config.max_input_bytes
        except OSError:  # unreadable: the parent reads it and quarantines it with the reason
            return False

    def __enter__(self) -> InputPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.executor.shutdown(wait=True, cancel_futures=exc_type is not None)


def _collect(future: Future[tuple[Records, SourceCounts]], counts: SourceCounts
             ) -> Iterator[IngestedTrajectory | QuarantinedRecord]:
    records, worker_counts = future.result()
    counts.inputs += worker_counts.inputs
    counts.formats.update(worker_counts.formats)
    yield from records
