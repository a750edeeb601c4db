"""Command groups of `worldtrace`, one module each, found by worldtrace.cli by name.

A command module defines `register(commands)`, which adds its sub-parser(s) to the
`argparse` sub-parsers object and sets `run` (a function of the parsed arguments returning the
exit status) with `set_defaults(run=...)`. It may list exception types that are the user's
mistake (shown as one line, exit status 2) in `USER_ERRORS`. Import heavy libraries inside
`run`, so that `worldtrace --help` stays fast.
"""
