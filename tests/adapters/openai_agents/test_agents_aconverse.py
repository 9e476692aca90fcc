"""The core driver on openai-agents under the demo's contract (root URL, env credentials)."""

from __future__ import annotations

import pytest

import toolbridge
from toolbridge.cli._demo import DEMO_MESSAGES, DEMO_SCRIPT
from toolbridge.examples import toolbox
from toolbridge.serve import aconverse
from toolbridge.testing import emulated_options, emulator

AGENTS = toolbridge.get_dialect("openai-agents")


async def test_root_url_of_the_emulator() -> None:
    with emulator("openai-agents", script=DEMO_SCRIPT) as emu:
        transcript = await aconverse(toolbox, AGENTS, DEMO_MESSAGES,
                                     emulated_options(AGENTS, emu.base_url))
        paths = [e.path for e in emu.journal.entries(contains="/agents/")]
    assert transcript.status == "completed"
    assert "Ada Lovelace" in transcript.reply and "Lima" in transcript.reply
    assert paths and all(p.startswith("/v1/agents/") for p in paths)


async def test_real_service_without_a_key_names_the_variable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(toolbridge.UsageError, match="OPENAI_API_KEY"):
        await aconverse(toolbox, AGENTS, ["hi"], {"base_url": None})
