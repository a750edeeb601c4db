"""Walking nested values (JSON documents, chat messages, Arrow list/struct cells)."""

from collections.abc import Callable, Iterator
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


def map_strings(value: Any, function: Callable[[str], str]) -> Any:
    """`value` with every string in it (values, not dict keys) replaced by `function(string)`,
    through nested dicts and lists."""
    if isinstance(value, str):
        return function(value)
    if isinstance(value, dict):
        return {key: map_strings(item, function) for key, item in value.items()}
    if isinstance(value, list):
        return [map_strings(item, function) for item in value]
    return value
