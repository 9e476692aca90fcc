"""The official openai SDK (OpenAI and AzureOpenAI) against the emulator, answered by a Toolbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from assistants_support import PARALLEL, D
from openai import AzureOpenAI, OpenAI

import toolbridge
from toolbridge.testing import emulator

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(params=["openai", "azure"])
def sdk(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    with emulator(D, script=PARALLEL) as emu:
        if request.param == "openai":
            client: Any = OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test")
        else:
            client = AzureOpenAI(azure_endpoint=emu.base_url, api_key="az-test",
                                 api_version="2024-07-01-preview")
        yield client, emu


def _setup(client: Any, toolbox: toolbridge.Toolbox) -> tuple[str, str]:
    assistant = client.beta.assistants.create(model="gpt-4o",
                                              tools=toolbox.definitions(D))
    thread = client.beta.threads.create()
    client.beta.threads.messages.create(thread_id=thread.id, role="user",
                                        content="Weather and time in Paris?")
    return assistant.id, thread.id


def _check_reply(client: Any, thread_id: str) -> None:
    reply = client.beta.threads.messages.list(thread_id=thread_id).data[0]
    outputs = json.loads(reply.content[0].text.value.removeprefix("Answer: "))
    assert json.loads(outputs[0]) == {"location": "Paris", "temp": 14, "unit": "celsius"}
    assert outputs[1] == "12:00 in Europe/Paris"


def test_create_and_poll_then_submit_and_poll(sdk: tuple[Any, Any],
                                              toolbox: toolbridge.Toolbox) -> None:
    client, emu = sdk
    assistant_id, thread_id = _setup(client, toolbox)
    run = client.beta.threads.runs.create_and_poll(thread_id=thread_id,
                                                   assistant_id=assistant_id)
    assert run.status == "requires_action"
    run = client.beta.threads.runs.submit_tool_outputs_and_poll(
        thread_id=thread_id, run_id=run.id, **toolbox.handle(D, run))
    assert run.status == "completed"
    _check_reply(client, thread_id)
    polls = emu.journal.entries("GET", "/runs/")
    assert polls and all(e.headers.get("openai-beta") == "assistants=v2" for e in polls)
    if isinstance(client, AzureOpenAI):
        assert all(e.path.startswith("/openai/threads") and "api-version=" in e.query
                   and "deployments" not in e.path for e in polls)


def test_streaming(sdk: tuple[Any, Any], toolbox: toolbridge.Toolbox) -> None:
    client, _ = sdk
    assistant_id, thread_id = _setup(client, toolbox)
    with client.beta.threads.runs.stream(thread_id=thread_id,
                                         assistant_id=assistant_id) as stream:
        events = [event.event for event in stream]
        run = stream.current_run
    assert events[-1] == "thread.run.requires_action" and run.status == "requires_action"
    with client.beta.threads.runs.submit_tool_outputs_stream(
            thread_id=thread_id, run_id=run.id, **toolbox.handle(D, run)) as stream:
        stream.until_done()
        final = stream.get_final_run()
        messages = stream.get_final_messages()
    assert final.status == "completed"
    assert messages[0].content[0].text.value.startswith("Answer: ")
    _check_reply(client, thread_id)


def test_handle_accepts_the_sdk_stream_event(sdk: tuple[Any, Any],
                                             toolbox: toolbridge.Toolbox) -> None:
    client, _ = sdk
    assistant_id, thread_id = _setup(client, toolbox)
    stream = client.beta.threads.runs.create(thread_id=thread_id, assistant_id=assistant_id,
                                             stream=True)
    event = next(e for e in stream if e.event == "thread.run.requires_action")
    body = toolbox.handle(D, event)  # the SDK's {event, data} object
    run = client.beta.threads.runs.submit_tool_outputs_and_poll(
        thread_id=thread_id, run_id=event.data.id, **body)
    assert run.status == "completed"
