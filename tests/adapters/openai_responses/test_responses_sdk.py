"""The official SDKs unmodified against the emulator, answered by a Toolbox: openai's
`OpenAI` and `AzureOpenAI`, and azure-ai-projects' `get_openai_client()` on a Foundry project."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from foundry_support import FixedCredential
from openai import AzureOpenAI, OpenAI
from responses_support import PARALLEL, TWO_ROUNDS, D

import toolbridge
from toolbridge.testing import emulator


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator(D, script=PARALLEL) as running:
        yield running


def _outputs(text: str) -> list[Any]:
    return json.loads(text.removeprefix("Answer: "))


def _check(text: str) -> None:
    weather, clock = _outputs(text)
    assert json.loads(weather) == {"location": "Paris", "temp": 14, "unit": "celsius"}
    assert clock == "12:00 in Europe/Paris"


@pytest.mark.parametrize("form", ["openai", "azure", "azure-v1"])
def test_create_handle_continue(emu: Any, toolbox: toolbridge.Toolbox, form: str) -> None:
    if form == "openai":
        client: Any = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
    elif form == "azure":
        client = AzureOpenAI(azure_endpoint=emu.base_url, api_key="az-test",
                             api_version="2025-04-01-preview", max_retries=0)
    else:
        client = OpenAI(base_url=emu.base_url + "/openai/v1/", api_key="az-test", max_retries=0)
    tools = toolbox.definitions(D)
    response = client.responses.create(model="gpt-5", input="Weather and time in Paris?",
                                       tools=tools)
    assert [item.type for item in response.output] == ["function_call", "function_call"]
    final = client.responses.create(model="gpt-5", tools=tools,
                                    **toolbox.handle(D, response))
    assert final.status == "completed" and final.previous_response_id == response.id
    _check(final.output_text)
    posts = emu.journal.entries("POST", "/responses")
    if form == "azure":
        assert all(e.path == "/openai/responses" and "api-version=" in e.query for e in posts)
        assert all(e.headers.get("api-key") == "<redacted>" for e in posts)
    else:
        assert all(e.headers.get("authorization") == "<redacted>" for e in posts)


def test_conversation(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
    conversation = client.conversations.create(metadata={"tenant": "acme"})
    tools = toolbox.definitions(D)
    response = client.responses.create(model="gpt-5", input="Weather?", tools=tools,
                                       conversation=conversation.id)
    assert response.conversation is not None and response.conversation.id == conversation.id
    body = toolbox.handle(D, response)
    assert body["conversation"] == conversation.id
    final = client.responses.create(model="gpt-5", tools=tools, **body)
    _check(final.output_text)
    kinds = [i.type for i in client.conversations.items.list(conversation.id, order="asc")]
    assert kinds == ["message", "function_call", "function_call", "function_call_output",
                     "function_call_output", "message"]


def test_streaming_and_two_rounds(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=TWO_ROUNDS) as emu:
        client = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
        tools = toolbox.definitions(D)
        kwargs: dict[str, Any] = {"input": "Time, then weather"}
        rounds = 0
        while True:
            with client.responses.stream(model="gpt-5", tools=tools, **kwargs) as stream:
                response = stream.get_final_response()
            if response.output[0].type != "function_call":
                break
            rounds += 1
            kwargs = toolbox.handle(D, response)  # the SDK's own object, accumulated
        assert rounds == 2
        outputs = json.loads(response.output_text)
        assert outputs[0] == "12:00 in UTC" and json.loads(outputs[2])["location"] == "Oslo"


def test_background_poll_and_reattach(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    client = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0)
    tools = toolbox.definitions(D)
    queued = client.responses.create(model="gpt-5", input="x", tools=tools, background=True)
    assert queued.status == "queued"
    assert client.responses.retrieve(queued.id).status == "in_progress"
    done = client.responses.retrieve(queued.id)
    assert done.status == "completed" and len(done.output) == 2
    stream = client.responses.create(model="gpt-5", input="x", tools=tools, background=True,
                                     stream=True)
    first = [event for _, event in zip(range(3), stream, strict=False)]
    stream.close()
    rest = list(client.responses.retrieve(first[0].response.id, stream=True, starting_after=2))
    assert rest[0].sequence_number == 3 and rest[-1].type == "response.completed"
    attached = [e for e in emu.journal.entries("GET") if "starting_after=2" in e.query]
    assert attached and "stream=true" in attached[0].query
    final = client.responses.create(model="gpt-5", tools=tools,
                                    **toolbox.handle(D, rest[-1].response))
    _check(final.output_text)


def test_foundry_project_with_a_saved_agent(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    from azure.ai.projects import AIProjectClient
    from azure.ai.projects.models import FunctionTool, PromptAgentDefinition

    credential = FixedCredential()
    project = AIProjectClient(endpoint=emu.base_url + "/api/projects/proj1",
                              credential=credential)  # type: ignore[arg-type]
    tools = [FunctionTool(name=t["name"], description=t["description"],
                          parameters=t["parameters"], strict=t["strict"])
             for t in toolbox.definitions(D)]
    version = project.agents.create_version(  # azure-core refuses bearer tokens over http
        agent_name="weather-agent", definition=PromptAgentDefinition(model="gpt-4.1",
                                                                     tools=tools),
        enforce_https=False)
    assert (version.name, version.version) == ("weather-agent", "1")
    openai = project.get_openai_client()
    assert type(openai) is OpenAI
    conversation = openai.conversations.create()
    reference = {"agent_reference": {"type": "agent_reference", "name": "weather-agent",
                                     "version": version.version}}
    response = openai.responses.create(input="Weather and time in Paris?",
                                       conversation=conversation.id, extra_body=reference)
    final = openai.responses.create(extra_body={**reference, **toolbox.handle(D, response)})
    _check(final.output_text)
    assert all(scopes == ("https://ai.azure.com/.default",) for scopes in credential.scopes)
    posts = emu.journal.entries("POST", "/api/projects/proj1/openai/v1/responses")
    assert len(posts) == 2 and all(e.headers["authorization"] == "<redacted>" for e in posts)
    assert posts[1].body["agent_reference"]["name"] == "weather-agent"
