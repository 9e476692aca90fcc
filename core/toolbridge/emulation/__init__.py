"""Building blocks of the emulated backends: scripts, faults, journal, serving on loopback.

Each adapter's emulator subclasses `Emulator`; `toolbridge.testing.emulator` starts one by
dialect name. Needs the ``emulators`` extra (starlette, uvicorn) to serve.
"""

from ._base import Emulator
from ._faults import FailRule, Faults, StreamFaults, faults_from
from ._journal import Journal, JournalEntry
from ._openai import OpenAIApiError, missing_parameter, strict_schema_problem, wrong_type
from ._options import EmulatorOptions
from ._script import MISBEHAVIOURS, Misbehaviour, Script, ScriptCall, ScriptError, ScriptTurn
from ._scripted import ModelCall, ScriptedModel
from ._server import EmulatorServer, RunningEmulator, StreamDropped, instrument, serve, sse_frames

__all__ = [
    "MISBEHAVIOURS",
    "Emulator",
    "EmulatorOptions",
    "EmulatorServer",
    "FailRule",
    "Faults",
    "Journal",
    "JournalEntry",
    "Misbehaviour",
    "ModelCall",
    "OpenAIApiError",
    "RunningEmulator",
    "Script",
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
