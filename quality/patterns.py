"""Text patterns behind two features: `is_error` (error text) and `content_chars` (empty output).

Both are RE2 regular expressions (DuckDB's `regexp_matches` / `regexp_replace`), applied to the
first and last `head_tail_chars` characters of an observation: an error message sits at the start
(`bash: foo: command not found`) or at the end (a Python traceback's last line), and scanning the
middle of a 50 KB page for the word "error" would mostly find content, not failures.

Flags win over text: `is_error` is true when the format says so (`is_error`), when a process
exited non-zero, and only when the format carries no exit code at all do the patterns decide
(see features.sql). An exit code of 0 is trusted; `is_error = false` is not, because many MCP
servers report failures as ordinary text results.
"""

from __future__ import annotations

import polars as pl

# Every format: messages that runtimes, shells and tools print when something failed.
GENERIC_ERRORS: tuple[str, ...] = (
    # Python's traceback header.
    r"(?m)^\s*Traceback \(most recent call last\):",
    # A line that starts with an exception or error name: "ValueError: ...", "error: ...",
    # "fatal: not a git repository", "panic: ...", "Error: ENOENT", "Network Error: ...",
    # "Fatal error: ...", "Failed to connect ...".
    # (pytest marks the lines of a failure's report with "E   ")
    r"(?m)^\s*(E {2,})?[A-Za-z_.]*(Error|Exception)(:|$)",
    r"(?im)^\s*([a-z]+ )?(error|fatal|panic)(\[[\w-]+\])?\s*:",
    r"(?im)^\s*failed to\b",
    # A log line at an error level ("[ERROR]: ...", "ERROR 2024-01-01 ..."), apt's "E: ".
    r"(?m)^\s*\[?(ERROR|FATAL|CRITICAL)\b",
    r"(?m)^E: ",
    # A message naming an exception class ("... failed. Error: HTTPError: ...") or an HTTP error
    # status as requests and curl print it.
    r"\bError: [A-Z]\w*(Error|Exception)\b",
    r"(?i)\b[45][0-9]{2} (client error|server error|bad request|unauthorized|forbidden"
    r"|not found|too many requests|internal server error|bad gateway|service unavailable)\b",
    # A named thing that is not there, as file tools say it ("File foo.py not found").
    r"(?im)^\s*(file|directory|folder|module|package|path|command)\s+\S+\s+"
    r"(not found|does not exist)",
    # coreutils / shell wording.
    r"(?i)(command not found|no such file or directory|permission denied|segmentation fault"
    r"|no module named "
    r"|is not recognized as an internal or external command|cannot access '|not a directory)",
    # Exit status spelled out by a harness: mini-swe-agent's <returncode>1</returncode>,
    # OpenHands' "[Command finished with exit code 1]", "exit status 2", "return code: 127".
    r"(?i)(exit code|exit status|return ?code)\W{0,3}-?[1-9][0-9]*",
)

# Refusals and lookups that found nothing, in words no one tool owns (issue 8): "No emails
# found matching ...", "No matches found", "No search results found.", a validator's "Wrong
# flag!" or "Incorrect answer", an edit that a syntax or lint check rejected ("Your proposed edit
# has introduced new syntax error(s)"), a security or policy refusal ("Security violation:
# Command 'sleep' is not allowed"), a timeout, a search result that counts zero hits.
REFUSALS: tuple[str, ...] = (
    # (whole short lines only, so that a comment in a code view -- "# not found" -- is not one)
    r"(?im)^(\S+: )?no (\w+ ){0,3}(found|match|matches|results?)\b[^\n]{0,100}$",
    r"(?im)^(\S+: )?([\w.-]+ ){0,2}not found\b[^\n]{0,60}$",
    r"(?i)\b(wrong|incorrect|invalid) (answer|flag|solution|password|credentials|guess)\b",
    r"(?im)^(wrong|incorrect)\b[^\n]{0,40}$",
    r"(?i)\b(introduced|has|have|contains?|found) (new )?(syntax|lint|linting) errors?\b",
    r"(?i)\b(edit|change)s? (was|were|has been|have been) (rejected|reverted|not applied)\b",
    r"(?i)\b(security violation|access denied|not permitted|is not allowed|are not allowed)\b",
    r"(?i)\baccess to [^\n]{1,80} is (restricted|denied|forbidden)\b",
    r"(?i)\btimed out\b",
    r"(?i)\bno such (file|directory|table|column|key|user|element|host)\b",
    r'\A\s*\{\s*"(total|total_results|totalCount|total_count|num_results|hits)"\s*:\s*0\b',
    r"(?im)^[\w.-]+: invalid (input|argument|option)\b",
    # (policy v15) A refusal that names what is missing, as a whole short line: "No file open.
    # Use the `open` command first.", "No session selected", "No document is loaded".
    r"(?im)^no (\w+ ){1,3}(is |are )?(open|opened|selected|loaded|active|running)\b[^\n]{0,80}$",
)

