"""Scale generator, search domain: MiroFlow `task_result.json` files.

`message_history` holds the system prompt, the user's question (with MiroFlow's instructions),
then per turn an assistant message ending in a `<use_mcp_tool>` block and a user message whose
text is the tool result (search-engine JSON or scraped page text); a final assistant report has
no tool call. The reader (sources/readers/miroflow.py) yields the block as the action, the next user
message as the observation and the first user message as the task.
"""

from __future__ import annotations

import json
import random
from json.encoder import encode_basestring as _q

from sources.factory import scale_text as tx
from sources.factory.scale_core import GenTask, GenTurn, near_repeat

DOMAIN = "search"
SUFFIX = ".task_result.json"
MEAN_TURNS = 16.0
WEIGHTS = {"informative": 0.62, "echo": 0.06, "unchanged": 0.07, "boilerplate": 0.09,
           "error": 0.11, "empty": 0.05}
PREFIX: tuple[str, ...] = ()
LAST: str | None = None

SYSTEM = (
    "In this environment you have access to a set of tools you can use to answer the user's "
    "question.\n\nTool-use is formatted using XML-style tags. The tool-use is enclosed in "
    "<use_mcp_tool></use_mcp_tool> and each parameter is similarly enclosed within its own set "
    "of tags.\n\nUsage:\n<use_mcp_tool>\n<server_name>server name here</server_name>\n"
    "<tool_name>tool name here</tool_name>\n<arguments>\n{\n\"param1\": \"value1\"\n}\n"
    "</arguments>\n</use_mcp_tool>\n\n## Server name: tool-searching\n### Tool name: "
    "google_search\n### Tool name: scrape_website\n### Tool name: wiki_get_page_content\n"
)
INSTRUCTIONS = (
    "\n\nYour task is to comprehensively address the question by actively collecting detailed "
    "information from the web, and generating a thorough, transparent report. Present every "
    "plausible candidate answer with its supporting evidence, and wrap the final answer in "
    "\\boxed{}."
)
QUESTIONS = (
    "Which city hosted the first {w} {t} conference, and in what year?",
    "How many {t} projects did {p} lead before {y}?",
    "What is the population of {c} according to its most recent census?",
    "Who wrote the standard reference on {t}, and which publisher released it?",
    "Is {c} closer to {c2} or to {c3} by road distance?",
    "What was the {w} {t} record set in {c} in {y}?",
)
BOILERPLATE = (
    "Title: Just a moment...\n\nURL Source: {url}\n\nMarkdown Content:\nEnable JavaScript and "
    "cookies to continue",
    "Title: Before you continue\n\nURL Source: {url}\n\nMarkdown Content:\nWe use cookies and "
    "data to deliver and maintain services, track outages and protect against spam, fraud and "
    "abuse, and measure audience engagement. If you choose to Accept all, we will also use "
    "cookies to develop and improve new services and show personalised ads.\n\nReject all\n"
    "Accept all\nMore options",
    "Title: Access to this page has been denied\n\nURL Source: {url}\n\nMarkdown Content:\n"
    "Please verify you are a human. Press and hold the button.",
)


def make_task(rng: random.Random) -> GenTask:
    cities = rng.sample(tx.CITIES, 3)
    question = rng.choice(QUESTIONS).format(
        w=rng.choice(tx.WORDS), t=rng.choice(tx.TOPICS), p=tx.person(rng), y=tx.ri(rng, 1950, 2024),
        c=cities[0], c2=cities[1], c3=cities[2])
    return GenTask(question + INSTRUCTIONS, {"question": question})


