"""The serve driver's entry points: hold a scripted conversation, or serve an existing one.

Any dialect: `aconverse` sends user messages and answers every call until each turn ends;
`aanswer_pending` answers what an existing conversation waits for. Both return the
`Transcript`, with its status, and raise only for usage errors and for recoveries exhausted
(`ServeError`, the transcript attached).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import BackendError, ServeError, UsageError
from ..plugin import Backend, Connection, Dialect, ServeOptions, Step, capabilities, get_dialect
from ..runtime._loops import in_running_loop
from ..telemetry._turns import turn_span
from ._checkpoints import Checkpoints
from ._conversation import Conversation
from ._settings import DriverSettings
from ._shared import shared_connection, shared_tools
from ._transcript import Status, Transcript

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = ["aanswer_pending", "aconverse", "answer_pending", "converse", "hold"]

T = TypeVar("T")
Options = ServeOptions | Mapping[str, Any] | None


@asynccontextmanager
async def _open(toolbox: Toolbox, dialect: str | Dialect, options: Options,
                connection: Connection | None) -> AsyncIterator[Connection]:
    """The connection given, or the one shared by the conversations held at once with equal
    options and the same tools (`shared_connection`)."""
    if connection is not None:
        yield connection
        return
    serving = capabilities().serving(get_dialect(dialect).name)
    async with shared_connection(serving, options, list(toolbox)) as shared:
        yield shared


async def aconverse(
    toolbox: Toolbox, dialect: str | Dialect, messages: Sequence[str], options: Options = None,
    *, conversation: str | None = None, connection: Connection | None = None,
    settings: DriverSettings | None = None, context: Mapping[str, Any] | None = None,
    key: str | None = None,
) -> Transcript:
    """Hold a conversation on ``dialect``'s backend: send each of ``messages`` as a user turn
    and answer every call through ``toolbox``; stops at the first turn that does not complete.

    ``key`` (yours, e.g. an order id) makes a new conversation recoverable: where it is and
    which turn is being sent are recorded in the store's records before each message goes,
    and a later driver given the same key (after this one's process died) goes on with that
    conversation, asking whether that turn's message arrived, instead of starting a second.

    ``options`` are the dialect's serve options (`toolbridge.plugin.ServeCapability.options`:
    an instance or a mapping);
    ``conversation`` continues an existing one (else a new one, or the options' own);
    ``connection`` reuses an open `Connection` (then ``options`` are not used). A conversation
    whose previous driver stopped mid-turn (its checkpoint is in the store's records) first
    finishes that turn, then continues with the messages after it.
    """
    if isinstance(messages, str):
        raise UsageError("messages must be a list of user messages, not one string")
    async with _open(toolbox, dialect, options, connection) as conn:
        return await hold(toolbox, conn.backend(conversation), messages,
                          _settings(settings, context), key=key)


async def aanswer_pending(
    toolbox: Toolbox, dialect: str | Dialect, options: Options = None, *,
    conversation: str | None = None, connection: Connection | None = None,
    settings: DriverSettings | None = None, context: Mapping[str, Any] | None = None,
) -> Transcript:
    """Answer what an existing conversation waits for until it settles (for a backend that
    keeps streaming, until cancelled); ``conversation`` or the options name it."""
    async with _open(toolbox, dialect, options, connection) as conn:
        return await hold(toolbox, conn.backend(conversation), None,
                          _settings(settings, context))


def _settings(settings: DriverSettings | None, context: Mapping[str, Any] | None
              ) -> DriverSettings:
    settings = settings or DriverSettings()
    if context:
        from dataclasses import replace

        settings = replace(settings, context={**settings.context, **context})
    return settings


async def hold(toolbox: Toolbox, backend: Backend, messages: Sequence[str] | None,
               settings: DriverSettings, checkpoints: Checkpoints | None = None, *,
               key: str | None = None) -> Transcript:
    """Drive ``backend``: play ``messages`` (``None``: serve what it waits for); closes it.
    ``key``: the caller's key of the conversation (see `aconverse`)."""
    dialect = backend.dialect
    transcript = Transcript(dialect.name, conversation=backend.conversation, keep=settings.keep)
    if settings.keep:
        transcript.add("tools", *shared_tools(dialect, list(toolbox)))
    conversation = Conversation(backend, toolbox, transcript, settings,
                                checkpoints or Checkpoints.of(toolbox.store),
                                key if messages is not None else None)
    try:
        await conversation.resume_keyed()
        final = await conversation.resume_checkpoint()
        if final is not None:
            conversation.finish_turn(final)
        if messages is None:
            if final is None:
                final = await _traced(backend, conversation.serve())
                conversation.finish_turn(final)
        else:
            for message in messages[conversation.turn_index:]:
                if final is not None and final.status != "completed":
                    break
                final = await _traced(backend, conversation.turn(message))
                conversation.finish_turn(final)
                await conversation.keyed_turn_ended()
        await conversation.end_keyed()
        _end(transcript, final or Step("completed"), backend)
        return transcript
    except ServeError as exc:
        if exc.transcript is None:
            exc.transcript = transcript
        raise
    finally:
        try:
            await conversation.close()
        finally:
            await backend.aclose()


async def _traced(backend: Backend, turn: Coroutine[Any, Any, Step]) -> Step:
    """Run ``turn`` (a turn's coroutine) in its telemetry span, the parent of its calls'."""
    with turn_span(backend.dialect.name, backend.provider, backend.conversation) as span:
        final = await turn
        span.ended(final.status, backend.conversation, final.error)
    return final


def _end(transcript: Transcript, final: Step, backend: Backend) -> None:
    if backend.conversation:
        transcript.conversation = backend.conversation
    if final.status == "completed":
        transcript.end("completed")
        return
    detail = final.detail
    if isinstance(detail, BackendError):
        error = detail
        detail = detail.body
    else:
        error = ServeError(f"{backend.dialect.name}: conversation {backend.conversation} ended "
                           f"{final.status}: {final.error or 'no reason given'}", body=detail)
    shown = detail if isinstance(detail, (Mapping, list)) else None
    status: Status = "failed" if final.status == "requires_action" else final.status
    transcript.add("note", f"{status}: {final.error or error}", shown)
    transcript.end(status, error)


def _run(coro: Coroutine[Any, Any, T], what: str) -> T:
    if in_running_loop():  # checked outside any handler: the error chains nothing
        coro.close()
        raise UsageError(f"{what} was called inside a running event loop; await its async "
                         f"form (a{what}) instead")
    return asyncio.run(coro)


def converse(toolbox: Toolbox, dialect: str | Dialect, messages: Sequence[str],
             options: Options = None, **keywords: Any) -> Transcript:
    """Blocking form of `aconverse`."""
    return _run(aconverse(toolbox, dialect, messages, options, **keywords), "converse")


def answer_pending(toolbox: Toolbox, dialect: str | Dialect, options: Options = None,
                   **keywords: Any) -> Transcript:
    """Blocking form of `aanswer_pending`."""
    return _run(aanswer_pending(toolbox, dialect, options, **keywords), "answer_pending")
