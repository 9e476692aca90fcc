"""Our own Interactions clients against the emulator: the key in a header or in ``?key=``
(never in the journal's record or a repr), a stream gathered, a stream cut short read back."""

from __future__ import annotations

import httpx
import pytest
from interactions_support import PARALLEL, D

import toolbridge
from toolbridge.testing import emulator
from toolbridge_gemini_interactions import AsyncInteractionsClient, InteractionsClient

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
         {"type": "function", "name": "get_time", "parameters": {"type": "object"}}]


@pytest.mark.parametrize("in_query", [False, True])
def test_create_get_and_stream(in_query: bool) -> None:
    with emulator(D, script=PARALLEL) as emu, InteractionsClient(
            base_url=emu.base_url, api_key="sk-secret-1", key_in_query=in_query) as client:
        assert "sk-secret-1" not in repr(client)
        first = client.create(model="m", input="hi", tools=TOOLS)
        assert first["status"] == "requires_action" and len(first["steps"]) == 2
        assert client.get(first["id"]) == first
        streamed = client.stream_interaction(model="m", input="again", tools=TOOLS)
        assert streamed["status"] == "requires_action"
        entries = emu.journal.entries()
    assert all("sk-secret-1" not in str(e.headers) + e.query for e in entries)
    assert all(("key=***" in e.query) == in_query for e in entries)


async def test_a_stream_cut_short_is_read_back() -> None:
    with emulator(D, script=PARALLEL, faults={"drop_stream_after": 1}) as emu:
        async with AsyncInteractionsClient(base_url=emu.base_url, api_key="k") as client:
            gathered = await client.stream_interaction(model="m", input="hi", tools=TOOLS)
        gets = emu.journal.entries("GET")
    assert gathered["status"] == "requires_action" and len(gathered["steps"]) == 2
    assert [e.path for e in gets] == [f"/v1/interactions/{gathered['id']}"]


async def test_a_stream_cut_before_the_interaction_is_a_backend_error() -> None:
    """No ``interaction.created`` came: nothing names the interaction to read back, and the
    create is not sent again (it may have arrived)."""
    sent: list[httpx.Request] = []

    def cut(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=b'data: {"event_type": "step.start", "index": 0, '
                              b'"step": {"type": "thought"}}\n\n',
                              headers={"content-type": "text/event-stream"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(cut)) as http:
        client = AsyncInteractionsClient(base_url="https://gemini.test", api_key="k",
                                         http_client=http)
        with pytest.raises(toolbridge.BackendError, match="whether it was is unknown"):
            await client.stream_interaction(model="m", input="hi", tools=TOOLS)
    assert len(sent) == 1


def test_an_error_answer_is_a_backend_error_with_its_status() -> None:
    with emulator(D) as emu, InteractionsClient(base_url=emu.base_url, api_key="k") as client:
        with pytest.raises(toolbridge.BackendError) as caught:
            client.get("v1_nope")
    assert caught.value.status == 404 and "not found" in str(caught.value)
