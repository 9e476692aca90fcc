"""Chat Completions end to end: the official SDK (`OpenAI`, `AzureOpenAI`) and our clients
against the emulator, answered by a Toolbox; the emulator's strictness and faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from chat_support import PARALLEL, TWO_ROUNDS, D, payload
from openai import AzureOpenAI, OpenAI
from openai.types.chat.chat_completion import ChatCompletion
from openai.types.shared.error_object import ErrorObject
from openai_sdk_types import check_model

import toolbridge
from toolbridge import BackendError, UsageError
from toolbridge.http import RetryPolicy
from toolbridge.testing import emulator
from toolbridge_openai_chat import AsyncChatClient, ChatClient, assemble_chunks

FAST = RetryPolicy(max_attempts=4, backoff=0.01)


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator(D, script=PARALLEL) as running:
        yield running


def _check(text: str) -> None:
    weather, clock = json.loads(text.removeprefix("Answer: "))
    assert json.loads(weather)["location"] == "Paris" and clock == "12:00 in Europe/Paris"


@pytest.mark.parametrize("form", ["openai", "azure"])
def test_sdk_loop(emu: Any, toolbox: toolbridge.Toolbox, form: str) -> None:
    if form == "openai":
        client: Any = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
    else:
        client = AzureOpenAI(azure_endpoint=emu.base_url, api_key="az-test",
                             api_version="2024-10-21", azure_deployment="gpt4o-prod",
                             max_retries=0)
    tools = toolbox.definitions(D)
    messages: list[Any] = [{"role": "user", "content": "Weather and time in Paris?"}]
    completion = client.chat.completions.create(model="gpt-4o", messages=messages,
                                                tools=tools)
    assert completion.choices[0].finish_reason == "tool_calls"
    messages.append(completion.choices[0].message)
    messages += toolbox.handle(D, completion)["messages"]
    final = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
    _check(final.choices[0].message.content)
    posts = emu.journal.entries("POST")
    if form == "azure":
        assert all(e.path == "/openai/deployments/gpt4o-prod/chat/completions"
                   and "api-version=2024-10-21" in e.query for e in posts)


def test_sdk_stream_assembled_and_answered(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Weather?"}]
    tools = toolbox.definitions(D)
    chunks = [c.model_dump() for c in client.chat.completions.create(
        model="m", messages=messages, tools=tools, stream=True,
        stream_options={"include_usage": True})]
    completion = assemble_chunks(chunks)
    assert check_model(completion, ChatCompletion) == []
    messages += [completion["choices"][0]["message"],
                 *toolbox.handle(D, completion)["messages"]]
    with client.chat.completions.stream(model="m", messages=messages, tools=tools) as stream:
        final = stream.get_final_completion()
    _check(final.choices[0].message.content or "")


def test_our_client_holds_a_conversation_with_reused_ids() -> None:
    box, runs = toolbridge.Toolbox(), []

    @box.tool(side_effects=True)
    def get_time(tz: str) -> str:
        """Time."""
        runs.append(tz)
        return f"noon in {tz}"

    @box.tool
    def get_weather(location: str, unit: str | None = None) -> str:
        """Weather."""
        return f"sunny in {location}"

    script = {"turns": [{"rounds": [[{"name": "get_time", "arguments": {"tz": "UTC"}}],
                                    [{"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}}]],
                         "reply": "{outputs}"}]}
    with emulator(D, script=script, faults={"reuse_call_ids": True}) as emu, ChatClient(
            base_url=emu.base_url + "/v1", api_key="k", retry=FAST) as client:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "times"}]
        tools = box.definitions(D)
        while True:
            completion = client.create(model="m", messages=messages, tools=tools)
            message = completion["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                break
            assert message["tool_calls"][0]["id"] == "call_0"  # the same id every round
            body = box.handle(D, {"messages": messages}, conversation="conv-1")
            assert box.handle(D, {"messages": messages}, conversation="conv-1") == body
            messages += body["messages"]
    assert runs == ["UTC", "Asia/Tokyo"]
    assert json.loads(messages[-1]["content"]) == ["noon in UTC", "noon in Asia/Tokyo"]


async def test_async_client_streams_and_resends_a_dropped_stream(
        toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=TWO_ROUNDS, faults={"drop_stream_after": 3}) as emu:
        async with AsyncChatClient(base_url=emu.base_url, api_key="k", retry=FAST) as client:
            with pytest.raises(BackendError, match="broke off 4 times"):
                await client.stream_completion(model="m", tools=toolbox.definitions(D),
                                               messages=[{"role": "user", "content": "x"}])
        assert len(emu.journal.entries("POST")) == 4
    with emulator(D, script=TWO_ROUNDS) as emu:
        async with AsyncChatClient(base_url=emu.base_url, api_key="k") as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "x"}]
            for _ in range(3):
                completion = await client.stream_completion(
                    model="m", messages=messages, tools=toolbox.definitions(D))
                messages.append(completion["choices"][0]["message"])
                messages += (await toolbox.ahandle(D, completion))["messages"]
            assert json.loads(messages[-1]["content"])[0] == "12:00 in UTC"


def test_sync_stream_completion_survives_one_drop(toolbox: toolbridge.Toolbox) -> None:
    faults = {"drop_stream_after": 2, "fail_requests": [{"nth": 2, "status": 503}]}
    with emulator(D, script=PARALLEL, faults=faults) as emu, ChatClient(
            base_url=emu.base_url + "/v1", api_key="k", retry=FAST) as client:
        with pytest.raises(BackendError):
            client.stream_completion(model="m", tools=toolbox.definitions(D),
                                     messages=[{"role": "user", "content": "x"}])
    with emulator(D, script=PARALLEL) as emu, ChatClient(
            base_url=emu.base_url + "/v1", api_key="k") as client:
        completion = client.stream_completion(model="m", tools=toolbox.definitions(D),
                                              messages=[{"role": "user", "content": "x"}])
        assert len(completion["choices"][0]["message"]["tool_calls"]) == 2


def _error(answer: httpx.Response, message: str) -> None:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert check_model(error, ErrorObject) == [] and message in error["message"]


def test_the_emulator_refuses_what_the_service_refuses(emu: Any,
                                                       toolbox: toolbridge.Toolbox) -> None:
    history = payload("openai-chat.tool-messages.request")["messages"]
    with httpx.Client(base_url=emu.base_url + "/v1",
                      headers={"Authorization": "Bearer k"}) as http:
        answer = http.post("/chat/completions", json={"model": "m", "messages": history[:4]})
        _error(answer, "did not have response messages: call_t1")
        expected = payload("openai-chat.error.missing-tool-messages")["error"]["message"]
        assert answer.json()["error"]["message"] == expected
        _error(http.post("/chat/completions", json={"model": "m", "messages": [
            history[1], history[3]]}), "must be a response to a preceding message")
        _error(http.post("/chat/completions", json={"model": "m", "messages": history,
                                                    "bogus": 1}), "Unrecognized request")
        _error(http.post("/chat/completions", json={"messages": history}), "'model'")
        _error(http.post("/chat/completions", json={"model": "m", "messages": history[:2],
                                                    "tools": [{"type": "function"}] * 129}),
               "array too long")
        assert http.post("/chat/completions", json={"model": "m", "messages": history[:2]},
                         headers={"Authorization": ""}).status_code == 401
        ok = http.post("/chat/completions", json={"model": "m", "messages": history,
                                                  "tools": payload("openai-chat.tools")})
        assert ok.status_code == 200 and check_model(ok.json(), ChatCompletion) == []
        tool = next(i for i, m in enumerate(history) if m["role"] == "tool")
        for content, param in [([{"type": "image_url", "image_url": {"url": "x"}}], "[0].type"),
                               ([{"type": "text", "text": 7}], "[0].text"), (7, "")]:
            bad = [*history[:tool], {**history[tool], "content": content}, *history[tool + 1:]]
            answer = http.post("/chat/completions", json={"model": "m", "messages": bad})
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"]["param"] == f"messages[{tool}].content{param}"
        parts = [*history[:tool], {**history[tool], "content": [{"type": "text", "text": "1"}]},
                 *history[tool + 1:]]
        assert http.post("/chat/completions", json={"model": "m", "messages": parts}
                         ).status_code == 200


def test_client_configuration_and_secrets() -> None:
    with pytest.raises(UsageError, match="deployment"):
        ChatClient(azure_endpoint="https://x", api_key="k")
    with pytest.raises(UsageError, match="exactly one credential"):
        ChatClient(azure_endpoint="https://x", deployment="d", api_version="v")
    client = ChatClient(azure_endpoint="https://x", deployment="d", api_version="v",
                        api_key="az-secret")
    assert "az-secret" not in repr(client)

    def refuse(request: httpx.Request) -> httpx.Response:
        assert request.headers["api-key"] == "az-secret"
        return httpx.Response(400, json={"error": {"message": "bad", "type": "x"}})

    client = ChatClient(azure_endpoint="https://x", deployment="d", api_version="v",
                        api_key="az-secret",
                        http_client=httpx.Client(transport=httpx.MockTransport(refuse)))
    with pytest.raises(BackendError) as info:
        client.create(messages=[])
    assert "az-secret" not in str(info.value) + repr(info.value.body)
