"""Secret and PII scrubbing on the real fixtures: every planted kind is replaced and counted,
placeholders are consistent within a trajectory, and the real text's hashes stay untouched."""

from __future__ import annotations

import base64
import json
import random
import string
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quality.checks import nothing_left_to_scrub
from quality.scrub import (
    TRAJECTORY_TEXT_FIELDS,
    TURN_TEXT_FIELDS,
    Placeholders,
    ScrubStats,
    _Batch,
    _gate_pass,
    _write_pass,
    scrub_partition,
    scrub_text,
)
from quality.scrub_copy import CopyingSink
from quality.secrets import find_sensitive, gated_kinds
from quality.tables import SCRUB_FINDINGS, SCRUBBED_TRAJECTORIES, SCRUBBED_TURNS
from sources.catalog import load_catalog
from sources.ingest import write_tables
from sources.schema import DOMAINS
from sources.storage import ParquetSink, partition_path
from sources.tables import RAW_TRAJECTORIES, RAW_TURNS

REPO_ROOT = Path(__file__).resolve().parent.parent
CREDENTIAL_FREE_KINDS = {"email", "phone"}  # all the real fixtures hold (checked by hand)


def _random(alphabet: str, n: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(document: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


def planted_values(seed: int = 7) -> list[tuple[str, str, str]]:
    """(kind, value, text that carries it): one per kind the scrubber must catch. The values are
    made here, in the right alphabets and lengths, so the repository holds no key-shaped text."""
    rng = random.Random(seed)
    alnum, upper = string.ascii_letters + string.digits, string.ascii_uppercase + string.digits
    openai_legacy = f"sk-{_random(alnum, 20, rng)}T3BlbkFJ{_random(alnum, 20, rng)}"
    openai_project = f"sk-proj-{_random(alnum + '_-', 48, rng)}"
    jwt = f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': '42'})}.{_random(alnum, 43, rng)}"
    key_body = "\n".join(_random(alnum + "+/", 64, rng) for _ in range(4))
    armour = "-----{} OPENSSH PRIVATE KEY-----"
    private_key = f"{armour.format('BEGIN')}\n{key_body}\n{armour.format('END')}"
    password = _random(alnum, 14, rng)
    values = [
        ("openai_key", openai_legacy, "curl -H 'Authorization: Bearer {v}' https://api.openai.com/v1"),
        ("openai_key", openai_project, 'client = OpenAI(api_key="{v}")'),
        ("anthropic_key", f"sk-ant-api03-{_random(alnum + '_-', 93, rng)}AA",
         "export ANTHROPIC_API_KEY={v}"),
        ("github_token", f"ghp_{_random(alnum, 36, rng)}", "GITHUB_TOKEN: {v}"),
        ("github_token", f"github_pat_{_random(alnum + '_', 82, rng)}", "token {v}"),
        ("aws_access_key", f"AKIA{_random(upper, 16, rng)}", "aws_access_key_id = {v}"),
        ("aws_secret_key", _random(alnum + "/+", 40, rng), "aws_secret_access_key = {v}"),
        ("slack_token", f"xoxb-{_random(string.digits, 12, rng)}-{_random(string.digits, 13, rng)}-"
                        f"{_random(string.ascii_lowercase + string.digits, 24, rng)}",
         "SLACK_BOT_TOKEN={v}"),
        ("google_api_key", f"AIza{_random(alnum + '_-', 35, rng)}",
         "GET https://maps.googleapis.com/maps/api/geocode/json?key={v}"),
        ("google_oauth_token", f"ya29.{_random(alnum + '_-', 60, rng)}", "Bearer {v}"),
        ("huggingface_token", f"hf_{_random(alnum, 34, rng)}", "huggingface-cli login --token {v}"),
        ("jwt", jwt, "Cookie: session={v}"),
        ("private_key", private_key, "$ cat ~/.ssh/id_ed25519\n{v}\n$"),
        ("password_in_url", password, "DATABASE_URL=postgres://admin:{v}@db.internal:5432/app"),
        ("env_secret", _random(alnum, 18, rng), "DB_PASSWORD={v}"),
        ("keyword_secret", f"{_random(alnum, 12, rng)}-horse", 'password = "{v}"'),
        ("email", "jane.doe@corp-mail.com", "Contact: jane.doe@corp-mail.com"),
        ("phone", "+44 20 7946 0958", "call +44 20 7946 0958 after 5pm"),
        ("phone", "(415) 555-0134", "office (415) 555-0134"),
        ("ip_address", "203.0.113.42", "ssh ubuntu@203.0.113.42 -p 22"),
    ]
    return [(kind, value, template.replace("{v}", value)) for kind, value, template in values]


@pytest.fixture(scope="module")
def fixture_tables(traces_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real fixtures (sources.example.toml), ingested into the canonical tables."""
    data = tmp_path_factory.mktemp("fixtures")
    write_tables(load_catalog(REPO_ROOT / "sources.example.toml", data), data, domains=DOMAINS)
    return data


def scrub(data: Path, out: Path, domain: str):
    return scrub_partition(RAW_TRAJECTORIES.path(data, domain, "0"),
                           RAW_TURNS.path(data, domain, "0"),
                           SCRUBBED_TRAJECTORIES.path(out, domain, "0"),
                           SCRUBBED_TURNS.path(out, domain, "0"),
                           SCRUB_FINDINGS.path(out, domain, "0"))


def plant(data: Path, out: Path, domain: str) -> list[tuple[str, str, str]]:
    """Copy one domain's raw tables with every planted value put into real text, spread over
    task, system prompt, metadata, actions and observations of several trajectories."""
    trajectories = pq.read_table(RAW_TRAJECTORIES.path(data, domain, "0"))
    turns = pq.read_table(RAW_TURNS.path(data, domain, "0"))
    trajectory_rows, turn_rows = trajectories.to_pylist(), turns.to_pylist()
    first_turn = {}
    for index, row in enumerate(turn_rows):
        first_turn.setdefault(row["trajectory_id"], index)
    with_turns = [row for row in trajectory_rows if row["trajectory_id"] in first_turn]
    planted = planted_values()
    for i, (_, _, text) in enumerate(planted):
        trajectory = with_turns[i % len(with_turns)]
        turn = turn_rows[first_turn[trajectory["trajectory_id"]]]
        match i % 5:
            case 0:
                trajectory["task"] += f"\n{text}\n"
            case 1:
                trajectory["system_prompt"] = (trajectory["system_prompt"] or "") + f"\n{text}"
            case 2:
                metadata = json.loads(trajectory["metadata"])
                metadata[f"planted_{i}"] = text
                trajectory["metadata"] = json.dumps(metadata)
            case 3:
                turn["action"] += f"\n{text}"
            case 4:
                turn["observation"] = f"{text}\n" + turn["observation"]
    for name, rows, schema in (("raw_trajectories", trajectory_rows, trajectories.schema),
                               ("raw_turns", turn_rows, turns.schema)):
        path = partition_path(out, name, domain, "0")
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return planted


def all_text(out: Path, domain: str) -> str:
    tables = [pq.read_table(partition_path(out, name, domain, "0"))
              for name in ("scrubbed_trajectories", "scrubbed_turns", "scrub_findings")]
    return "\n".join(str(value) for table in tables for column in table.columns
                     for value in column.to_pylist())


def test_real_fixtures_give_only_personal_data_hits(fixture_tables: Path, tmp_path: Path) -> None:
    """Commit ids, content hashes, version numbers and base64 blobs of the real traces are not
    mistaken for secrets: the only hits are real e-mail addresses and phone numbers."""
    found: Counter[str] = Counter()
    for domain in DOMAINS:
        found.update(scrub(fixture_tables, tmp_path, domain).kinds)
    assert set(found) <= CREDENTIAL_FREE_KINDS, found
    assert found["email"] > 0 and found["phone"] > 0


def test_unflagged_text_is_left_byte_identical(fixture_tables: Path, tmp_path: Path) -> None:
    scrub(fixture_tables, tmp_path, "swe")
    raw = pq.read_table(RAW_TURNS.path(fixture_tables, "swe", "0"))
    scrubbed = pq.read_table(SCRUBBED_TURNS.path(tmp_path, "swe", "0"))
    assert scrubbed.schema == raw.schema
    assert raw.equals(scrubbed)  # the swe fixtures (hex ids, diffs, versions) hold nothing to hide


@pytest.mark.parametrize("domain", ["swe", "mcp"])
def test_every_planted_kind_is_replaced_and_counted(fixture_tables: Path, tmp_path: Path,
                                                    domain: str) -> None:
    baseline = scrub(fixture_tables, tmp_path / "baseline", domain).kinds
    planted = plant(fixture_tables, tmp_path / "planted", domain)
    stats = scrub(tmp_path / "planted", tmp_path / "scrubbed", domain)

    published = all_text(tmp_path / "scrubbed", domain)
    survivors = [kind for kind, value, _ in planted if value in published]
    assert survivors == []
    for line in planted_values()[12][1].splitlines():  # not one line of the private key
        assert line not in published
    assert stats.kinds - baseline == Counter(kind for kind, _, _ in planted)
    findings = pq.read_table(SCRUB_FINDINGS.path(tmp_path / "scrubbed", domain, "0"))
    assert findings.num_rows == stats.replaced == sum(baseline.values()) + len(planted)
    assert set(findings["field"].to_pylist()) >= {"task", "system_prompt", "metadata", "action",
                                                   "observation"}
    for row in pq.read_table(
        SCRUBBED_TRAJECTORIES.path(tmp_path / "scrubbed", domain, "0")).to_pylist():
        json.loads(row["metadata"])  # still JSON after scrubbing
    outcome = nothing_left_to_scrub(
        SCRUBBED_TRAJECTORIES.path(tmp_path / "scrubbed", domain, "0"),
        SCRUBBED_TURNS.path(tmp_path / "scrubbed", domain, "0"))
    assert outcome.passed, outcome.figures


def test_second_pass_check_fails_on_unscrubbed_tables(fixture_tables: Path,
                                                      tmp_path: Path) -> None:
    plant(fixture_tables, tmp_path, "terminal")
    outcome = nothing_left_to_scrub(RAW_TRAJECTORIES.path(tmp_path, "terminal", "0"),
                                    RAW_TURNS.path(tmp_path, "terminal", "0"))
    assert not outcome.passed
    assert outcome.figures["residual_findings"] >= len(planted_values())


def test_placeholders_are_consistent_within_a_trajectory_and_restart_in_the_next() -> None:
    placeholders = Placeholders()
    task, _ = scrub_text("mail jane@corp-mail.com or bob@corp-mail.com", placeholders)
    observation, replaced = scrub_text("sent to bob@corp-mail.com from 203.0.113.9", placeholders)
    assert task == "mail <EMAIL_1> or <EMAIL_2>"
    assert observation == "sent to <EMAIL_2> from <IP_1>"
    assert replaced == [("email", "<EMAIL_2>"), ("ip_address", "<IP_1>")]
    next_trajectory, _ = scrub_text("bob@corp-mail.com", Placeholders())
    assert next_trajectory == "<EMAIL_1>"


@pytest.mark.parametrize("text", [
    "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    '{"name": "server", "version": "1.0.0.0"}',
    "Linux 5.15.167.4-microsoft-standard-WSL2",
    "LISTEN 0 511 0.0.0.0:8080",
    "export WANDB_API_KEY=TO_BE_FILLED",
    "git@github.com:org/repo.git and icon@2x.png",
    "Ran 1234 tests in 12.345s, 2024-05-17 10:22:31",
    "<SECRET_1> <EMAIL_2> postgres://admin:<SECRET_3>@db:5432",
])
def test_look_alikes_are_not_findings(text: str) -> None:
    assert find_sensitive(text) == []


def test_the_gate_pass_scrubs_and_the_write_pass_writes(tmp_path: Path) -> None:
    """scrub_partition's two passes over a batch: the gate pass writes nothing and returns the
    scrubbed text of each changed cell (one trajectory's placeholders shared by its task and
    its turns) and a findings row per value, listing every field read (0 where nothing was
    found); the write pass puts those cells in place and copies every other cell."""
    trajectories = pa.table({
        "domain": ["mcp", "mcp"], "trajectory_id": ["t1", "t2"],
        "task": ["mail ops-team@corp-mail.com", "plain"], "system_prompt": ["", ""],
        "metadata": ["{}", "{}"], "n_turns": [1, 1]})
    turns = pa.table({
        "trajectory_id": ["t1", "t2"], "turn_index": [0, 0], "action": ["ls", "ls"],
        "observation": ["again ops-team@corp-mail.com, call +1 415-555-0134", "nothing"]})
    batch = _Batch(trajectories, turns,
                   [gated_kinds(trajectories[n].combine_chunks()) for n in TRAJECTORY_TEXT_FIELDS],
                   [gated_kinds(turns[n].combine_chunks()) for n in TURN_TEXT_FIELDS],
                   np.array([0, 1, 2]))
    stats = ScrubStats()
    changed, findings = _gate_pass(batch, stats)
    assert changed == {("trajectories", "task"): {0: "mail <EMAIL_1>"},
                       ("turns", "observation"): {0: "again <EMAIL_1>, call <PHONE_1>"}}
    assert [(f["trajectory_id"], f["turn_index"], f["field"], f["placeholder"])
            for f in findings] == [("t1", None, "task", "<EMAIL_1>"),
                                   ("t1", 0, "observation", "<EMAIL_1>"),
                                   ("t1", 0, "observation", "<PHONE_1>")]
    assert list(stats.fields.items()) == [("task", 1), ("system_prompt", 0), ("metadata", 0),
                                          ("action", 0), ("observation", 2)]
    assert list(tmp_path.iterdir()) == []
    for table, name in ((trajectories, "raw_t.parquet"), (turns, "raw_u.parquet")):
        with ParquetSink(tmp_path / name, table.schema) as sink:
            sink.write_table(table)
    with (CopyingSink(tmp_path / "raw_t.parquet", tmp_path / "t.parquet") as trajectory_sink,
          CopyingSink(tmp_path / "raw_u.parquet", tmp_path / "u.parquet") as turn_sink):
        _write_pass(batch, changed, trajectory_sink, turn_sink)
    assert pq.read_table(tmp_path / "t.parquet").to_pydict() == {
        **trajectories.to_pydict(), "task": ["mail <EMAIL_1>", "plain"]}
    assert pq.read_table(tmp_path / "u.parquet").to_pydict() == {
        **turns.to_pydict(), "observation": ["again <EMAIL_1>, call <PHONE_1>", "nothing"]}
