"""google-genai's ``client.interactions`` unmodified against the emulator, answered by a
Toolbox: create, handle, continue by ``previous_interaction_id``; streaming; reading back;
the service's refusals as the SDK's typed errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google import genai
from google.genai._interactions_errors import APIStatusError  # what the SDK raises
from interactions_support import PARALLEL, TWO_ROUNDS, D

import toolbridge
from toolbridge.testing import emulator


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator(D, script=PARALLEL) as running:
        yield running


def client(emu: Any, key: str = "test-key") -> genai.Client:
    return genai.Client(api_key=key, http_options={"base_url": emu.base_url})


def _check(text: str) -> None:
    weather, clock = json.loads(text.removeprefix("Answer: "))
    assert json.loads(weather) == {"location": "Paris", "temp": 14, "unit": "celsius"}
    assert clock == "12:00 in Europe/Paris"


def test_create_handle_continue(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    tools = toolbox.definitions(D)
    first = sdk.interactions.create(model="gemini-3-flash-preview", tools=tools,
                                    input="Weather and time in Paris?")
    assert first.status == "requires_action"
    assert [s.type for s in first.steps or []] == ["function_call", "function_call"]
    final = sdk.interactions.create(model="gemini-3-flash-preview", tools=tools,
                                    **toolbox.handle(D, first))
    assert final.status == "completed" and final.previous_interaction_id == first.id
    _check(final.output_text or "")
    assert sdk.interactions.get(first.id).status == "requires_action"  # read back
    posts = emu.journal.entries("POST", "/interactions")
    assert len(posts) == 2 and all(e.headers["x-goog-api-key"] == "<redacted>" for e in posts)
    assert emu.state.messages_received() == {first.id: ["Weather and time in Paris?"]}
    assert emu.state.results_received() == [s.id for s in first.steps or []]


def test_streaming_two_rounds(toolbox: toolbridge.Toolbox) -> None:
    with emulator(D, script=TWO_ROUNDS) as emu:
        sdk = client(emu)
        tools = toolbox.definitions(D)
        body: dict[str, Any] = {"input": "Time, then weather?"}
        kinds: list[str] = []
        for _ in range(3):
            completed = None
            for event in sdk.interactions.create(model="gemini-3-flash-preview", tools=tools,
                                                 stream=True, **body):
                kinds.append(event.event_type)
                if event.event_type == "interaction.completed":
                    completed = event
            assert completed is not None
            if completed.interaction.status != "requires_action":
                break
            body = toolbox.handle(D, completed)
        assert completed.interaction.status == "completed"
        text = completed.interaction.steps[0].content[0].text  # type: ignore[index,union-attr]
        outputs = json.loads(text)
        assert outputs[0] == "12:00 in UTC" and len(outputs) == 3
        assert kinds[0] == "interaction.created" and "step.delta" in kinds
        assert emu.state.results_received() and len(emu.state.results_received()) == 3


def test_reattaching_to_a_stream_after_an_event(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    first = sdk.interactions.create(model="m", tools=toolbox.definitions(D), input="hi")
    events = list(sdk.interactions.get(first.id, stream=True))
    again = list(sdk.interactions.get(first.id, stream=True,
                                      last_event_id=events[1].event_id))
    assert [e.event_id for e in again] == [e.event_id for e in events[2:]]


def test_the_service_refuses_what_it_should(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    tools = toolbox.definitions(D)
    first = sdk.interactions.create(model="m", tools=tools, input="hi")
    body = toolbox.handle(D, first)
    with pytest.raises(APIStatusError) as half:  # every call answered at once
        sdk.interactions.create(model="m", tools=tools,
                                previous_interaction_id=first.id, input=body["input"][:1])
    assert "send every one" in str(half.value.body) and half.value.status_code == 400
    with pytest.raises(APIStatusError) as stranger:
        sdk.interactions.create(model="m", tools=tools, previous_interaction_id=first.id,
                                input=[{**body["input"][0], "call_id": "nope"}, body["input"][1]])
    assert "does not wait for" in str(stranger.value.body)
    with pytest.raises(APIStatusError) as unknown:
        sdk.interactions.get("v1_missing")
    assert unknown.value.status_code == 404
    assert emu.state.results_received() == []  # nothing refused was taken


@pytest.mark.parametrize(("part", "message"), [
    ({"type": "thought", "text": "x"}, "result[1].type"),
    ({"type": "text", "text": 7}, "result[1].text"),
    ({"type": "image", "data": "iVBORw0KGgo="}, "needs data with its mime_type"),
    ({"type": "document", "data": "%%", "mime_type": "application/pdf"}, "Base64"),
])
def test_result_parts_are_checked_as_the_service_checks_them(
        emu: Any, toolbox: toolbridge.Toolbox, part: dict[str, Any], message: str) -> None:
    sdk = client(emu)
    tools = toolbox.definitions(D)
    first = sdk.interactions.create(model="m", tools=tools, input="hi")
    body = toolbox.handle(D, first)
    good = {"type": "image", "uri": "https://example.com/a.png"}
    bad = [{**step, "result": [good, part]} for step in body["input"]]
    refused = httpx.post(f"{emu.base_url}/v1beta/interactions", headers={
        "x-goog-api-key": "test-key"}, json={"model": "m", "tools": tools,
                                             "previous_interaction_id": first.id, "input": bad})
    assert refused.status_code == 400 and message in refused.text, refused.text
    assert emu.state.results_received() == []
    fine = [{**step, "result": [good, {"type": "text", "text": "ok"}]} for step in body["input"]]
    done = sdk.interactions.create(model="m", tools=tools, previous_interaction_id=first.id,
                                   input=fine)
    assert done.status == "completed"


def test_without_a_key_the_service_refuses(emu: Any) -> None:
    import httpx

    answer = httpx.post(emu.base_url + "/v1/interactions", json={"model": "m", "input": "hi"})
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "PERMISSION_DENIED"
    keyed = httpx.post(emu.base_url + "/v1/interactions?key=k", json={"model": "m",
                                                                       "input": "hi"})
    assert keyed.status_code == 200
    assert "k" not in emu.journal.entries("POST")[-1].query.split("=")[-1]  # masked
