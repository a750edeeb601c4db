"""Seeded starting state and scripted client sessions for the MCP collector's three servers.

A scenario is what a careless but persistent user of the tools would do: look around, ask for
something under a slightly wrong name, read the error, look it up, retry; pass a string where a
list or number is wanted; call a tool that does not exist; change state and check it.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sources.factory.collect_util import FIXED_DATE

TOPICS = (
    "groceries",
    "standup",
    "reading list",
    "trip plan",
    "gift ideas",
    "bug triage",
    "recipes",
    "workout",
    "budget",
    "garden",
    "interview prep",
    "book club",
)
TAGS = ("home", "work", "ideas", "todo", "later")
LINES = (
    "call the bank",
    "buy oat milk",
    "review PR 41",
    "book the train",
    "water the ferns",
    "read chapter 3",
    "renew passport",
    "email Dana",
    "fix the bike light",
    "plan sprint",
)
CATEGORIES = ("tools", "garden", "kitchen", "office")
PRODUCTS = (
    "hammer",
    "trowel",
    "kettle",
    "stapler",
    "wrench",
    "rake",
    "whisk",
    "notebook",
    "pliers",
    "hose",
    "ladle",
    "lamp",
    "saw",
    "seeds",
    "mug",
    "pen",
)
MEETINGS = ("standup", "design review", "1:1", "lunch", "dentist", "planning", "demo", "retro")


def _typo(rng: random.Random, word: str) -> str:
    i = rng.randrange(len(word) - 1)
    return (
        word[:i] + word[i + 1] + word[i] + word[i + 2 :] if word[i] != word[i + 1] else word + "s"
    )


def seed_state(kind: str, data: Path, rng: random.Random) -> None:
    """Write the server's starting state into `data` (sorted, seeded)."""
    if kind == "notes":
        notes = {
            t: {
                "body": "\n".join(rng.sample(LINES, rng.randint(1, 3))),
                "tags": sorted(rng.sample(TAGS, rng.randint(0, 2))),
            }
            for t in rng.sample(TOPICS, rng.randint(3, 6))
        }
        (data / "notes.json").write_text(json.dumps(notes, indent=1, sort_keys=True))
    elif kind == "shopdb":
        with sqlite3.connect(data / "shop.db") as db:
            db.execute(
                "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "category TEXT NOT NULL, price REAL NOT NULL, stock INTEGER NOT NULL)"
            )
            db.execute(
                "CREATE TABLE orders (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL "
                "REFERENCES products(id), quantity INTEGER NOT NULL, day TEXT NOT NULL)"
            )
            names = rng.sample(PRODUCTS, rng.randint(8, 14))
            for pid, name in enumerate(names, start=1):
                db.execute(
                    "INSERT INTO products VALUES (?, ?, ?, ?, ?)",
                    (
                        pid,
                        name,
                        rng.choice(CATEGORIES),
                        rng.randint(199, 4999) / 100,
                        rng.randint(0, 40),
                    ),
                )
            for oid in range(1, rng.randint(10, 25)):
                db.execute(
                    "INSERT INTO orders VALUES (?, ?, ?, ?)",
                    (
                        oid,
                        rng.randint(1, len(names)),
                        rng.randint(1, 5),
                        f"2025-02-{rng.randint(1, 28):02d}",
                    ),
                )
    else:
        events, next_id = [], 1
        for day in ("2025-03-03", "2025-03-04", "2025-03-05"):
            hour = 9
            for _ in range(rng.randint(1, 3)):
                hour += rng.randint(0, 2)
                minutes = rng.choice([30, 45, 60])
                if hour * 60 + minutes > 17 * 60:
                    break
                events.append(
                    {
                        "id": next_id,
                        "title": rng.choice(MEETINGS),
                        "date": day,
                        "start": f"{hour:02d}:00",
                        "minutes": minutes,
                    }
                )
                next_id += 1
                hour += 1 + minutes // 60
        (data / "calendar.json").write_text(
            json.dumps({"events": events, "next_id": next_id}, indent=1, sort_keys=True)
        )


