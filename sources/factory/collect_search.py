"""Search collector: a scripted researcher over the local BM25 engine, written as MiroFlow results.

Every tool result is what `search_engine` really returned: `search_docs` (BM25 over the standard
library's documentation, results as search-engine JSON), `open_page` (the document as scraped
page text) and `extract_passages` (the sentences of a page that mention a term). The question
asks which documented callable a description belongs to; the agent searches with words of the
description (sometimes misspelled), opens results in rank order and compares what the page says
with the description (a real check on the observation), refines the query when nothing matches,
and answers in `\\boxed{}`. Written in MiroFlow's task_result layout: `<use_mcp_tool>` blocks in
assistant messages, the tool result as the next user message.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from sources.factory.collect_util import (
    FIXED_DATE,
    dump_json,
    run_indexed,
    trajectory_rng,
    workers_for,
    write_text,
)
from sources.factory.search_engine import Doc, SearchEngine, default_engine, tokenize

SERVER = "local-docs"
SYSTEM_PROMPT = f"""In this environment you have access to a set of tools you can use to \
answer the user's question.

You only have access to the tools provided below. You can only use one tool per message, and \
will receive the result of that tool in the user's next response. Today is: {FIXED_DATE}

# Tool-Use Formatting Instructions

Tool-use is enclosed in <use_mcp_tool></use_mcp_tool>, with <server_name>, <tool_name> and \
JSON <arguments> inside.

## Server name: {SERVER}
### Tool name: search_docs
Description: Search the Python documentation. Args: q (query string), num (number of results).
### Tool name: open_page
Description: Return the text of a documentation page. Args: url.
### Tool name: extract_passages
Description: Return the sentences of a page that mention a term. Args: url, query.
"""
TASK_SUFFIX = (
    "\n\nYour task is to answer by searching the documentation. Give the final answer as "
    "\\boxed{qualified.name}."
)


def _first_sentence(doc: Doc) -> str:
    body = doc.text.split("\n\n", 1)[-1]
    return " ".join(re.split(r"(?<=[.!?])\s", " ".join(body.split()), maxsplit=1)[0].split())


def pick_target(engine: SearchEngine, rng: random.Random) -> tuple[Doc, str]:
    """A callable whose first sentence is a usable description (its own name masked)."""
    while True:
        doc = engine.docs[rng.randrange(len(engine.docs))]
        if "." not in doc.title or doc.title.endswith(" module"):
            continue
        sentence = _first_sentence(doc)
        name = doc.title.rsplit(".", 1)[-1]
        described = re.sub(rf"\b{re.escape(name)}\b", "___", sentence)
        if 6 <= len(tokenize(described)) and len(described) <= 220:
            return doc, described


class Session:
    """Message history of one run: each tool call is an assistant message then a user message."""

    def __init__(self, engine: SearchEngine, question: str) -> None:
        self.engine = engine
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": [{"type": "text", "text": SYSTEM_PROMPT}]},
            {"role": "user", "content": question + TASK_SUFFIX},
        ]

    def _tool(self, plan: str, tool: str, arguments: dict[str, Any], result: str) -> str:
        block = (
            f"<use_mcp_tool>\n<server_name>{SERVER}</server_name>\n<tool_name>{tool}</tool_name>\n"
            f"<arguments>\n{json.dumps(arguments, indent=2)}\n</arguments>\n</use_mcp_tool>"
        )
        self.messages.append({"role": "assistant", "content": f"{plan}\n\n{block}"})
        self.messages.append({"role": "user", "content": [{"type": "text", "text": result}]})
        return result

    def search(self, plan: str, query: str, num: int = 5) -> list[dict[str, Any]]:
        hits = self.engine.search(query, num)
        organic = [
            {
                "title": doc.title,
                "link": doc.url,
                "snippet": self.engine.snippet(doc, query),
                "position": rank,
                "score": score,
            }
            for rank, (doc, score) in enumerate(hits, 1)
        ]
        result = {
            "searchParameters": {
                "q": query,
                "num": num,
                "engine": "worldtrace-bm25",
                "type": "search",
            },
            "organic": organic,
        }
        self._tool(plan, "search_docs", {"q": query, "num": num}, json.dumps(result, indent=2))
        return organic

    def open(self, plan: str, url: str) -> Doc | None:
        doc = self.engine.by_url.get(url)
        if doc is None:
            self._tool(
                plan,
                "open_page",
                {"url": url},
                f"Tool call to open_page on {SERVER} failed. Error: 404 Not Found: {url}",
            )
            return None
        self._tool(
            plan,
            "open_page",
            {"url": url},
            f"Title: {doc.title}\n\nURL Source: {doc.url}\n\nMarkdown Content:\n{doc.text}",
        )
        return doc

    def extract(self, plan: str, doc: Doc, query: str) -> None:
        result = {"url": doc.url, "query": query, "passages": self.engine.passages(doc, query)}
        self._tool(
            plan, "extract_passages", {"url": doc.url, "query": query}, json.dumps(result, indent=2)
        )


def _misspell(rng: random.Random, word: str) -> str:
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1 :]


def run_agent(session: Session, description: str, rng: random.Random) -> str | None:
    """Search, open in rank order until a page's first sentence matches, refine; the answer."""
    words = list(dict.fromkeys(tokenize(description)))
    queries = [
        " ".join(rng.sample(words, min(len(words), rng.randint(3, 5)))),
        " ".join(words),
        description,
    ]
    if rng.random() < 0.25:
        bad = [
            (_misspell(rng, w) if len(w) > 4 and rng.random() < 0.5 else w)
            for w in queries[0].split()
        ]
        queries.insert(0, " ".join(bad))
    target = " ".join(description.split())
    answer = None
    for attempt, query in enumerate(queries):
        plan = (
            "Search the documentation for the described behaviour."
            if attempt == 0
            else "Nothing matched exactly; search again with more of the description."
        )
        hits = session.search(plan, query)
        if rng.random() < 0.15:
            hits = session.search("Run the same search again to double-check the ranking.", query)
        if not hits and rng.random() < 0.5:
            session.open(
                "Try the page I would expect for this.",
                f"https://docs.python.org/3/library/{words[0]}.html#{words[0]}.{words[-1]}",
            )
        for hit in hits[:4]:
            doc = session.open(
                f"Open result {hit['position']} ({hit['title']}) to compare its description.",
                hit["link"],
            )
            if doc is None:
                continue
            name = doc.title.rsplit(".", 1)[-1]
            if re.sub(rf"\b{re.escape(name)}\b", "___", _first_sentence(doc)) == target:
                answer = doc.title
                if rng.random() < 0.6:
                    session.extract("Confirm the key sentence on this page.", doc, words[0])
                return answer
    return answer