# Tool results (MCP, function calling): the error object or flag of the protocol, or a text
# result that opens with the failure ("Error executing tool ...", "Failed to ...").
TOOL_ERRORS: tuple[str, ...] = (
    r'"(isError|is_error)"\s*:\s*true',
    r'\A\s*\{\s*"error"\s*:',
    r'"status"\s*:\s*"(error|failed|failure)"',
    # an HTTP error status in a JSON reply ({"status": 400, "object": "error", ...})
    r'"(status|status_code|statusCode)"\s*:\s*[45][0-9]{2}\b',
    r'"success"\s*:\s*false',
    r"(?i)\A\s*(\[\s*)?(error|failed|failure|exception)\b",
    r'(?i)"text"\s*:\s*"(error|failed|failure|exception)\b',
)

# Web pages: the browser's or the server's error page.
PAGE_ERRORS: tuple[str, ...] = (
    r"(?i)(404 not found|page not found|500 internal server error|502 bad gateway"
    r"|this site can.t be reached)",
    # Chromium's net error codes (ERR_CONNECTION_REFUSED, ...), upper case only.
    r"\bERR_[A-Z_]{4,}\b",
    # (policy v15) The browser's own error page in place of the one asked for: its address
    # is an internal error scheme ("chrome-error://chromewebdata/", Firefox's
    # "about:neterror").
    r"(?i)\b[a-z]+-error:\s*//|\babout:neterror\b",
)

# GUI screens (Android UI element lists, desktop accessibility trees): the system's own error
# surfaces, which the agent's next action has to deal with.
UI_ERRORS: tuple[str, ...] = (
    # Android's app-crash and not-responding dialogs (their buttons are android:id/aerr_*).
    r"android:id/aerr_",
    r"(?i)\b(keeps stopping|has stopped|isn.t responding|is not responding)\b",
    # A toast that reports a failure.
    r'(?i)\bToast\b[^\n]*"[^"\n]*(error|failed|went wrong|couldn.t|can.t|cannot|unable'
    r'|no app found|not found)',
    # An alert or dialog element called Error, and the sentences such dialogs carry.
    r"(?im)^[\s\[\]\d]*(alert|dialog)\b[^\n]*\berror\b",
    r"(?i)\b(could not|couldn.t|unable to|failed to) (open|save|find|load|read|write|connect"
    r"|access|be saved|be found|be opened)\b",
)

# observation_format -> extra patterns on top of GENERIC_ERRORS.
FORMAT_ERRORS: dict[str, tuple[str, ...]] = {
    "json_rpc": TOOL_ERRORS,
    "tool_result_json": TOOL_ERRORS,
    "tool_result_text": TOOL_ERRORS,
    "a11y_tree": PAGE_ERRORS + UI_ERRORS,
    "html": PAGE_ERRORS,
    "page_text": PAGE_ERRORS,
    "ui_elements": UI_ERRORS,
}

# An output whose last line reports success ("INSTALL_SUCCESS", "Saved trajectory to ...",
# "Done.", "All tests passed") recovered from the errors printed above it: a long install or
# agent log with a "command not found" on the way. Not an error, as long as that last line is
# no error message itself ("npm ERR! A complete log ..."). Bare prompts and blank lines after it
# are dropped first (TRAILING_PROMPTS).
SUCCESS_LAST_LINE = r"(?i)(success|succeeded|\bdone\b|\bcompleted?\b|\bsaved\b|\bpassed\b|✅|✓)"
TRAILING_PROMPTS = r"(\s*\n\s*([\w.-]+@[\w.-]+:[~/\w.-]*[#$]|bash-\$)?[ \t]*)+$"

# A harness's exit-status markup around an output, dropped before its first and last lines are
# read for an error message when the exit code is 0: mini-swe-agent's <returncode> and
# <output> tags, "Command completed with return code: 0", "[Command finished with exit code 0]".
OUTPUT_STATUS = (r"(?i)<returncode>\s*-?\d+\s*</returncode>|</?output>"
                 r"|(?m)^[ \t]*\[?[^\n]{0,20}(completed|finished|exited) with (return|exit) "
                 r"(code|status)[^\n]*$")

