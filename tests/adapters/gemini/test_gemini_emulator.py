"""The Gemini emulator under google-genai's own client (unmodified: only ``base_url``), and
its strictness: what it refuses, it refuses with the API's status and error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from gemini_support import PARALLEL, weather_toolbox
from google import genai
from google.genai import errors, types

from toolbridge.testing import emulator

MODEL = "gemini-2.5-flash"


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator("gemini", script=PARALLEL) as running:
        yield running


def sdk(base_url: str) -> genai.Client:
    return genai.Client(api_key="test-key", http_options={"base_url": base_url})


def config() -> types.GenerateContentConfig:
    declarations = weather_toolbox().definitions("gemini")
    return types.GenerateContentConfig(
        tools=[types.Tool.model_validate({"functionDeclarations": declarations})],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))


def ask(client: genai.Client) -> tuple[list[types.Content], types.GenerateContentResponse]:
    contents = [types.Content(role="user", parts=[types.Part(text="Weather?")])]
    return contents, client.models.generate_content(model=MODEL, contents=contents,
                                                    config=config())


def answers(response: types.GenerateContentResponse) -> types.Content:
    return types.Content(role="user", parts=[
        types.Part(function_response=types.FunctionResponse(
            id=call.id, name=call.name, response={"output": f"sunny in {call.args['location']}"}))
        for call in response.function_calls or ()])


def test_the_sdk_plays_a_parallel_turn(emu: Any) -> None:
    client = sdk(emu.base_url)
    contents, response = ask(client)
    calls = response.function_calls or []
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"location": "Paris", "days": 2}),
                                                 ("get_weather", {"location": "Lima"})]
    parts = response.candidates[0].content.parts  # type: ignore[index, union-attr]
    assert parts[0].thought_signature and not parts[1].thought_signature
    final = client.models.generate_content(
        model=MODEL, contents=[*contents, response.candidates[0].content, answers(response)],  # type: ignore[index, list-item]
        config=config())
    assert final.text == 'Answer: ["sunny in Paris", "sunny in Lima"]'
    assert emu.state.results_received() == [c.id for c in calls]
    assert list(emu.state.messages_received().values()) == [["Weather?"]]


def test_the_sdk_streams_with_alt_sse(emu: Any) -> None:
    client = sdk(emu.base_url)
    contents, response = ask(client)
    history = [*contents, response.candidates[0].content, answers(response)]  # type: ignore[index]
    chunks = list(client.models.generate_content_stream(model=MODEL, contents=history,
                                                        config=config()))
    assert len(chunks) == 2 and "".join(c.text or "" for c in chunks).startswith("Answer: ")
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    stream = emu.journal.entries(contains="streamGenerateContent")
    assert [e.query for e in stream] == ["alt=sse"]


def test_the_key_goes_by_header_or_query_and_the_journal_masks_both() -> None:
    with emulator("gemini") as emu:  # no script: the model echoes
        check_keys(emu)


def check_keys(emu: Any) -> None:
    url = f"{emu.base_url}/v1beta/models/{MODEL}:generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert httpx.post(url, json=body).status_code == 403
    refused = httpx.post(url, json=body).json()["error"]
    assert refused["status"] == "PERMISSION_DENIED"
    assert httpx.post(url, params={"key": "secret-in-query"}, json=body).status_code == 200
    assert httpx.post(url, headers={"x-goog-api-key": "secret-in-header"},
                      json=body).status_code == 200
    journal = json.dumps([e.to_dict() for e in emu.journal.entries()])
    assert "secret-in-query" not in journal and "secret-in-header" not in journal
    assert "key=***" in journal


def test_a_model_turn_sent_back_without_its_signature_is_refused(emu: Any) -> None:
    client = sdk(emu.base_url)
    contents, response = ask(client)
    model_turn = response.candidates[0].content  # type: ignore[index]
    assert model_turn is not None and model_turn.parts
    model_turn.parts[0].thought_signature = None  # a peer's bug: the signature dropped
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents=[*contents, model_turn,
                                                              answers(response)],
                                       config=config())
    assert caught.value.code == 400 and "thought_signature" in str(caught.value)
    model_turn.parts[0].thought_signature = b"forged"
    with pytest.raises(errors.ClientError, match="Corrupted thought signature"):
        client.models.generate_content(model=MODEL, contents=[*contents, model_turn,
                                                              answers(response)],
                                       config=config())
    assert emu.state.results_received() == []


@pytest.mark.parametrize("bug", ["collapsed", "empty name", "wrong id"])
def test_peers_bugs_in_function_responses_are_refused(emu: Any, bug: str) -> None:
    client = sdk(emu.base_url)
    contents, response = ask(client)
    reply = answers(response)
    assert reply.parts
    if bug == "collapsed":  # parallel results folded into one part
        reply.parts = reply.parts[:1]
    elif bug == "empty name":
        reply.parts[1].function_response.name = ""  # type: ignore[union-attr]
    else:
        reply.parts[1].function_response.id = "nope"  # type: ignore[union-attr]
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(
            model=MODEL, contents=[*contents, response.candidates[0].content, reply],  # type: ignore[index, list-item]
            config=config())
    assert caught.value.code == 400
    assert emu.state.results_received() == []


@pytest.mark.parametrize("declaration", [
    {"name": "1bad"},
    {"name": "f", "parameters": {"type": "OBJECT", "properties": {}}},
    {"name": "f", "parameters": {"type": "OBJECT", "properties": {"a": {
        "type": "STRING", "frobnicate": 1}}}},
    {"name": "f", "parameters": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
     "parametersJsonSchema": {"type": "object"}},
])
def test_declarations_are_checked_as_the_api_checks_them(emu: Any,
                                                         declaration: dict[str, Any]) -> None:
    url = f"{emu.base_url}/v1beta/models/{MODEL}:generateContent"
    answer = httpx.post(url, headers={"x-goog-api-key": "k"}, json={
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [declaration]}]})
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_mode_none_calls_nothing(emu: Any) -> None:
    client = sdk(emu.base_url)
    cfg = config()
    cfg.tool_config = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.NONE))
    response = client.models.generate_content(model=MODEL, contents="Weather?", config=cfg)
    assert not response.function_calls and response.text == "Answer: []"


def test_allowed_function_names_bound_the_script(emu: Any) -> None:
    client = sdk(emu.base_url)
    cfg = config()
    cfg.tool_config = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["create_ticket"]))
    with pytest.raises(errors.ClientError, match="outside allowedFunctionNames"):
        client.models.generate_content(model=MODEL, contents="Weather?", config=cfg)
    cfg.tool_config.function_calling_config.allowed_function_names = ["get_weather"]  # type: ignore[union-attr]
    assert len(client.models.generate_content(model=MODEL, contents="Weather?",
                                              config=cfg).function_calls or []) == 2


def test_calls_without_ids_and_float_numbers() -> None:
    with emulator("gemini", script=PARALLEL, faults={"omit_call_ids": True},
                  number_style="float") as emu:
        client = sdk(emu.base_url)
        contents, response = ask(client)
        calls = response.function_calls or []
        assert [c.id for c in calls] == [None, None]
        assert calls[0].args == {"location": "Paris", "days": 2.0}
        final = client.models.generate_content(
            model=MODEL, contents=[*contents, response.candidates[0].content,  # type: ignore[index, list-item]
                                   answers(response)], config=config())
        assert final.text == 'Answer: ["sunny in Paris", "sunny in Lima"]'


@pytest.mark.parametrize(("where", "value"), [
    (("functionCall", "id"), ["a"]), (("functionCall", "args"), "x"),
    (("functionCall", "name"), ""), (("functionCall",), 1)])
def test_malformed_parts_sent_back_are_refused_not_crashed_on(
        emu: Any, where: tuple[str, ...], value: Any) -> None:
    client = sdk(emu.base_url)
    _, response = ask(client)
    model = response.candidates[0].content.model_dump(mode="json", by_alias=True,  # type: ignore[index, union-attr]
                                                      exclude_none=True)
    node = model["parts"][0]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    reply = answers(response).model_dump(mode="json", by_alias=True, exclude_none=True)
    answer = httpx.post(f"{emu.base_url}/v1/models/{MODEL}:generateContent",
                        headers={"x-goog-api-key": "k"},
                        json={"contents": [{"role": "user", "parts": [{"text": "Weather?"}]},
                                           model, reply]})
    assert answer.status_code == 400 and answer.json()["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(("parts", "message"), [
    ({"inlineData": {}}, "parts': expected a list"),
    ([{"inlineData": {"mimeType": "image/png"}}], "parts[0].inlineData.data"),
    ([{"inlineData": {"mimeType": "image/png", "data": "%%"}}], "Base64 decoding failed"),
    ([{"fileData": {"fileUri": "https://x/a.png"}}], "parts[0].fileData.mimeType"),
    ([{"text": "x"}], "one of inlineData, fileData"),
])
def test_function_response_parts_are_checked_as_the_api_checks_them(
        emu: Any, parts: Any, message: str) -> None:
    client = sdk(emu.base_url)
    _, response = ask(client)
    model = response.candidates[0].content.model_dump(mode="json", by_alias=True,  # type: ignore[index, union-attr]
                                                      exclude_none=True)
    reply = answers(response).model_dump(mode="json", by_alias=True, exclude_none=True)

    def send(parts: Any) -> httpx.Response:
        reply["parts"][0]["functionResponse"]["parts"] = parts
        return httpx.post(f"{emu.base_url}/v1/models/{MODEL}:generateContent",
                          headers={"x-goog-api-key": "k"},
                          json={"contents": [{"role": "user", "parts": [{"text": "Weather?"}]},
                                             model, reply]})

    refused = send(parts)
    assert refused.status_code == 400 and message in refused.json()["error"]["message"], (
        refused.text)
    assert emu.state.results_received() == []
    taken = send([{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}])
    assert taken.status_code == 200, taken.text
