"""Our clients (sync and async) against the emulator: the loop through a Toolbox, streaming
recovery, background responses, Conversations, Azure and Foundry configurations, secrets."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from foundry_support import AsyncFixedCredential, FixedCredential
from responses_support import PARALLEL, TWO_ROUNDS, D

import toolbridge
from toolbridge import BackendError, UsageError
from toolbridge.http import RetryPolicy
from toolbridge.testing import emulator
from toolbridge_openai_responses import (
    AsyncResponsesClient,
    ResponsesClient,
    ResponseStreamError,
    StreamGatherer,
)

FAST = RetryPolicy(max_attempts=4, backoff=0.01)


def _loop(client: ResponsesClient, toolbox: toolbridge.Toolbox, first: dict[str, Any],
          **fields: Any) -> dict[str, Any]:
    """Answer until the response holds no call; the driver's part, spelled out."""
    response = first
    while any(i["type"] == "function_call" for i in response["output"]):
        response = client.create(**fields, **toolbox.handle(D, response))
    return response


def test_sync_loop_with_previous_response_id(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=TWO_ROUNDS) as emu, ResponsesClient(
            base_url=emu.base_url + "/v1", api_key="sk-test", retry=FAST) as client:
        fields = {"model": "gpt-5", "tools": toolbox.definitions(D)}
        final = _loop(client, toolbox, client.create(input="go", **fields), **fields)
        assert final["status"] == "completed"
        assert json.loads(final["output"][0]["content"][0]["text"])[0] == "12:00 in UTC"


async def test_async_loop_in_a_conversation(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=PARALLEL) as emu:
        async with AsyncResponsesClient(base_url=emu.base_url + "/v1", api_key="k",
                                        retry=FAST) as client:
            conversation = await client.create_conversation(metadata={"t": "1"})
            fields = {"model": "gpt-5", "tools": toolbox.definitions(D),
                      "conversation": conversation["id"]}
            response = await client.create(input="Weather?", **fields)
            body = await toolbox.ahandle(D, response)
            final = await client.create(model="gpt-5", tools=fields["tools"], **body)
            assert final["output"][0]["type"] == "message"
            items = await client.all_items(conversation["id"])
            assert [i["type"] for i in items].count("function_call_output") == 2


def test_conversation_items_go_in_requests_of_twenty() -> None:
    with emulator(D) as emu, ResponsesClient(base_url=emu.base_url, api_key="k") as client:
        items = [{"type": "message", "role": "user", "content": f"m{i}"} for i in range(45)]
        conversation = client.create_conversation(items)
        assert len(client.all_items(conversation["id"])) == 45
        page = client.list_items(conversation["id"], limit=10)
        assert len(page["data"]) == 10 and page["has_more"]
        sizes = [len(e.body["items"]) for e in emu.journal.entries("POST", "/conversations")]
        assert sizes == [20, 20, 5]


@pytest.mark.parametrize("background", [True, False])
def test_a_dropped_stream_is_recovered(toolbox: toolbridge.Toolbox, background: bool) -> None:
    faults = {"drop_stream_after": 4, "duplicate_events": 3}
    with emulator(D, script=PARALLEL, faults=faults) as emu, ResponsesClient(
            base_url=emu.base_url + "/v1", api_key="k", retry=FAST) as client:
        seen: list[int] = []
        response = client.stream_response(
            model="gpt-5", input="Weather?", tools=toolbox.definitions(D),
            background=background, on_event=lambda e: seen.append(e["sequence_number"]))
        assert [c.id for c in toolbridge.get_dialect(D).read_calls(response).calls] == [
            i["call_id"] for i in response["output"]]
        assert len(response["output"]) == 2 and response["status"] == "completed"
        assert seen == sorted(set(seen))  # duplicated events are taken once
        gets = emu.journal.entries("GET", "/responses/")
        if background:  # re-attached after the last event taken, then again...
            assert gets and all("stream=true" in g.query for g in gets)
            assert "starting_after=3" in gets[0].query
        else:  # a foreground stream is recovered by reading the response
            assert gets and all("stream" not in g.query for g in gets)


def test_a_drop_before_the_response_id_is_a_typed_error() -> None:
    posts: list[httpx.Request] = []

    def cut(request: httpx.Request) -> httpx.Response:
        posts.append(request)  # the stream ends before its first event
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=b": keep-alive\n\n")

    client = ResponsesClient(base_url="http://backend/v1", api_key="k", retry=FAST,
                             http_client=httpx.Client(transport=httpx.MockTransport(cut)))
    with pytest.raises(ResponseStreamError, match=r"before response\.created"):
        client.stream_response(model="gpt-5", input="x")
    assert len(posts) == 1  # a create is never re-sent


async def test_async_stream_recovery_and_background_poll(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=PARALLEL, faults={"drop_stream_after": 5}) as emu:
        async with AsyncResponsesClient(base_url=emu.base_url, api_key="k",
                                        retry=FAST, poll_interval=0.01) as client:
            tools = toolbox.definitions(D)
            streamed = await client.stream_response(model="gpt-5", input="x", tools=tools,
                                                    background=True)
            assert len(streamed["output"]) == 2
            queued = await client.create(model="gpt-5", input="x", tools=tools,
                                         background=True)
            assert queued["status"] == "queued"
            done = await client.poll(queued["id"])
            assert done["status"] == "completed"
            body = await toolbox.ahandle(D, done)
            final = await client.create(model="gpt-5", tools=tools, **body)
            assert final["output"][0]["type"] == "message"


