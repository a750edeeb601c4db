"""A real local search engine: Python standard-library documentation indexed in DuckDB with BM25.

The corpus is the docstrings that ship with this Python: one document per public function,
class and method of a fixed list of standard-library modules, plus each module's own docstring,
addressed by the docs.python.org URL of that object. Tokens go into a postings table and BM25
(k1 = 1.2, b = 0.75) is computed in SQL, so no extension (DuckDB's fts cannot be downloaded
offline) is needed. Building takes about a second and is deterministic (sorted everywhere).
The corpus follows the running Python's version: the same machine gives the same results.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache

import duckdb
import pyarrow as pa

MODULES = (
    "abc argparse base64 bisect calendar collections colorsys configparser contextlib copy csv "
    "dataclasses datetime decimal difflib enum filecmp fileinput fnmatch fractions functools "
    "getopt gettext glob graphlib gzip hashlib heapq hmac html html.parser http.client "
    "http.cookies imaplib inspect io ipaddress itertools json keyword linecache locale logging "
    "lzma mimetypes numbers operator optparse os.path pathlib pickle pkgutil platform plistlib "
    "pprint queue quopri random re reprlib sched secrets shelve shlex shutil smtplib socket "
    "sqlite3 statistics string stringprep struct subprocess tarfile tempfile textwrap threading "
    "timeit tokenize tomllib traceback types typing unicodedata urllib.parse urllib.request "
    "uuid warnings wave weakref zipfile zlib"
).split()
STOPWORDS = frozenset(
    "a an and are as at be by for from has have if in into is it its of on or that the this to "
    "was were will with which when return returns object objects value values given".split()
)
K1, B = 1.2, 0.75
_TOKEN = re.compile(r"[a-z][a-z0-9_]+")
# "<function f at 0x..>", "<weakref at 0x..; to x>": an address in a default value
_ADDRESS = re.compile(r" at 0x[0-9a-f]+(?=[>;])")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens of two or more characters, stopwords removed."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


@dataclass(frozen=True)
class Doc:
    doc_id: int
    title: str  # qualified name, e.g. "json.dumps"
    url: str
    text: str


def _docs_url(module: str, qualname: str | None) -> str:
    page = module.split(".")[0] if module != "os.path" else "os.path"
    page = {
        "http.client": "http.client",
        "http.cookies": "http.cookies",
        "html.parser": "html.parser",
        "urllib.parse": "urllib.parse",
        "urllib.request": "urllib.request",
    }.get(module, page)
    anchor = f"#{module}.{qualname}" if qualname else f"#module-{module}"
    return f"https://docs.python.org/3/library/{page}.html{anchor}"


def _signature(obj: object) -> str:
    try:
        text = str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"
    # A default value's address differs per process, and sys.executable (platform.architecture's
    # default) per checkout: the corpus, and so every BM25 score, must not depend on either.
    return _ADDRESS.sub("", text).replace(repr(sys.executable), "sys.executable")


def build_corpus() -> list[Doc]:
    """Every documented public object of MODULES, in a fixed order."""
    docs: list[Doc] = []
    seen: set[str] = set()
    for module_name in sorted(MODULES):
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a module this Python lacks
            continue
        entries: list[tuple[str | None, str, str]] = []
        if doc := inspect.getdoc(module):
            entries.append((None, f"{module_name} module", doc))
        for name in sorted(getattr(module, "__all__", None) or dir(module)):
            if name.startswith("_"):
                continue
            obj = getattr(module, name, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
                continue
            if getattr(obj, "__module__", module_name) not in (
                module_name,
                f"_{module_name}",
                None,
            ) and not module_name.startswith(str(getattr(obj, "__module__", ""))):
                continue
            if doc := inspect.getdoc(obj):
                entries.append((name, f"{module_name}.{name}{_signature(obj)}", doc))
            if inspect.isclass(obj):
                for attr in sorted(vars(obj)):
                    member = vars(obj)[attr]
                    if attr.startswith("_") or not inspect.isfunction(member):
                        continue
                    if doc := inspect.getdoc(member):
                        entries.append(
                            (
                                f"{name}.{attr}",
                                f"{module_name}.{name}.{attr}{_signature(member)}",
                                doc,
                            )
                        )
        for qualname, heading, doc in entries:
            url = _docs_url(module_name, qualname)
            if url in seen:
                continue
            seen.add(url)
            title = f"{module_name}.{qualname}" if qualname else module_name
            docs.append(Doc(len(docs), title, url, f"{heading}\n\n{doc}"))
    return docs


class SearchEngine:
    """BM25 over the corpus in an in-memory DuckDB; safe to share between threads."""

    def __init__(self, docs: list[Doc]) -> None:
        self.docs = docs
        self.by_url = {doc.url: doc for doc in docs}
        doc_ids, terms, tfs, lengths = [], [], [], []
        for doc in docs:
            tokens = tokenize(doc.text)
            lengths.append(len(tokens))
            counts: dict[str, int] = {}
            for token in tokens:
                counts[token] = counts.get(token, 0) + 1
            for term in sorted(counts):
                doc_ids.append(doc.doc_id)
                terms.append(term)
                tfs.append(counts[term])
        self._lock = threading.Lock()
        self._db = duckdb.connect()
        self._db.execute("SET threads = 1")  # one summation order: identical scores every run
        postings = pa.table({"doc_id": doc_ids, "term": terms, "tf": tfs})
        documents = pa.table({"doc_id": [d.doc_id for d in docs], "len": lengths})
        self._db.register("postings_arrow", postings)
        self._db.register("docs_arrow", documents)
        self._db.execute("CREATE TABLE postings AS SELECT * FROM postings_arrow")
        self._db.execute("CREATE TABLE docs AS SELECT * FROM docs_arrow")
        self._db.execute(
            "CREATE TABLE df AS SELECT term, count(*) AS df FROM postings GROUP BY term"
        )

    def search(self, query: str, limit: int = 5) -> list[tuple[Doc, float]]:
        """The `limit` best documents for `query` by BM25, ties broken by document order."""
        terms = sorted(set(tokenize(query)))
        if not terms:
            return []
        sql = f"""
            WITH stats AS (SELECT count(*) AS n, avg(len) AS avgdl FROM docs)
            SELECT p.doc_id,
                   round(sum(ln(1 + (s.n - f.df + 0.5) / (f.df + 0.5))
                       * p.tf * ({K1} + 1)
                       / (p.tf + {K1} * (1 - {B} + {B} * d.len / s.avgdl))), 4) AS score
            FROM postings p JOIN df f USING (term) JOIN docs d USING (doc_id), stats s
            WHERE p.term IN (SELECT unnest(?::VARCHAR[]))
            GROUP BY p.doc_id ORDER BY score DESC, p.doc_id LIMIT ?"""
        with self._lock:
            rows = self._db.execute(sql, [terms, limit]).fetchall()
        return [(self.docs[doc_id], float(score)) for doc_id, score in rows]

    def snippet(self, doc: Doc, query: str, width: int = 180) -> str:
        """The first sentence of the document that mentions a query term (else its start)."""
        body = doc.text.split("\n\n", 1)[-1]
        terms = set(tokenize(query))
        for sentence in re.split(r"(?<=[.!?])\s+|\n\n", body):
            if terms & set(tokenize(sentence)):
                return " ".join(sentence.split())[:width]
        return " ".join(body.split())[:width]

    def passages(self, doc: Doc, query: str, limit: int = 3) -> list[str]:
        """Up to `limit` sentences of the document that contain a query term."""
        terms = set(tokenize(query))
        found = [
            " ".join(s.split())
            for s in re.split(r"(?<=[.!?])\s+|\n\n", doc.text)
            if terms & set(tokenize(s))
        ]
        return found[:limit]


@lru_cache(maxsize=1)
def default_engine() -> SearchEngine:
    """The engine over the standard-library corpus (built once per process)."""
    return SearchEngine(build_corpus())
