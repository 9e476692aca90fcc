"""Translation on recorded payloads: tools, tool_calls (completions, messages, streamed
deltas), tool messages, tool_choice, and the conversation keyword's store keys."""

from __future__ import annotations

import json
from typing import Any

import pytest
from chat_support import D, payload
from openai.types.chat.chat_completion import ChatCompletion
from openai.types.chat.chat_completion_chunk import ChatCompletionChunk
from openai.types.chat.chat_completion_message import ChatCompletionMessage
from openai.types.chat.chat_completion_tool_choice_option_param import (
    ChatCompletionToolChoiceOptionParam,
)
from openai.types.chat.chat_completion_tool_union_param import ChatCompletionToolUnionParam
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai_sdk_types import check_model, check_param

import toolbridge
from toolbridge import (
    Content,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.testing import check_dialect
from toolbridge_openai_chat import ChatCorrelation, OpenAIChatDialect, assemble_chunks

dialect = toolbridge.get_dialect(D)
COMPLETION = "openai-chat.completion.tool-calls.response"


def _history() -> list[dict[str, Any]]:
    """The recorded request's messages up to and including the assistant message."""
    return payload("openai-chat.tool-messages.request")["messages"][:3]


def test_registered_through_the_entry_point() -> None:
    assert isinstance(dialect, OpenAIChatDialect)
    assert dialect.limits.max_tools == 128 and not dialect.limits.content_parts


def test_samples_are_what_the_sdk_expects() -> None:
    assert check_model(payload(COMPLETION), ChatCompletion) == []
    assert all(check_model(c, ChatCompletionChunk) == []
               for c in payload("openai-chat.stream.tool-call.chunks"))
    assert check_param(payload("openai-chat.tools"), list[ChatCompletionToolUnionParam]) == []


def test_conformance() -> None:
    tools = [ToolDefinition(name="get_weather"), ToolDefinition(name="get_time")]
    check_dialect(dialect, tools, payload(COMPLETION))


# ---------------------------------------------------------------------- definitions
def test_rendered_tools_validate_against_the_sdk(toolbox: toolbridge.Toolbox) -> None:
    rendered = toolbox.definitions(D)
    assert check_param(rendered, list[ChatCompletionToolUnionParam]) == []
    weather, clock = (t["function"] for t in rendered)
    assert weather["strict"] is True and set(weather["parameters"]["required"]) == {
        "location", "unit"}
    assert clock["strict"] is True  # strict=None and lossless


def test_not_lossless_is_sent_as_declared_without_strict() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    [wire] = dialect.render_tools([ToolDefinition(name="t", parameters=schema)]).definitions
    assert wire["function"]["parameters"] == schema and "strict" not in wire["function"]


def test_tools_read_back_and_render_unchanged() -> None:
    wire = [*payload("openai-chat.tools"), {"type": "custom", "custom": {"name": "c"}}]
    tools = dialect.read_tools(wire)
    assert [(t.name, t.strict) for t in tools] == [("get_weather", True), ("get_time", None)]
    assert dialect.render_tools(tools).definitions == wire[:2]
    assert dialect.read_tools({"tools": wire[:1]})[0].name == "get_weather"


@pytest.mark.parametrize("tools, field", [
    ("x", "tools"), ([3], "tools[0]"), ([{"type": "function"}], "tools[0].function"),
    ([{"type": "function", "function": {"name": 1}}], "tools[0].function.name"),
    ([{"type": "function", "function": {"name": "a", "parameters": []}}],
     "tools[0].function.parameters"),
])
def test_malformed_tool_lists_name_the_field(tools: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_tools(tools)
    assert info.value.field == field


@pytest.mark.parametrize("choice", [ToolChoice(), ToolChoice(mode="none"),
                                    ToolChoice(mode="required"), ToolChoice.named("get_time")])
def test_tool_choice_fits_the_sdk(choice: ToolChoice) -> None:
    assert check_param(dialect.render_tool_choice(choice),
                       ChatCompletionToolChoiceOptionParam) == []


# ---------------------------------------------------------------------- pending calls
def test_reads_a_completion_a_message_and_a_conversation() -> None:
    completion = payload(COMPLETION)
    message = completion["choices"][0]["message"]
    for source in (completion, message, {"messages": _history()}):
        calls = dialect.read_calls(source).calls
        assert [(c.id, c.name) for c in calls] == [("call_w1", "get_weather"),
                                                   ("call_t1", "get_time")]
        assert calls[0].arguments == {"location": "Paris", "unit": "celsius"}
        assert (calls[0].conversation, calls[0].turn) == ("", "")  # nothing is stored
    positioned = dialect.read_calls({"messages": _history()}).calls[0].correlation
    assert positioned == ChatCorrelation(tool_call_id="call_w1", position=2)


def test_reads_sdk_objects(toolbox: toolbridge.Toolbox) -> None:
    completion = ChatCompletion.model_validate(payload(COMPLETION))
    for source in (completion, completion.choices[0].message):
        body = toolbox.handle(D, source)
        assert [m["tool_call_id"] for m in body["messages"]] == ["call_w1", "call_t1"]


def test_assembled_stream_deltas_are_a_completion() -> None:
    completion = assemble_chunks(payload("openai-chat.stream.tool-call.chunks"))
    assert check_model(completion, ChatCompletion) == []
    calls = dialect.read_calls(completion).calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_w1", "get_weather", {"location": "Paris", "unit": "celsius"}),
        ("call_t1", "get_time", {"tz": "Europe/Paris"})]


def test_repeated_ids_and_names_in_fragments_are_not_concatenated() -> None:
    def chunk(**call: Any) -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]},
                             "finish_reason": None}]}
    chunks = [chunk(id="call_1", type="function", function={"name": "f", "arguments": "{"}),
              chunk(id="call_1", function={"name": "f", "arguments": "}"}),
              {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
              {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                        "total_tokens": 2}}]
    [call] = assemble_chunks(chunks)["choices"][0]["message"]["tool_calls"]
    assert call == {"id": "call_1", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}


