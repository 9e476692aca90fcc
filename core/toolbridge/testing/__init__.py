"""Helpers for testing handlers and adapters: emulators by dialect name, conversations on
them, the conformance kit every dialect passes (`check_dialect` for the translations,
`check_backend` for a serve backend against its emulator), and the in-memory double of the
serve seam (`ScriptedBackend`, with `ScriptedConnection`, `SeamFault` and its wire
`MemoryDialect`).

What an emulator's user writes is here too: the `Script` (its `ScriptTurn`, `ScriptCall` and
`ScriptApproval`; `ScriptError` for a script that does not fit the request), the `Faults` to
inject (`StreamFaults`, `FailRule`) and the `RunningEmulator` that `emulator` yields. What an
emulator's author builds on is in `toolbridge.testing.emulators`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_attributes as _lazy_attributes
from ..errors import UsageError
from ..plugin import Dialect, capabilities, get_dialect
from ..runtime._loops import in_running_loop
from ._emulators import emulated_options, emulator
from .emulators._faults import FailRule, Faults, StreamFaults

if TYPE_CHECKING:
    from ..serve import Transcript
    from ..toolbox import Toolbox
    from ._backend_kit import acheck_backend, check_backend
    from ._dialect_kit import check_dialect
    from ._doubles import MemoryDialect, ScriptedBackend, ScriptedConnection, SeamFault
    from .emulators._script import (
        MISBEHAVIOURS,
        Misbehaviour,
        Script,
        ScriptApproval,
        ScriptCall,
        ScriptError,
        ScriptTurn,
    )
    from .emulators._server import RunningEmulator

__all__ = [
    "MISBEHAVIOURS",
    "FailRule",
    "Faults",
    "MemoryDialect",
    "Misbehaviour",
    "RunningEmulator",
    "Script",
    "ScriptApproval",
    "ScriptCall",
    "ScriptError",
    "ScriptTurn",
    "ScriptedBackend",
    "ScriptedConnection",
    "SeamFault",
    "StreamFaults",
    "acheck_backend",
    "aconverse",
    "check_backend",
    "check_dialect",
    "converse",
    "emulated_options",
    "emulator",
    "installed_dialects",
]

# An adapter's options import the faults (light); the kit, the double (with asyncio) and the
# scripts load on first use.
_LAZY: dict[str, str] = {
    "acheck_backend": "._backend_kit", "check_backend": "._backend_kit",
    "check_dialect": "._dialect_kit",
    "MemoryDialect": "._doubles", "ScriptedBackend": "._doubles",
    "ScriptedConnection": "._doubles", "SeamFault": "._doubles",
    "MISBEHAVIOURS": ".emulators._script", "Misbehaviour": ".emulators._script",
    "Script": ".emulators._script", "ScriptApproval": ".emulators._script",
    "ScriptCall": ".emulators._script", "ScriptError": ".emulators._script",
    "ScriptTurn": ".emulators._script",
    "RunningEmulator": ".emulators._server",
}

__getattr__ = _lazy_attributes(__name__, _LAZY)


def installed_dialects() -> list[str]:
    """The installed dialects that ship an emulator, sorted: what to parametrize a test over
    to run it on every backend::

        @pytest.mark.parametrize("dialect", installed_dialects())

    (Those that declare both an emulator and a serve backend.)
    """
    declared = capabilities()
    serving = {s.dialect for s in declared.serve_backends()}
    return [e.dialect for e in declared.emulators() if e.dialect in serving]


async def aconverse(
    toolbox: Toolbox, dialect: str | Dialect, messages: str | Sequence[str], *,
    script: Script | Mapping[str, Any] | str | Path | None = None,
    faults: Faults | Mapping[str, Any] | None = None, running: RunningEmulator | None = None,
    **options: Any,
) -> Transcript:
    """Hold a conversation with ``toolbox`` on ``dialect``'s emulator; return its transcript.

    The same as `toolbridge.serve.aconverse` (same argument order), against an emulator: it is
    started for the conversation with ``script`` and ``faults``, unless ``running`` is one
    already started (by `emulator` or the ``toolbridge_emulator`` fixture, to read its journal
    afterwards). ``options`` are more of the dialect's serve options (``model=...``).
    """
    from ..serve import aconverse as serve_aconverse

    chosen = get_dialect(dialect)
    texts = [messages] if isinstance(messages, str) else list(messages)
    if running is not None and (script is not None or faults is not None):
        raise UsageError("converse: give script= and faults= to the emulator you pass as "
                         "running=, not to converse")
    if "base_url" in options:
        raise UsageError("converse talks to the emulator, whose base_url it passes; for another "
                         "backend use toolbridge.serve.converse")
    async with _serving(chosen, running, script, faults) as backend:
        settings = emulated_options(chosen, backend.base_url, **options)
        return await serve_aconverse(toolbox, chosen, texts, settings)


def converse(
    toolbox: Toolbox, dialect: str | Dialect, messages: str | Sequence[str], *,
    script: Script | Mapping[str, Any] | str | Path | None = None,
    faults: Faults | Mapping[str, Any] | None = None, running: RunningEmulator | None = None,
    **options: Any,
) -> Transcript:
    """Blocking `aconverse` (not inside a running event loop)."""
    if in_running_loop():  # checked outside any handler: the error chains nothing
        raise UsageError("converse was called inside a running event loop; use "
                         "await toolbridge.testing.aconverse(...) instead")
    import asyncio

    return asyncio.run(aconverse(toolbox, dialect, messages, script=script, faults=faults,
                                 running=running, **options))


@asynccontextmanager
async def _serving(dialect: Dialect, running: RunningEmulator | None, script: Any, faults: Any
                   ) -> AsyncIterator[RunningEmulator]:
    if running is not None:
        yield running
        return
    with emulator(dialect, script=script, faults=faults) as started:
        yield started
