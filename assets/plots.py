"""PNG plots as metadata the Dagster UI shows: a Markdown image with the PNG inline.

The figures themselves come from sources.plots (no Dagster there, so a release draws the same).
"""

import base64
from pathlib import Path

import dagster as dg
from matplotlib.figure import Figure

from sources.plots import bar_chart, histogram, line_chart, png_bytes, stacked_shares

__all__ = ["bar_chart", "histogram", "image_metadata", "line_chart", "stacked_shares"]


def image_metadata(figure: Figure, path: Path | None = None) -> dg.MetadataValue:
    """A Markdown image the UI renders inline; also written to `path` when given."""
    data = png_bytes(figure)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return dg.MetadataValue.md(f"![plot](data:image/png;base64,{base64.b64encode(data).decode()})")
