"""The walk of a source: its files and run folders, in a fixed order (sources/ingest.py reads
them). A folder that a run-folder reader claims is one input, with that reader; dotfiles and
documentation beside the traces are skipped and counted, and so is a second way to the same real
file or folder (a symlink loop, a link beside its target).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sources.catalog import SourceSpec
from sources.readers import directory_reader, get_reader
from sources.readers.base import Reader
from sources.readers.mapped import MappedReader

if TYPE_CHECKING:
    from sources.ingest import IngestStats

DOC_SUFFIXES = (".md", ".markdown", ".rst")


@dataclass(frozen=True)
class Input:
    """One file or run folder of a source, with the reader already known for a run folder."""

    path: Path
    reader: Reader | None = None


def iter_inputs(spec: SourceSpec, stats: IngestStats) -> Iterator[Input]:
    """Files and run folders of a source, sorted; dotfiles are counted as skipped, and so is a
    second way to the same real file or folder (a symlink loop, a link beside its target)."""
    if spec.is_glob:
        pattern = spec.path.relative_to(spec.root).as_posix()
        starts = sorted(spec.root.glob(pattern))
    else:
        starts = [spec.path]
    visited: set[str] = set()  # real paths as text: a Path costs ~4x the memory
    for start in starts:
        yield from _walk(start, spec, stats, visited)


def is_documentation(path: Path) -> bool:
    """A README / license / Markdown file beside the traces: prose, never a trajectory."""
    upper = path.name.upper()
    return path.suffix.lower() in DOC_SUFFIXES or upper.startswith(("LICENSE", "COPYING"))


def _walk(path: Path, spec: SourceSpec, stats: IngestStats, visited: set[str],
          real: str | None = None) -> Iterator[Input]:
    """The inputs under `path`; `real` is its real path when the caller knows it (an entry that
    is no link, of a folder resolved already: no resolve, a system call a component)."""
    if path.name.startswith(".") and path != spec.path:
        stats.skipped_hidden += 1
        return
    if real is None:
        try:
            real = str(path.resolve())
        except (OSError, RuntimeError):  # links that point at each other lead nowhere
            yield Input(path)
            return
    if real in visited:
        stats.skipped_repeats += 1
        return
    visited.add(real)
    if not path.is_dir():
        if is_documentation(path) and path != spec.path:
            stats.skipped_docs += 1
            return
        yield Input(path)
        return
    named = spec_reader(spec)
    if named is not None:
        if named.reads_directories:
            yield Input(path, named)
            return
    elif (run_folder_reader := directory_reader(path)) is not None:
        yield Input(path, run_folder_reader)  # detected here, once: not again by choose_reader
        return
    for child, child_real in children(path, real):
        yield from _walk(child, spec, stats, visited, child_real)


def children(folder: Path, folder_real: str) -> Iterator[tuple[Path, str | None]]:
    """The entries of a folder by name, real ones before links, so a file reached both ways
    keeps its own path; each with its real path, or None for a link (to resolve). Only the
    names wait, not a Path each (a 63k-file folder's listing is held while its files are read);
    the listing's own entry types say which are links."""
    real: list[str] = []
    links: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            (links if entry.is_symlink() else real).append(entry.name)
    real.sort()
    links.sort()
    for name in real:
        yield folder / name, os.path.join(folder_real, name)
    for name in links:
        yield folder / name, None


def spec_reader(spec: SourceSpec) -> Reader | None:
    """The reader the catalog names (a mapping is its own reader); None: detect by content."""
    if spec.mapping is not None:
        return MappedReader(spec.mapping)
    return None if spec.format == "auto" else get_reader(spec.format)
