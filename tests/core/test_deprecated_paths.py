"""Every name that moved keeps its old path for one release: it warns, naming the new path,
and resolves to the same object; the old name is not in its old module's ``__all__``."""

from __future__ import annotations

import importlib
import warnings

import pytest

_TESTING = ("MISBEHAVIOURS", "FailRule", "Faults", "Misbehaviour", "RunningEmulator", "Script",
            "ScriptApproval", "ScriptCall", "ScriptError", "ScriptTurn", "StreamFaults")
_EMULATORS = ("Emulator", "EmulatorOptions", "EmulatorServer", "Intake", "Journal",
              "JournalEntry", "ModelCall", "OpenAIApiError", "ScriptedModel", "StreamDropped",
              "faults_from", "instrument", "missing_parameter", "sse_frames",
              "strict_schema_problem", "wrong_type")
_DOUBLES = ("MemoryDialect", "ScriptedBackend", "ScriptedConnection", "SeamFault")
_MIGRATION_TARGETS = ("CURRENT_MODELS", "DEFAULT_MODEL", "EXPORT_VERSION", "RETIRED_MODELS",
                      "UNFINISHED_RUNS", "ModelChoice", "config_hash", "message_fates",
                      "message_text", "remapped", "resolve_model", "setting_fates",
                      "thread_metadata")

MOVED: dict[str, str] = {
    **{f"toolbridge.emulation.{n}": f"toolbridge.testing.{n}" for n in _TESTING},
    **{f"toolbridge.emulation.{n}": f"toolbridge.testing.emulators.{n}" for n in _EMULATORS},
    "toolbridge.emulation.serve": "toolbridge.testing.emulators.run_app",
    **{f"toolbridge.serve.{n}": f"toolbridge.testing.{n}" for n in _DOUBLES},
    "toolbridge.serve.serve": "toolbridge.serve.answer_pending",
    "toolbridge.serve.aserve": "toolbridge.serve.aanswer_pending",
    "toolbridge.plugin.hookspec": "toolbridge.plugin.hookspecs.hookspec",
    **{f"toolbridge.migration.{n}": f"toolbridge.migration.targets.{n}"
       for n in _MIGRATION_TARGETS},
}
"""Old path → new path: the changelog's list of moves."""


def _resolve(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_resolves_to_the_moved_object(old: str) -> None:
    new = MOVED[old]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        moved = _resolve(new)  # the new path itself does not warn
    with pytest.warns(DeprecationWarning) as caught:
        found = _resolve(old)
    assert found is moved
    assert [str(w.message) for w in caught] == [f"{old} is deprecated: use {new}"]
    assert caught[0].filename == __file__  # the warning points at the caller


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_is_not_exported(old: str) -> None:
    module, _, name = old.rpartition(".")
    assert name not in importlib.import_module(module).__all__


def test_from_import_of_an_old_name_warns() -> None:
    with pytest.warns(DeprecationWarning, match="use toolbridge.testing.ScriptedBackend"):
        from toolbridge.serve import ScriptedBackend  # noqa: F401


def test_a_name_that_never_existed_is_still_an_attribute_error() -> None:
    import toolbridge.emulation
    import toolbridge.serve

    for module in (toolbridge.emulation, toolbridge.serve):
        with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
            _ = module.nothing