def test_a_lone_chunk_is_not_a_payload() -> None:
    with pytest.raises(WireFormatError, match="assemble"):
        dialect.read_calls(payload("openai-chat.stream.tool-call.chunks")[0])


@pytest.mark.parametrize("chunks, field", [
    ([3], "chunks[0]"), ([{"choices": "x"}], "chunks[0].choices"),
    ([{"choices": [{"delta": {"tool_calls": [{"function": {}}]}}]}],
     "chunks[0].choices[0].delta.tool_calls[0].index"),
    ([{"choices": [{"delta": {"tool_calls": [{"index": 0, "id": 5}]}}]}],
     "chunks[0].choices[0].delta.tool_calls[0].id"),
    ([{"choices": [{"delta": {"content": 1}}]}], "chunks[0].choices[0].delta.content"),
])
def test_malformed_chunks_name_the_field(chunks: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        assemble_chunks(chunks)
    assert info.value.field == field


def test_a_reply_without_tool_calls_has_none_and_custom_calls_are_unhandled() -> None:
    assert dialect.read_calls({"role": "assistant", "content": "hi"}).calls == ()
    custom = {"id": "c1", "type": "custom", "custom": {"name": "sql", "input": "select 1"}}
    message = {**payload(COMPLETION)["choices"][0]["message"]}
    message["tool_calls"] = [*message["tool_calls"], custom]
    pending = dialect.read_calls(message)
    assert len(pending.calls) == 2 and pending.unhandled == (custom,)


@pytest.mark.parametrize("source, field", [
    ({"choices": []}, "choices"), ({"choices": [{"message": 1}]}, "choices[0].message"),
    ({"messages": [{"role": "user", "content": "x"}]}, "messages[0].role"),
    ({"role": "user"}, "role"), ({"unrelated": 1}, "choices"),
    ({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]},
     "tool_calls[0].id"),
])
def test_malformed_payloads_name_the_field(source: Any, field: str) -> None:
    with pytest.raises(WireFormatError) as info:
        dialect.read_calls(source)
    assert (info.value.dialect, info.value.field) == (D, field)


def test_bad_argument_strings_fail_only_their_own_call(toolbox: toolbridge.Toolbox) -> None:
    completion = payload(COMPLETION)
    completion["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] = (
        '{"a":' * 1000 + "1" + "}" * 1000)
    first, second = toolbox.handle(D, completion)["messages"]
    assert json.loads(first["content"])["location"] == "Paris"
    assert "nest more than 200 levels" in json.loads(second["content"])["error"]


# ---------------------------------------------------------------------- results
def test_tool_messages_complete_the_recorded_request(toolbox: toolbridge.Toolbox) -> None:
    sample = payload("openai-chat.tool-messages.request")
    body = toolbox.handle(D, payload(COMPLETION))
    request = {**sample, "messages": _history() + body["messages"]}
    assert check_param(request, CompletionCreateParamsNonStreaming) == []
    assert [m["tool_call_id"] for m in body["messages"]] == ["call_w1", "call_t1"]
    assert json.loads(body["messages"][0]["content"])["location"] == "Paris"


