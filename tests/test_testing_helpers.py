"""`toolbridge.testing`: installed_dialects, converse/aconverse, and the pytest fixture."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge import Toolbox, UsageError
from toolbridge.testing import aconverse, converse, installed_dialects

SCRIPT = {"turns": [{"rounds": [[{"name": "echo", "arguments": {"text": "hi"}}]],
                     "reply": "said {outputs}"}]}


def make_toolbox() -> Toolbox:
    toolbox = Toolbox()

    @toolbox.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return toolbox


def test_installed_dialects_are_those_with_an_emulator_and_a_driver(echo_dialect: str) -> None:
    names = installed_dialects()
    assert names == sorted(names)
    assert {"openai-agents", "openai-assistants", "google-ces"} <= set(names)
    assert echo_dialect in names  # a third-party plugin declaring both is listed too


def test_converse_takes_one_message_as_text() -> None:
    transcript = converse(make_toolbox(), "openai-agents", "Say hi", script=SCRIPT)
    assert [e.text for e in transcript.of_kind("user")] == ["Say hi"]
    assert transcript.reply == 'said ["hi"]'


async def test_aconverse_on_a_running_emulator_from_the_fixture(
        toolbridge_emulator: Any) -> None:
    emu = toolbridge_emulator("google-ces", script=SCRIPT)
    transcript = await aconverse(make_toolbox(), "google-ces", ["Say hi"], running=emu)
    assert transcript.reply == 'said ["hi"]'
    assert emu.journal.entries("POST", ":runSession")


def test_converse_refuses_contradictory_options(toolbridge_emulator: Any) -> None:
    emu = toolbridge_emulator("openai-agents")
    with pytest.raises(UsageError, match="give script= and faults= to the emulator"):
        converse(make_toolbox(), "openai-agents", "hi", running=emu, script=SCRIPT)
    with pytest.raises(UsageError, match="base_url"):
        converse(make_toolbox(), "openai-agents", "hi", base_url="http://example.invalid")


async def test_the_blocking_form_says_to_await_inside_a_loop() -> None:
    with pytest.raises(UsageError, match=r"await toolbridge\.testing\.aconverse"):
        converse(make_toolbox(), "openai-agents", "hi")
