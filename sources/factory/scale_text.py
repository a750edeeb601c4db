"""Word lists and cheap text builders shared by the scale generator's domain writers.

Everything here is fixed data plus functions of an explicit `random.Random`, so the same seed
gives the same text. Builders pick whole words and whole lines (never characters) and join them
once, which keeps a million turns within minutes. The vocabularies are wide on purpose: two
informative observations built from them share almost no word 5-grams, so the only near
duplicates in a generated corpus are the ones the generator plants.
"""

from __future__ import annotations

import random
from functools import lru_cache

WORDS = (
    "account action active address after again agent algorithm allow amount analysis answer "
    "apply archive area argument array article assign attach attempt audit author average "
    "backup balance batch before begin behavior benefit binary block board body bonus border "
    "bottom branch bridge broken budget buffer build bundle button cache calendar call camera "
    "cancel capacity capital card carry case catalog category cause cell center chain change "
    "channel chapter charge chart check child choice circle claim class clean client clock close "
    "cloud cluster code collect column comment commit common company compare complete component "
    "compute condition config connect consider contact content context contract control copy "
    "corner count country course cover create credit current customer cycle daily damage data "
    "date deadline debug decide default define delay delete deliver demand depend deploy "
    "deposit design detail device dialog digit direct disable discount display distance divide "
    "document domain double draft driver during early edge editor effect element email enable "
    "energy engine entry equal error estimate event exact example exchange exist expand expect "
    "export extend factor family feature field figure filter final finance first fixed flag "
    "floor focus folder follow force format forward frame freight front function future garden "
    "gather general global goal grade graph group guard guide handle harbor header health height "
    "history holder home host hour image impact import include income index input insert inside "
    "install instance interval invoice issue item journal judge keep kernel label language "
    "large launch layer layout leader ledger length level library limit line link list load "
    "local location lock logic manager manual margin market master match matrix measure media "
    "member memory merge message method metric middle minute mirror mobile model module monitor "
    "month motion network night node normal notice number object offer office offset option "
    "order origin output owner package page panel parent partner password patch path pattern "
    "payment people period permit phase phone picture pilot place plan platform player pocket "
    "point policy portal position post power prefix premium preview price primary print "
    "priority private process product profile program project property protocol provider "
    "public purchase quality quarter query queue quote radio random range rate reader reason "
    "receipt record reduce region release remote render repair report request reserve resource "
    "result return review reward river route sample scale schedule schema scope screen script "
    "search season second section sector select sender sequence series server service session "
    "setting shadow share shell shift signal simple single sketch slot source space speed split "
    "stable stage standard start state station status step storage store stream street string "
    "structure style subject submit summary supply support surface switch symbol system table "
    "target task team template tenant terminal test theme thread ticket timer title token "
    "topic total track trade traffic transfer travel trend trigger trust tunnel update upload "
    "usage user valid value vendor version video view village visit volume voucher wallet "
    "warning weather window winter worker writer yield zone"
).split()

TECH = (
    "async await parser lexer tokenizer scheduler allocator serializer validator resolver "
    "dispatcher registry adapter middleware endpoint handler controller repository migration "
    "fixture snapshot checksum payload manifest artifact pipeline executor sandbox container "
    "daemon socket listener webhook cursor iterator generator decorator coroutine semaphore "
    "mutex lease quorum replica shard partition watermark backoff throttle circuit retry "
    "timeout deadline heartbeat telemetry tracing sampler histogram gauge counter exporter "
    "collector ingestor compactor vacuum indexer planner optimizer rewriter analyzer linter "
    "formatter bundler transpiler runtime interpreter bytecode opcode register stack heap arena"
).split()

FIRST_NAMES = (
    "Adam Alice Amara Ana Andre Anya Arjun Beatriz Ben Bianca Carlos Chen Chloe Dana Daniel "
    "Diego Elena Emeka Emma Farah Felix Fatima Gabriel Grace Hana Hugo Ines Ivan Jamal Jana "
    "Jonas Julia Kai Kenji Lara Leila Leon Lina Luca Maya Mateo Mei Mia Nadia Nikhil Nora Omar "
    "Oscar Priya Rafael Rosa Ruth Sami Sara Sofia Tariq Theo Uma Victor Willow Yara Yusuf Zoe"
).split()

