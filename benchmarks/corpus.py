"""The benchmarks' shared input: a generated corpus of about N turns over all seven domains."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sources.catalog import make_spec
from sources.factory.scale import GenerationStats, generate_corpus, writer_for
from sources.ingest import write_tables
from sources.schema import DOMAINS


def generate_turns(out_dir: Path, turns: int, seed: int, workers: int | None = None
                   ) -> GenerationStats:
    """Native-format trace files of about `turns` turns, split over the domains by their mean
    trajectory length, under out_dir/<domain>/<domain>-generated/; the generator's stats."""
    per_domain = max(1, round(turns / sum(writer_for(d).MEAN_TURNS for d in DOMAINS)))
    return generate_corpus(out_dir, DOMAINS, per_domain, seed, workers=workers)


def generated_folder(out_dir: Path, domain: str) -> Path:
    return out_dir / domain / f"{domain}-generated"


@contextmanager
def generated_work(turns: int, seed: int, prefix: str, corpus: Path | None = None
                   ) -> Iterator[Path]:
    """A scratch folder (deleted afterwards) with a generated corpus in its corpus/, or none
    when an existing `corpus` folder is given (it is read, never changed or deleted)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        if corpus is None:
            generate_turns(work / "corpus", turns, seed)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ingest_generated(work: Path, domain: str, data: Path, workers: int = 1):
    """Ingest one domain of work's generated corpus into `data` (returns the ingest stats)."""
    folder = generated_folder(work / "corpus", domain)
    return write_tables([make_spec(f"{domain}-generated", folder, domain)], data,
                        workers=workers)
