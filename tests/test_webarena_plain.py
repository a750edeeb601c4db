"""WebArena's one-piece page parse (parse_plain) gives the handlers exactly what html.parser's
feed + close give them, and declines every page it cannot read that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from sources.readers.webarena import CHUNK, WebArenaRenderReader
from sources.readers.webarena_parser import RenderParser


def fed(text: str, chunk: int = CHUNK) -> RenderParser:
    """The page fed to html.parser piece by piece, as the reader's chunked path does."""
    parser = RenderParser()
    for start in range(0, len(text), chunk):
        parser.feed(text[start:start + chunk])
    parser.close()
    return parser


def parsed(parser: RenderParser) -> tuple[str | None, list[dict[str, str]]]:
    return parser.config, parser.steps


def real_pages(*roots: Path) -> list[Path]:
    return sorted(path for root in roots for path in (root / "web").rglob("*.html"))


def test_real_pages_parse_the_same_in_one_piece(traces_dir: Path, realdev2_dir: Path) -> None:
    pages = real_pages(traces_dir, realdev2_dir)
    assert len(pages) == 13
    steps = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        plain = RenderParser()
        assert plain.parse_plain(text), page.name  # the helper's pages are all plain
        assert parsed(plain) == parsed(fed(text)), page.name
        assert parsed(plain) == parsed(fed(text, chunk=97)), page.name
        steps += len(plain.steps)
    assert steps == 79


STEP = ("<h2>New Page</h2>\n<h3 class='url'><a href=http://x/?a=1&amp;b=2>URL: http://x/?a=1"
        "&amp;b=2</a></h3>\n<div class='state_obv'><pre>Tab 0 &lt;b&gt; caf&eacute; &#x41;"
        "</pre><div>\n<div class='predict_action'><div class='parsed_action'><pre>{body}</pre>"
        "</div></div>\n")
HEAD = ("<!DOCTYPE html>\n<head><style>pre {{ white-space: pre-wrap; }}</style></head>\n"
        "<html><body><pre>task_id: 1\nintent: buy &quot;x&quot;</pre>\n{steps}</body></html>")


def page(*bodies: str, head: str = HEAD) -> str:
    return head.format(steps="".join(STEP.format(body=body) for body in bodies))


@pytest.mark.parametrize("text", [
    page("click [1]", "stop [done]"),
    page("type [3] [a <b>bold</B> <pre>x</pre> text]"),  # raw tags inside a captured <pre>
    page("<ActionTypes.CLICK: 6> 'x'", "hover [2]"),  # html.parser's own tag grammar
    page("a<br/>b", "c <img src=\"q.png\" alt='it''s'> d"),
    page("x <!-- a comment --> y", "z"),
    page("script", head=HEAD.replace("<style>", "<script>if (a < b) {{}}</script><style>")),
    page("entity at the end &amp"),
    page("x") + "trailing &lt text",
    page("x") + "\n&#x31",
])
def test_plain_pages_parse_as_fed(text: str) -> None:
    plain = RenderParser()
    assert plain.parse_plain(text)
    assert parsed(plain) == parsed(fed(text))
    assert parsed(plain) == parsed(fed(text, chunk=7))


@pytest.mark.parametrize("text", [
    page("a < b"),  # a "<" that starts no tag
    page("x") + "<div",  # unfinished at the end
    page("x") + "<!-- open comment",
    page("x") + "<?php x ?>",
    page("x", head=HEAD.replace("</style>", "")),  # a style never closed
])
def test_pages_it_declines_go_to_html_parser(tmp_path: Path, text: str) -> None:
    assert not RenderParser().parse_plain(text)
    path = tmp_path / "render_1.html"
    path.write_text(text, encoding="utf-8")
    assert WebArenaRenderReader._parse_whole(path) is None
    fallback = WebArenaRenderReader._parse_chunks(path)
    assert parsed(fallback) == parsed(fed(text))


HELPER_STEP = (
    "<h2>New Page</h2>\n<h3 class='url'><a href={href}>URL: {url}</a></h3>\n"
    "<div class='state_obv'><pre>{tree}</pre><div>\n{img}"
    "<div class='prev_action' style='background-color:pink'>None</div>\n"
    "<div class='predict_action'><div class='raw_parsed_prediction' style='background-color:grey'>"
    "<pre>{raw}</pre></div><div class='action_object' style='background-color:grey'><pre>{obj}"
    "</pre></div><div class='parsed_action' style='background-color:yellow'><pre>{action}</pre>"
    "</div></div>\n\n    ")
IMG = "<img src='SCREENSHOT_STRIPPED' style='width:50vw; height:auto;'/>\n"


def helper_page(*steps: dict[str, str], before: str = "") -> str:
    fields = {"href": "http://x/", "url": "http://x/", "tree": "[1] RootWebArea", "img": "",
              "raw": "think", "obj": "{'action_type': <ActionTypes.CLICK: 6>}", "action": "x"}
    body = "".join(HELPER_STEP.format(**{**fields, **step}) for step in steps)
    return HEAD.format(steps=before + body)


@pytest.mark.parametrize("text", [
    helper_page({}, {"img": IMG}),
    helper_page({"href": "http://x/?a=1&b=2", "url": " http://x/?a=1&amp;b=2 ",
                 "tree": "a &lt;b&gt; &amp c &#65; caf&eacute;", "raw": "",
                 "obj": "&quot;<ActionTypes.TYPE: 1>&amp<ActionTypes.NONE: 0>&#x41;",
                 "action": "type [3] [&amp;]"}),
    helper_page({"tree": "a <b>raw</b> tree"}, {}),  # not the helper's form: tag by tag
    helper_page({"obj": "<ActionTypes.click: 6>"}, {}),
    helper_page({}, before="<div class='state_obv'>"),  # a field pending: tag by tag
    helper_page({"img": "<img src='data:image/png;base64,<X>' style='w'/>\n"}),
])
def test_helper_steps_parse_as_fed(text: str) -> None:
    plain = RenderParser()
    assert plain.parse_plain(text)
    assert parsed(plain) == parsed(fed(text))
    assert parsed(plain) == parsed(fed(text, chunk=11))
    assert plain.steps


def test_a_page_that_is_not_utf8_keeps_its_error(tmp_path: Path) -> None:
    path = tmp_path / "render_2.html"
    path.write_bytes(page("x").encode() + b"\xff")
    assert WebArenaRenderReader._parse_whole(path) is None
    with pytest.raises(Exception, match="invalid UTF-8"):
        list(WebArenaRenderReader().read(path))
