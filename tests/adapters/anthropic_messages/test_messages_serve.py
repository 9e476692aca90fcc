"""The serve driver on the Messages backend, and our own clients, against the emulator over
loopback: what the backend received is counted from the emulator's journal."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from messages_support import PARALLEL, TWO_ROUNDS, D

import toolbridge
from toolbridge import BackendError, DocumentPart
from toolbridge.http import RetryPolicy
from toolbridge.serve import aconverse
from toolbridge.testing import converse, emulated_options, emulator
from toolbridge_anthropic_messages import AsyncMessagesClient, MessagesClient, assemble_events
from toolbridge_anthropic_messages.backend import MessagesConnection

FAST = RetryPolicy(max_attempts=4, backoff=0.01)


@pytest.mark.parametrize("stream", [False, True])
def test_two_rounds_and_a_reply(toolbox: toolbridge.Toolbox, stream: bool) -> None:
    with emulator(D, script=TWO_ROUNDS) as emu:
        transcript = converse(toolbox, D, ["Weather?"], running=emu, stream=stream)
        assert transcript.status == "completed", transcript.render()
        assert "Oslo" in transcript.reply and "Rome" in transcript.reply
        [texts] = emu.state.messages_received().values()
        assert texts == ["Weather?"]
        assert len(emu.state.results_received()) == 2  # one per round
        assert emu.state.created == 3


def test_a_restarted_backend_resumes_from_its_checkpoint(toolbox: toolbridge.Toolbox) -> None:
    async def run() -> None:
        with emulator(D, script=PARALLEL) as emu:
            options = emulated_options(D, emu.base_url)
            connection = MessagesConnection(options, list(toolbox))
            try:
                first = connection.backend("c1")
                step = await first.send("Weather?")
                assert step is not None and step.status == "requires_action"
                saved = json.loads(json.dumps(first.checkpoint()))
                second = connection.backend("c1")
                second.restore(saved)
                resumed = await second.resume()
                assert resumed is not None and resumed.fresh
                body = await toolbox.ahandle(second.dialect, resumed.payload)
                final = await second.submit(resumed, body)
                assert final is not None and final.status == "completed"
                assert "Lima" in (final.reply or "")
                assert len(emu.state.results_received()) == 2
            finally:
                await connection.aclose()

    asyncio.run(run())


def test_our_clients_create_and_stream(toolbox: toolbridge.Toolbox) -> None:
    tools = toolbox.definitions(D)
    body = {"model": "m", "max_tokens": 64, "tools": tools,
            "messages": [{"role": "user", "content": "Weather?"}]}
    with emulator(D, script=PARALLEL) as emu:
        with MessagesClient(base_url=emu.base_url, api_key="sk-ant-secret", retry=FAST) as sync:
            created = sync.create(**body)
            events = list(sync.stream(**body))
            streamed = sync.stream_message(**body)
            assert "sk-ant-secret" not in repr(sync)
        assert created["stop_reason"] == streamed["stop_reason"] == "tool_use"
        assert [b["input"] for b in assemble_events(events)["content"]] == [
            b["input"] for b in created["content"]]

        async def run() -> dict[str, Any]:
            async with AsyncMessagesClient(base_url=emu.base_url, api_key="k",
                                           retry=FAST) as client:
                return await client.stream_message(**body)

        assert asyncio.run(run())["content"][1]["input"] == {"city": "Lima", "unit": "f"}
        headers = [e.to_dict().get("headers", {}) for e in emu.journal.entries()]
        assert all("sk-ant-secret" not in json.dumps(h) for h in headers)


def test_a_stream_that_drops_is_sent_again(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=PARALLEL, faults={"drop_stream_after": 3}) as emu:
        client = MessagesClient(base_url=emu.base_url, api_key="k", retry=FAST)
        with pytest.raises(BackendError, match="broke off 4 times"):
            client.stream_message(model="m", max_tokens=9, tools=toolbox.definitions(D),
                                  messages=[{"role": "user", "content": "hi"}])
        assert emu.state.created == 4


def test_an_error_answer_is_a_backend_error_without_the_key(toolbox: toolbridge.Toolbox) -> None:
    async def run() -> toolbridge.Transcript:
        with emulator(D, script={"turns": [{"rounds": [[
                {"name": "nope", "arguments": {}}]], "reply": "x"}]}) as emu:
            options = emulated_options(D, emu.base_url)
            return await aconverse(toolbox, D, ["hi"], options)

    transcript = asyncio.run(run())
    assert transcript.status == "failed"
    assert "emulator script error" in str(transcript.error)
    assert "emulator-key" not in transcript.render()


def test_documents_in_results_are_served() -> None:
    from anthropic.types import MessageParam
    from pydantic import TypeAdapter

    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(city: str) -> list[Any]:
        """The forecast as plain text."""
        return [DocumentPart(media_type="text/plain", data="c3Vubnk=", title=f"{city}.txt")]

    with emulator(D, script=TWO_ROUNDS) as emu:
        transcript = converse(box, D, ["Weather?"], running=emu)
        assert transcript.status == "completed", transcript.render()
        assert len(emu.state.results_received()) == 2
        last = emu.state.journal.entries("POST")[-1].body["messages"]
        assert last[-1]["content"][0]["content"] == [{"type": "document", "title": "Rome.txt",
                                                      "source": {"type": "text", "data": "sunny",
                                                                 "media_type": "text/plain"}}]
        for message in last:
            TypeAdapter(MessageParam).validate_python(message)
