"""The table registry: every table of the pipeline, declared once, by the layer that builds it.

A `Table` says what a table holds (the description the Dagster UI shows), its columns (a pyarrow
schema whose fields carry their description in metadata), how it is partitioned and where its
files live under the one data directory:

    partitioned by domain   {data}/{folder}/domain={d}/part-0.parquet
    by domain and shard     {data}/{folder}/domain={d}/shard={s}/part-0.parquet   (per-turn)
    one file                {data}/{folder}/{file}
    a folder                {data}/{folder}/            (a tokenizer, a model, a report)

Each library declares the tables it builds in its own `tables.py` (sources, quality, bench,
training) and registers them here; the release, above them all, publishes from them. Reading a
table means importing the declaration from the layer that builds it, so the import rule (a
library never imports a layer above it, tests/test_imports.py) is also the data rule: a layer
never reads a table built above it. Stages take paths from these objects, never from a table
name written as a string; assets take their deps, column schema and previews from them
(assets/table_metadata.py). The layout rule itself is sources/storage.py's; which shard a
source file goes to is sources/shards.py's. A reader of a whole domain (or of the whole table)
of a sharded table reads every shard: `domain_glob` / `domain_files` (`glob` / `paths`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pyarrow as pa

from sources.schema import (
    DOMAINS,
    QUARANTINE_COLUMN_DOCS,
    QUARANTINE_SCHEMA,
    TRAJECTORY_COLUMN_DOCS,
    TRAJECTORY_SCHEMA,
    TURN_COLUMN_DOCS,
    TURN_SCHEMA,
)
from sources.storage import (
    domain_glob,
    partition_path,
    remove_partition,
    shard_keys,
    table_glob,
)

DESCRIPTION = b"description"  # the field-metadata key of a column's description
Storage = Literal["parquet", "folder"]
LAYERS = ("sources", "quality", "bench", "training")  # the layers that build tables, bottom up


@dataclass(frozen=True, eq=False)
class Table:
    """One table: name (= its Dagster asset key), the layer that builds it, what it holds,
    its columns and where its files are."""

    name: str
    layer: str
    description: str
    schema: pa.Schema | None = None  # column types; None for a folder that is not a table
    docs: dict[str, str] = field(default_factory=dict, repr=False)  # column -> description
    partitioned: bool = True  # by domain; else one file or one folder for all domains
    sharded: bool = False  # by domain and shard (the per-turn tables)
    storage: Storage = "parquet"
    folder: str = ""  # under the data directory; default: the name
    file: str = ""  # the file of an unpartitioned Parquet table; default: {name}.parquet
    asset: str = ""  # the asset that writes it, when that is another name (a side table)
    order: tuple[str, ...] = ()  # the columns its rows are sorted by, when it promises an order

    def __post_init__(self) -> None:
        if self.layer not in LAYERS:
            raise ValueError(f"table {self.name}: layer {self.layer!r} is not one of {LAYERS}")
        undocumented = [n for n in (self.schema.names if self.schema else []) if n not in self.docs]
        if undocumented:
            raise ValueError(f"table {self.name}: columns without a description: {undocumented}")
        if self.sharded and not (self.partitioned and self.storage == "parquet"):
            raise ValueError(f"table {self.name}: only a domain-partitioned Parquet table "
                             "is sharded")
        register(self)

    # --- where its files are ------------------------------------------------------------------

    @property
    def folder_name(self) -> str:
        return self.folder or self.name

    @property
    def asset_name(self) -> str:
        """The asset that materializes it (its own name unless a side table of another)."""
        return self.asset or self.name

    def dir(self, data_dir: Path | str) -> Path:
        """{data}/{folder}: the table's folder (a folder table is this folder)."""
        _record(self)
        return Path(data_dir) / self.folder_name

    def path(self, data_dir: Path | str, domain: str | None = None, shard: str | None = None
             ) -> Path:
        """The Parquet file: one partition (a domain, and a shard of a sharded table), or the
        one file of an unpartitioned table."""
        if self.storage != "parquet":
            raise TypeError(f"table {self.name} is a folder; use .dir()")
        if self.partitioned:
            if domain is None:
                raise TypeError(f"table {self.name} is partitioned by domain: name a domain")
            if self.sharded != (shard is not None):
                raise TypeError(f"table {self.name} is {'' if self.sharded else 'not '}sharded; "
                                f"got shard {shard!r} (a whole domain: domain_glob, domain_files)")
            _record(self)
            return partition_path(data_dir, self.folder_name, domain, shard)
        if domain is not None:
            raise TypeError(f"table {self.name} is not partitioned; got domain {domain!r}")
        return self.dir(data_dir) / (self.file or f"{self.name}.parquet")

    def glob(self, data_dir: Path | str) -> str:
        """Every partition's file (every shard of every domain), for DuckDB's read_parquet."""
        if not self.partitioned:
            return str(self.path(data_dir))
        _record(self)
        return table_glob(data_dir, self.folder_name, self.sharded)

    def domain_glob(self, data_dir: Path | str, domain: str) -> str:
        """One domain's files (every shard of it), for DuckDB's read_parquet."""
        if not self.sharded:
            return str(self.path(data_dir, domain))
        _record(self)
        return domain_glob(data_dir, self.folder_name, domain, sharded=True)

    def shards(self, data_dir: Path | str, domain: str) -> list[str]:
        """The shards of a domain present on disk, in order ([] for an unsharded table)."""
        if not self.sharded:
            return []
        _record(self)
        return shard_keys(data_dir, self.folder_name, domain)

    def domain_files(self, data_dir: Path | str, domain: str) -> list[Path]:
        """One domain's files present, in shard order."""
        if not self.sharded:
            return [p for p in [self.path(data_dir, domain)] if p.exists()]
        return [self.path(data_dir, domain, s) for s in self.shards(data_dir, domain)]

    def has(self, data_dir: Path | str, domain: str) -> bool:
        """True when the domain's partition (at least one shard of it) is on disk."""
        return bool(self.domain_files(data_dir, domain))

    def domains_present(self, data_dir: Path | str, domains: Iterable[str] = DOMAINS
                        ) -> list[str]:
        """The given domains (in their order) whose partition is on disk: what a step over
        "every domain there is" reads, so a run over a subset of the domains stays one."""
        return [domain for domain in domains if self.has(data_dir, domain)]

    def remove_domain(self, data_dir: Path | str, domain: str) -> bool:
        """Remove the domain's partition (every shard of it) atomically; True when there was
        one. For a step that no longer builds a domain: its old rows would be read as new."""
        if not self.partitioned:
            raise TypeError(f"table {self.name} is not partitioned by domain")
        _record(self)
        return remove_partition(data_dir, self.folder_name, domain)

    def paths(self, data_dir: Path | str, domains: tuple[str, ...] = DOMAINS) -> list[Path]:
        """The partition files present, in domain order (then shard order)."""
        return [p for d in domains for p in self.domain_files(data_dir, d)]

    # --- its columns --------------------------------------------------------------------------

    @property
    def documented_schema(self) -> pa.Schema:
        """The schema with each column's description in its field metadata."""
        if self.schema is None:
            raise TypeError(f"table {self.name} has no columns")
        return pa.schema([f.with_metadata({DESCRIPTION: self.docs[f.name].encode()})
                          for f in self.schema])

    def mismatches(self, written: pa.Schema) -> list[str]:
        """How a written file's columns differ from the declaration (names, order, types)."""
        declared = [(f.name, _type_name(f.type)) for f in self.schema or []]
        found = [(f.name, _type_name(f.type)) for f in written]
        if declared == found:
            return []
        missing = [c for c in declared if c not in found]
        extra = [c for c in found if c not in declared]
        return [f"{self.name}: missing {missing}, unexpected {extra}"
                if missing or extra else f"{self.name}: columns out of order"]


