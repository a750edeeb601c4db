"""Run one task per item with a bounded number in flight; results come back in input order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def run_concurrently(task: Callable[[Item], Result], items: Sequence[Item], concurrency: int,
                     expected: tuple[type[BaseException], ...] = (),
                     on_done: Callable[[int], None] | None = None
                     ) -> list[Result | BaseException]:
    """task(item) for every item, at most `concurrency` at once. An exception of an `expected`
    type is returned in its item's slot (so one failure does not lose the rest); any other
    exception is a bug and propagates. `on_done(1)` is called as each item's result is taken
    (in input order)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    results: list[Result | BaseException] = []
    with ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(task, item) for item in items]:
            try:
                results.append(future.result())
            except expected as error:
                results.append(error)
            if on_done is not None:
                on_done(1)
    return results