def collect_one(index: int, seed: int, out_dir: Path, engine: SearchEngine) -> int:
    """One question (two or three descriptions) against the real engine; writes MiroFlow JSON."""
    rng = trajectory_rng(seed, "search", index)
    targets: list[tuple[Doc, str]] = []
    while len(targets) < rng.choice([2, 2, 3]):
        pick = pick_target(engine, rng)
        if all(pick[0].doc_id != doc.doc_id for doc, _ in targets):
            targets.append(pick)
    parts = "; ".join(
        f'({number}) "{description}"' for number, (_, description) in enumerate(targets, start=1)
    )
    question = (
        f"Which Python standard-library callables are documented as follows (each name is "
        f"masked as ___): {parts}? Give their qualified names, in order, separated by '; '."
    )
    session = Session(engine, question)
    answers = [run_agent(session, description, rng) for _, description in targets]
    boxed = "; ".join(answer or "unknown" for answer in answers)
    final = (
        f"Matching pages found: {sum(a is not None for a in answers)} of {len(answers)}."
        f"\n\n\\boxed{{{boxed}}}"
    )
    session.messages.append({"role": "assistant", "content": final})
    correct = all(answer == doc.title for answer, (doc, _) in zip(answers, targets, strict=True))
    document = {
        "message_history": session.messages,
        "summary": f"Final report: searched the local documentation index for each description; "
        f"answers: {boxed}.",
        "final_boxed_answer": boxed,
        # MiroFlow's task logs carry the judge's verdict; here the ground truth is known exactly.
        "judge_result": "CORRECT" if correct else "INCORRECT",
    }
    write_text(out_dir / f"search-collected-{index:05d}.task_result.json", dump_json(document))
    return (len(session.messages) - 3) // 2


def collect(out_dir: Path, n: int, seed: int, work_dir: Path) -> list[int]:
    """Collect `n` search trajectories into `out_dir` (work_dir unused: the index is in memory)."""
    engine = default_engine()
    return run_indexed(lambda i: collect_one(i, seed, out_dir, engine), range(n), workers_for(n))
