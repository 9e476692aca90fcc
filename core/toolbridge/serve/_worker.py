"""`Worker`: one process serving many conversations of one backend at once, bounded.

Conversations come given up front, fed by the application (`Worker.add`, until
`Worker.close`), or discovered (`Connection.discover`, where the backend can list them, e.g.
Agents sessions by metadata). Each is driven by the same driver as `aanswer_pending` / `aconverse`,
with summary transcripts (status, error, reply, counts) so a long-running worker keeps only
what each conversation needs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ServeError, UsageError
from ..plugin import (
    Connection,
    Dialect,
    DiscoveringConnection,
    ServeOptions,
    capabilities,
    get_dialect,
)
from ._checkpoints import Checkpoints
from ._driver import hold
from ._settings import DriverSettings
from ._transcript import Transcript

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = ["Job", "Worker"]

log = logging.getLogger("toolbridge.serve")


@dataclass(frozen=True)
class Job:
    """One conversation for a `Worker`: serve ``conversation`` as it waits (``messages``
    ``None``), or hold one with ``messages`` (a new one when ``conversation`` is ``None``;
    ``key``: yours, so that a worker given the same job after this one died goes on with it,
    see `aconverse`)."""

    conversation: str | None = None
    messages: tuple[str, ...] | None = None
    key: str | None = None


class Worker:
    """Serves many conversations of ``dialect`` at once, at most ``concurrency`` at a time.

    ``settings`` default to summary transcripts (``keep=False``). ``on_done`` is called with
    each conversation's transcript as it ends (then `run` keeps none: a worker that runs for
    ever stays small); without it `run` returns them all. Use `run` once per worker.
    """

    def __init__(self, toolbox: Toolbox, dialect: str | Dialect,
                 options: ServeOptions | Mapping[str, Any] | None = None, *,
                 connection: Connection | None = None, concurrency: int = 64,
                 settings: DriverSettings | None = None,
                 on_done: Callable[[Transcript], None] | None = None) -> None:
        if concurrency < 1:
            raise UsageError("concurrency must be at least 1")
        self.toolbox = toolbox
        self.dialect = get_dialect(dialect)
        self._options = options
        self._connection = connection
        self.concurrency = concurrency
        self.settings = settings or DriverSettings(keep=False)
        self.on_done = on_done
        self._queue: asyncio.Queue[Job | None] = asyncio.Queue()
        self._active: set[str] = set()

    def add(self, conversation: str | None = None, messages: Sequence[str] | None = None
            ) -> None:
        """Serve ``conversation`` (or hold one with ``messages``) too (from the worker's loop)."""
        self._queue.put_nowait(Job(conversation, None if messages is None else tuple(messages)))

    def close(self) -> None:
        """No more conversations will be added: `run` ends once the last one ends."""
        self._queue.put_nowait(None)

    async def run(self, jobs: Iterable[Job | str] = (), *, feed: bool = False,
                  discover: bool = False) -> list[Transcript]:
        """Serve ``jobs`` (conversation ids or `Job`s), then those added with `add` until
        `close` (``feed``), and those the backend lists as waiting (``discover``: runs until
        cancelled). Returns every transcript, in the order the conversations ended."""
        connection = self._connection
        own = connection is None
        if connection is None:
            connection = capabilities().serving(self.dialect.name).connect(
                self._options, list(self.toolbox))
        if discover and not connection.can_discover:
            raise UsageError(f"{self.dialect.name}: this backend cannot list the "
                             "conversations that wait; give them instead")
        checkpoints = Checkpoints.of(self.toolbox.store)
        limit = asyncio.Semaphore(self.concurrency)
        done: list[Transcript] = []
        tasks: set[asyncio.Task[None]] = set()

        async def one(job: Job) -> None:
            try:
                transcript = await self._hold(connection, job, checkpoints)
            finally:
                limit.release()
                if job.conversation:
                    self._active.discard(job.conversation)
            if self.on_done is not None:
                self.on_done(transcript)
            else:
                done.append(transcript)

        async def start(job: Job) -> None:
            if job.conversation is not None:
                if job.conversation in self._active:
                    return
                self._active.add(job.conversation)
            await limit.acquire()
            task = asyncio.create_task(one(job))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        finder = asyncio.create_task(self._discover(connection, start)) if discover else None
        try:
            for given in jobs:
                await start(given if isinstance(given, Job) else Job(given))
            while feed:
                fed = await self._queue.get()
                if fed is None:
                    break
                await start(fed)
            if finder is not None:
                await finder
            while tasks:
                await asyncio.gather(*list(tasks))
            return done
        finally:
            for task in [*tasks, *([finder] if finder else [])]:
                task.cancel()
            await asyncio.gather(*tasks, *([finder] if finder else []),
                                 return_exceptions=True)
            if own:
                await connection.aclose()

    async def _discover(self, connection: Connection,
                        start: Callable[[Job], Any]) -> None:
        assert isinstance(connection, DiscoveringConnection)
        found: AsyncIterator[str] = connection.discover()
        async for conversation in found:
            await start(Job(conversation))

    async def _hold(self, connection: Connection, job: Job, checkpoints: Checkpoints
                    ) -> Transcript:
        backend = connection.backend(job.conversation)
        try:
            return await hold(self.toolbox, backend, job.messages, self.settings, checkpoints,
                              key=job.key)
        except ServeError as exc:  # recoveries exhausted: this conversation ends here
            transcript: Transcript = exc.transcript or Transcript(self.dialect.name)
            transcript.end("failed", exc)
            log.error("%s: conversation %s: %s", self.dialect.name, backend.conversation, exc)
            return transcript
        except UsageError:
            raise
        except Exception as exc:  # a bug: logged in full; the other conversations go on
            log.exception("%s: conversation %s failed unexpectedly", self.dialect.name,
                          backend.conversation)
            transcript = Transcript(self.dialect.name, conversation=backend.conversation,
                                    keep=False)
            transcript.end("failed", ServeError(f"{self.dialect.name}: unexpected "
                                                f"{type(exc).__name__}: {exc}"))
            return transcript
