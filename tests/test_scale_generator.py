"""The seeded scale generator: layout, determinism, and planted truth checked through the readers.

The corpus is generated once per session at a small size (20 trajectories per domain) and every
file is read back with the real reader of its format: the reader must yield exactly the turns
(count and texts) the truth file describes, and the planted categories and duplicate pairs must
hold for what the reader yields.
"""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.factory import scale
from sources.factory.scale import generate_corpus, regenerate
from sources.factory.scale_core import CATEGORIES
from sources.factory.scale_text import jaccard, shingles
from sources.readers.base import read_head
from sources.schema import DOMAINS, Trajectory

SEED = 123
N = 20
# Domain -> the reader module and class that must read its generated files (brief's registry).
READERS = {
    "terminal": ("sources.readers.atif", "AtifReader"),
    "swe": ("sources.readers.sweagent", "SweAgentReader"),
    "mcp": ("sources.readers.mcp_jsonrpc", "McpJsonRpcReader"),
    "search": ("sources.readers.miroflow", "MiroFlowReader"),
    "android": ("sources.readers.androidworld", "AndroidWorldReader"),
    "web": ("sources.readers.webarena", "WebArenaRenderReader"),
    "os": ("sources.readers.osworld", "OsWorldReader"),
}
BENCHMARK_MEAN_TURNS = {"mcp": 23, "search": 16, "terminal": 27, "swe": 28, "android": 38,
                        "web": 14, "os": 13}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, scale.GenerationStats]:
    out = tmp_path_factory.mktemp("scale")
    return out, generate_corpus(out, ["all"], N, SEED)


def _reader(domain: str):  # noqa: ANN202 - a Reader instance
    module_name, class_name = READERS[domain]
    module = pytest.importorskip(module_name, reason=f"reader {module_name} not written yet")
    return getattr(module, class_name)()


@pytest.fixture(scope="module")
def read_back(corpus) -> dict[tuple[str, str], Trajectory]:  # noqa: ANN001
    """Every generated file read with its domain's reader: (domain, file) -> trajectory."""
    out, _ = corpus
    trajectories = {}
    for domain in DOMAINS:
        reader = _reader(domain)
        for path in sorted((out / domain / f"{domain}-generated").iterdir()):
            assert reader.sniff(path, read_head(path)), f"{reader.name} does not claim {path.name}"
            items = list(reader.read(path))
            assert len(items) == 1 and isinstance(items[0], Trajectory), (path.name, items[:3])
            trajectories[(domain, path.name)] = items[0]
    return trajectories


def _truth(out: Path) -> tuple[list[dict], list[dict], dict]:
    turns = pq.read_table(out / "_truth" / "turn_truth.parquet").to_pylist()
    pairs = pq.read_table(out / "_truth" / "duplicate_pairs.parquet").to_pylist()
    manifest = json.loads((out / "_truth" / "manifest.json").read_text())
    return turns, pairs, manifest


def _text(trajectory: Trajectory) -> str:
    parts = [trajectory.task]
    for turn in trajectory.turns:
        parts += [turn.action, turn.observation]
    return "\n".join(parts)


def test_layout_and_truth_schema(corpus) -> None:  # noqa: ANN001
    out, stats = corpus
    for domain in DOMAINS:
        files = sorted((out / domain / f"{domain}-generated").iterdir())
        assert len(files) == N == stats.domains[domain].files
    assert not list(out.glob(".scale-*")), "temporary folders left behind"
    schema = pq.read_schema(out / "_truth" / "turn_truth.parquet")
    assert [(f.name, str(f.type)) for f in schema] == [
        ("source", "string"), ("domain", "string"), ("file", "string"),
        ("turn_index", "int32"), ("category", "string")]
    schema = pq.read_schema(out / "_truth" / "duplicate_pairs.parquet")
    assert [(f.name, str(f.type)) for f in schema] == [
        ("source", "string"), ("domain", "string"), ("file_a", "string"), ("file_b", "string"),
        ("jaccard", "double"), ("kind", "string")]
    turns, _, manifest = _truth(out)
    assert len(turns) == stats.turns
    assert {r["source"] for r in turns} == {f"{d}-generated" for d in DOMAINS}
    assert {r["category"] for r in turns} == set(CATEGORIES)
    assert manifest["seed"] == SEED
    paths = [f["path"] for f in manifest["files"]]
    assert paths == sorted(paths) and len(paths) == N * len(DOMAINS)
    for entry in manifest["files"][:5]:
        assert (out / entry["path"]).stat().st_size == entry["bytes"]


def test_same_seed_same_bytes_other_seed_other_bytes(corpus, tmp_path: Path) -> None:  # noqa: ANN001
    out, _ = corpus
    generate_corpus(tmp_path / "again", ["all"], N, SEED)
    generate_corpus(tmp_path / "other", ["all"], N, SEED + 1)
    _, _, first = _truth(out)
    _, _, again = _truth(tmp_path / "again")
    _, _, other = _truth(tmp_path / "other")
    assert first == again
    for name in ("turn_truth.parquet", "duplicate_pairs.parquet"):
        again_bytes = (tmp_path / "again" / "_truth" / name).read_bytes()
        assert (out / "_truth" / name).read_bytes() == again_bytes
    shared = {f["sha256"] for f in first["files"]} & {f["sha256"] for f in other["files"]}
    assert not shared


