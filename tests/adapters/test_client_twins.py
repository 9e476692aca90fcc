"""Every adapter's sync and async clients are one API sent two ways: for every public method,
the same requests (method, URL, headers, body, timeout) in the same order, and the same result.

Each client talks to an ``httpx.MockTransport`` that records what it is sent and answers every
call (JSON, or an event stream when one is asked for). A public method of a sync client that no
case below calls fails `test_every_method_is_compared`: a new method is compared from the start.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from toolbridge import ToolDefinition
from toolbridge.http import RetryPolicy
from toolbridge_anthropic_messages.client import AsyncMessagesClient, MessagesClient
from toolbridge_anthropic_sessions.client import AsyncSessionsClient, SessionsClient
from toolbridge_gemini.client import AsyncGeminiClient, GeminiClient
from toolbridge_gemini_interactions.client import AsyncInteractionsClient, InteractionsClient
from toolbridge_google_ces.client import AsyncCesClient, CesClient
from toolbridge_openai_agents.client import AgentsClient, AsyncAgentsClient
from toolbridge_openai_assistants.client import AssistantsClient, AsyncAssistantsClient
from toolbridge_openai_chat.client import AsyncChatClient, ChatClient
from toolbridge_openai_responses.client import AsyncResponsesClient, ResponsesClient

FAST = RetryPolicy(backoff=0.001, max_delay=0.01)
LIMIT = 5
"""Events taken from a stream: all of the others', `follow_session`'s (it never ends) across
two reconnects."""
ANSWER = {"id": "obj_1", "object": "thing", "status": "completed",
          "data": [{"id": "item_1", "object": "thing"}],
          "has_more": False, "tools": [], "choices": [
              {"index": 0, "message": {"role": "assistant", "content": "hi"},
               "finish_reason": "stop"}]}
WEATHER = ToolDefinition(name="get_weather", description="Weather for a city.", parameters={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
WIRE_TOOL = {"type": "function", "name": "get_weather", "description": "Weather.",
             "parameters": {"type": "object", "properties": {}}}
LIFECYCLE = {"close", "aclose"}


def sse(*frames: tuple[str, Any]) -> bytes:
    out = ""
    for name, data in frames:
        out += (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
    return (out + "data: [DONE]\n\n").encode()


def chat_stream(request: httpx.Request) -> bytes:
    return sse(("", {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
                                  "finish_reason": "stop"}]}))


def messages_stream(request: httpx.Request) -> bytes:
    """A Messages stream (no ``[DONE]``: ``message_stop`` ends it)."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
    frames = [("message_start", {"type": "message_start", "message": message}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": "hi"}}),
              ("content_block_stop", {"type": "content_block_stop", "index": 0}),
              ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                 "usage": {"output_tokens": 2}}),
              ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in frames).encode()


def responses_stream(request: httpx.Request) -> bytes:
    """A create's stream breaks off after ``response.created`` (a background response); a
    re-attach brings the rest: `stream_response` recovers through ``attach``."""
    created = {"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_1", "status": "in_progress", "background": True}}
    if request.method == "POST":
        return f"data: {json.dumps(created)}\n\n".encode()
    return sse(("", created), ("", {"type": "response.completed", "sequence_number": 1,
                                    "response": {"id": "resp_1", "status": "completed",
                                                 "background": True, "output": []}}))


def assistants_stream(request: httpx.Request) -> bytes:
    return sse(("thread.run.created", {"id": "run_1", "object": "thread.run",
                                       "status": "queued"}),
               ("thread.run.completed", {"id": "run_1", "object": "thread.run",
                                         "status": "completed"}))


def agents_stream(request: httpx.Request) -> bytes:
    return sse(("", {"type": "agent.session.running", "event_id": "e1"}),
               ("", {"type": "agent.session.idle", "event_id": "e2"}))


