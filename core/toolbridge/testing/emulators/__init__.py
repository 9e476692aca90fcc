"""Building blocks of the emulated backends: scripts, faults, journal, serving on loopback.

Each adapter's emulator subclasses `Emulator`; `toolbridge.testing.emulator` starts one by
dialect name. Needs the ``emulators`` extra (starlette, uvicorn) to serve.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes as _lazy_attributes
from ._faults import FailRule, Faults, StreamFaults, faults_from
from ._options import EmulatorOptions

if TYPE_CHECKING:
    from ._base import Emulator
    from ._journal import Intake, Journal, JournalEntry
    from ._openai import OpenAIApiError, missing_parameter, strict_schema_problem, wrong_type
    from ._script import (
        MISBEHAVIOURS,
        Misbehaviour,
        Script,
        ScriptApproval,
        ScriptCall,
        ScriptError,
        ScriptTurn,
    )
    from ._scripted import ModelCall, ScriptedModel
    from ._server import (
        EmulatorServer,
        RunningEmulator,
        StreamDropped,
        instrument,
        serve,
        sse_frames,
    )

__all__ = [
    "MISBEHAVIOURS",
    "Emulator",
    "EmulatorOptions",
    "EmulatorServer",
    "FailRule",
    "Faults",
    "Intake",
    "Journal",
    "JournalEntry",
    "Misbehaviour",
    "ModelCall",
    "OpenAIApiError",
    "RunningEmulator",
    "Script",
    "ScriptApproval",
    "ScriptCall",
    "ScriptError",
    "ScriptTurn",
    "ScriptedModel",
    "StreamDropped",
    "StreamFaults",
    "faults_from",
    "instrument",
    "missing_parameter",
    "serve",
    "sse_frames",
    "strict_schema_problem",
    "wrong_type",
]

# An adapter's options import the faults and options above; the emulator itself (the scripted
# model, the server, the journal) loads on first use.
_LAZY: dict[str, str] = {
    "Emulator": "._base", "Intake": "._journal", "Journal": "._journal",
    "JournalEntry": "._journal",
    "MISBEHAVIOURS": "._script", "Misbehaviour": "._script", "Script": "._script",
    "ScriptApproval": "._script", "ScriptCall": "._script", "ScriptError": "._script",
    "ScriptTurn": "._script",
    "ModelCall": "._scripted", "ScriptedModel": "._scripted",
    "EmulatorServer": "._server", "RunningEmulator": "._server", "StreamDropped": "._server",
    "instrument": "._server", "serve": "._server", "sse_frames": "._server",
    "OpenAIApiError": "._openai", "missing_parameter": "._openai",
    "strict_schema_problem": "._openai", "wrong_type": "._openai",
}


__getattr__ = _lazy_attributes(__name__, _LAZY)
