"""The scale generator's corpus as ingest sources, and a data directory's files by sha256: what
the ingest tests compare runs with."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sources.catalog import SourceSpec, make_spec
from sources.factory.scale import generate_corpus, source_name
from sources.schema import DOMAINS


def generated_specs(corpus: Path, domains: tuple[str, ...] = DOMAINS) -> list[SourceSpec]:
    """One source a domain, its domain named, over a corpus of `generate_corpus`."""
    return [make_spec(source_name(d), corpus / d / source_name(d), d) for d in domains]


def file_hashes(data: Path) -> dict[str, str]:
    """Every file under `data` (hidden ones too) with its sha256."""
    return {path.relative_to(data).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(data.rglob("*")) if path.is_file()}


def corpus_with_broken_files(root: Path, trajectories: int, turns: int) -> Path:
    """A generated corpus of every domain plus, in each domain's folder, a truncated copy of its
    first file (quarantine rows too), a hidden file and a README (skipped, and counted)."""
    generate_corpus(root, list(DOMAINS), trajectories, turns)
    for domain in DOMAINS:
        folder = root / domain / source_name(domain)
        first = sorted(folder.iterdir())[0]
        (folder / f"zz-truncated-{first.name}").write_bytes(first.read_bytes()[:100])
        (folder / ".listing-cache").write_text("not a trace\n")
        (folder / "README.md").write_text("# generated traces\n")
    return root
