"""Every planted secret shape in a real-looking terminal observation is replaced by the pipeline
(20 shapes, among them the two an earlier rule let through: a URL password with sub-delimiters
or an empty user, and an `Authorization: Bearer` token), and the new rules flag nothing in real
text beyond what is there."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from planted_secrets import terminal_session
from quality_rows import trajectory, write_partition

from quality.scrub import Placeholders, scrub_partition, scrub_text
from quality.secrets import ALL_KINDS, GATES, find_sensitive, gated_kinds
from sources.catalog import load_catalog
from sources.ingest import write_tables
from sources.storage import partition_path
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

REPO_ROOT = Path(__file__).resolve().parent.parent
PANE = "terminal/tbench/fix-permissions.1-of-1/panes/post-agent.txt"


def expected_kinds(text: str, planted: list[tuple[str, str]]) -> Counter[str]:
    """One finding per occurrence of each planted value."""
    expected: Counter[str] = Counter()
    for kind, value in planted:
        expected[kind] += text.count(value)
    return expected


def test_at_least_16_shapes_are_planted_and_every_one_is_replaced() -> None:
    text, planted = terminal_session()
    assert len(planted) >= 16 and len({kind for kind, _ in planted}) >= 16
    scrubbed, replaced = scrub_text(text, Placeholders())
    assert [value for _, value in planted if value in scrubbed] == []
    for line in planted[-2][1].splitlines():  # not one line of the private key
        assert line not in scrubbed
    assert Counter(kind for kind, _ in replaced) == expected_kinds(text, planted)
    assert find_sensitive(scrubbed) == []  # the second pass finds nothing
    # what is not a secret stays, byte for byte
    for kept in ("HOME=/root", "> Host: api.orders.example.net", "< HTTP/1.1 200 OK",
                 "@db.internal:5432/orders", "redis://:", "@cache:6379/0",
                 "psql \"$DATABASE_URL\" -c 'select count(*) from orders'"):
        assert kept in scrubbed, kept
    # the same bearer token, sent twice, keeps one placeholder
    bearer = next(v for k, v in planted if k == "auth_header")
    placeholder = scrubbed.split("Authorization: Bearer ", 1)[1].split('"', 1)[0]
    assert text.count(bearer) == 2 and scrubbed.count(f"Bearer {placeholder}") == 2


@pytest.mark.parametrize(("text", "value"), [
    ("postgres://user:hunter2!x@db/app", "hunter2!x"),
    ("mongodb+srv://admin:Pa$$w0rd@cluster0.abc.mongodb.net/db", "Pa$$w0rd"),
    ("redis://:r3d1s-pass@cache:6379/0", "r3d1s-pass"),
    ("amqp://guest:p@ss=1@rabbit:5672/", "p@ss=1"),
    ('-H "Authorization: Bearer Zm9vYmFyYmF6cXV4MTIz"', "Zm9vYmFyYmF6cXV4MTIz"),
    ('{"Authorization":"Bearer secret_Abc123def456ghi789"}', "secret_Abc123def456ghi789"),
    ("authorization: token 0123456789abcdef0123", "0123456789abcdef0123"),
])
def test_the_two_missed_shapes_in_their_variants(text: str, value: str) -> None:
    (finding,) = find_sensitive(text)
    assert text[finding.start:finding.end] == value
    assert finding.kind in {"password_in_url", "auth_header"}


@pytest.mark.parametrize("text", [
    "postgresql://{user}:{password}@{host}/db",
    "postgres://admin:${DB_PASSWORD}@db:5432/app",
    "curl -H 'Authorization: Bearer $TOKEN' https://api",
    "Authorization: Bearer YOUR_API_TOKEN",
    "The API uses bearer authentication; see authorization: in the config.",
    "http://localhost:8080/v1/users/jane@corp",
    "ftp://anonymous:@ftp.example.org/pub",
])
def test_templates_and_prose_are_not_findings(text: str) -> None:
    assert [f.kind for f in find_sensitive(text) if f.kind != "email"] == []


def test_pipeline_replaces_every_shape_in_a_real_terminal_observation(
        traces_dir: Path, tmp_path: Path) -> None:
    """The session appended to a real tbench pane, as the observation of a real terminal turn
    of the fixtures, through scrub_partition: all replaced, counted and recorded."""
    raw = tmp_path / "raw"
    write_tables(load_catalog(REPO_ROOT / "sources.example.toml", raw), raw,
                 domains=["terminal"])
    session, planted = terminal_session()
    observation = (traces_dir / PANE).read_text() + session
    turns_path = RAW_TURNS.path(raw, "terminal", "0")
    turns = pq.read_table(turns_path).to_pylist()
    turns[0]["observation"] = observation
    pq.write_table(pa.Table.from_pylist(turns, schema=pq.read_schema(turns_path)), turns_path)

    out = tmp_path / "out"
    paths = [partition_path(out, name, "terminal", "0")
             for name in ("scrubbed_trajectories", "scrubbed_turns", "scrub_findings")]
    stats = scrub_partition(RAW_TRAJECTORIES.path(raw, "terminal", "0"), turns_path,
                            *paths)
    scrubbed = pq.read_table(paths[1]).to_pylist()[0]["observation"]
    assert [value for _, value in planted if value in scrubbed] == []
    findings = pq.read_table(paths[2]).to_pylist()
    first_turn = [row for row in findings if row["trajectory_id"] == turns[0]["trajectory_id"]
                  and row["turn_index"] == turns[0]["turn_index"]
                  and row["field"] == "observation"]
    assert Counter(row["kind"] for row in first_turn) == expected_kinds(observation, planted)
    assert stats.replaced == len(findings)


def test_gates_in_one_pass_give_each_text_the_gates_it_passes_one_by_one() -> None:
    """gated_kinds tries the gates one by one only on the texts that the one-pass alternation
    of them all lets through: the same kinds as every gate on every text. The texts: the
    planted session line by line, the look-alikes, and a case-insensitive gate's words in
    capitals (its (?i) must not carry over to the gates after it in the alternation)."""
    session, _ = terminal_session()
    texts = [*session.splitlines(), session, None, "", "API_KEY = 'X'", "PASSWORD: \"x\"",
             "Mail JANE@CORP-MAIL.COM", "no secret here", "10.0.0.1 and v1.2.3.4"]
    texts += [text.upper() for text in texts if text] + [text.lower() for text in texts if text]
    column = pl.Series(texts, dtype=pl.String)
    one_by_one = [tuple(kind for kind in ALL_KINDS
                        if column.str.contains(GATES[kind]).fill_null(False)[row])
                  for row in range(len(texts))]
    assert gated_kinds(texts) == one_by_one
    assert sum(map(bool, one_by_one)) > len(texts) // 4  # (the gates do let texts through)


def test_turns_out_of_lockstep_are_refused(tmp_path: Path) -> None:
    """Scrubbing takes each trajectory's n_turns turn rows next: a missing, an extra or a
    misplaced turn row is an error naming the trajectory, and no output is left."""
    turns, trajectories = write_partition(tmp_path, "terminal", {
        "a.json": trajectory("a", [("ls", "x"), ("pwd", "/")]),
        "b.json": trajectory("b", [("id", "root")])})
    table = pq.read_table(turns)
    out = [tmp_path / "out" / name for name in ("t.parquet", "u.parquet", "f.parquet")]
    for rows, message in ((table.slice(0, 2), r"\(n_turns 1\) next, found the end of the file"),
                          (pa.concat_tables([table, table.slice(0, 1)]), "has no row in"),
                          (table.take([0, 2, 1]), r"\(n_turns 2\) next, found trajectory")):
        pq.write_table(rows, turns)
        with pytest.raises(ValueError, match=message):
            scrub_partition(trajectories, turns, *out)
        assert not any(path.exists() for path in out)