LAST_NAMES = (
    "Abbott Acosta Adeyemi Bauer Becker Brandt Castillo Chandra Cohen Costa Dubois Eriksen "
    "Ferreira Fischer Garcia Gonzalez Haddad Hansen Hoffmann Ibrahim Jensen Kaur Keller Kim "
    "Kowalski Larsen Lopez Meyer Moreau Muller Nakamura Novak Okafor Olsen Patel Pereira Quinn "
    "Ramos Rossi Sato Schmidt Silva Singh Suzuki Tanaka Torres Vargas Weber Wright Yamamoto Zhang"
).split()

CITIES = (
    "Amsterdam Athens Auckland Austin Bangalore Barcelona Berlin Bogota Boston Brisbane Cairo "
    "Chicago Copenhagen Dakar Denver Dublin Edinburgh Frankfurt Geneva Hamburg Helsinki Istanbul "
    "Jakarta Kyoto Lagos Lima Lisbon Lyon Madrid Manila Melbourne Milan Montreal Mumbai Munich "
    "Nairobi Oslo Osaka Paris Porto Prague Quito Riga Rome Santiago Seoul Seville Stockholm "
    "Sydney Taipei Tallinn Toronto Turin Valencia Vienna Vilnius Warsaw Zurich"
).split()

TOPICS = (
    "photosynthesis volcanic eruptions medieval trade routes quantum tunneling coral reefs "
    "the printing press monsoon patterns jazz harmony glacier retreat protein folding "
    "roman aqueducts solar wind bird migration tectonic plates baroque architecture "
    "supply chains antibiotic resistance deep sea vents lunar tides silk weaving "
    "renaissance banking desert ecology steam engines ocean currents bronze casting"
).split()

FILE_STEMS = (
    "main utils config models views routes schema helpers client server parser cli core "
    "settings storage cache queue worker tasks handlers api auth session billing report export "
    "loader writer reader metrics logging errors types constants validators serializers "
    "fixtures conftest test_api test_models test_utils test_parser test_cli notes todo readme "
    "changelog inventory budget agenda draft summary invoice roster backlog"
).split()

EXTS = ("py", "py", "py", "txt", "md", "json", "csv", "yaml", "toml", "sh", "cfg", "log")
DIRS = (
    "src lib app tests docs scripts data build config tools vendor examples assets logs tmp "
    "reports notes archive backups static templates migrations"
).split()

PY_KEYWORDS_LINES = (
    "import os", "import sys", "import json", "import re", "from pathlib import Path",
    "from typing import Any", "from dataclasses import dataclass", "import logging",
    "from collections import defaultdict", "import itertools", "import functools",
)

# A few fixed lines that recur in real code; the generated code pool mixes them with new lines.
COMMON_CODE = (
    "", "", "    return result", "    pass", "if __name__ == \"__main__\":", "    main()",
    "        continue", "        break", "    else:", "    try:", "    except ValueError:",
    "        raise", "    finally:", "logger = logging.getLogger(__name__)",
)


WORDS_TECH = tuple(WORDS + TECH)


def ri(rng: random.Random, low: int, high: int) -> int:
    """`ri(rng, low, high)` at a tenth of the cost (one float draw, no rejection loop)."""
    return low + int(rng.random() * (high - low + 1))


def words(rng: random.Random, n: int) -> str:
    """`n` random vocabulary words joined by spaces."""
    return " ".join(rng.choices(WORDS, k=n))


def sentence(rng: random.Random, low: int = 6, high: int = 16) -> str:
    """A capitalised pseudo-sentence ending with a full stop."""
    text = words(rng, ri(rng, low, high))
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    """Several pseudo-sentences joined by spaces."""
    return " ".join(sentence(rng) for _ in range(sentences))


def person(rng: random.Random) -> str:
    """A first and last name."""
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def ident(rng: random.Random) -> str:
    """A snake_case identifier of two or three words."""
    pool = WORDS if rng.random() < 0.7 else TECH
    return "_".join(rng.choices(pool, k=ri(rng, 2, 3)))


def camel(rng: random.Random) -> str:
    """A CamelCase class name."""
    return "".join(w.capitalize() for w in rng.choices(WORDS_TECH, k=ri(rng, 2, 3)))


def filename(rng: random.Random) -> str:
    """A file name with an extension, sometimes with a numeric or word suffix."""
    stem = rng.choice(FILE_STEMS)
    roll = rng.random()
    if roll < 0.3:
        stem = f"{stem}_{rng.choice(WORDS)}"
    elif roll < 0.45:
        stem = f"{stem}{ri(rng, 1, 99)}"
    return f"{stem}.{rng.choice(EXTS)}"


def relpath(rng: random.Random, depth: int | None = None) -> str:
    """A relative path of 1-3 folders and a file name."""
    depth = ri(rng, 1, 3) if depth is None else depth
    return "/".join(rng.choices(DIRS, k=depth) + [filename(rng)])