def test_worker_processes_write_the_same_files(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    generate_corpus(tmp_path / "inline", ["terminal", "web"], 12, 5, workers=1)
    monkeypatch.setattr(scale, "INLINE_TURN_LIMIT", 0)
    monkeypatch.setattr(scale, "CHUNK", 5)
    generate_corpus(tmp_path / "pool", ["terminal", "web"], 12, 5, workers=2)
    assert _truth(tmp_path / "inline")[2] == _truth(tmp_path / "pool")[2]


def test_readers_yield_exactly_the_truth(corpus, read_back) -> None:  # noqa: ANN001
    out, _ = corpus
    turns, _, _ = _truth(out)
    counts = Counter((r["domain"], r["file"]) for r in turns)
    indices = defaultdict(list)
    for r in turns:
        indices[(r["domain"], r["file"])].append(r["turn_index"])
    assert set(counts) == set(read_back)
    for key, trajectory in read_back.items():
        assert len(trajectory.turns) == counts[key], key
        assert indices[key] == list(range(counts[key]))
        domain, name = key
        task, expected, _ = regenerate(SEED, domain, N, int(name.split("-")[1].split(".")[0]))
        assert trajectory.task == task.text, key
        for got, want in zip(trajectory.turns, expected, strict=True):
            assert (got.action, got.observation) == (want.action, want.observation), key


def test_files_are_detected_as_their_format(corpus) -> None:  # noqa: ANN001
    try:
        registry = importlib.import_module("sources.readers")
        registry.all_readers()
    except ImportError as error:
        pytest.skip(f"registry not complete yet: {error}")
    out, _ = corpus
    for domain in DOMAINS:
        expected = _reader(domain).name
        for path in sorted((out / domain / f"{domain}-generated").iterdir())[:5]:
            assert registry.detect(path).name == expected, path.name


_TOKEN = re.compile(r"[a-z0-9]+")


def _echo_score(action: str, observation: str) -> float:
    """Share of the observation's tokens that also occur in the action."""
    a, o = set(_TOKEN.findall(action.lower())), _TOKEN.findall(observation.lower())
    return sum(token in a for token in o) / len(o) if o else 0.0


def test_planted_categories_hold_in_reader_output(corpus, read_back) -> None:  # noqa: ANN001
    out, _ = corpus
    turns, _, _ = _truth(out)
    boiler = Counter()
    echo, informative = defaultdict(list), defaultdict(list)
    for r in turns:
        trajectory = read_back[(r["domain"], r["file"])]
        turn = trajectory.turns[r["turn_index"]]
        cat = r["category"]
        if cat == "empty":
            if r["domain"] == "mcp":  # the JSON-RPC envelope stays; the result has no content
                assert json.loads(turn.observation)["result"]["content"] == []
            else:
                assert not turn.observation.strip(), r
        elif cat == "unchanged":
            before = trajectory.turns[r["turn_index"] - 1].observation
            if r["domain"] == "mcp":  # same call, same answer, new request id
                before = re.sub(r'"id":\d+', "", before)
                assert re.sub(r'"id":\d+', "", turn.observation) == before, r
            else:
                changed = sum(a != b for a, b in zip(before.split("\n"),
                                                     turn.observation.split("\n"), strict=True))
                assert changed <= 1, r
        elif cat == "boilerplate":
            boiler[(r["domain"], re.sub(r"\d+", "#", turn.observation))] += 1
        elif cat == "echo":
            echo[r["domain"]].append(_echo_score(turn.action, turn.observation))
        elif cat == "informative":
            assert turn.observation.strip(), r
            informative[r["domain"]].append(_echo_score(turn.action, turn.observation))
    recurring = sum(n for n in boiler.values() if n > 1) / sum(boiler.values())
    assert recurring > 0.8, "boilerplate observations should recur across trajectories"
    for domain in DOMAINS:
        # GUI screens wrap typed text in element markup, so the bar is relative, per domain
        scores, usual = echo[domain], sorted(informative[domain])
        mean, usual_mean = sum(scores) / len(scores), sum(usual) / len(usual)
        assert mean >= max(2 * usual_mean, usual_mean + 0.1), (domain, mean, usual_mean)
        assert all(score > usual[len(usual) // 2] for score in scores), domain


def test_category_proportions_and_turn_counts(corpus) -> None:  # noqa: ANN001
    out, stats = corpus
    turns, _, _ = _truth(out)
    by_domain = defaultdict(Counter)
    for r in turns:
        by_domain[r["domain"]][r["category"]] += 1
    for domain, counts in by_domain.items():
        total = sum(counts.values())
        assert counts.most_common(1)[0][0] == "informative", domain
        assert 0.4 <= counts["informative"] / total <= 0.75, (domain, counts)
        assert 0.03 <= counts["error"] / total <= 0.2, (domain, counts)
        for cat in CATEGORIES:
            assert counts[cat] > 0, (domain, cat)
        assert counts == Counter(stats.domains[domain].categories) - Counter()
        mean = total / N
        assert abs(mean - BENCHMARK_MEAN_TURNS[domain]) <= 0.35 * BENCHMARK_MEAN_TURNS[domain]


def test_duplicate_pairs_are_true(corpus, read_back) -> None:  # noqa: ANN001
    out, _ = corpus
    _, pairs, _ = _truth(out)
    kinds = Counter((p["domain"], p["kind"]) for p in pairs)
    for domain in DOMAINS:
        assert kinds[(domain, "exact")] >= 1 and kinds[(domain, "near")] >= 1, domain
    near = []
    for p in pairs:
        folder = out / p["domain"] / f"{p['domain']}-generated"
        a, b = folder / p["file_a"], folder / p["file_b"]
        if p["kind"] == "exact":
            assert a.read_bytes() == b.read_bytes() and p["jaccard"] == 1.0
            continue
        assert a.read_bytes() != b.read_bytes()
        recomputed = jaccard(_text(read_back[(p["domain"], p["file_a"])]),
                             _text(read_back[(p["domain"], p["file_b"])]))
        assert recomputed == pytest.approx(p["jaccard"], abs=1e-12), p
        near.append(p["jaccard"])
    assert min(near) < 0.8 < max(near), near


def test_no_unrecorded_near_duplicates(corpus, read_back) -> None:  # noqa: ANN001
    out, _ = corpus
    _, pairs, _ = _truth(out)
    recorded = {(p["domain"], *sorted((p["file_a"], p["file_b"]))) for p in pairs}
    for domain in DOMAINS:
        names = sorted(name for d, name in read_back if d == domain)
        sets = {name: shingles(_text(read_back[(domain, name)])) for name in names}
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                similarity = len(sets[a] & sets[b]) / len(sets[a] | sets[b])
                if similarity >= 0.3:
                    assert (domain, a, b) in recorded, (domain, a, b, similarity)


def test_one_domain_at_a_time_merges_truth(tmp_path: Path) -> None:
    generate_corpus(tmp_path, ["os"], 12, 1)
    generate_corpus(tmp_path, ["web"], 12, 1)
    first = _truth(tmp_path)
    generate_corpus(tmp_path, ["os"], 12, 1)  # regenerating a domain replaces its rows
    second = _truth(tmp_path)
    assert first[2] == second[2]
    assert sorted(map(str, first[0])) == sorted(map(str, second[0]))
    assert {r["domain"] for r in second[0]} == {"os", "web"}
    assert {f["path"].split("/")[0] for f in second[2]["files"]} == {"os", "web"}
    generate_corpus(tmp_path, ["os"], 10, 2)
    turns, _, manifest = _truth(tmp_path)
    assert Counter(r["file"] for r in turns if r["domain"] == "os").keys() == {
        p.name for p in (tmp_path / "os" / "os-generated").iterdir()}
    assert manifest["seed"] is None  # the domains now come from different seeds


def _app_shown(domain: str, observation: str) -> str | None:
    """The app whose screen an Android or desktop observation is (None: a system screen)."""
    if domain == "android":
        found = re.search(r"id=([\w.]+):id/toolbar_title", observation)
    else:
        found = re.search(r"^frame\t[^\t]* - ([^\t]+)\t", observation, re.M)
    return found.group(1) if found else None


@pytest.mark.parametrize("domain", ["android", "os"])
def test_gui_trajectories_stay_in_an_app_until_the_agent_opens_another(
        corpus, read_back, domain: str) -> None:  # noqa: ANN001
    """A new screen of another app than the screen before comes after the action that opens it
    (AndroidWorld's open_app, a click on the desktop's launcher button of the app), so a screen
    swapped in from another trajectory stands out, as in real sessions."""
    from sources.factory.scale_android import APPS as ANDROID_APPS
    from sources.factory.scale_os import APPS as DESKTOP_APPS

    opens = ({pkg: f'"app_name": "{name}"' for name, pkg in ANDROID_APPS.items()}
             if domain == "android" else
             {app: f"pyautogui.click(35, {92 + 70 * k})" for k, app in enumerate(DESKTOP_APPS)})
    out, _ = corpus
    informative = {(r["file"], r["turn_index"]) for r in _truth(out)[0]
                   if r["domain"] == domain and r["category"] == "informative"}
    pairs = changed = 0
    for (found_domain, name), trajectory in read_back.items():
        if found_domain != domain:
            continue
        before = None  # the app of the screen before, when that was an app's new screen
        for k, turn in enumerate(trajectory.turns):
            app = _app_shown(domain, turn.observation) if (name, k) in informative else None
            if app is not None and before is not None:
                pairs += 1
                if app != before:
                    changed += 1
                    assert opens[app] in turn.action, (name, before, app, turn.action)
            before = app
    assert pairs > 50
    assert 0 < changed < 0.2 * pairs, (changed, pairs)
