"""The WebArena reader's HTML parser sees the events html.parser itself sees: its shortcuts (one
regex a plain tag, no line counting) change how fast a page is read, never what is read."""

from __future__ import annotations

import random
from html.parser import HTMLParser

import pytest

from sources.factory.scale import generate_corpus, source_name
from sources.readers.webarena_parser import RenderParser

# Markup RenderHelper does not write, spliced into generated pages.
ODD = ["<br/>", "<a href=\"x&amp;y\">", "<!-- note <b> -->", "&amp;", "&#62;", "&lt;pre&gt;",
       "<div CLASS='state_obv'>", "<div class='state_obv'\n>", "<pre >", "</pre >", "</PRE>",
       "<script>if (a < b) {}</script>", "<", "&", "</", "<p title='a\nb'>", "<A HREF=x>",
       "<h2>New Page</h2>", "<!DOCTYPE x>", "<?pi?>", "<b c=''>", "<b c=\"\">", "\n"]


class Recorder(RenderParser):
    """The reader's parser, logging every event it hands on."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.log.append(("start", tag, attrs, self.get_starttag_text()))
        super().handle_starttag(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.log.append(("startend", tag, attrs, self.get_starttag_text()))
        super().handle_startendtag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.log.append(("end", tag))
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        self.log.append(("data", data))
        super().handle_data(data)


class StdlibRecorder(Recorder):
    """The same, on html.parser's own tag and position steps."""

    parse_starttag = HTMLParser.parse_starttag
    parse_endtag = HTMLParser.parse_endtag
    updatepos = HTMLParser.updatepos


def events(parser_class: type[Recorder], page: str, chunk: int) -> tuple:
    parser = parser_class()
    for start in range(0, len(page), chunk):
        parser.feed(page[start:start + chunk])
    parser.close()
    return parser.log, parser.config, parser.steps


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("web")
    generate_corpus(root, ["web"], 12, 5)
    files = sorted((root / "web" / source_name("web")).iterdir())
    originals = [path.read_text(encoding="utf-8") for path in files]
    draw = random.Random(9)
    mutated = []
    for _ in range(150):
        page = draw.choice(originals)
        for _ in range(draw.randint(1, 12)):
            at = draw.randrange(len(page))
            page = page[:at] + draw.choice(ODD) + page[at:]
        mutated.append(page)
    return originals + mutated


@pytest.mark.parametrize("chunk", [7, 100, 65536])
def test_the_same_events_as_html_parser(pages: list[str], chunk: int) -> None:
    for page in pages:
        assert events(Recorder, page, chunk) == events(StdlibRecorder, page, chunk)
