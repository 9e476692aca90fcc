"""The official anthropic SDK against the emulator, unmodified: create and stream, answered by
a Toolbox; the emulator refuses what the API refuses, in the API's error shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from messages_support import PARALLEL, D

import toolbridge
from toolbridge import DocumentPart, TextPart
from toolbridge.testing import emulator

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def emu() -> Iterator[Any]:
    with emulator(D, script=PARALLEL) as running:
        yield running


def client(emu: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-test", max_retries=0)


def ask(sdk: anthropic.Anthropic, toolbox: toolbridge.Toolbox, messages: list[Any],
        **extra: Any) -> Any:
    return sdk.messages.create(model=MODEL, max_tokens=256, messages=messages,
                               tools=toolbox.definitions(D), **extra)


def test_a_turn_with_parallel_tool_use(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    first = [{"role": "user", "content": "Weather in Paris and Lima?"}]
    message = ask(sdk, toolbox, first)
    assert message.stop_reason == "tool_use"
    assert [b.input for b in message.content] == [{"city": "Paris"},
                                                  {"city": "Lima", "unit": "f"}]
    answer = toolbox.handle(D, message)["messages"]
    history = [*first, {"role": "assistant", "content": message.content}, *answer]
    final = ask(sdk, toolbox, history)
    assert final.stop_reason == "end_turn"
    assert '"temp":70' in final.content[0].text.replace('\\"', '"')
    assert emu.state.messages_received() == {next(iter(emu.state.messages_received())): [
        "Weather in Paris and Lima?"]}
    assert emu.state.results_received() == [b.id for b in message.content]


def test_the_sdk_stream_assembles_tool_input_from_json_deltas(
        emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    with sdk.messages.stream(model=MODEL, max_tokens=256, tools=toolbox.definitions(D),
                             messages=[{"role": "user", "content": "hi"}]) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "input_json" in kinds or "content_block_delta" in kinds
    assert [b.input for b in message.content] == [{"city": "Paris"},
                                                  {"city": "Lima", "unit": "f"}]
    assert toolbridge.get_dialect(D).read_calls(message.model_dump()).calls[1].arguments == {
        "city": "Lima", "unit": "f"}


def test_a_tool_use_without_its_tool_result_is_refused(
        emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    first = [{"role": "user", "content": "Weather?"}]
    message = ask(sdk, toolbox, first)
    one = toolbox.handle(D, message)["messages"][0]
    one["content"] = one["content"][:1]
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(sdk, toolbox, [*first, {"role": "assistant", "content": message.content}, one])
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert "`tool_use` ids were found without `tool_result` blocks" in str(caught.value)
    assert message.content[1].id in str(caught.value)
    # a user message with no result at all: the same refusal
    with pytest.raises(anthropic.BadRequestError, match="without `tool_result`"):
        ask(sdk, toolbox, [*first, {"role": "assistant", "content": message.content},
                           {"role": "user", "content": "never mind"}])


def test_results_after_text_and_results_for_no_call_are_refused(
        emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    first = [{"role": "user", "content": "Weather?"}]
    message = ask(sdk, toolbox, first)
    answer = toolbox.handle(D, message)["messages"][0]
    asked = [*first, {"role": "assistant", "content": message.content}]
    late = {"role": "user", "content": [{"type": "text", "text": "here"}, *answer["content"]]}
    with pytest.raises(anthropic.BadRequestError, match="must come first"):
        ask(sdk, toolbox, [*asked, late])
    stray = {"role": "user", "content": [*answer["content"], {
        "type": "tool_result", "tool_use_id": "toolu_01nothing", "content": "x"}]}
    with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id`"):
        ask(sdk, toolbox, [*asked, stray])
    assert emu.state.results_received() == []  # nothing refused was taken


def test_tools_and_requests_the_api_refuses(emu: Any) -> None:
    sdk = client(emu)
    hi = [{"role": "user", "content": "hi"}]
    loose = {"name": "f", "strict": True, "input_schema": {
        "type": "object", "additionalProperties": False,
        "properties": {"n": {"type": "integer", "minimum": 1}}}}
    with pytest.raises(anthropic.BadRequestError, match="'minimum' is not supported"):
        sdk.messages.create(model=MODEL, max_tokens=9, messages=hi, tools=[loose])
    with pytest.raises(anthropic.BadRequestError, match="should match pattern"):
        sdk.messages.create(model=MODEL, max_tokens=9, messages=hi, tools=[
            {"name": "bad name", "input_schema": {"type": "object"}}])
    many = [{"name": f"t{i}", "strict": True, "input_schema": {
        "type": "object", "additionalProperties": False,
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}} for i in range(13)]
    with pytest.raises(anthropic.BadRequestError, match="compiled grammar is too large"):
        sdk.messages.create(model=MODEL, max_tokens=9, messages=hi, tools=many)
    body = {"model": MODEL, "max_tokens": 9, "messages": hi}
    keyless = httpx.post(f"{emu.base_url}/v1/messages", json=body,
                         headers={"anthropic-version": "2023-06-01"})
    assert keyless.status_code == 401
    assert keyless.json()["error"]["type"] == "authentication_error"
    versionless = httpx.post(f"{emu.base_url}/v1/messages", json=body,
                             headers={"x-api-key": "sk-ant-test"})
    assert versionless.status_code == 400 and "anthropic-version" in versionless.text
    tokenless = httpx.post(f"{emu.base_url}/v1/messages", json={"model": MODEL, "messages": hi},
                           headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"})
    assert (tokenless.status_code, tokenless.json()["error"]["message"]) == (
        400, "max_tokens: Field required")
    journal = emu.journal.entries()
    assert journal and all("sk-ant-test" not in str(e.to_dict()) for e in journal)


def test_a_parallel_round_under_disable_parallel_tool_use_is_a_script_error(
        emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    hi = [{"role": "user", "content": "hi"}]
    with pytest.raises(anthropic.BadRequestError, match="disable_parallel_tool_use"):
        ask(sdk, toolbox, hi, tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    assert ask(sdk, toolbox, hi, tool_choice={"type": "none"}).stop_reason == "end_turn"


def document_toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def get_weather(city: str, unit: str = "c") -> list[Any]:
        """The forecast as a PDF."""
        return [TextPart(text=f"{city} forecast"),
                DocumentPart(data="JVBERi0xLjQ=", title=f"{city}.pdf")]

    return box


def test_documents_in_results_reach_the_emulator_through_the_sdk(emu: Any) -> None:
    box, sdk = document_toolbox(), client(emu)
    first = [{"role": "user", "content": "Forecasts for Paris and Lima?"}]
    message = ask(sdk, box, first)
    answer = box.handle(D, message)["messages"]
    final = ask(sdk, box, [*first, {"role": "assistant", "content": message.content}, *answer])
    assert final.stop_reason == "end_turn" and "Lima forecast" in final.content[0].text
    assert emu.state.results_received() == [b.id for b in message.content]
    sent = emu.state.journal.entries("POST")[-1].body["messages"][-1]["content"]
    assert [r["content"][1] for r in sent] == [
        {"type": "document", "title": f"{city}.pdf", "source": {
            "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}}
        for city in ("Paris", "Lima")]


def test_a_document_the_api_cannot_read_is_refused(emu: Any, toolbox: toolbridge.Toolbox) -> None:
    sdk = client(emu)
    first = [{"role": "user", "content": "Weather?"}]
    message = ask(sdk, toolbox, first)
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "image/png",
                                        "data": "AAAA"}}]} for b in message.content]
    history = [*first, {"role": "assistant", "content": message.content},
               {"role": "user", "content": results}]
    with pytest.raises(anthropic.BadRequestError, match="media_type"):
        ask(sdk, toolbox, history)
