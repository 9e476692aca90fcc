"""What an emulator author builds on: the `Emulator` base, the scripted model, the journal,
fault injection around any ASGI app, SSE frames and serving on loopback.

Each adapter's emulator subclasses `Emulator`. What a user of emulators needs (the scripts,
the faults, `RunningEmulator`, `toolbridge.testing.emulator` that starts one by dialect name)
is in `toolbridge.testing`. Needs the ``emulators`` extra (starlette, uvicorn) to serve.
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes as _lazy_attributes
from ._faults import faults_from
from ._options import EmulatorOptions

if TYPE_CHECKING:
    from ._base import Emulator
    from ._journal import Intake, Journal, JournalEntry
    from ._openai import OpenAIApiError, missing_parameter, strict_schema_problem, wrong_type
    from ._scripted import ModelCall, ScriptedModel
    from ._server import EmulatorServer, StreamDropped, instrument, run_app, sse_frames

__all__ = [
    "Emulator",
    "EmulatorOptions",
    "EmulatorServer",
    "Intake",
    "Journal",
    "JournalEntry",
    "ModelCall",
    "OpenAIApiError",
    "ScriptedModel",
    "StreamDropped",
    "faults_from",
    "instrument",
    "missing_parameter",
    "run_app",
    "sse_frames",
    "strict_schema_problem",
    "wrong_type",
]

# An adapter's options import the options above; the emulator itself (the scripted model, the
# server, the journal) loads on first use.
_LAZY: dict[str, str] = {
    "Emulator": "._base", "Intake": "._journal", "Journal": "._journal",
    "JournalEntry": "._journal",
    "ModelCall": "._scripted", "ScriptedModel": "._scripted",
    "EmulatorServer": "._server", "StreamDropped": "._server",
    "instrument": "._server", "run_app": "._server", "sse_frames": "._server",
    "OpenAIApiError": "._openai", "missing_parameter": "._openai",
    "strict_schema_problem": "._openai", "wrong_type": "._openai",
}


__getattr__ = _lazy_attributes(__name__, _LAZY)
