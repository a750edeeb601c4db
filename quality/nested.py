"""Walking nested values (JSON documents, chat messages, Arrow list/struct cells)."""

from collections.abc import Iterator
from typing import Any


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a value, through nested dicts and lists, in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
