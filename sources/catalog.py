"""The source catalog: a TOML file naming where trajectories come from.

    [[source]]
    name = "swe-fixtures"        # unique; becomes the `source` column
    domain = "swe"               # one of the seven (required: it picks the Dagster partition)
    format = "auto"              # a reader name from `worldtrace formats`, or auto-detect
    path = "../shared/traces/swe"  # file, folder or glob; relative to this file

A layout no reader knows is mapped with a `[source.mapping]` table under its entry (paths to
task, steps, action, observation, ...; see `sources.readers.mapped`); its format is then "mapped".

`{data}` in a path stands for the data directory, so the default catalog can point at the
built-in generated data wherever WORLDTRACE_DATA is.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sources.readers.mapped import Mapping, MappingError
from sources.schema import DOMAINS

DEFAULT_CATALOG = Path(__file__).with_name("default_sources.toml")
GLOB_CHARACTERS = "*?["


class CatalogError(ValueError):
    """A catalog entry that cannot be used, naming the file and the entry."""


@dataclass(frozen=True)
class SourceSpec:
    """One catalog entry, with its path resolved."""

    name: str
    domain: str | None
    format: str
    path: Path  # may contain glob characters
    root: Path  # folder that source_path values are relative to
    mapping: Mapping | None = field(default=None, compare=False)  # the declarative reader's

    @property
    def is_glob(self) -> bool:
        """The path is a pattern (its matches are the inputs), not one file or folder."""
        return any(char in str(self.path) for char in GLOB_CHARACTERS)

    @property
    def missing(self) -> bool:
        """No file or folder at the path, and it is no pattern (ingest quarantines it)."""
        return not self.is_glob and not self.path.exists()


def glob_root(path: Path) -> Path:
    """The deepest folder of `path` that holds no glob character."""
    parts: list[str] = []
    for part in path.parts:
        if any(char in part for char in GLOB_CHARACTERS):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def make_spec(
    name: str,
    path: Path,
    domain: str | None = None,
    fmt: str = "auto",
    mapping_table: dict[str, Any] | None = None,
) -> SourceSpec:
    """A SourceSpec for one path, with its root chosen so source_path stays short and stable."""
    if domain is not None and domain not in DOMAINS:
        raise CatalogError(f"source {name!r}: domain {domain!r} is not one of {', '.join(DOMAINS)}")
    mapping = _mapping(name, fmt, mapping_table)
    fmt = "mapped" if mapping is not None else fmt
    if any(char in str(path) for char in GLOB_CHARACTERS):
        root = glob_root(path)
    else:
        root = path if path.is_dir() else path.parent
    return SourceSpec(name=name, domain=domain, format=fmt, path=path, root=root, mapping=mapping)


def _mapping(name: str, fmt: str, table: dict[str, Any] | None) -> Mapping | None:
    """The entry's declarative mapping, checked; None when the entry has none."""
    if table is None:
        if fmt == "mapped":
            raise CatalogError(f"source {name!r}: format 'mapped' needs a [source.mapping] table")
        return None
    if fmt not in ("auto", "mapped"):
        raise CatalogError(f"source {name!r}: a mapping is its own format, not {fmt!r}")
    if not isinstance(table, dict):
        raise CatalogError(f"source {name!r}: `mapping` must be a table")
    try:
        return Mapping.from_table(table)
    except MappingError as error:
        raise CatalogError(f"source {name!r}: [source.mapping] {error}") from None


def load_catalog(catalog_path: Path, data_dir: Path) -> list[SourceSpec]:
    """Parse a catalog TOML; every problem names the file and the entry."""
    try:
        document = tomllib.loads(catalog_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise CatalogError(f"{catalog_path}: cannot read catalog: {error}") from None
    entries = document.get("source", [])
    if not isinstance(entries, list):
        raise CatalogError(f"{catalog_path}: `source` must be an array of tables ([[source]])")
    specs: list[SourceSpec] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"{catalog_path} [[source]] #{index + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise CatalogError(f"{where}: every source needs a string `name`")
        if not isinstance(entry.get("path"), str):
            raise CatalogError(f"{where} ({entry['name']}): missing string `path`")
        if entry["name"] in seen:
            raise CatalogError(f"{where}: duplicate source name {entry['name']!r}")
        seen.add(entry["name"])
        if entry.get("domain") not in DOMAINS:
            raise CatalogError(
                f"{where} ({entry['name']}): `domain` must be one of {', '.join(DOMAINS)}"
            )
        raw_path = Path(entry["path"].replace("{data}", str(data_dir)))
        path = raw_path if raw_path.is_absolute() else catalog_path.parent / raw_path
        try:
            spec = make_spec(
                entry["name"],
                path,
                entry.get("domain"),
                entry.get("format", "auto"),
                entry.get("mapping"),
            )
        except CatalogError as error:
            raise CatalogError(f"{where}: {error}") from None
        specs.append(spec)
    return specs