def hexid(rng: random.Random, length: int = 8) -> str:
    """A lowercase hex string (commit hashes, request ids)."""
    return f"{rng.getrandbits(4 * length):0{length}x}"


def uuid(rng: random.Random) -> str:
    """A UUID-shaped hex string drawn from `rng` (never from the clock)."""
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def date(rng: random.Random) -> str:
    """An ISO date in 2023-2025."""
    return f"{ri(rng, 2023, 2025)}-{ri(rng, 1, 12):02d}-{ri(rng, 1, 28):02d}"


def clock(rng: random.Random) -> str:
    """A HH:MM time."""
    return f"{ri(rng, 0, 23):02d}:{ri(rng, 0, 59):02d}"


def url(rng: random.Random) -> str:
    """An https URL on a made-up but plausible site."""
    host = f"{rng.choice(WORDS)}{rng.choice(('', '-', ''))}{rng.choice(TECH)}"
    tld = rng.choice(("com", "org", "io", "net", "dev", "edu"))
    path = "/".join(rng.choices(WORDS, k=ri(rng, 1, 3)))
    return f"https://www.{host}.{tld}/{path}"


def _code_line(rng: random.Random) -> str:
    """One line of plausible Python, indented 0-3 levels."""
    roll = rng.random()
    indent = "    " * ri(rng, 0, 3)
    a, b = ident(rng), ident(rng)
    if roll < 0.12:
        return f"def {a}({b}, {rng.choice(WORDS)}={ri(rng, 0, 100)}):"
    if roll < 0.18:
        return f"class {camel(rng)}({rng.choice(('object', 'Exception', 'dict', camel(rng)))}):"
    if roll < 0.4:
        return f"{indent}{a} = {b}.{rng.choice(WORDS)}({rng.choice(WORDS)}, {ri(rng, 1, 999)})"
    if roll < 0.5:
        return f"{indent}if {a} is None or {b} > {ri(rng, 0, 50)}:"
    if roll < 0.58:
        return f"{indent}for {rng.choice(WORDS)} in {a}:"
    if roll < 0.68:
        return f"{indent}return {a}[{ri(rng, 0, 9)}] + {b}"
    if roll < 0.78:
        return f"{indent}# {words(rng, ri(rng, 3, 9))}"
    if roll < 0.86:
        return f"{indent}{a}.append({b})"
    if roll < 0.92:
        return f"{indent}raise {camel(rng)}Error(\"{words(rng, ri(rng, 2, 6))}\")"
    if roll < 0.96:
        return rng.choice(PY_KEYWORDS_LINES)
    return rng.choice(COMMON_CODE)


@lru_cache(maxsize=1)
def code_pool() -> tuple[str, ...]:
    """A fixed pool of Python lines; windows of it stand in for file contents."""
    rng = random.Random(20240917)
    return tuple(_code_line(rng) for _ in range(60000))


@lru_cache(maxsize=1)
def prose_pool() -> tuple[str, ...]:
    """A fixed pool of prose lines (docs, notes, page text)."""
    rng = random.Random(917202)
    return tuple(sentence(rng, 8, 22) for _ in range(40000))


def code_window(rng: random.Random, n: int) -> list[str]:
    """`n` consecutive lines from a random place in the code pool, with one identifier swapped.

    The swap makes two windows that overlap in the pool still differ across many 5-grams.
    """
    pool = code_pool()
    start = rng.randrange(len(pool) - n)
    lines = list(pool[start:start + n])
    name = ident(rng)
    for k in range(rng.randrange(3), n, 3):
        lines[k] = f"{lines[k]}  # {name}" if lines[k] else lines[k]
    return lines


def prose_window(rng: random.Random, n: int) -> list[str]:
    """`n` consecutive prose lines from a random place in the prose pool."""
    pool = prose_pool()
    start = rng.randrange(len(pool) - n)
    return list(pool[start:start + n])


def shingles(text: str) -> set[tuple[str, ...]]:
    """Word 5-grams of the lowercased text; a text under 5 words is one shingle of all of it."""
    tokens = text.lower().split()
    if len(tokens) < 5:
        return {tuple(tokens)}
    return set(zip(tokens, tokens[1:], tokens[2:], tokens[3:], tokens[4:], strict=False))


def jaccard(a: str, b: str) -> float:
    """Exact Jaccard similarity of the two texts' 5-gram shingle sets."""
    sa, sb = shingles(a), shingles(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 1.0
