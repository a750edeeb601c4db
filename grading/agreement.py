"""Agreement between two labellers of the same turns: the ceiling a classifier can be held to.

    python -m grading.agreement grading/labelled/realdev2_*.jsonl

Every line of the labelled sets names one turn labelled twice, independently (`label_a`,
`label_b`), and its `slice`. Per slice and overall it prints: accuracy (share of turns both gave
the same category), Cohen's kappa (that share corrected for the agreement two labellers with
these category shares would reach by chance), per category how often both said it among the
turns either said it (and how many each said it), agreement at the loss-weight level (the
policy's weight per category: two categories with the same weight cost training nothing), and
agreement on the binary low-information view (any category but informative). Deterministic:
slices and categories in a fixed order.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from grading.confusion import LOW_INFORMATION
from quality.labels import CATEGORIES, load_policy


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's kappa of (label_a, label_b) pairs; 1.0 when both agree on a single category."""
    n = len(pairs)
    if not n:
        return 1.0
    observed = sum(a == b for a, b in pairs) / n
    count_a, count_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    return 1.0 if chance == 1.0 else (observed - chance) / (1.0 - chance)


@dataclass(frozen=True)
class Agreement:
    """How two labellings of the same turns agree."""

    pairs: tuple[tuple[str, str], ...]
    weights: Mapping[str, float]

    @property
    def turns(self) -> int:
        return len(self.pairs)

    @property
    def accuracy(self) -> float:
        return sum(a == b for a, b in self.pairs) / self.turns if self.turns else 1.0

    @property
    def kappa(self) -> float:
        return cohen_kappa(self.pairs)

    def category(self, category: str) -> tuple[int, int, int, int]:
        """(both said it, either said it, A said it, B said it)."""
        both = sum(a == b == category for a, b in self.pairs)
        either = sum(category in (a, b) for a, b in self.pairs)
        return (both, either, sum(a == category for a, _ in self.pairs),
                sum(b == category for _, b in self.pairs))

    @property
    def weight_agreement(self) -> float:
        """Share of turns whose two labels carry the same loss weight."""
        same = sum(self.weights[a] == self.weights[b] for a, b in self.pairs)
        return same / self.turns if self.turns else 1.0

    def low_information(self) -> tuple[float, float]:
        """(agreement, kappa) on the binary view: low-information or informative."""
        binary = tuple((a in LOW_INFORMATION, b in LOW_INFORMATION) for a, b in self.pairs)
        same = sum(a == b for a, b in binary) / self.turns if self.turns else 1.0
        return same, cohen_kappa(binary)

    def lines(self, name: str) -> list[str]:
        low, low_kappa = self.low_information()
        out = [f"{name}: {self.turns} turns, accuracy {self.accuracy:.3f}, kappa "
               f"{self.kappa:.3f}, weight-level agreement {self.weight_agreement:.3f}, "
               f"low-information agreement {low:.3f} (kappa {low_kappa:.3f})",
               f"  {'category':<12}{'both/either':>14}{'share':>8}{'A':>6}{'B':>6}"]
        for category in CATEGORIES:
            both, either, said_a, said_b = self.category(category)
            share = f"{both / either:.3f}" if either else "-"
            out.append(f"  {category:<12}{f'{both}/{either}':>14}{share:>8}{said_a:>6}"
                       f"{said_b:>6}")
        return out


def read_pairs(paths: Sequence[Path]) -> dict[str, list[tuple[str, str]]]:
    """(label_a, label_b) per slice from labelled sets; a line without them is an error."""
    by_slice: dict[str, list[tuple[str, str]]] = {}
    for path in paths:
        for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not text.strip():
                continue
            record = json.loads(text)
            labels = (record.get("label_a"), record.get("label_b"))
            if not all(label in CATEGORIES for label in labels):
                raise ValueError(f"{path}:{number}: label_a / label_b {labels} are not both "
                                 f"one of {', '.join(CATEGORIES)}")
            by_slice.setdefault(str(record.get("slice", "all")), []).append(labels)
    return by_slice


def report(paths: Sequence[Path], weights: Mapping[str, float]) -> list[str]:
    """The agreement lines per slice (sorted) and over all the turns."""
    by_slice = read_pairs(paths)
    out: list[str] = []
    for name in sorted(by_slice):
        out += Agreement(tuple(by_slice[name]), weights).lines(f"slice {name}")
    every = tuple(pair for name in sorted(by_slice) for pair in by_slice[name])
    return out + Agreement(every, weights).lines("all")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labelled", nargs="+", type=Path,
                        help="labelled sets with label_a, label_b and slice per line")
    parser.add_argument("--policy", type=Path, help="policy file for the loss weights "
                        "(default: quality/policy.toml)")
    args = parser.parse_args(argv)
    policy = load_policy(args.policy) if args.policy else load_policy()
    print("\n".join(report(args.labelled, policy.loss_weights)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
