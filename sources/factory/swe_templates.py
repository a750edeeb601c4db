"""Repository templates for the SWE collector: small Python packages, each with a planted bug.

A template gives the files of a repository (package, tests, pyproject, README), the issue text a
user would file, and the edit that fixes the bug (old text -> new text in one file). Package and
repository names are drawn per trajectory so repositories differ in more than the bug.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    """One planted bug: where it is, the fix, and what the issue says."""

    module: str  # module file name inside the package, e.g. "text.py"
    source: str  # module source with the bug
    tests: str  # test module source (imports `{pkg}`)
    issue: str
    search: str  # a symbol the agent greps for
    old: str  # buggy text
    new: str  # fixed text


BUGS: dict[str, Bug] = {
    "slugify": Bug(
        "text.py",
        '''"""Text helpers."""

import re


def slugify(text: str) -> str:
    """Turn a title into a URL slug: lowercase words joined by dashes."""
    words = re.findall(r"[A-Za-z0-9]+", text)
    return "-".join(words)


def truncate(text: str, width: int) -> str:
    """Cut text to `width` characters, ending with an ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "\\u2026"


def word_count(text: str) -> int:
    return len(text.split())
''',
        """from {pkg}.text import slugify, truncate, word_count


def test_slugify_lowercases():
    assert slugify("Hello World") == "hello-world"


def test_slugify_drops_punctuation():
    assert slugify("a, b!") == "a-b"


def test_truncate():
    assert truncate("abcdef", 4) == "abc\\u2026"
    assert truncate("abc", 4) == "abc"


def test_word_count():
    assert word_count("one two  three") == 3
""",
        'slugify keeps upper case\n\n`slugify("Hello World")` returns `Hello-World`; '
        "slugs should be all lower case (`hello-world`).",
        "def slugify",
        '    return "-".join(words)\n',
        '    return "-".join(word.lower() for word in words)\n',
    ),
    "median": Bug(
        "stats.py",
        '''"""Descriptive statistics without numpy."""


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid] + ordered[mid + 1]) / 2


def value_range(values: list[float]) -> float:
    return max(values) - min(values)
''',
        """from {pkg}.stats import mean, median, value_range


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_two():
    assert median([1, 2]) == 1.5


def test_range():
    assert value_range([5, 1, 9]) == 8
""",
        "median is wrong for an even number of values\n\n`median([1, 2])` raises IndexError and "
        "`median([1, 2, 3, 4])` gives 3.5 instead of 2.5.",
        "def median",
        "    return (ordered[mid] + ordered[mid + 1]) / 2\n",
        "    return (ordered[mid - 1] + ordered[mid]) / 2\n",
    ),
    "cart": Bug(
        "cart.py",
        '''"""A shopping cart."""


class Cart:
    def __init__(self) -> None:
        self.items: list[tuple[str, float, int]] = []

    def __repr__(self) -> str:
        return f"Cart({len(self.items)} items)"

    def add(self, name: str, price: float, quantity: int = 1) -> None:
        self.items.append((name, price, quantity))

    def count(self) -> int:
        return sum(quantity for _, _, quantity in self.items)

    def total(self) -> float:
        """Price of everything in the cart."""
        return round(sum(price for _, price, _ in self.items), 2)
''',
        """from {pkg}.cart import Cart


def test_empty_total():
    assert Cart().total() == 0


def test_total_single():
    cart = Cart()
    cart.add("pen", 1.5)
    assert cart.total() == 1.5


def test_total_uses_quantity():
    cart = Cart()
    cart.add("pen", 1.5, quantity=4)
    cart.add("pad", 2.25)
    assert cart.total() == 8.25


def test_count():
    cart = Cart()
    cart.add("pen", 1.5, quantity=3)
    assert cart.count() == 3
""",
        "Cart.total ignores quantities\n\nAdding 4 pens at 1.50 gives a total of 1.50, not 6.00.",
        "def total",
        "        return round(sum(price for _, price, _ in self.items), 2)\n",
        "        return round(sum(price * quantity for _, price, quantity in self.items), 2)\n",
    ),
    "leap": Bug(
        "dates.py",
        '''"""Calendar helpers."""


def is_leap_year(year: int) -> bool:
    """Gregorian leap years: divisible by 4, except centuries not divisible by 400."""
    return year % 4 == 0 and year % 100 != 0


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if is_leap_year(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31
''',
        """from {pkg}.dates import days_in_month, is_leap_year


def test_common_years():
    assert not is_leap_year(2023)
    assert not is_leap_year(1900)


def test_leap_years():
    assert is_leap_year(2024)
    assert is_leap_year(2000)


def test_february():
    assert days_in_month(2000, 2) == 29
    assert days_in_month(2023, 2) == 28


def test_april():
    assert days_in_month(2023, 4) == 30
""",
        "2000 is not treated as a leap year\n\n`days_in_month(2000, 2)` returns 28; 2000 was "
        "a leap year (divisible by 400).",
        "def is_leap_year",
        "    return year % 4 == 0 and year % 100 != 0\n",
        "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
    ),
    "clamp": Bug(
        "numbers.py",
        '''"""Number helpers."""


def clamp(value: float, low: float, high: float) -> float:
    """Limit value to the closed interval [low, high]."""
    if value < low:
        return low
    if value > high:
        return low
    return value


def lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t
''',
        """from {pkg}.numbers import clamp, lerp


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_low():
    assert clamp(-3, 0, 10) == 0


def test_clamp_high():
    assert clamp(42, 0, 10) == 10


def test_lerp():
    assert lerp(0, 10, 0.25) == 2.5
""",
        "clamp returns the lower bound for values above the range\n\n`clamp(42, 0, 10)` gives 0, "
        "expected 10.",
        "def clamp",
        "        return low\n    return value\n",
        "        return high\n    return value\n",
    ),
}

REPO_WORDS = ("tiny", "plain", "handy", "quick", "small", "neat", "simple", "little")
PKG_WORDS = ("kit", "utils", "tools", "lib", "box", "core")


@dataclass(frozen=True)
class Repo:
    """A concrete repository: its name, package name, files and bug."""

    name: str
    package: str
    bug_name: str
    bug: Bug
    files: dict[str, str]


def make_repo(rng: random.Random, index: int) -> Repo:
    """Draw a repository: a bug (cycling through all first) and names around it."""
    names = sorted(BUGS)
    bug_name = names[index % len(names)] if index < len(names) else rng.choice(names)
    bug = BUGS[bug_name]
    stem = bug.module.removesuffix(".py")
    package = f"{rng.choice(REPO_WORDS)}{stem}{rng.choice(PKG_WORDS)}"
    name = package.replace("_", "-")
    files = {
        "README.md": f"# {name}\n\nSmall {stem} helpers. Run the tests with `python -m pytest`.\n",
        ".gitignore": "__pycache__/\n.pytest_cache/\n*.egg-info/\n",
        "pyproject.toml": (
            f'[project]\nname = "{name}"\nversion = "0.{rng.randint(1, 9)}.0"\n'
            f'requires-python = ">=3.9"\n\n[tool.pytest.ini_options]\n'
            f'testpaths = ["tests"]\n'
        ),
        f"{package}/__init__.py": f'"""{name}: small {stem} helpers."""\n\n__version__ = "0.1.0"\n',
        f"{package}/{bug.module}": bug.source,
        f"tests/test_{stem}.py": bug.tests.replace("{pkg}", package),
    }
    return Repo(name, package, bug_name, bug, files)
