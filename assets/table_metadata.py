"""Metadata that describes a Parquet table in the Dagster UI: row count, schema, preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from sources.markdown import markdown_cell
from sources.storage import CheckOutcome

PREVIEW_ROWS = 5
PREVIEW_COLUMNS = 5  # at most: a wider table is cut off at the page's edge
PREVIEW_CELL_CHARS = 40  # a preview shows the shape of the data, not whole observations
FLOAT_DIGITS = 3


def column_schema(schema: pa.Schema, docs: dict[str, str] | None = None) -> dg.TableSchema:
    """A Dagster TableSchema from a pyarrow schema, with column descriptions where known."""
    docs = docs or {}
    return dg.TableSchema(
        columns=[
            dg.TableColumn(name=field.name, type=str(field.type), description=docs.get(field.name))
            for field in schema
        ]
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        value = round(value, FLOAT_DIGITS)
    elif isinstance(value, list | tuple) and value and isinstance(value[0], float):
        value = [round(v, FLOAT_DIGITS) for v in value]
    return markdown_cell("" if value is None else str(value), PREVIEW_CELL_CHARS)


def markdown_preview(path: Path, columns: list[str] | None = None, rows: int = PREVIEW_ROWS) -> str:
    """The first rows of a Parquet file as a Markdown table (reads one row group at most);
    without `columns`, the first PREVIEW_COLUMNS columns."""
    parquet = pq.ParquetFile(path)
    if parquet.metadata.num_rows == 0:
        return "_empty_"
    columns = columns or parquet.schema_arrow.names[:PREVIEW_COLUMNS]
    return records_table(parquet.read_row_group(0, columns=columns).slice(0, rows).to_pylist())


def records_table(rows: list[dict[str, Any]]) -> str:
    """A list of dicts as a Markdown table (for per-source counts and the like)."""
    if not rows:
        return "_none_"
    names = list(rows[0].keys())
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(_cell(row[name]) for name in names) + " |" for row in rows]
    return "\n".join(lines)


def table_metadata(
    path: Path, schema: pa.Schema, docs: dict[str, str] | None = None,
    preview_columns: list[str] | None = None,
) -> dict[str, Any]:
    """Standard metadata for one written partition file."""
    return {
        "dagster/row_count": pq.read_metadata(path).num_rows,
        "dagster/column_schema": column_schema(schema, docs),
        "path": dg.MetadataValue.path(str(path)),
        "preview": dg.MetadataValue.md(markdown_preview(path, preview_columns)),
    }


def check_result(
    name: str, outcome: CheckOutcome, asset_key: dg.AssetKey | None = None,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
) -> dg.AssetCheckResult:
    """A Dagster check result from a library check's verdict and figures (a WARN check's
    failure is a warning to look at, not an error)."""
    return dg.AssetCheckResult(
        asset_key=asset_key, check_name=name, passed=outcome.passed,
        description=outcome.description, metadata=outcome.figures, severity=severity,
    )