def gemini_stream(request: httpx.Request) -> bytes:
    """``streamGenerateContent?alt=sse``: the reply text in two chunks, the last finished."""
    def chunk(text: str, finished: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
        if finished:
            candidate["finishReason"] = "STOP"
        return {"candidates": [candidate], "responseId": "r1"}

    return sse(("", chunk("h", False)), ("", chunk("i", True)))


def sessions_stream(request: httpx.Request) -> bytes:
    return sse(("session.status_running", {"type": "session.status_running", "id": "e1"}),
               ("session.status_idle", {"type": "session.status_idle", "id": "e2",
                                        "stop_reason": {"type": "end_turn"}}))


def interactions_stream(request: httpx.Request) -> bytes:
    """A create's stream breaks off after ``interaction.created``: `stream_interaction`
    reads the interaction back (``GET``)."""
    return sse(("interaction.created", {"event_type": "interaction.created",
                                        "interaction": {"id": "v1_1", "status": "in_progress"}}),
               ("step.start", {"event_type": "step.start", "index": 0,
                               "step": {"type": "model_output"}}))[:-len(b"data: [DONE]\n\n")]


def ces_stream(request: httpx.Request) -> bytes:
    raise AssertionError("CES has no streams")


@dataclass
class Recorder:
    """Records each request and answers it."""

    stream: Callable[[httpx.Request], bytes]
    sent: list[tuple[Any, ...]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        headers = tuple(sorted(
            (name, "<uuid>" if name == "idempotency-key" and len(value) == 36 else value)
            for name, value in request.headers.multi_items()))
        self.sent.append((request.method, str(request.url), headers, request.read(),
                          request.extensions.get("timeout")))
        if "text/event-stream" in request.headers.get("accept", ""):
            return httpx.Response(200, content=self.stream(request),
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=ANSWER)


@dataclass(frozen=True)
class Adapter:
    name: str
    sync: Callable[[httpx.Client], Any]
    asynchronous: Callable[[httpx.AsyncClient], Any]
    stream: Callable[[httpx.Request], bytes]
    cases: dict[str, tuple[tuple[Any, ...], dict[str, Any]]]
    local: frozenset[str] = frozenset()
    """Methods that send nothing (both clients inherit them)."""


SESSION = "projects/p/locations/l/apps/a/sessions/s1"
APP = "projects/p/locations/l/apps/a"
TOOL = f"{APP}/tools/get_weather"
PROJECT = "https://project.test/api/projects/p"


def responses_request() -> httpx.Request:
    return httpx.Request("GET", f"{PROJECT}/openai/v1/responses/resp_1?stream=true",
                         headers={"Accept": "text/event-stream"})


ADAPTERS = [
    Adapter("anthropic-messages",
            lambda http: MessagesClient(http_client=http, base_url="https://anthropic.test",
                                        api_key="k", retry=FAST),
            lambda http: AsyncMessagesClient(http_client=http, base_url="https://anthropic.test",
                                             api_key="k", retry=FAST),
            messages_stream, {
                "create": ((), {"model": "m", "max_tokens": 10, "stream": True,
                                "messages": [{"role": "user", "content": "hi"}]}),
                "stream": ((), {"model": "m", "max_tokens": 10, "messages": []}),
                "stream_message": ((), {"model": "m", "max_tokens": 10, "messages": []}),
            }),
    Adapter("openai-chat",
            lambda http: ChatClient(http_client=http, base_url="https://chat.test/v1",
                                    api_key="k", retry=FAST),
            lambda http: AsyncChatClient(http_client=http, base_url="https://chat.test/v1",
                                         api_key="k", retry=FAST),
            chat_stream, {
                "create": ((), {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                "stream": True}),
                "stream": ((), {"model": "m", "messages": []}),
                "stream_completion": ((), {"model": "m", "messages": []}),
            }),
    Adapter("gemini",
            lambda http: GeminiClient(http_client=http, base_url="https://gemini.test",
                                      api_key="k", retry=FAST),
            lambda http: AsyncGeminiClient(http_client=http, base_url="https://gemini.test",
                                           api_key="k", retry=FAST),
            gemini_stream, {
                "generate": (("gemini-2.5-flash",), {"contents": [
                    {"role": "user", "parts": [{"text": "hi"}]}]}),
                "stream": (("models/gemini-2.5-flash",), {"contents": []}),
                "stream_response": (("gemini-2.5-flash",), {"contents": []}),
            }),
    Adapter("google-ces",
            lambda http: CesClient(base_url="https://ces.test", token="t", http_client=http,
                                   retry=FAST),
            lambda http: AsyncCesClient(base_url="https://ces.test", token="t", http_client=http,
                                        retry=FAST),
            ces_stream, {
                "run_session": ((SESSION, {"inputs": [{"text": "hi"}]}), {}),
                "send_text": ((SESSION, "hi"), {}),
                "create_tool": ((APP, {"displayName": "w"}, "get_weather"), {}),
                "get_tool": ((TOOL,), {}),
                "list_tools": ((APP,), {}),
                "update_tool": ((TOOL, {"displayName": "w", "description": "d"}), {}),
                "delete_tool": ((TOOL,), {}),
                "sync_tools": (([WEATHER], APP), {}),
            }),
    Adapter("gemini-interactions",
            lambda http: InteractionsClient(http_client=http, base_url="https://gemini.test",
                                            api_key="k", retry=FAST, key_in_query=True),
            lambda http: AsyncInteractionsClient(http_client=http,
                                                 base_url="https://gemini.test", api_key="k",
                                                 retry=FAST, key_in_query=True),
            interactions_stream, {
                "create": ((), {"model": "m", "input": "hi", "tools": [WIRE_TOOL],
                                "stream": True}),
                "get": (("v1_1",), {}),
                "cancel": (("v1_1",), {}),
                "stream_interaction": ((), {"model": "m", "input": "hi"}),
            }),
    Adapter("openai-responses",
            lambda http: ResponsesClient(http_client=http, project_endpoint=PROJECT,
                                         token_provider=lambda: "tok", retry=FAST,
                                         agent="helper"),
            lambda http: AsyncResponsesClient(http_client=http, project_endpoint=PROJECT,
                                              token_provider=lambda: "tok", retry=FAST,
                                              agent="helper"),
            responses_stream, {
                "create": ((), {"model": "m", "input": "hi", "tools": [WIRE_TOOL]}),
                "retrieve": (("resp_1",), {}),
                "poll": (("resp_1",), {"timeout": 5}),
                "cancel": (("resp_1",), {}),
                "events": ((responses_request(),), {"idempotent": True}),
                "stream": ((), {"model": "m", "input": "hi"}),
                "attach": (("resp_1",), {"starting_after": 0}),
                "stream_response": ((), {"model": "m", "input": "hi", "background": True}),
                "create_conversation": (([{"type": "message", "role": "user",
                                           "content": str(i)} for i in range(25)],),
                                        {"metadata": {"k": "v"}}),
                "retrieve_conversation": (("conv_1",), {}),
                "add_items": (("conv_1", [{"type": "message", "role": "user",
                                           "content": "hi"}]), {}),
                "list_items": (("conv_1",), {"after": "item_1", "limit": 5}),
                "all_items": (("conv_1",), {}),
                "create_agent_version": (("helper",), {"definition": {"kind": "prompt"},
                                                       "description": "d"}),
                "list_agent_versions": (("helper",), {}),
                "delete_conversation": (("conv_1",), {}),
                "list_deployments": ((), {}),
            }),
    Adapter("openai-assistants",
            lambda http: AssistantsClient(http_client=http, retry=FAST,
                                          project_endpoint=PROJECT,
                                          azure_ad_token_provider=lambda: "tok"),
            lambda http: AsyncAssistantsClient(http_client=http, retry=FAST,
                                               project_endpoint=PROJECT,
                                               azure_ad_token_provider=lambda: "tok"),
            assistants_stream, {
                "create_assistant": ((), {"model": "m", "tools": [
                    {"type": "function", "function": {"name": "f"}}], "name": "a"}),
                "create_thread": ((), {"metadata": {"k": "v"}}),
                "create_message": (("th_1", "hi"), {}),
                "list_messages": (("th_1",), {"run_id": "run_1", "after": "m_1"}),
                "retrieve_assistant": (("asst_1",), {}),
                "retrieve_thread": (("th_1",), {}),
                "list_deployments": ((), {}),
                "create_run": (("th_1", "asst_1"), {"temperature": 0}),
                "stream_run": (("th_1", "asst_1"), {}),
                "retrieve_run": (("th_1", "run_1"), {}),
                "poll_run": (("th_1", "run_1"), {"timeout": 5}),
                "submit_tool_outputs": (("th_1", "run_1", {"tool_outputs": []}), {}),
                "stream_submit_tool_outputs": (("th_1", "run_1", {"tool_outputs": []}), {}),
                "cancel_run": (("th_1", "run_1"), {}),
                "iterate": (("/threads/th_1/messages", "list messages"), {}),
            }, local=frozenset({"poll_delay", "seconds_left", "can_finish"})),
    Adapter("openai-agents",
            lambda http: AgentsClient(http_client=http, api_key="k", retry=FAST,
                                      base_url="https://agents.test/v1", organization="o"),
            lambda http: AsyncAgentsClient(http_client=http, api_key="k", retry=FAST,
                                           base_url="https://agents.test/v1",
                                           organization="o"),
            agents_stream, {
                "retrieve_session": (("sess_1",), {}),
                "create_session": (([WEATHER],), {"input": "hi", "model": "m",
                                                  "metadata": {"k": "v"}}),
                "create_session_stream": (([WIRE_TOOL],), {"input": "hi"}),
                "update_tools": (("sess_1", [WEATHER]), {}),
                "send_events": (("sess_1", [{"type": "agent.session.input.cancel"}]),
                                {"idempotency_key": "key-1"}),
                "submit_results": (("sess_1", {"events": [
                    {"type": "agent.session.input.tool_result", "call_id": "c1",
                     "output": "ok"}]}), {}),
                "send_message": (("sess_1", "hi"), {}),
                "cancel": (("sess_1",), {}),
                "list_sessions": ((), {"metadata": {"k": "v"}, "after": "sess_0"}),
                "list_items": (("sess_1",), {"limit": 5}),
                "stream_events": (("sess_1",), {}),
                "follow_session": (("sess_1",), {}),
                "create_agent": ((), {"model": "m", "name": "a"}),
                "retrieve_agent": (("agent_1",), {}),
                "list_agents": ((), {"order": "asc"}),
            }),
    Adapter("anthropic-sessions",
            lambda http: SessionsClient(http_client=http, api_key="k", retry=FAST,
                                        base_url="https://anthropic.test"),
            lambda http: AsyncSessionsClient(http_client=http, api_key="k", retry=FAST,
                                             base_url="https://anthropic.test"),
            sessions_stream, {
                "create_agent": (("a", "m", [WEATHER]), {"system": "s"}),
                "create_environment": (("e",), {}),
                "create_session": (("agent_1", "env_1"), {"metadata": {"k": "v"},
                                                          "title": "t"}),
                "retrieve_session": (("sesn_1",), {}),
                "list_events": (("sesn_1",), {"page": "2", "limit": 5, "order": "desc"}),
                "all_events": (("sesn_1",), {}),
                "send_events": (("sesn_1", [{"type": "user.interrupt"}]), {}),
                "send_message": (("sesn_1", "hi"), {}),
                "submit_results": (("sesn_1", {"events": [
                    {"type": "user.custom_tool_result", "custom_tool_use_id": "sevt_1",
                     "content": [{"type": "text", "text": "ok"}]}]}), {}),
                "stream_events": (("sesn_1",), {}),
            }),
]
IDS = [a.name for a in ADAPTERS]


def public_methods(cls: type) -> set[str]:
    return {name for name, member in inspect.getmembers(cls, callable)
            if not name.startswith("_") and name not in LIFECYCLE}


def taken(result: Any) -> Any:
    if isinstance(result, (dict, list)) or result is None or not hasattr(result, "__iter__"):
        return result
    events = list(itertools.islice(iter(result), LIMIT))
    result.close()
    return events


async def ataken(result: Any) -> Any:
    if inspect.isawaitable(result):
        result = await result
    if not hasattr(result, "__aiter__"):
        return result
    events = []
    async for event in result:
        events.append(event)
        if len(events) == LIMIT:
            break
    await result.aclose()
    return events


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_every_method_is_compared(adapter: Adapter) -> None:
    sync_client = adapter.sync(httpx.Client(transport=httpx.MockTransport(Recorder(
        adapter.stream))))
    sync_methods = public_methods(type(sync_client))
    async_methods = public_methods(type(adapter.asynchronous(httpx.AsyncClient())))
    assert sync_methods - set(adapter.cases) - adapter.local == set()
    assert async_methods == sync_methods
    for name in adapter.local:
        assert getattr(type(sync_client), name) is getattr(type(
            adapter.asynchronous(httpx.AsyncClient())), name)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=IDS)
def test_the_twins_take_the_same_parameters(adapter: Adapter) -> None:
    sync_type = type(adapter.sync(httpx.Client()))
    async_type = type(adapter.asynchronous(httpx.AsyncClient()))
    for name in adapter.cases:
        assert (inspect.signature(getattr(sync_type, name)).parameters
                == inspect.signature(getattr(async_type, name)).parameters), name


CASES = [(a, name) for a in ADAPTERS for name in a.cases]


@pytest.mark.parametrize(("adapter", "method"), CASES,
                         ids=[f"{a.name}.{name}" for a, name in CASES])
async def test_sync_and_async_send_the_same_requests(adapter: Adapter, method: str) -> None:
    args, kwargs = adapter.cases[method]
    sync_sent, async_sent = Recorder(adapter.stream), Recorder(adapter.stream)
    with httpx.Client(transport=httpx.MockTransport(sync_sent)) as http:
        sync_result = taken(getattr(adapter.sync(http), method)(*args, **kwargs))
    async with httpx.AsyncClient(transport=httpx.MockTransport(async_sent)) as ahttp:
        async_result = await ataken(getattr(adapter.asynchronous(ahttp), method)(*args,
                                                                               **kwargs))
    assert sync_sent.sent, f"{method} sent nothing"
    assert async_sent.sent == sync_sent.sent
    assert async_result == sync_result
    if method == "follow_session":
        assert [e["event_id"] for e in sync_result] == ["resync-1", "e1", "e2", "resync-2",
                                                        "resync-3"]
