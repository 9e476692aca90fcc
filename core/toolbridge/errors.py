"""Every exception toolbridge raises, in one tree.

::

    ToolbridgeError
    ├── UsageError                  the caller asked for something that cannot work
    │   ├── ToolDefinitionError     a tool cannot be defined (bad name, *args, unknown type)
    │   └── UnknownDialectError     no installed dialect has that name
    ├── SchemaConversionError       a schema conversion lost something under policy "error"
    ├── ArgumentError               tool arguments do not fit the tool's schema
    ├── WireFormatError             a backend payload does not have the dialect's shape
    ├── PluginError                 a plugin failed to load or broke the hook contract
    ├── AwaitingApproval            calls of a batch wait for a person's decision
    ├── BackendError                a backend answered an HTTP error we could not recover from
    │   └── ServeError              a served conversation did not complete (transcript attached)
    │       ├── ReplyLostError      a processed request's reply, carrying the next step, was lost
    │       └── TurnTimeoutError    a served turn did not end within the driver's turn_timeout
    └── ToolError                   raised by a handler: its message goes to the agent verbatim

Caller mistakes (`UsageError`) are kept apart from vendor surprises (`WireFormatError`,
`BackendError`), which keep the offending body for inspection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "ArgumentError",
    "AwaitingApproval",
    "BackendError",
    "PluginError",
    "ReplyLostError",
    "SchemaConversionError",
    "ServeError",
    "ToolDefinitionError",
    "ToolError",
    "ToolbridgeError",
    "TurnTimeoutError",
    "UnknownDialectError",
    "UsageError",
    "WireFormatError",
]


class ToolbridgeError(Exception):
    """Base of every error toolbridge raises on purpose."""


class UsageError(ToolbridgeError):
    """The caller asked for something that cannot work; the message says what to fix."""


class ToolDefinitionError(UsageError):
    """A tool cannot be defined: the message names the tool and the parameter.

    ``problems`` lists each problem on its own (one line each, naming its tool), for callers
    that report them one by one: `Toolbox.add_all` gathers every tool's into one error.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        self.problems = tuple(problems) or (message,)
        super().__init__(message)


class UnknownDialectError(UsageError, LookupError):
    """No installed dialect has the requested name; the message lists the installed ones."""

    def __init__(self, name: str, installed: Sequence[str]) -> None:
        self.name = name
        self.installed = tuple(installed)
        listed = ", ".join(self.installed) or "none"
        super().__init__(
            f"unknown dialect {name!r}; installed dialects: {listed}. "
            "Install the package that provides it, or check the spelling."
        )


class SchemaConversionError(ToolbridgeError):
    """A schema conversion under policy ``error`` lost something; ``losses`` lists every loss."""

    def __init__(self, message: str, losses: Sequence[Any] = ()) -> None:
        self.losses = tuple(losses)
        super().__init__(message)


class ArgumentError(ToolbridgeError, ValueError):
    """Tool arguments do not fit the tool's schema. ``path`` is a JSON pointer to the value."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class WireFormatError(ToolbridgeError, ValueError):
    """A backend payload does not have the dialect's shape.

    ``dialect`` and ``field`` (a dotted path such as ``required_actions[0].call_id``) say where;
    ``body`` keeps the offending payload.
    """

    def __init__(self, dialect: str, field: str, message: str, body: Any = None) -> None:
        self.dialect = dialect
        self.field = field
        self.body = body
        super().__init__(f"{dialect}: {field}: {message}")


class PluginError(ToolbridgeError):
    """A plugin failed to load, or registered something that breaks the hook contract."""


class BackendError(ToolbridgeError):
    """A backend answered an HTTP error we could not recover from.

    ``status`` is the HTTP status, ``body`` the decoded answer. Never carries credentials.
    """

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        self.status = status
        self.body = body
        super().__init__(message)


class ServeError(BackendError):
    """A served conversation did not complete.

    Raised when the serve driver gave up after its recoveries, and by
    `Transcript.raise_for_status`; ``transcript`` holds what happened up to there.
    """

    def __init__(self, message: str, *, status: int | None = None, body: Any = None,
                 transcript: Any = None) -> None:
        super().__init__(message, status=status, body=body)
        self.transcript = transcript


class ReplyLostError(ServeError):
    """The backend processed a request, but its reply, which carried the conversation's next
    step (calls or the final text), was lost and the backend offers no way to read it again."""


class TurnTimeoutError(ServeError):
    """A served turn did not end within `toolbridge.serve.DriverSettings.turn_timeout`: the
    driver stopped it (results already computed are in the store; nothing was run twice)."""


class ToolError(ToolbridgeError):
    """Raise from a handler to send ``str(exc)`` to the agent verbatim as the error result."""


def validation_text(exc: Any) -> str:
    """A pydantic ``ValidationError`` as ``field: message; ...``, for messages we show.

    Unlike ``str(exc)`` it carries no "For further information visit ..." links and no input
    values; pydantic's "Value error, " prefix is dropped.
    """
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or "invalid value"


class AwaitingApproval(ToolbridgeError):
    """`Toolbox.execute` (or ``aexecute``) answered every call it could, but some wait for a
    person's decision (docs/approvals.md): ``results`` has one entry per call, ``None`` for
    each awaiting one, and ``requests`` their `toolbridge.store.ApprovalRequest` objects."""

    def __init__(self, results: Sequence[Any], requests: Sequence[Any]) -> None:
        self.results = list(results)
        self.requests = list(requests)
        names = ", ".join(f"{r.tool} (call {r.key.call_id})" for r in self.requests)
        super().__init__(f"{len(self.requests)} call(s) await approval: {names}")
