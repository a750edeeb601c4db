"""Where credentials and personal data sit in a text: typed spans, from detect-secrets plus regexes.

detect-secrets (Yelp) keeps the regexes of the common credential formats (AWS, GitHub, Slack,
OpenAI legacy keys, JWTs, private-key headers, `password = "..."`, public IPv4 addresses, ...);
we call its plugins' `analyze_string` line by line (no verification, so nothing reaches the
network) and add what it lacks: Anthropic, current OpenAI and Hugging Face keys, Google API keys
and OAuth tokens, fine-grained GitHub tokens, whole private-key blocks, `NAME_TOKEN=value` lines
of environment dumps, passwords in URLs (detect-secrets' rule misses any user or password with
one of `!$&'()*+,;=` in it, and an empty user), `Authorization: Bearer ...` and API-key headers,
e-mail addresses and phone numbers.

Left out on purpose: detect-secrets' high-entropy string plugins, which flag every commit id,
content hash and base64 blob of a trace (they make up most of a SWE trajectory's hex).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ip_public import IPPublicDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

# Placeholder class of each kind: the text says what was there, never what it was.
SECRET, EMAIL, PHONE, IP = "SECRET", "EMAIL", "PHONE", "IP"

# A placeholder we wrote: never a finding itself (a second pass must find nothing).
PLACEHOLDER = re.compile(r"<(?:SECRET|EMAIL|PHONE|IP)_\d+>")

# detect-secrets plugins: kind -> plugin. Keyword runs in its default quotes-required mode
# (`password = "hunter2"`); unquoted assignments are the env-dump regex's job below.
PLUGINS: dict[str, RegexBasedDetector] = {
    "aws_access_key": AWSKeyDetector(),
    "github_token": GitHubTokenDetector(),
    "gitlab_token": GitLabTokenDetector(),
    "slack_token": SlackDetector(),
    "openai_key": OpenAIDetector(),
    "jwt": JwtTokenDetector(),
    "stripe_key": StripeDetector(),
    "sendgrid_key": SendGridDetector(),
    "twilio_key": TwilioKeyDetector(),
    "mailchimp_key": MailchimpDetector(),
    "npm_token": NpmDetector(),
    "pypi_token": PypiTokenDetector(),
    "discord_token": DiscordBotTokenDetector(),
    "telegram_token": TelegramBotTokenDetector(),
    "keyword_secret": KeywordDetector(),
    "ip_address": IPPublicDetector(),
}

_ENV_NAME = (r"[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|API_KEY|APIKEY|ACCESS_KEY"
             r"|PRIVATE_KEY|SECRET_KEY|AUTH|CREDENTIALS?)[A-Z0-9_]*")

# An opaque token in a header: RFC 6750's token68 alphabet, 12 characters or more.
_TOKEN_VALUE = r"[A-Za-z0-9._~+/-]{12,}=*"

# Regexes for what detect-secrets lacks: kind -> patterns; the `secret` group (or the whole
# match) is what gets replaced. No leading look-behinds: they stop Python's regex engine from
# jumping to the literal prefix; `_is_real` checks the token boundary afterwards.
PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "private_key": [re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)")],
    "anthropic_key": [re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}")],
    "openai_key": [re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")],
    "huggingface_token": [re.compile(r"hf_[A-Za-z0-9]{30,}")],
    "google_api_key": [re.compile(r"AIza[0-9A-Za-z_-]{35}")],
    "google_oauth_token": [re.compile(r"ya29\.[0-9A-Za-z_-]{20,}"),
                           re.compile(r"GOCSPX-[0-9A-Za-z_-]{20,}")],
    "github_token": [re.compile(r"github_pat_[A-Za-z0-9_]{60,}")],
    "aws_secret_key": [re.compile(
        r"(?i:aws_?secret_?access_?key)['\"]?\s*[:=]\s*['\"]?(?P<secret>[A-Za-z0-9/+]{40})")],
    # `export GITHUB_TOKEN=...`, `DB_PASSWORD: ...` in env dumps and .env files (upper-case
    # names only: lower-case `password = x` in code is mostly a variable, not a value).
    "env_secret": [re.compile(
        _ENV_NAME + r"""\s*[=:]\s*['"]?(?P<secret>[^\s'"\\<>,;]{4,})""")],
    # scheme://user:password@host: RFC 3986 userinfo (sub-delimiters allowed, the user may be
    # empty); the password runs to the last `@` before the host, as a URL parser reads it.
    "password_in_url": [re.compile(
        r"://[^\s:/?#\[\]@'\"`<>]*:(?P<secret>[^\s/?#\[\]'\"`<>\\]+)@(?=[A-Za-z0-9\[])")],
    # `Authorization: Bearer <token>` (also Basic, Token), a bare `Bearer <token>`, and the
    # API-key headers; `_is_real` wants a value that looks random (a digit or mixed case).
    "auth_header": [
        re.compile(r"(?i:authorization)['\"]?\s*[:=]\s*['\"]?(?i:(?:bearer|basic|token)\s+)?"
                   r"(?P<secret>" + _TOKEN_VALUE + ")"),
        re.compile(r"(?i:bearer)\s+(?P<secret>" + _TOKEN_VALUE + ")"),
        re.compile(r"(?i:x-api-key|x-auth-token|x-access-token|api-key)['\"]?\s*:\s*['\"]?"
                   r"(?P<secret>" + _TOKEN_VALUE + ")")],
    "email": [re.compile(
        r"[A-Za-z0-9][A-Za-z0-9._%+-]*@(?:[A-Za-z0-9-]+\.)+"
        r"(?!(?:png|jpe?g|gif|svg|webp|ico)\b)[A-Za-z]{2,24}(?![A-Za-z0-9-])")],
    # International numbers (+CC ...) or the North-American (555) 123-4567 / 555-123-4567
    # shape; separators are required so ids, timestamps and counts do not match.
    "phone": [re.compile(r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){2,4}"
                         r"(?![\w.-]*\d)"),
              re.compile(r"\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}(?![\w.-]*\d)"),
              re.compile(r"\d{3}-\d{3}-\d{4}(?![\w.-]*\d)|\d{3}\.\d{3}\.\d{4}(?![\w.-]*\d)")],
}