def _pretty(obj: object, pad: str = "") -> str:
    """`json.dumps(obj, indent=2)` for the dicts, lists and scalars used here, without the
    pure-Python encoder that `indent` forces (strings go through the C escaper)."""
    inner = pad + "  "
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{_q(k)}: {_pretty(v, inner)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        return "[\n" + ",\n".join(inner + _pretty(v, inner) for v in obj) + f"\n{pad}]"
    if isinstance(obj, str):
        return _q(obj)
    return json.dumps(obj)


def _block(tool: str, args: dict) -> str:
    body = _pretty(args)
    return (f"<use_mcp_tool>\n<server_name>tool-searching</server_name>\n<tool_name>{tool}"
            f"</tool_name>\n<arguments>\n{body}\n</arguments>\n</use_mcp_tool>")


def _search_args(rng: random.Random, task: GenTask) -> dict:
    words = task.ctx["question"].split()
    query = " ".join(rng.sample(words, min(len(words), tx.ri(rng, 3, 7)))) + " " + tx.words(rng, 2)
    return {"q": query, "gl": "us", "hl": "en", "num": 10}


def _params(args: dict) -> dict:
    return {"q": args["q"], "gl": args["gl"], "hl": args["hl"], "type": "search",
            "num": args["num"], "autocorrect": False, "page": 1, "engine": "google"}


def _results(rng: random.Random, args: dict) -> str:
    organic = [{"title": tx.sentence(rng, 3, 9)[:-1], "link": tx.url(rng),
                "snippet": tx.sentence(rng, 14, 30), "position": k + 1}
               for k in range(tx.ri(rng, 3, 10))]
    for item in organic:
        if rng.random() < 0.4:
            month = rng.choice(("Jan", "Apr", "Jul", "Oct"))
            item["date"] = f"{tx.ri(rng, 1, 28)} {month} {tx.ri(rng, 2015, 2025)}"
    doc = {"searchParameters": _params(args), "organic": organic,
           "relatedSearches": [{"query": tx.words(rng, tx.ri(rng, 2, 5))} for _ in range(3)],
           "credits": 1}
    return _pretty(doc)


def _page(rng: random.Random, link: str) -> str:
    lines = tx.prose_window(rng, tx.ri(rng, 8, 45))
    k = 0
    while k < len(lines):  # markdown headings between paragraphs
        lines.insert(k, f"\n## {tx.words(rng, tx.ri(rng, 1, 4)).title()}\n")
        k += tx.ri(rng, 4, 9)
    return (f"Title: {tx.sentence(rng, 3, 8)[:-1]}\n\nURL Source: {link}\n\nPublished Time: "
            f"{tx.date(rng)}T{tx.clock(rng)}:00Z\n\nMarkdown Content:\n" + "\n".join(lines))


def make_turn(rng: random.Random, category: str, task: GenTask, prev: GenTurn | None,
              index: int) -> GenTurn:
    if category == "unchanged" and prev is not None:
        obs = prev.observation if rng.random() < 0.75 else near_repeat(
            rng, prev.observation, tx.date(rng))
        return GenTurn(prev.action, obs, category)
    if category == "echo":
        args = _search_args(rng, task)
        doc = {"searchParameters": _params(args), "organic": [], "credits": 1}
        return GenTurn(_block("google_search", args), _pretty(doc), category)
    if category == "boilerplate":
        link = tx.url(rng)
        text = BOILERPLATE[int(rng.random() * len(BOILERPLATE))].format(url=link)
        return GenTurn(_block("scrape_website", {"url": link}), text, category)
    if category == "error":
        roll = rng.random()
        if roll < 0.4:
            entity = tx.words(rng, tx.ri(rng, 1, 3)).title()
            args = {"entity": entity, "first_sentences": 0}
            return GenTurn(_block("wiki_get_page_content", args),
                           "Network Error: Failed to connect to Wikipedia: Expecting value: line 1 "
                           "column 1 (char 0)", category)
        link = tx.url(rng)
        if roll < 0.75:
            code = rng.choice(("403 Forbidden", "404 Not Found", "500 Internal Server Error",
                               "429 Too Many Requests"))
            return GenTurn(_block("scrape_website", {"url": link}),
                           f"Tool call to scrape_website on tool-searching failed. Error: "
                           f"HTTPError: {code} for url: {link}", category)
        return GenTurn(_block("scrape_website", {"url": link}),
                       f"[ERROR]: Unable to scrape {link}: timeout after {tx.ri(rng, 10, 60)}s",
                       category)
    if category == "empty":
        link = tx.url(rng)
        return GenTurn(_block("scrape_website", {"url": link}), "", category)
    if rng.random() < 0.5:
        args = _search_args(rng, task)
        return GenTurn(_block("google_search", args), _results(rng, args), "informative")
    link = tx.url(rng)
    return GenTurn(_block("scrape_website", {"url": link}), _page(rng, link), "informative")


def render(rng: random.Random, task: GenTask, turns: list[GenTurn]) -> bytes:
    history: list[dict] = [
        {"role": "system", "content": [{"type": "text", "text": SYSTEM}]},
        {"role": "user", "content": task.text},
    ]
    for turn in turns:
        plan = "\n".join(f"{k + 1}) {tx.sentence(rng)}" for k in range(tx.ri(rng, 1, 4)))
        history.append({"role": "assistant", "content": f"Step-by-step plan:\n{plan}\n\n"
                                                        f"{turn.action}"})
        history.append({"role": "user", "content": [{"type": "text", "text": turn.observation}]})
    answer = tx.words(rng, tx.ri(rng, 1, 4))
    report = f"Final report: {task.ctx['question']}\n\n{tx.paragraph(rng, tx.ri(rng, 3, 8))}"
    history.append({"role": "assistant", "content": f"{report}\n\n\\boxed{{{answer}}}"})
    doc = {"message_history": history, "summary": report, "final_boxed_answer": answer}
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")
