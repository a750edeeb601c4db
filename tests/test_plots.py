"""Plot tick labels are plain numbers, never scientific notation or an offset beside the axis."""

from __future__ import annotations

from sources.plots import histogram, line_chart


def _tick_texts(figure) -> list[str]:
    figure.canvas.draw()
    texts = []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            texts += [label.get_text() for label in axis.get_ticklabels()]
            texts.append(axis.get_offset_text().get_text())
    return texts


def test_large_and_close_values_are_labelled_plainly() -> None:
    tokens = line_chart([0, 250_000, 500_000, 1_000_000], {"loss": [6.91, 4.2, 3.1, 2.155]},
                        "loss", "tokens seen", "loss")
    steps = line_chart([1000, 1001, 1002, 1003], {"reward": [1e-5, 2e-5, 3e-5, 4e-5]},
                       "reward", "step", "reward")
    lengths = histogram([120_000, 480_000, 2_300_000, 9_000_000], 4, "lengths", "characters")
    for figure in (tokens, steps, lengths):
        texts = _tick_texts(figure)
        assert [t for t in texts if "e" in t.lower() or "×" in t or t.startswith("+")] == [], texts
    assert "1000000" in _tick_texts(tokens)