def test_content_and_error_results() -> None:
    weather, clock = dialect.read_calls(payload(COMPLETION)).calls
    text = Content(parts=(TextPart(text="a"), TextPart(text="b")))
    image = Content(parts=(TextPart(text="radar"), ImagePart(url="https://x/y.png")))
    body = dialect.write_results([ToolResult.ok(weather, text), ToolResult.ok(clock, image)])
    assert body["messages"][0]["content"] == [{"type": "text", "text": "a"},
                                              {"type": "text", "text": "b"}]
    assert body["messages"][1]["content"] == "radar\n[image: https://x/y.png]"
    failed = dialect.write_results([ToolResult.failed(clock, "down")])
    assert failed["messages"][0]["content"] == '{"error": "down"}'
    document = Content(parts=(DocumentPart(data="JVBERi0=", title="q3.pdf"),))
    described = dialect.write_results([ToolResult.ok(weather, document)])
    assert described["messages"][0]["content"] == "[document: q3.pdf (application/pdf)]"
    request = {"model": "m", "messages": _history() + body["messages"]}
    assert check_param(request, CompletionCreateParamsNonStreaming) == []


# ---------------------------------------------------------------------- store keys
def _counting_toolbox() -> tuple[toolbridge.Toolbox, list[str]]:
    box, runs = toolbridge.Toolbox(), []

    @box.tool(side_effects=True)
    def get_time(tz: str) -> str:
        """Time."""
        runs.append(tz)
        return f"noon in {tz}"

    return box, runs


def _round(call_id: str, tz: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": "get_time", "arguments": json.dumps({"tz": tz})}}]}


def test_with_a_conversation_results_are_stored_by_position() -> None:
    box, runs = _counting_toolbox()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "times?"}]
    messages.append(_round("call_0", "UTC"))  # servers that reuse ids: call_0 every round
    first = box.handle(D, {"messages": messages}, conversation="conv-1")
    again = box.handle(D, {"messages": messages}, conversation="conv-1")  # a redelivery
    assert first == again and runs == ["UTC"]
    messages += first["messages"]
    messages.append(_round("call_0", "Asia/Tokyo"))  # same id, next position
    second = box.handle(D, {"messages": messages}, conversation="conv-1")
    assert runs == ["UTC", "Asia/Tokyo"] and "Tokyo" in second["messages"][0]["content"]
    [call] = dialect.read_calls_in({"messages": messages}, "conv-1").calls
    assert (call.conversation, call.turn, call.id) == ("conv-1", "3", "call_0")


def test_without_a_conversation_nothing_is_stored() -> None:
    box, runs = _counting_toolbox()
    completion = {"choices": [{"index": 0, "finish_reason": "tool_calls",
                               "message": _round("call_0", "UTC")}]}
    box.handle(D, completion)
    box.handle(D, completion)
    assert runs == ["UTC", "UTC"]


def test_a_completion_in_a_conversation_is_keyed_by_its_id() -> None:
    box, runs = _counting_toolbox()
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": _round("call_0", "UTC")}]}
    first = box.handle(D, completion, conversation="conv-1")
    assert box.handle(D, completion, conversation="conv-1") == first  # a redelivery
    assert runs == ["UTC"]
    later = {**completion, "id": "chatcmpl-2"}  # call_0 again, in the next completion
    later["choices"] = [{**completion["choices"][0], "message": _round("call_0", "Asia/Tokyo")}]
    box.handle(D, later, conversation="conv-1")
    assert runs == ["UTC", "Asia/Tokyo"]
    [call] = dialect.read_calls_in(later, "conv-1").calls
    assert (call.conversation, call.turn, call.id) == ("conv-1", "chatcmpl-2", "call_0")


def test_a_conversation_needs_to_know_the_turn() -> None:
    box, _ = _counting_toolbox()
    with pytest.raises(UsageError, match="not a bare message"):
        box.handle(D, _round("call_0", "UTC"), conversation="conv-1")
    with pytest.raises(UsageError, match="takes no conversation"):
        box.handle("openai-agents", {"id": "s", "required_actions": []}, conversation="c")


def test_sdk_message_objects_go_in_the_conversation(toolbox: toolbridge.Toolbox) -> None:
    message = ChatCompletion.model_validate(payload(COMPLETION)).choices[0].message
    assert isinstance(message, ChatCompletionMessage)
    history: list[Any] = [*_history()[:2], message.model_dump(exclude_none=True)]
    body = toolbox.handle(D, {"messages": history}, conversation="c")
    assert [m["tool_call_id"] for m in body["messages"]] == ["call_w1", "call_t1"]
