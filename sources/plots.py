"""PNG plots (matplotlib) of the pipeline's figures: bars, shares, histograms, curves.

Small (about 10-20 KB each, 80 dpi) so they travel in Dagster metadata; the PNG bytes depend on
the data only (no timestamp, no software tag), so a release that keeps them stays reproducible.
"""

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a server; set before pyplot is imported
# Tick labels as plain numbers: matplotlib's default writes 1e6 tokens as "1e6" beside the axis
# (or an offset like "+1.2e3"), which a reader of the UI takes for the values. Every plot of the
# pipeline (bench, training, release) draws through this module, so this holds for all of them.
matplotlib.rcParams["axes.formatter.limits"] = (-9, 12)
matplotlib.rcParams["axes.formatter.useoffset"] = False

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sources.storage import atomic_path  # noqa: E402

DPI = 80
SIZE = (6.0, 3.0)  # inches: 480 x 240 pixels fit the metadata panel


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG (no timestamp or software tag, so the bytes depend on the data only)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight",
                   metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def write_png(figure: Figure, path: Path, dpi: float | str = "figure") -> Path:
    """Write the figure to `path` as PNG, atomically, at its own size and `dpi` (no software
    tag, so the bytes depend on the data only), and close it."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(figure)
    return path


def bar_chart(labels: Sequence[str], values: Sequence[float], title: str, ylabel: str
              ) -> Figure:
    """Vertical bars, one per label, each with its value above it."""
    figure, axes = plt.subplots(figsize=SIZE)
    bars = axes.bar(list(labels), list(values), color="#4c72b0")
    axes.bar_label(bars, labels=[f"{v:,.3g}" for v in values], fontsize=8)
    _finish(axes, title, ylabel)
    axes.tick_params(axis="x", labelrotation=30 if len(labels) > 5 else 0, labelsize=8)
    return figure


def stacked_shares(groups: Sequence[str], series: dict[str, Sequence[float]], title: str
                   ) -> Figure:
    """Horizontal 100 % bars: one per group, split into the series' shares."""
    figure, axes = plt.subplots(figsize=(SIZE[0], 0.45 * len(groups) + 1.2))
    left = [0.0] * len(groups)
    for name, values in series.items():
        axes.barh(list(groups), list(values), left=left, label=name)
        left = [a + b for a, b in zip(left, values, strict=True)]
    axes.legend(fontsize=7, ncols=min(6, len(series)), loc="upper center",
                bbox_to_anchor=(0.5, -0.15), frameon=False)
    _finish(axes, title, "")
    axes.set_xlim(0, 1)
    return figure


def histogram(values: Sequence[float], bins: int | Sequence[float], title: str, xlabel: str
              ) -> Figure:
    figure, axes = plt.subplots(figsize=SIZE)
    axes.hist(list(values), bins=bins, color="#4c72b0", edgecolor="white")
    _finish(axes, title, "count")
    axes.set_xlabel(xlabel)
    return figure


def line_chart(x: Sequence[float], ys: dict[str, Sequence[float]], title: str, xlabel: str,
               ylabel: str) -> Figure:
    figure, axes = plt.subplots(figsize=SIZE)
    for name, y in ys.items():
        axes.plot(list(x), list(y), label=name)
    if len(ys) > 1:
        axes.legend(fontsize=7)
    _finish(axes, title, ylabel)
    axes.set_xlabel(xlabel)
    return figure


def _finish(axes, title: str, ylabel: str) -> None:
    axes.set_title(title, fontsize=10)
    axes.set_ylabel(ylabel)
    axes.spines[["top", "right"]].set_visible(False)