def _literal(*needles: str, any_case: bool = False) -> str:
    return ("(?i)" if any_case else "") + "|".join(re.escape(n) for n in needles)


# detect-secrets' keyword rules (quotes-required mode): `password = "x"`, `secret: 'x'`,
# `"x" == password`, `pwd ... "x";`; the gate wants a keyword next to a quoted value. (Its three
# shapes run apart in `gated_kinds`: together they make one slow automaton.)
_KEYWORD_GATES = (
    r"(?i:(?:key|pass|pwd|secret|contrase)\w*[\]'\"]{0,2}\s*(?::|={1,3}|!==?|=>)\s*['\"`])",
    r"(?i:['\"`]\s*[!=]{2,3}\s*\w*(?:key|pass|pwd|secret|contrase))",
    r"(?i:(?:key|pass|pwd|secret|contrase)\S{0,50}\s*['\"`][^'\"`]*['\"`];)")

# Gates: a cheap regex (one literal or a short literal-led pattern) without which a kind cannot
# match. A text no gate lets through skips the kind; for detect-secrets plugins only the lines
# the gate lets through are analysed. Written for both Python's `re` and Rust's `regex` (polars
# runs them over whole columns at once in `gated_kinds`, which is what makes scrubbing fast).
GATES: dict[str, str] = {
    "private_key": _literal("PRIVATE KEY"), "anthropic_key": _literal("sk-ant-"),
    "openai_key": _literal("sk-"), "huggingface_token": _literal("hf_"),
    "google_api_key": _literal("AIza"), "google_oauth_token": _literal("ya29.", "GOCSPX-"),
    "github_token": _literal("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "aws_secret_key": _literal("secret", any_case=True),
    "env_secret": _literal("TOKEN", "SECRET", "PASS", "KEY", "AUTH", "CREDENTIAL"),
    # What the pattern itself needs, not only its `@` / `://` (the pattern without its
    # look-ahead): most texts with those hold a decorator, a package scope or a URL without a
    # user, and need not reach Python. (Every class
    # here means the same in both engines: ASCII ranges, and `[^\s...]`, where Python's \s
    # takes every character that Rust's does: tests/test_secrets_gates.py.)
    "email": r"[A-Za-z0-9._%+-]@[A-Za-z0-9-]+\.[A-Za-z0-9-]",
    "password_in_url": r"""://[^\s:/?#\[\]@'"`<>]*:[^\s/?#\[\]'"`<>\\]+@[A-Za-z0-9\[]""",
    "phone": r"\+\d|\(\d{3}\)|-\d{3}-\d{4}|\.\d{3}\.\d{4}",
    "aws_access_key": _literal("A3T", "ABIA", "ACCA", "AKIA", "ASIA") + "|(?i:aws)",
    "gitlab_token": _literal("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941",
                             "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"),
    "slack_token": _literal("xox", "hooks.slack.com", any_case=True),
    "jwt": _literal("eyJ"),
    "auth_header": _literal("bearer", "authorization", "api-key", "auth-token",
                            "access-token", any_case=True),
    "stripe_key": _literal("k_live_"), "sendgrid_key": _literal("SG."),
    "mailchimp_key": _literal("-us"), "npm_token": _literal("_authToken"),
    "pypi_token": _literal("pypi-"),
    "twilio_key": r"AC[a-z0-9]{32}|SK[a-z0-9]{32}",
    "discord_token": r"\.[a-zA-Z0-9_-]{6}\.[a-zA-Z0-9_-]{27}",
    "telegram_token": r":[0-9A-Za-z_-]{35}",
    "keyword_secret": "|".join(_KEYWORD_GATES),
    "ip_address": r"\.\d{1,3}\.\d{1,3}\.\d",
}
_GATE_RES: dict[str, re.Pattern[str]] = {kind: re.compile(gate) for kind, gate in GATES.items()}
ALL_KINDS: tuple[str, ...] = tuple(dict.fromkeys((*PATTERNS, *PLUGINS)))
# keyword_secret's gate is the slow one over a whole column (a case-insensitive word, then
# quotes: no literal for the regex engine to skip ahead to); its words alone are fast, and
# every text it passes holds one, so it runs only on the texts that do.
_KEYWORDS = r"(?i)key|pass|pwd|secret|contrase"
_REST_KINDS = tuple(kind for kind in ALL_KINDS if kind != "keyword_secret")
# Every other gate in one pattern, each in its own group (an inline flag such as (?i) then
# holds for its own gate only).
_REST_GATE = "|".join(f"(?:{GATES[kind]})" for kind in _REST_KINDS)

# Kinds whose value must start a token (`task-sk-...` or `xhf_...` is not a key).
_TOKEN_START_KINDS = frozenset({"anthropic_key", "openai_key", "huggingface_token",
                                "google_api_key", "google_oauth_token", "github_token",
                                "phone"})
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+.")

CLASS_OF_KIND: dict[str, str] = {
    **{kind: SECRET for kind in (*PLUGINS, *PATTERNS)},
    "email": EMAIL, "phone": PHONE, "ip_address": IP,
}

# Where spans overlap, the merged span takes the kind of lowest rank: a specific credential
# (`OPENAI_API_KEY=sk-...` is an openai_key), then a generic one, then personal data
# (`postgres://admin:pw@db.internal` is a password, not an e-mail address).
_GENERIC_KINDS = frozenset({"keyword_secret", "env_secret", "password_in_url",
                            "auth_header"})

# Addresses that belong to no person: git's SSH user, example domains.
_SAFE_EMAIL = re.compile(r"^(?:git@|[^@]*@(?:[a-z0-9-]+\.)*(?:example\.(?:com|org|net)|"
                         r"localhost|users\.noreply\.github\.com)$)", re.IGNORECASE)


# "version": "1.0.0.0", version 2.3.4.5, v1.2.3.4: a dotted quad after these is a version.
_VERSION_BEFORE = re.compile(r"(?:version|ver|release|linux)\W{0,4}$|\bv$", re.IGNORECASE)
_VERSION_AFTER = re.compile(r"-[A-Za-z]")  # 5.15.167.4-microsoft-standard: a kernel release
# `API_KEY=TO_BE_FILLED`, `TOKEN=$GITHUB_TOKEN`, `PASSWORD=****`, `user:{password}@`,
# `user:%s@`, `Bearer YOUR_TOKEN`: no value to hide.
_UNSET_VALUE = re.compile(r"[A-Z_]+|\$\{?\w+\}?|\{\w*\}|%s|%\(\w+\)s|\*+|x+|X+"
                          r"|(?i:changeme|none|null|true|false)")
_UNSET_KINDS = frozenset({"env_secret", "password_in_url", "auth_header"})
# `://user:p!w@db.internal`: `w@db.internal` is the end of the URL's password and its host,
# not an e-mail address.
_USERINFO_BEFORE = re.compile(r"://[^\s/?#@]*:[^\s/?#@]*$")


@dataclass(frozen=True, order=True)
class Finding:
    """One span of a text that must not be published."""

    start: int
    end: int
    kind: str

    @property
    def placeholder_class(self) -> str:
        return CLASS_OF_KIND[self.kind]


def find_sensitive(text: str | None, kinds: Iterable[str] | None = None) -> list[Finding]:
    """Every credential or personal datum in `text`, as non-overlapping spans in order.
    `kinds`: the kinds whose gate this text passed (from `gated_kinds`); else checked here."""
    if not text:
        return []
    if kinds is None:
        kinds = gated_kinds([text])[0]
    found = [f for f in _raw_findings(text, kinds) if _is_real(text, f)]
    return _resolve_overlaps(found)


def gated_kinds(texts: Sequence[str | None] | pa.Array | pa.ChunkedArray
                ) -> list[tuple[str, ...]]:
    """For each text, the kinds whose gate it passes: the gates over the whole column at once
    (polars, Rust regex), so most texts never reach a Python regex. Two passes over every text
    (the keywords of keyword_secret's gate; all the other gates as one alternation, which
    matches a text where one of them does); then only the texts they flag are tried gate by
    gate."""
    column = (pl.Series(texts).cast(pl.String) if isinstance(texts, (pa.Array, pa.ChunkedArray))
              else pl.Series(list(texts), dtype=pl.String))
    first = pl.DataFrame({"text": column}).select(
        pl.col("text").str.contains(_REST_GATE).fill_null(False).alias("rest"),
        pl.col("text").str.contains(_KEYWORDS).fill_null(False).alias("keywords"))
    passed = np.zeros((len(column), len(ALL_KINDS)), dtype=bool)
    rest_rows = np.flatnonzero(first["rest"].to_numpy())
    if len(rest_rows):
        frame = pl.DataFrame({"text": column.gather(rest_rows)})
        passed[np.ix_(rest_rows, [ALL_KINDS.index(kind) for kind in _REST_KINDS])] = \
            frame.select(pl.col("text").str.contains(GATES[kind]).fill_null(False).alias(kind)
                         for kind in _REST_KINDS).to_numpy()
    keyword_rows = np.flatnonzero(first["keywords"].to_numpy())
    if len(keyword_rows):
        frame = pl.DataFrame({"text": column.gather(keyword_rows)})
        passed[keyword_rows, ALL_KINDS.index("keyword_secret")] = frame.select(
            pl.any_horizontal(pl.col("text").str.contains(gate).fill_null(False)
                              for gate in _KEYWORD_GATES)).to_series().to_numpy()
    out: list[tuple[str, ...]] = [()] * len(column)
    rows = np.flatnonzero(passed.any(axis=1))
    # (texts that pass the same gates share one tuple: few combinations recur)
    kinds_of: dict[tuple[bool, ...], tuple[str, ...]] = {}
    for row, flags in zip(rows.tolist(), map(tuple, passed[rows].tolist()), strict=True):
        if flags not in kinds_of:
            kinds_of[flags] = tuple(kind for kind, yes in zip(ALL_KINDS, flags, strict=True)
                                    if yes)
        out[row] = kinds_of[flags]
    return out


def _raw_findings(text: str, kinds: Iterable[str]) -> Iterator[Finding]:
    for kind in kinds:
        if kind in PLUGINS:
            yield from _plugin_findings(kind, PLUGINS[kind], text)
        for pattern in PATTERNS.get(kind, ()):
            group = "secret" if "secret" in pattern.groupindex else 0
            for match in pattern.finditer(text):
                yield Finding(match.start(group), match.end(group), kind)


def _plugin_findings(kind: str, plugin: RegexBasedDetector, text: str) -> Iterator[Finding]:
    """detect-secrets works a line at a time and yields the secret values: find them back.
    Only the lines the kind's gate lets through are analysed."""
    gate, offset = _GATE_RES[kind], 0
    for line in text.splitlines(keepends=True):
        for value in set(plugin.analyze_string(line)) if gate.search(line) else ():
            start = line.find(value)
            while value and start >= 0:
                yield Finding(offset + start, offset + start + len(value), kind)
                start = line.find(value, start + len(value))
        offset += len(line)


def _is_real(text: str, finding: Finding) -> bool:
    """Drop what only looks sensitive: our own placeholders, git@ and example addresses,
    version numbers shaped like an IPv4 address (`"version": "1.0.0.0"`)."""
    value = text[finding.start:finding.end]
    if not value.strip() or PLACEHOLDER.search(value):
        return False
    if finding.kind in _TOKEN_START_KINDS and finding.start and \
            text[finding.start - 1] in _TOKEN_CHARS:
        return False
    if finding.kind in _UNSET_KINDS and _UNSET_VALUE.fullmatch(value):
        return False
    if finding.kind == "email":
        return not (_SAFE_EMAIL.match(value)
                    or _USERINFO_BEFORE.search(text, max(0, finding.start - 200), finding.start))
    if finding.kind == "auth_header":  # a random token has a digit or mixed case, a word not
        return any(c.isdigit() for c in value) or (value.lower() != value != value.upper())
    if finding.kind == "phone":
        return sum(c.isdigit() for c in value) >= 10
    if finding.kind == "ip_address":
        return not (value.startswith("0.")  # 0.0.0.0: "every interface", nobody's address
                    or _VERSION_BEFORE.search(text[max(0, finding.start - 24):finding.start])
                    or _VERSION_AFTER.match(text, finding.end))
    return True


def _rank(kind: str) -> int:
    if CLASS_OF_KIND[kind] != SECRET:
        return 2
    return 1 if kind in _GENERIC_KINDS else 0


def _resolve_overlaps(found: list[Finding]) -> list[Finding]:
    """Merge overlapping spans into one; its kind is the most specific one among them."""
    merged: list[Finding] = []
    for finding in sorted(found):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            kind = min(last.kind, finding.kind, key=_rank)
            merged[-1] = Finding(last.start, max(last.end, finding.end), kind)
        else:
            merged.append(finding)
    return merged
