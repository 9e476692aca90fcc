"""Building blocks of the emulated backends: scripts, faults, journal, serving on loopback.

Each adapter's emulator subclasses `Emulator`; `toolbridge.testing.emulator` starts one by
dialect name. Needs the ``emulators`` extra (starlette, uvicorn) to serve.
"""

from ._base import Emulator
from ._faults import FailRule, Faults, faults_from
from ._journal import Journal, JournalEntry
from ._script import MISBEHAVIOURS, Misbehaviour, Script, ScriptCall, ScriptError, ScriptTurn
from ._scripted import ModelCall, ScriptedModel
from ._server import EmulatorServer, RunningEmulator, StreamDropped, instrument, serve, sse_frames

__all__ = [
    "MISBEHAVIOURS",
    "Emulator",
    "EmulatorServer",
    "FailRule",
    "Faults",
    "Journal",
    "JournalEntry",
    "Misbehaviour",
    "ModelCall",
    "RunningEmulator",
    "Script",
    "ScriptCall",
    "ScriptError",
    "ScriptTurn",
    "ScriptedModel",
    "StreamDropped",
    "faults_from",
    "instrument",
    "serve",
    "sse_frames",
]
