"""Deprecated: the emulator building blocks moved to `toolbridge.testing` (what a user of
emulators needs: scripts, faults, `RunningEmulator`) and `toolbridge.testing.emulators` (what
an emulator author builds on). Each old name still resolves, with a `DeprecationWarning`
naming its new path; this module goes in the next release.
"""

from .._lazy import moved_attributes as _moved_attributes

__all__: list[str] = []

_TESTING = ("MISBEHAVIOURS", "FailRule", "Faults", "Misbehaviour", "RunningEmulator", "Script",
            "ScriptApproval", "ScriptCall", "ScriptError", "ScriptTurn", "StreamFaults")
_EMULATORS = ("Emulator", "EmulatorOptions", "EmulatorServer", "Intake", "Journal",
              "JournalEntry", "ModelCall", "OpenAIApiError", "ScriptedModel", "StreamDropped",
              "faults_from", "instrument", "missing_parameter", "sse_frames",
              "strict_schema_problem", "wrong_type")
_MOVED: dict[str, str] = {
    **{name: f"toolbridge.testing.{name}" for name in _TESTING},
    **{name: f"toolbridge.testing.emulators.{name}" for name in _EMULATORS},
    "serve": "toolbridge.testing.emulators.run_app",
}
"""Old name → its new public path."""

__getattr__ = _moved_attributes(__name__, _MOVED)