def _type_name(data_type: pa.DataType) -> str:
    """A type as text, without a list's child field name (Parquet names it `element`, pyarrow
    `item`: the same column either way)."""
    return str(data_type).replace("<element: ", "<").replace("<item: ", "<")


# --- the registry -------------------------------------------------------------------------------

_REGISTRY: dict[str, Table] = {}
_READS: list[set[str]] = []  # open recordings (tests: which tables a step touched)
_LOCK = threading.Lock()


def register(table: Table) -> None:
    """Add a table; a second table of the same name is a bug in the declarations."""
    known = _REGISTRY.get(table.name)
    if known is not None and known is not table:
        raise ValueError(f"table {table.name} is declared twice")
    _REGISTRY[table.name] = table


def registered() -> list[Table]:
    """Every table declared so far (import a layer's tables module to declare its tables)."""
    return sorted(_REGISTRY.values(), key=lambda t: (LAYERS.index(t.layer), t.name))


def table(name: str) -> Table:
    """The declared table of that name."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no table named {name!r}; declared: {sorted(_REGISTRY)}") from None


def _record(table: Table) -> None:
    with _LOCK:
        for names in _READS:
            names.add(table.name)


@contextmanager
def recording() -> Iterator[set[str]]:
    """The names of the tables whose files were located while the block ran (what a step read
    or wrote), so a test can compare them with what the step declares."""
    names: set[str] = set()
    with _LOCK:
        _READS.append(names)
    try:
        yield names
    finally:
        with _LOCK:
            _READS.remove(names)


# --- the tables ingest builds -------------------------------------------------------------------

RAW_TRAJECTORIES = Table(
    "raw_trajectories", "sources",
    "One row per trajectory read from the catalog's sources: task, system prompt, outcome, "
    "source file and position, the format's metadata as JSON.",
    TRAJECTORY_SCHEMA, TRAJECTORY_COLUMN_DOCS, asset="raw_trajectories", sharded=True)
RAW_TURNS = Table(
    "raw_turns", "sources",
    "One row per turn: the action the agent sent and the observation the environment returned, "
    "with their formats, the tool name, exit code and error flag where the format has them.",
    TURN_SCHEMA, TURN_COLUMN_DOCS, order=("trajectory_id", "turn_index"), sharded=True)
INGEST_QUARANTINE = Table(
    "ingest_quarantine", "sources",
    "One row per file or record no reader could read, with where in it and why.",
    QUARANTINE_SCHEMA, QUARANTINE_COLUMN_DOCS, sharded=True)
