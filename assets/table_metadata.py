"""What the Dagster UI says about a table, from its declaration in the registry: the asset deps
of a step, the row counts, the column schema with descriptions, a preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq

from sources.markdown import markdown_cell, markdown_table
from sources.storage import CheckOutcome
from sources.tables import Table

PREVIEW_ROWS = 5
PREVIEW_COLUMNS = 5  # at most: a wider table is cut off at the page's edge
PREVIEW_CELL_CHARS = 40  # a preview shows the shape of the data, not whole observations
FLOAT_DIGITS = 3


def reads(*tables: Table) -> list[str]:
    """The deps of an asset that reads these tables: the assets that write them, in order."""
    return list(dict.fromkeys(table.asset_name for table in tables))


def column_schema(table: Table) -> dg.TableSchema:
    """A Dagster TableSchema from a declared table: each column's type and description."""
    return dg.TableSchema(columns=[
        dg.TableColumn(name=field.name, type=str(field.type), description=table.docs[field.name])
        for field in table.schema])


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
    return markdown_table(rows, cell=_cell)


def table_metadata(table: Table, data_dir: Path, domain: str | None = None,
                   preview_columns: list[str] | None = None, shard: str | None = None
                   ) -> dict[str, Any]:
    """Row count, column schema (the declaration's), path and preview of a written table.

    A domain-partitioned asset reports its partition's rows as `dagster/row_count` and the
    total over every partition present as `rows_all_domains` (the UI shows the latest
    partition's count, which is not the table's size). A shard partition (`shard`) reports its
    shard's rows, and rolls up its domain: `rows_domain`, `shards` and `rows_per_shard`. An
    unpartitioned asset whose table is written per domain (the splits, the bench) reports the
    total."""
    domain_files = table.domain_files(data_dir, domain) if domain is not None else []
    files = ([table.path(data_dir, domain, shard)] if shard is not None
             else domain_files if domain is not None
             else table.paths(data_dir) if table.partitioned else [table.path(data_dir)])
    files = [f for f in files if f.exists()]
    if not files:
        return {"dagster/row_count": 0, "dagster/column_schema": column_schema(table)}
    one_file = domain is not None and len(files) == 1 or not table.partitioned
    metadata: dict[str, Any] = {
        "dagster/row_count": sum(pq.read_metadata(f).num_rows for f in files),
        "dagster/column_schema": column_schema(table),
        "path": dg.MetadataValue.path(str(files[0] if one_file else (
            table.dir(data_dir) if domain is None else files[0].parent.parent))),
        "preview": dg.MetadataValue.md(markdown_preview(files[0], preview_columns)),
    }
    if domain is not None:
        metadata["rows_all_domains"] = sum(pq.read_metadata(f).num_rows
                                           for f in table.paths(data_dir))
    if domain is not None and table.sharded:  # the domain's figure, and each shard's
        metadata["rows_domain"] = sum(pq.read_metadata(f).num_rows for f in domain_files)
        metadata["shards"] = len(domain_files)
        metadata["rows_per_shard"] = dg.MetadataValue.md(records_table(
            [{"shard": f.parent.name.removeprefix("shard="),
              "rows": pq.read_metadata(f).num_rows} for f in domain_files]))
    return metadata


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