def notes_session(client: Any, rng: random.Random) -> None:
    listed, _ = client.call("list_notes", {})
    titles = [note["title"] for note in listed]
    target = rng.choice(titles)
    if rng.random() < 0.6:  # a near-miss title, then look it up
        _, failed = client.call("get_note", {"title": _typo(rng, target)})
        if failed:
            client.call("search_notes", {"query": target.split()[0][:4]})
    client.call("get_note", {"title": target})
    new_title = rng.choice([t for t in TOPICS if t not in titles])
    tags = rng.sample(TAGS, rng.randint(1, 2))
    if rng.random() < 0.4:  # tags as a string instead of a list: the SDK's validation error
        client.call("add_note", {"title": new_title, "body": rng.choice(LINES), "tags": tags[0]})
    client.call("add_note", {"title": new_title, "body": rng.choice(LINES), "tags": tags})
    if rng.random() < 0.3:
        client.call("add_note", {"title": new_title, "body": "again"})  # duplicate title
    client.call("append_to_note", {"title": new_title, "text": rng.choice(LINES)})
    client.call("get_note", {"title": new_title})
    client.call("list_notes", {"tag": tags[0]})
    if rng.random() < 0.4:
        client.call("remove_note", {"title": target})  # no such tool
    client.call("delete_note", {"title": target})
    client.call("list_notes", {})
    if rng.random() < 0.3:  # asking again: the same answer
        client.call("list_notes", {})


def shopdb_session(client: Any, rng: random.Random) -> None:
    client.call("list_tables", {})
    if rng.random() < 0.6:
        client.call("describe_table", {"table": "product"})  # singular: no such table
    client.call("describe_table", {"table": "products"})
    category = rng.choice(CATEGORIES)
    select = (
        f"SELECT id, name, price, stock FROM products WHERE category = '{category}' ORDER BY price"
    )
    if rng.random() < 0.5:
        client.call("read_query", {"sql": select.replace("price, stock", "prize, stock")})
    if rng.random() < 0.3:
        client.call("read_query", {"query": select})  # wrong argument name
    rows, _ = client.call("read_query", {"sql": select})
    client.call("describe_table", {"table": "orders"})
    client.call(
        "read_query",
        {
            "sql": "SELECT p.name, SUM(o.quantity) AS sold FROM orders o JOIN "
            "products p ON p.id = o.product_id GROUP BY p.name "
            "ORDER BY sold DESC, p.name LIMIT 3"
        },
    )
    pid = rows[0]["id"] if isinstance(rows, list) and rows else 1
    update = f"UPDATE products SET stock = stock + 10 WHERE id = {pid}"
    if rng.random() < 0.4:
        client.call("read_query", {"sql": update})  # a write through the read tool
    client.call("write_query", {"sql": update})
    client.call("read_query", {"sql": f"SELECT name, stock FROM products WHERE id = {pid}"})
    if rng.random() < 0.4:
        client.call("write_query", {"sql": "DELETE FROM orders WHERE quantity > 'five'"})
    client.call(
        "read_query",
        {"sql": "SELECT COUNT(*) AS n, ROUND(SUM(price * stock), 2) AS value FROM products"},
    )


def calendar_session(client: Any, rng: random.Random) -> None:
    client.call("today", {})
    day = rng.choice(["2025-03-03", "2025-03-04", "2025-03-05"])
    if rng.random() < 0.6:
        client.call("list_events", {"date": f"{day[5:7]}/{day[8:]}/{day[:4]}"})  # US format
    events, _ = client.call("list_events", {"date": day})
    minutes = rng.choice([30, 45, 60, 90])
    title = rng.choice(MEETINGS)
    if isinstance(events, list) and events:  # try the first busy time: overlap error
        client.call(
            "create_event",
            {"title": title, "date": day, "start": events[0]["start"], "duration_minutes": minutes},
        )
    if rng.random() < 0.4:
        client.call(
            "create_event",
            {"title": title, "date": day, "start": "10:00", "duration_minutes": "an hour"},
        )
    slot, failed = client.call("find_free_slot", {"date": day, "duration_minutes": minutes})
    created = None
    if not failed:
        created, _ = client.call(
            "create_event",
            {"title": title, "date": day, "start": slot["start"], "duration_minutes": minutes},
        )
    client.call("list_events", {"date": day})
    if rng.random() < 0.4:
        client.call("delete_event", {"event_id": 999})
    if isinstance(created, dict) and rng.random() < 0.5:
        client.call("delete_event", {"event_id": created["id"]})
        client.call("list_events", {"date": day})
    if rng.random() < 0.3:
        client.call(
            "create_event",
            {"title": "late call", "date": day, "start": "16:30", "duration_minutes": 60},
        )  # past 17:00
    client.call("find_free_slot", {"date": FIXED_DATE, "duration_minutes": 30})


SCENARIOS: dict[str, Callable[[Any, random.Random], None]] = {
    "notes": notes_session,
    "shopdb": shopdb_session,
    "calendar": calendar_session,
}