def test_a_failed_create_is_not_sent_again_and_errors_keep_the_body(
        toolbox: toolbridge.Toolbox) -> None:
    # A create is not idempotent (a second one stores the input again): a 503 or 500 goes to
    # the caller (the serve driver asks the backend), the client never re-sends it.
    faults = {"fail_requests": [{"nth": 1, "status": 503, "retry_after": 0},
                                {"nth": 2, "status": 500}]}
    with emulator(D, script=PARALLEL, faults=faults) as emu, ResponsesClient(
            base_url=emu.base_url, api_key="sk-very-secret", retry=FAST) as client:
        for status in (503, 500):
            with pytest.raises(BackendError) as failed:
                client.create(model="gpt-5", input="x", tools=toolbox.definitions(D))
            assert failed.value.status == status
        response = client.create(model="gpt-5", input="x", tools=toolbox.definitions(D))
        assert len(emu.journal.entries("POST")) == 3
        with pytest.raises(BackendError) as info:  # one output missing: the real 400
            client.create(model="gpt-5", previous_response_id=response["id"], input=[
                {"type": "function_call_output", "call_id": response["output"][0]["call_id"],
                 "output": "x"}])
    assert info.value.status == 400 and "No tool output found" in str(info.value)
    assert info.value.body["error"]["param"] == "input"
    assert "sk-very-secret" not in repr(client) + str(info.value) + repr(info.value.body)


def test_foundry_configuration_signs_with_the_credential_and_references_the_agent(
        toolbox: toolbridge.Toolbox) -> None:
    credential = FixedCredential()
    with emulator(D, script=PARALLEL) as emu, ResponsesClient(
            project_endpoint=emu.base_url + "/api/projects/p", credential=credential,
            agent=("weather-agent", "1"), retry=FAST) as client:
        version = client.create_agent_version("weather-agent", definition={
            "kind": "prompt", "model": "gpt-4.1", "tools": toolbox.definitions(D)})
        assert version["id"] == "weather-agent:1"
        conversation = client.create_conversation()
        response = client.create(input="Weather?", conversation=conversation["id"])
        final = client.create(**toolbox.handle(D, response))
        assert final["output"][0]["type"] == "message"
        assert credential.scopes == [("https://ai.azure.com/.default",)]  # cached token
        posts = emu.journal.entries("POST", "/api/projects/p/openai/v1/responses")
        assert all(p.body["agent_reference"] == {"type": "agent_reference",
                                                 "name": "weather-agent", "version": "1"}
                   for p in posts)
        version_post = emu.journal.entries("POST", "/agents/weather-agent/versions")[0]
        assert version_post.query == "api-version=v1"
        assert "entra-token-123" not in repr(client)


async def test_async_foundry_with_an_async_credential() -> None:
    with emulator(D) as emu:
        async with AsyncResponsesClient(project_endpoint=emu.base_url + "/api/projects/p",
                                        credential=AsyncFixedCredential()) as client:
            await client.create_agent_version("echo", definition={"kind": "prompt",
                                                                  "model": "m"})
            response = await client.create(input="hello", agent_reference={
                "type": "agent_reference", "name": "echo"})
            assert response["output"][0]["content"][0]["text"] == "hello"


def test_azure_openai_v1_uses_the_api_key_header() -> None:
    with emulator(D) as emu, ResponsesClient(azure_endpoint=emu.base_url,
                                             api_key="az-key") as client:
        assert client.create(model="gpt-4o", input="hi")["output"][0]["type"] == "message"
        [entry] = emu.journal.entries("POST")
        assert entry.path == "/openai/v1/responses" and entry.headers["api-key"] == "<redacted>"


@pytest.mark.parametrize("options, match", [
    ({"base_url": "http://x", "project_endpoint": "http://y"}, "one endpoint"),
    ({"project_endpoint": "http://y"}, "credential"),
    ({"azure_endpoint": "http://y"}, "exactly one credential"),
    ({"base_url": "http://x", "credential": FixedCredential(),
      "token_provider": lambda: "t"}, "not both"),
    ({"base_url": "http://x", "agent": {"version": "1"}}, "needs a name"),
])
def test_configuration_mistakes_say_what_to_fix(options: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        ResponsesClient(**options)


def test_the_gatherer_refills_output_and_ignores_repeats() -> None:
    gatherer = StreamGatherer()
    created = {"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_1", "background": True, "output": []}}
    item = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    done = {"type": "response.output_item.done", "sequence_number": 1, "output_index": 0,
            "item": item}
    assert gatherer.feed(created) and gatherer.feed(done) and not gatherer.feed(done)
    assert gatherer.feed({"type": "response.completed", "sequence_number": 2,
                          "response": {"id": "resp_1", "status": "completed", "output": None}})
    assert gatherer.result()["output"] == [item] and gatherer.last_sequence == 2
    with pytest.raises(BackendError, match="boom"):
        StreamGatherer().feed({"type": "error", "message": "boom", "sequence_number": 0})


def test_a_transport_error_on_create_is_not_resent() -> None:
    calls: list[httpx.Request] = []

    def drop(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ReadError("connection reset", request=request)

    client = ResponsesClient(base_url="http://backend/v1", api_key="sk-x", retry=FAST,
                             http_client=httpx.Client(transport=httpx.MockTransport(drop)))
    with pytest.raises(BackendError, match="may have acted on it") as info:
        client.create(model="m", input="x")
    assert len(calls) == 1 and "sk-x" not in str(info.value)
    assert info.value.__context__ is None or "sk-x" not in repr(info.value.__context__)
