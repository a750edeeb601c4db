"""Knowledge text for CPT: the facts environments return, mixed into the trajectory corpus.

The seed's recipe mixes factual corpora into continued pre-training so that the world model
knows what a real environment would print. Any local text dataset can be mixed: a `datasets`
folder (save_to_disk), a Parquet file or folder, or a JSONL file, with a text column
(`read_texts`). One such corpus can be built here without a download (`build_package_docs`):
the documentation of the installed Python packages (their METADATA long descriptions, i.e. the
README each package ships), which is what the SWE and terminal environments print when an agent
reads a package's docs, help or errors. Deterministic: packages by name, one document each.

Output of build_package_docs: {out}/package_docs.parquet with text, source
("<name>==<version>") and licence (the package's declared licence; the text is its own).
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sources.storage import write_parquet

KNOWLEDGE_SCHEMA = pa.schema([("text", pa.string()), ("source", pa.string()),
                              ("licence", pa.string())])
PACKAGE_DOCS = "package_docs.parquet"


@dataclass(frozen=True)
class PackageDocsConfig:
    """Shortest description kept (shorter ones are a line of summary, not documentation)."""

    min_chars: int = 200


@dataclass
class PackageDocsStats:
    packages: int = 0
    documents: int = 0
    chars: int = 0
    too_short: int = 0


def _licence(metadata: importlib.metadata.PackageMetadata) -> str:
    return (metadata.get("License-Expression") or metadata.get("License") or "unknown"
            ).splitlines()[0][:80]


def build_package_docs(out_dir: Path, config: PackageDocsConfig = PackageDocsConfig()
                       ) -> tuple[Path, PackageDocsStats]:
    """The installed packages' long descriptions as one Parquet file (atomic)."""
    stats = PackageDocsStats()
    by_name = {}
    for distribution in importlib.metadata.distributions():
        name = (distribution.metadata.get("Name") or "").lower()
        if name and name not in by_name:
            by_name[name] = distribution
    rows = []
    for name, distribution in sorted(by_name.items()):
        stats.packages += 1
        metadata = distribution.metadata
        text = (metadata.get_payload() or metadata.get("Description") or "").strip()
        if len(text) < config.min_chars:
            stats.too_short += 1
            continue
        rows.append({"text": text, "source": f"{name}=={distribution.version}",
                     "licence": _licence(metadata)})
        stats.documents += 1
        stats.chars += len(text)
    path = Path(out_dir) / PACKAGE_DOCS
    write_parquet(pa.Table.from_pylist(rows, schema=KNOWLEDGE_SCHEMA), path)
    return path, stats


def read_texts(path: Path, column: str = "text") -> Iterator[tuple[str, str]]:
    """(document id, text) of a local text dataset: a `datasets` folder, Parquet (file or
    folder of files) or JSONL; the id is the `source` column when there is one, else the
    position. Empty texts are skipped."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"knowledge dataset {path} does not exist")
    if path.suffix in (".jsonl", ".json"):
        yield from _jsonl_texts(path, column)
        return
    if path.is_dir() and any((path / f).exists() for f in ("dataset_info.json", "state.json")):
        from datasets import load_from_disk

        dataset = load_from_disk(str(path))
        if column not in dataset.column_names:
            raise ValueError(f"{path}: no column {column!r} (columns {dataset.column_names})")
        for k, row in enumerate(dataset):
            if row[column]:
                yield str(row.get("source") or k), row[column]
        return
    files = sorted(path.glob("**/*.parquet")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{path}: no Parquet, JSONL or datasets folder to read text from")
    for file in files:
        names = pq.read_schema(file).names
        if column not in names:
            raise ValueError(f"{file}: no column {column!r} (columns {names})")
        wanted = [column] + (["source"] if "source" in names else [])
        for batch in pq.ParquetFile(file).iter_batches(columns=wanted, batch_size=256):
            for k, row in enumerate(batch.to_pylist()):
                if row[column]:
                    yield str(row.get("source") or f"{file.name}:{k}"), row[column]


def _jsonl_texts(path: Path, column: str) -> Iterator[tuple[str, str]]:
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {line_no}: not JSON ({error.msg})") from None
            if not isinstance(record, dict) or column not in record:
                raise ValueError(f"{path}, line {line_no}: no {column!r} field")
            if record[column]:
                yield str(record.get("source") or f"line {line_no}"), str(record[column])
