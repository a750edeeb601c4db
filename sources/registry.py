"""One registration mechanism for plug-ins: readers, collectors and generators.

A `Registry` maps names to "module:attribute" targets (or a bare "module"), imported on first
use, so each plug-in pulls in its own dependencies only when it runs. It also loads the entries
that installed packages declare in a Python entry-point group, in the same "module:attribute"
form; that is how a user adds a reader for their own format without touching this repository:

    # pyproject.toml of the user's package
    [project.entry-points."worldtrace.readers"]
    my_format = "my_package.reader:MyFormatReader"
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class UnknownName(ValueError):
    """A name no entry of the registry has; lists the known ones."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown {kind} {name!r}; expected one of {', '.join(known)}")


class PluginError(RuntimeError):
    """A registered target that cannot be loaded (a broken plug-in is a bug, never skipped)."""


def load_target(target: str) -> Any:
    """The object a "module:attribute" string names (the module itself for a bare "module")."""
    module_name, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in filter(None, attribute.split(".")):
        value = getattr(value, part)
    return value


class Registry(Generic[T]):
    """Named plug-ins of one kind: built-in targets, then those of an entry-point group."""

    def __init__(self, kind: str, targets: Mapping[str, str],
                 entry_point_group: str | None = None,
                 build: Callable[[Any], T] = lambda value: value) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._targets = dict(targets)
        self._build = build
        self._loaded: dict[str, T] = {}
        self._plugins_added = entry_point_group is None

    def targets(self) -> dict[str, str]:
        """name -> target, built-ins first, in registration order."""
        self._add_plugins()
        return dict(self._targets)

    def names(self) -> list[str]:
        return list(self.targets())

    def get(self, name: str) -> T:
        """The plug-in called `name`, imported and built on first use."""
        targets = self.targets()
        if name not in targets:
            raise UnknownName(self.kind, name, list(targets))
        if name not in self._loaded:
            try:
                self._loaded[name] = self._build(load_target(targets[name]))
            except (ImportError, AttributeError, TypeError) as error:
                raise PluginError(
                    f"{self.kind} {name!r}: cannot load {targets[name]!r}: "
                    f"{type(error).__name__}: {error}") from error
        return self._loaded[name]

    def all(self) -> dict[str, T]:
        """Every plug-in, loaded, in registration order."""
        return {name: self.get(name) for name in self.targets()}

    def _add_plugins(self) -> None:
        if self._plugins_added:
            return
        self._plugins_added = True
        for entry in sorted(entry_points(group=self.entry_point_group), key=lambda e: e.name):
            if entry.name in self._targets:
                raise PluginError(
                    f"{self.kind} {entry.name!r} from entry point group "
                    f"{self.entry_point_group!r} ({entry.value}) clashes with a built-in one")
            self._targets[entry.name] = entry.value
