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