# Removed before counting an observation's content characters: text that harnesses print in
# place of an empty output. An observation with no letter or digit left is `empty`.
EMPTY_OUTPUT_WRAPPERS: tuple[str, ...] = (
    # mini-swe-agent's output tags: "<output>\n</output>" with nothing between them.
    r"</?output>",
    # (A harness's statement that a command finished with code 0 -- mini-swe-agent's
    # "<returncode>0</returncode>" (policy v7; it was a frame before), OpenHands' "[Command
    # finished with exit code 0]", Toolathlon's "Command completed with return code: 0" -- is
    # not a frame: it is a generic success message, boilerplate by notes/turn-categories.md
    # ("a generic 'completed with return code 0' and no output"); both labellers of the
    # realdev2 sample called 36 of 36 such dev turns boilerplate.)
    # Terminus (Harbor, Terminal-Bench) wraps every screen in these headers.
    r"(?i)(current terminal state|new terminal output|current terminal screen):",
    # A line that is only a shell prompt (root@4c2a9f1e8b3d:/app#, user@host:~$).
    r"(?m)^[ \t]*[\w.-]+@[\w.-]+:[~/\w.-]*[#$][ \t]*$",
    # A browser's tab bar and an empty page root (WebArena / BrowserGym trees): a blank or failed
    # tab shows these and nothing else.
    r"(?m)^[^\w\n]*Tab [0-9]+( \(current\))?: [^\n]*$",
    r"\[[0-9]+\] RootWebArea '[^'\n]*'( focused: True)?",
    # (policy v15) ... and in a pruned tree: the page's root element [0] without a name
    # ("[0] IMG ''", "[0] ?") and a note that no element is left ("[NO relevant elements]").
    r"(?m)^[ \t]*\[0\][ \t]+([A-Za-z]+[ \t]+''|\?)[ \t]*$",
    r"(?i)\[[ \t]*no [a-z ]{0,30}elements?[ \t]*\]",
    # A screenshot reference standing in for an image (sources/readers/osworld.py writes these).
    r"(?im)^screenshot: \S+\.(png|jpe?g|gif|webp|bmp)[ \t]*$",
    # (policy v15) An image's stand-in and the sentence that hands it over: "[image]" (the
    # readers' placeholder for an image block), "[Screenshot removed to save tokens]", "Here is
    # the next screenshot." -- the text a world model would predict is not there.
    r"(?i)\[(image|screenshot)\b[^\]\n]{0,60}\]",
    r"(?i)\bhere is the (next |new |current )?screenshot\b[.:]?",
    # (policy v15) A header line that introduces an empty list and nothing else ("Executed
    # the tool call: []"): nothing was run, nothing came back -- a bare frame, and a bare empty
    # list is empty by notes/turn-categories.md. Plain text only (no quote or brace: a JSON
    # key's empty list is part of a record).
    r"(?m)^[ \t]*[A-Za-z][^\n\"{}]*:[ \t]*\[[ \t]*\][ \t]*$",
    # The frame of an MCP text content block, {"type":"text","text":"...","annotations":null},
    # and the JSON escapes inside it: what is left is the tool's own text.
    r'\{\s*"type"\s*:\s*"text"\s*,\s*"text"\s*:\s*"',
    r'"\s*,\s*"annotations"\s*:\s*null\s*\}',
    r"\\[nrt]",
    # The JSON-RPC envelope of a response, and an empty MCP result.
    r'"jsonrpc"\s*:\s*"2\.0"',
    r'"id"\s*:\s*[0-9]+',
    r'"result"\s*:',
    r'"content"\s*:\s*\[\s*\]',
)


# A JSON-RPC message's "id" counts the messages of the session: the same result gets another id
# in every run, so ids are set to 0 before shingling (in texts that say "jsonrpc" only).
JSONRPC_ID = r'"id"\s*:\s*[0-9]+'


def normalise_protocol_ids(texts: pl.Series) -> pl.Series:
    """The texts with JSON-RPC message ids replaced by 0."""
    is_rpc = texts.str.contains('"jsonrpc"', literal=True).fill_null(False)
    if not is_rpc.any():
        return texts
    replaced = texts.str.replace_all(JSONRPC_ID, '"id":0')
    return pl.select(pl.when(is_rpc).then(replaced).otherwise(texts)).to_series()


def any_of(patterns: tuple[str, ...]) -> str:
    """One RE2 alternation of the patterns (each in its own group)."""
    return "|".join(f"(?:{p})" for p in patterns)
