"""A confusion matrix over the turn categories: precision, recall, accuracy and the binary
low-information view (the first five categories against `informative`), as the loss weight sees
them. Shared by the planted-truth grade (grading/planted.py) and the labelled-set grade
(grading/hand_labels.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from quality.labels import CATEGORIES

LOW_INFORMATION = CATEGORIES[:-1]  # every category whose loss weight is low


@dataclass
class Confusion:
    """Turn counts per (truth, predicted) category."""

    counts: Counter = field(default_factory=Counter)

    def add(self, truth: str, predicted: str, n: int = 1) -> None:
        self.counts[truth, predicted] += n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def support(self, category: str) -> int:
        return sum(v for (t, _), v in self.counts.items() if t == category)

    def precision(self, category: str) -> float:
        predicted = sum(v for (_, p), v in self.counts.items() if p == category)
        return self.counts[category, category] / predicted if predicted else 1.0

    def recall(self, category: str) -> float:
        actual = self.support(category)
        return self.counts[category, category] / actual if actual else 1.0

    @property
    def accuracy(self) -> float:
        right = sum(v for (t, p), v in self.counts.items() if t == p)
        return right / self.total if self.total else 1.0

    def low_information(self) -> tuple[float, float]:
        """(precision, recall) of 'low information' = any category but informative."""
        tp = sum(v for (t, p), v in self.counts.items()
                 if t in LOW_INFORMATION and p in LOW_INFORMATION)
        predicted = sum(v for (_, p), v in self.counts.items() if p in LOW_INFORMATION)
        actual = sum(v for (t, _), v in self.counts.items() if t in LOW_INFORMATION)
        return (tp / predicted if predicted else 1.0, tp / actual if actual else 1.0)

    def weight_agreement(self, weights: dict[str, float]) -> float:
        """Share of turns whose predicted category carries the labelled one's loss weight (what
        training sees: echo for unchanged costs nothing, informative for echo does)."""
        same = sum(v for (t, p), v in self.counts.items() if weights[t] == weights[p])
        return same / self.total if self.total else 1.0

    def worst_recall(self, categories: tuple[str, ...] = CATEGORIES) -> tuple[float, str]:
        """Lowest recall over the categories that have labelled turns."""
        present = [c for c in categories if self.support(c)] or list(categories)
        return min((self.recall(c), c) for c in present)

    def matrix_lines(self) -> list[str]:
        """The matrix (rows truth, columns predicted), then precision and recall per category."""
        width = max(len(c) for c in CATEGORIES) + 2
        out = ["confusion (rows: truth, columns: predicted)",
               " " * width + "".join(f"{c[:11]:>12}" for c in CATEGORIES)]
        for truth in CATEGORIES:
            cells = "".join(f"{self.counts[truth, p]:>12}" for p in CATEGORIES)
            out.append(f"{truth:<{width}}{cells}")
        out.append(f"{'category':<{width}}{'precision':>12}{'recall':>12}{'support':>12}")
        for c in CATEGORIES:
            out.append(f"{c:<{width}}{self.precision(c):>12.3f}{self.recall(c):>12.3f}"
                       f"{self.support(c):>12}")
        return out
