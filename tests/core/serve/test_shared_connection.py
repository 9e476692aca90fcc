"""The per-conversation entry points share one connection (one client, one rendering and one
sync of the tools) among the conversations they hold at once with equal options and tools;
other options, or conversations one after the other, get their own. Counted from what the
CES emulator received: each connection syncs the tools once (one ``GET .../tools``)."""

from __future__ import annotations

import asyncio

import toolbridge
from toolbridge.serve import aconverse
from toolbridge.testing import emulated_options, emulator

APP = "projects/demo/locations/us/apps/demo"
SCRIPT = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]],
                     "reply": "done {outputs}"}]}


def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        await asyncio.sleep(0.05)  # the conversations are held at once
        return f"value of {key}"

    return box


def tool_syncs(emu: object) -> int:
    return len(emu.journal.entries("GET", "/tools"))  # type: ignore[attr-defined]


async def test_conversations_held_at_once_share_one_connection() -> None:
    box = toolbox()
    with emulator("google-ces", script=SCRIPT) as emu:
        options = emulated_options("google-ces", emu.base_url)
        done = await asyncio.gather(*(aconverse(box, "google-ces", ["go"], options,
                                                conversation=f"{APP}/sessions/conv-{i}")
                                      for i in range(5)))
        assert all(t.status == "completed" for t in done), done[0].render()
        assert tool_syncs(emu) == 1
        await aconverse(box, "google-ces", ["go"], options,
                        conversation=f"{APP}/sessions/later")
        assert tool_syncs(emu) == 2  # the shared one was closed with its last conversation
        other = emulated_options("google-ces", emu.base_url, timeout=30.0)
        await asyncio.gather(
            aconverse(box, "google-ces", ["go"], options, conversation=f"{APP}/sessions/conv-x"),
            aconverse(box, "google-ces", ["go"], other, conversation=f"{APP}/sessions/conv-y"))
        assert tool_syncs(emu) == 4


async def test_transcripts_share_one_rendering_of_the_same_tools() -> None:
    """Full transcripts list the tools they declared: one rendering per dialect and tools,
    the same object in each (another toolbox, or another dialect, has its own)."""
    box, other = toolbox(), toolbox()
    with emulator("google-ces", script=SCRIPT) as emu:
        options = emulated_options("google-ces", emu.base_url)
        done = await asyncio.gather(*(aconverse(b, "google-ces", ["go"], options,
                                                conversation=f"{APP}/sessions/render-{i}")
                                      for i, b in enumerate((box, box, other))))
    assert all(t.status == "completed" for t in done), done[0].render()
    tools = [t.of_kind("tools")[0] for t in done]
    assert tools[0].data is tools[1].data and tools[0].text == "lookup"
    assert tools[2].data is not tools[0].data
    assert tools[2].data == tools[0].data == box.render("google-ces").definitions
