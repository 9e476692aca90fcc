"""A registered tool: its definition plus how to call its handler."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import os
import threading
import time
import types
import typing
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from ._output import serialize_output
from ._signature import FunctionSignature, validation_message
from .context import ToolContext
from .errors import ArgumentError, ToolDefinitionError
from .model import ToolCall, ToolDefinition, ToolResult, new_result

__all__ = [
    "CALLS", "HANDLERS", "RegisteredTool", "ThreadPool", "TimedOut", "new_result",
    "run_with_timeout", "schema_validator", "serialize_result", "worker_threads",
]

log = logging.getLogger("toolbridge.runtime")

T = TypeVar("T")


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
        errors = [(_pointer(e), e.message) for e in reference.iter_errors(arguments)]
        if errors:
            raise ArgumentError("; ".join(
                f"/{'/'.join(str(p) for p in path)}: {message}"
                for path, message in sorted(errors, key=lambda e: [str(p) for p in e[0]])
            ), path="")

    if fast is None:
        return explain

    def validate(arguments: Any) -> None:
        if not fast(arguments):
            explain(arguments)

    return validate


def _pointer(error: Any) -> list[Any]:
    """The error's JSON path; for a missing required property, the property's own path."""
    path = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.validator_value, list):
        for name in error.validator_value:
            if error.message == f"{name!r} is a required property":
                path.append(name)
                break
    return path


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


def _accept(arguments: Any) -> None:
    """A check that accepts everything."""


_PLAIN_TYPES = (str, int, float, bool)


def _plain_types(signature: FunctionSignature) -> dict[str, frozenset[type]] | None:
    """For a function whose parameters are all ``str``, ``int``, ``float`` or ``bool`` (or one
    of them ``| None``) with no constraints: the value types pydantic returns unchanged, per
    parameter; else ``None``.

    Such a function's schema says only that: each property's JSON type, which are required,
    and no others. So arguments holding every required name, no other name, and values of
    exactly those types are what the schema accepts and what pydantic returns unchanged: they
    skip both (omitted parameters take the function's own defaults, which are the model's).
    Anything else (an ``int`` for a ``float``, a missing name) goes the general way.
    """
    plain: dict[str, frozenset[type]] = {}
    for name, info in signature.args_model.model_fields.items():
        annotation = info.annotation
        if info.metadata or info.alias is not None:
            return None
        if isinstance(annotation, type) and annotation in _PLAIN_TYPES:
            plain[name] = frozenset((annotation,))
            continue
        members = typing.get_args(annotation)
        if not (typing.get_origin(annotation) in (typing.Union, types.UnionType)
                and len(members) == 2 and type(None) in members):
            return None
        other = members[0] if members[1] is type(None) else members[1]
        if other not in _PLAIN_TYPES:
            return None
        plain[name] = frozenset((other, type(None)))
    return plain


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
    _plain: dict[str, frozenset[type]] | None = None
    """Per parameter, the exact types pydantic passes through unchanged (see `_plain_types`)."""
    _required: tuple[str, ...] = ()
    side_effects: bool = field(init=False, default=False)
    """The definition's flag, read on every call (a plain attribute reads faster)."""

    def __post_init__(self) -> None:
        self.side_effects = self.definition.side_effects

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

    def _compile(self) -> Callable[[Any], None]:
        """The schema check, compiled once (on first use for function tools: compiling
        imports jsonschema, which registering a tool should not)."""
        try:
            return schema_validator(self.definition.parameters)
        except ToolDefinitionError as exc:
            if self.signature is None:
                raise
            log.warning("tool %s: its generated schema cannot be compiled (%s); its arguments "
                        "are checked by pydantic alone", self.definition.name, exc)
            return _accept

    def bind_plain(self, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """A copy of ``arguments`` when they are plain for this tool (see `_plain_types`): the
        schema accepts them and pydantic would return them unchanged; else ``None`` (then
        `bind` decides, and reports)."""
        plain = self._plain
        if plain is None:
            return None
        for name, value in arguments.items():
            if type(value) not in plain.get(name, ()):
                return None
        for name in self._required:
            if name not in arguments:
                return None
        return dict(arguments)

    def bind(self, arguments: dict[str, Any], context: ToolContext | None) -> dict[str, Any]:
        """Validate ``arguments`` and build the handler's keyword arguments.

        ``context`` is injected when the handler asks for it (it may be ``None`` otherwise).
        """
        kwargs = self.bind_plain(arguments)
        if kwargs is not None:
            if self.context_param and context is not None:
                kwargs[self.context_param] = context
            return kwargs
        validate = self._validate
        if validate is None:
            validate = self._validate = self._compile()
            if self.signature is not None and validate is not _accept:
                self._plain = _plain_types(self.signature)
                self._required = tuple(self.definition.parameters.get("required", ()))
        # The verdict is the published schema's, for function tools too (pydantic's lax mode
        # would take "5" or True for an integer); pydantic then converts into their types.
        validate(arguments)
        if self.signature is not None:
            # `FunctionSignature.bind` inlined, validating with pydantic-core directly (it is
            # on every call's path; `model_validate` costs a third more).
            try:
                parsed = self.signature.args_model.__pydantic_validator__.validate_python(
                    arguments)
            except ValidationError as exc:
                raise ArgumentError(validation_message(exc), path="") from None
            kwargs = dict(parsed.__dict__)  # exactly the fields: the model forbids extras
        else:
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


WORKER_THREADS_ENV = "TOOLBRIDGE_WORKER_THREADS"
"""Environment variable: threads for sync handlers per process (default 64; at least the
largest ``max_concurrency`` in use)."""
DEFAULT_WORKER_THREADS = 64
_SATURATION_WARNING_INTERVAL = 60.0


def worker_threads() -> int:
    """The configured size of the sync-handler pool (``TOOLBRIDGE_WORKER_THREADS``, or 64)."""
    text = os.environ.get(WORKER_THREADS_ENV, "")
    try:
        return max(1, int(text)) if text.strip() else DEFAULT_WORKER_THREADS
    except ValueError:
        log.warning("%s=%r is not a number; using %d threads", WORKER_THREADS_ENV, text,
                    DEFAULT_WORKER_THREADS)
        return DEFAULT_WORKER_THREADS


class ThreadPool:
    """A per-process thread pool that grows on demand and counts its busy threads.

    Not the loop's default executor: that one has min(32, cores + 4) threads, and
    `asyncio.run` waits for it on exit (a timed-out thread must not hold up the answer).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.size = 0
        self.busy = 0
        """Jobs submitted and not finished (queued or running)."""
        self.abandoned = 0
        """Jobs still running whose caller gave up on them (timed out)."""
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._warned_at = -_SATURATION_WARNING_INTERVAL

    def executor(self, size: int) -> ThreadPoolExecutor:
        """This process's executor with at least ``size`` threads (replaced when too small:
        the old one finishes its jobs and its threads exit)."""
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self.busy = self.abandoned = 0
                self._executor = None
            if self._executor is None or size > self.size:
                if self._executor is not None:
                    self._executor.shutdown(wait=False)
                self._executor = ThreadPoolExecutor(size, thread_name_prefix=self.prefix)
                self.size, self._pid = size, os.getpid()
            return self._executor

    def submit(self, size: int, func: Callable[..., Any], *args: Any,
               **kwargs: Any) -> Future[Any]:
        """Run ``func`` in the pool, with this context's variables."""
        executor = self.executor(size)
        with self._lock:
            self.busy += 1
            saturated = self.busy > self.size
        if saturated:
            self._warn_saturated()
        context = contextvars.copy_context()
        try:
            future = executor.submit(context.run, func, *args, **kwargs)
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)  # also when cancelled before it started
        return future

    async def run(self, size: int, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Await ``func(*args, **kwargs)`` run in the pool (at least ``size`` threads)."""
        return await asyncio.wrap_future(self.submit(size, func, *args, **kwargs))

    def _done(self, _: Future[Any] | None) -> None:
        with self._lock:
            self.busy -= 1

    def abandon(self, future: Future[Any], name: str) -> None:
        """Give up waiting for ``future``: cancel it if it has not started, else count its
        thread as held by a timed-out handler until it returns, and say so."""
        if future.cancel():
            return
        with self._lock:
            self.abandoned += 1
            held, size = self.abandoned, self.size
        log.warning("tool %s timed out; its thread cannot be stopped and runs on until the "
                    "handler returns (%d of %d worker threads held by timed-out handlers)",
                    name, held, size)

        def returned(_: Future[Any]) -> None:
            with self._lock:
                self.abandoned -= 1

        future.add_done_callback(returned)

    def _warn_saturated(self) -> None:
        now = time.monotonic()
        if now - self._warned_at < _SATURATION_WARNING_INTERVAL:
            return
        self._warned_at = now
        log.warning(
            "all %d %s threads are busy (%d of them held by timed-out handlers that never "
            "returned); calls queue until one is free. Raise %s, or fix the handlers that "
            "hang", self.size, self.prefix, self.abandoned, WORKER_THREADS_ENV)


HANDLERS = ThreadPool("toolbridge-tool")
"""Sync handlers."""
CALLS = ThreadPool("toolbridge-call")
"""Hook chains and blocking store operations (never handlers: a hook chain waits for its
handler, which must not queue behind it)."""


async def run_with_timeout(
    handler: Callable[..., Any], kwargs: dict[str, Any], is_async: bool, timeout: float | None,
    threads: int = 1, name: str = "",
) -> Any:
    """Await an async handler, or run a sync one in the worker pool (at least ``threads``
    threads), for at most ``timeout``."""
    if is_async:
        if timeout is None:
            return await handler(**kwargs)
        task = asyncio.ensure_future(handler(**kwargs))
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            task.cancel()
            raise TimedOut
        return task.result()
    future = HANDLERS.submit(max(threads, worker_threads()), handler, **kwargs)
    if timeout is None:
        return await asyncio.wrap_future(future)
    waiter = asyncio.wrap_future(future)
    done, _ = await asyncio.wait({waiter}, timeout=timeout)
    if not done:
        HANDLERS.abandon(future, name or getattr(handler, "__name__", "?"))
        waiter.cancel()  # its late result (or exception) is dropped
        raise TimedOut
    return waiter.result()
