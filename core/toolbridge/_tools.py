"""A registered tool: its definition plus how to call its handler."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import os
import typing
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ._output import serialize_output
from ._signature import FunctionSignature
from .context import ToolContext
from .errors import ArgumentError, ToolDefinitionError
from .model import ToolCall, ToolDefinition, ToolResult, new_result

__all__ = [
    "RegisteredTool", "TimedOut", "new_result", "run_with_timeout", "schema_validator",
    "serialize_result",
]

log = logging.getLogger("toolbridge.runtime")


def schema_validator(schema: Mapping[str, Any]) -> Callable[[Any], None]:
    """A compiled JSON Schema check that raises `ArgumentError` listing every violation.

    The verdict is the `jsonschema` package's: a fast validator (jsonschema-rs, when installed)
    accepts the common case, and every rejection is confirmed and explained by `jsonschema`, so
    the two can never disagree on a rejection and the messages carry `jsonschema`'s JSON paths.
    """
    import jsonschema  # loaded on first use: keeps `import toolbridge` light

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"invalid parameters schema: {exc.message}") from None
    reference = cls(schema)
    fast = _fast_check(schema)

    def explain(arguments: Any) -> None:
        errors = sorted(reference.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            raise ArgumentError("; ".join(
                f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors
            ), path="")

    if fast is None:
        return explain

    def validate(arguments: Any) -> None:
        if not fast(arguments):
            explain(arguments)

    return validate


def _fast_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """jsonschema-rs's ``is_valid`` for ``schema``, or ``None`` when it is absent or refuses it."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    if _diverges(schema):
        return None  # keep the reference verdict exact where the two may disagree
    try:
        # jsonschema treats "format" as an annotation unless asked; do the same.
        checker: Callable[[Any], bool] = jsonschema_rs.validator_for(
            dict(schema), validate_formats=False).is_valid
    except Exception:
        return None
    return checker


def _diverges(node: Any) -> bool:
    """Whether ``node`` uses a keyword whose verdict may differ between Rust and Python.

    Plain patterns (no escapes, no ``(?`` groups) only differ where Rust is the stricter one
    (``$`` before a final newline, ``.`` and line breaks): a Rust rejection is re-checked by
    the reference, so those stay exact.
    """
    if isinstance(node, dict):
        patterns = [node.get("pattern")]
        if isinstance(node.get("patternProperties"), dict):
            patterns.extend(node["patternProperties"])
        if any(isinstance(p, str) and ("\\" in p or "(?" in p or "{," in p) for p in patterns):
            return True
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True  # never let the fast validator fetch a remote schema
        if isinstance(node.get("multipleOf"), float):
            return True  # jsonschema's float division rejects 0.07 for 0.01; Rust may not
        return any(_diverges(v) for k, v in node.items() if k not in ("enum", "const"))
    if isinstance(node, list):
        return any(_diverges(v) for v in node)
    return False


def _context_param(handler: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(handler)
    except Exception:
        hints = {}
    for name, hint in hints.items():
        if hint is ToolContext:
            return name
    return None


@dataclass
class RegisteredTool:
    """A tool definition and its handler, with the argument check compiled once."""

    definition: ToolDefinition
    handler: Callable[..., Any]
    is_async: bool
    inline: bool
    context_param: str | None
    signature: FunctionSignature | None = None
    _validate: Callable[[Any], None] | None = None

    @classmethod
    def from_function(
        cls, definition: ToolDefinition, handler: Callable[..., Any],
        signature: FunctionSignature, inline: bool,
    ) -> RegisteredTool:
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   signature.context_param, signature)

    @classmethod
    def from_definition(
        cls, definition: ToolDefinition, handler: Callable[..., Any], inline: bool
    ) -> RegisteredTool:
        if not callable(handler):
            raise ToolDefinitionError(f"tool {definition.name!r}: handler is not callable")
        try:
            validate = schema_validator(definition.parameters)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"tool {definition.name!r}: {exc}") from None
        return cls(definition, handler, inspect.iscoroutinefunction(handler), inline,
                   _context_param(handler), None, validate)

    def bind(self, arguments: dict[str, Any], context: ToolContext | None) -> dict[str, Any]:
        """Validate ``arguments`` and build the handler's keyword arguments.

        ``context`` is injected when the handler asks for it (it may be ``None`` otherwise).
        """
        if self.signature is not None:
            kwargs = self.signature.bind(arguments)
        else:
            if self._validate is None:
                self._validate = schema_validator(self.definition.parameters)
            self._validate(arguments)
            kwargs = dict(arguments)
        if self.context_param and context is not None:
            kwargs[self.context_param] = context
        return kwargs


# ---------------------------------------------------------------------------- running
def serialize_result(call: ToolCall, value: Any) -> ToolResult:
    """A handler's return value as a successful result, or an error result if it cannot be."""
    try:
        return new_result(call, True, serialize_output(value), None)
    except Exception as exc:
        log.error("tool %s returned a value that is not JSON-compatible", call.name, exc_info=exc)
        return ToolResult.failed(call, f"{call.name} returned a {type(value).__name__}, which "
                                       "cannot be sent as a result")


class TimedOut(Exception):
    """`run_with_timeout` gave up waiting."""


_POOL: dict[int, ThreadPoolExecutor] = {}  # per process: a forked child needs its own


def _in_thread(handler: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Run a sync handler in toolbridge's worker pool (not the loop's default executor, which
    `asyncio.run` waits for on exit: a timed-out thread must not hold up the answer)."""
    pool = _POOL.get(os.getpid())
    if pool is None:
        pool = _POOL[os.getpid()] = ThreadPoolExecutor(64, thread_name_prefix="toolbridge-tool")
    context = contextvars.copy_context()
    return asyncio.get_running_loop().run_in_executor(
        pool, functools.partial(context.run, handler, **kwargs))


async def run_with_timeout(
    handler: Callable[..., Any], kwargs: dict[str, Any], is_async: bool, timeout: float | None
) -> Any:
    """Await an async handler, or run a sync one in the worker pool, for at most ``timeout``."""
    awaitable = handler(**kwargs) if is_async else _in_thread(handler, kwargs)
    if timeout is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()  # an async handler is cancelled; a thread cannot be, it is abandoned
        raise TimedOut
    return task.result()
