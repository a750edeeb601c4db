"""What a user of `simulate-mcp` can get wrong (light: the command line imports these first)."""

from bench.model_folder import NotAModelFolder


class ToolsFileError(ValueError):
    """A tools file (or recorded session) that does not hold a tool list."""


class ModelSetupError(ValueError):
    """The --model given is not a usable model (folder or URL)."""


class AnchorError(RuntimeError):
    """A real server (anchor, or the one imitated) could not be started, or stopped answering."""


class SessionsError(ValueError):
    """--replay was given something that holds no recorded MCP session."""


USER_ERRORS: tuple[type[Exception], ...] = (ToolsFileError, ModelSetupError, NotAModelFolder,
                                            AnchorError, SessionsError)
