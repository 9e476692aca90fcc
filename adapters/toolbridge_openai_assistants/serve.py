"""The serve loop: drive a run from ``requires_action`` to a final state through a Toolbox."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from toolbridge import (
    BackendError,
    ToolChoice,
    ToolResult,
    Transcript,
    UsageError,
    get_dialect,
)

from .client import (
    AsyncAssistantsClient,
    RunExpiredError,
    StreamEvent,
    StreamInterruptedError,
    expired_error,
)
from .wire import ACTIVE_STATUSES, DIALECT

__all__ = ["arun_conversation", "aserve_from_options", "aserve_run", "run_conversation",
           "serve_run"]

log = logging.getLogger("toolbridge.openai_assistants")

CLIENT_OPTIONS = frozenset({"api_key", "base_url", "azure_endpoint", "api_version",
                            "azure_ad_token_provider", "retry", "timeout", "poll_interval",
                            "expiry_margin", "http_client"})
"""Options of `serve_run` / `run_conversation` / ``aserve`` that configure the client."""


async def _follow(events: AsyncIterator[StreamEvent], client: AsyncAssistantsClient,
                  thread_id: str, run_id: str | None) -> dict[str, Any]:
    """The last run state an event stream reported; after a broken stream, read the run."""
    last: dict[str, Any] | None = None
    try:
        async for name, data in events:
            if (name.startswith("thread.run.") and not name.startswith("thread.run.step.")
                    and isinstance(data, dict)):
                last = data
    except StreamInterruptedError as exc:
        known = last["id"] if last is not None else run_id
        if known is None:
            raise
        log.warning("%s; reading run %s instead", exc, known)
        return await client.retrieve_run(thread_id, known)
    if last is None:
        if run_id is None:
            raise BackendError("openai-assistants: the run stream carried no run event")
        return await client.retrieve_run(thread_id, run_id)
    return last


def _estimate(toolbox: Any, name: str) -> float | None:
    if name not in toolbox:
        return None
    timeout = toolbox.get(name).timeout
    value = timeout if timeout is not None else toolbox.timeout
    return float(value) if value is not None else None


def _only(run: Mapping[str, Any], ids: set[str]) -> dict[str, Any]:
    """A copy of ``run`` whose required action lists only the calls in ``ids``."""
    trimmed = copy.deepcopy(dict(run))
    calls = trimmed["required_action"]["submit_tool_outputs"]["tool_calls"]
    trimmed["required_action"]["submit_tool_outputs"]["tool_calls"] = [
        c for c in calls if c.get("id") in ids]
    return trimmed


async def answer_run(toolbox: Any, client: AsyncAssistantsClient, run: Mapping[str, Any],
                     transcript: Transcript | None = None, **context: Any) -> dict[str, Any]:
    """The ``submit_tool_outputs`` body for every call ``run`` waits on.

    Calls go through ``toolbox.ahandle`` (store, limits, side-effect safety); a handler whose
    timeout would end inside the client's ``expiry_margin`` before ``expires_at`` is not
    started and answers an error instead.
    """
    dialect = get_dialect(DIALECT)
    calls = dialect.read_calls(run).calls
    late = [c for c in calls if not client.can_finish(run, _estimate(toolbox, c.name))]
    if transcript is not None:
        wire_calls = {c.get("id"): c for c in
                      run["required_action"]["submit_tool_outputs"]["tool_calls"]}
        for call in calls:
            shown = call.raw_arguments or json.dumps(call.arguments)
            transcript.add("call", f"{call.name}({shown})", dict(wire_calls[call.id]))
    if not late:
        body: dict[str, Any] = await toolbox.ahandle(dialect, run, **context)
    else:
        outputs: dict[str, Any] = {}
        startable = {c.id for c in calls} - {c.id for c in late}
        if startable:
            part = await toolbox.ahandle(dialect, _only(run, startable), **context)
            outputs.update((o["tool_call_id"], o) for o in part["tool_outputs"])
        left = client.seconds_left(run) or 0.0
        refused = [ToolResult.failed(c, (
            f"{c.name} was not started: run {c.turn} expires in {max(left, 0):.0f} s, too soon "
            f"for it to finish (timeout {_estimate(toolbox, c.name) or 0:g} s plus a "
            f"{client.expiry_margin:g} s margin)")) for c in late]
        outputs.update((o["tool_call_id"], o)
                       for o in dialect.write_results(refused)["tool_outputs"])
        body = {"tool_outputs": [outputs[c.id] for c in calls]}
    if transcript is not None:
        for output in body["tool_outputs"]:
            transcript.add("result", output["output"], output)
    return body


async def _submit(client: AsyncAssistantsClient, run: Mapping[str, Any],
                  body: Mapping[str, Any], stream: bool) -> dict[str, Any]:
    thread_id, run_id = str(run["thread_id"]), str(run["id"])
    try:
        if stream:
            return await _follow(client.stream_submit_tool_outputs(thread_id, run_id, body),
                                 client, thread_id, run_id)
        return await client.submit_tool_outputs(thread_id, run_id, body)
    except RunExpiredError:
        raise
    except BackendError as exc:
        if exc.status != 400:
            raise
        # A retried submission whose first attempt was accepted but lost on the way back:
        # the run has moved on (`Runs in status "queued" do not accept tool outputs.`, or a
        # next round waiting on other call ids). If it still waits on our calls, the 400 is real.
        fresh = await client.retrieve_run(thread_id, run_id)
        if fresh.get("status") == "expired":
            raise expired_error(fresh) from None
        if fresh.get("status") == "requires_action" and fresh.get("required_action") == run.get(
                "required_action"):
            raise
        return fresh


async def aserve_run(
    toolbox: Any, client: AsyncAssistantsClient, *, thread_id: str, run_id: str | None = None,
    assistant_id: str | None = None, stream: bool = True,
    run_options: Mapping[str, Any] | None = None, transcript: Transcript | None = None,
    max_rounds: int = 64, **context: Any,
) -> dict[str, Any]:
    """Serve run ``run_id`` (or create one for ``assistant_id``) until it is final.

    Streams by default (SSE of run create and ``submit_tool_outputs``), polling when
    ``stream`` is false or a stream breaks. Each round of parallel calls is answered in one
    submission. Returns the final run; raises `RunExpiredError` if the run expired.
    """
    if run_id is None:
        if assistant_id is None:
            raise UsageError("openai-assistants: give run_id=... to serve an existing run, or "
                             "assistant_id=... to create one")
        fields = dict(run_options or {})
        if stream:
            run = await _follow(client.stream_run(thread_id, assistant_id, **fields), client,
                                thread_id, None)
        else:
            run = await client.create_run(thread_id, assistant_id, **fields)
    else:
        run = await client.retrieve_run(thread_id, run_id)
    rounds = 0
    while True:
        status = run.get("status")
        if status in ACTIVE_STATUSES:
            run = await client.poll_run(thread_id, str(run["id"]))
        elif status == "requires_action":
            rounds += 1
            if rounds > max_rounds:
                raise BackendError(f"openai-assistants: run {run['id']} asked for more than "
                                   f"{max_rounds} rounds of tool calls", body=run)
            if not get_dialect(DIALECT).read_calls(run).calls:
                log.warning("run %s requires an action that is not a function call; "
                            "leaving it to the caller", run["id"])
                return run
            body = await answer_run(toolbox, client, run, transcript, **context)
            run = await _submit(client, run, body, stream)
        elif status == "expired":
            raise expired_error(run)
        else:
            return run


def _split(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    client = {k: v for k, v in options.items() if k in CLIENT_OPTIONS}
    rest = {k: v for k, v in options.items() if k not in CLIENT_OPTIONS}
    return client, rest


async def aserve_from_options(toolbox: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """`aserve_run` with a client built from ``options`` (``Dialect.aserve`` and the CLI)."""
    client_options, rest = _split(options)
    if "thread_id" not in rest:
        raise UsageError("openai-assistants: serving needs thread_id=... and run_id=... "
                         "(or assistant_id=... to create the run)")
    async with AsyncAssistantsClient(**client_options) as client:
        return await aserve_run(toolbox, client, **rest)


T = TypeVar("T")


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise UsageError("openai-assistants: called the blocking form inside a running event "
                     "loop; await the async form instead")


def serve_run(toolbox: Any, **options: Any) -> dict[str, Any]:
    """Blocking `aserve_run`; ``options`` hold the client's options and the run's."""
    return _run_sync(aserve_from_options(toolbox, options))


def _text_of(message: Mapping[str, Any]) -> str:
    parts = [p.get("text", {}).get("value", "") for p in message.get("content", ())
             if isinstance(p, Mapping) and p.get("type") == "text"]
    return "".join(parts)


async def arun_conversation(
    toolbox: Any, messages: Sequence[str], *, model: str = "gpt-4o",
    instructions: str | None = None, tool_choice: ToolChoice | None = None,
    stream: bool = True, **options: Any,
) -> Transcript:
    """Create an assistant with the toolbox's tools and a thread; run each user message.

    ``options`` are client options (``base_url`` + ``api_key``, or the Azure ones; ``model``
    is the deployment name on Azure) and context for the handlers. Returns the transcript.
    """
    client_options, context = _split(options)
    transcript = Transcript(DIALECT)
    dialect = get_dialect(DIALECT)
    rendered = toolbox.render(dialect)
    transcript.add("tools", ", ".join(d["function"]["name"] for d in rendered.definitions),
                   rendered.definitions)
    run_options: dict[str, Any] = {}
    if tool_choice is not None:
        run_options["tool_choice"] = dialect.render_tool_choice(tool_choice)
    async with AsyncAssistantsClient(**client_options) as client:
        assistant = await client.create_assistant(model=model, tools=rendered.definitions,
                                                  instructions=instructions)
        thread = await client.create_thread()
        for text in messages:
            await client.create_message(thread["id"], text)
            transcript.add("user", text)
            run = await aserve_run(toolbox, client, thread_id=thread["id"],
                                   assistant_id=assistant["id"], stream=stream,
                                   run_options=run_options, transcript=transcript, **context)
            if run.get("status") != "completed":
                transcript.add("note", f"run {run['id']} ended {run.get('status')}: "
                               f"{run.get('last_error') or run.get('incomplete_details')}", run)
                continue
            replies = [m for m in await client.list_messages(thread["id"], run_id=run["id"])
                       if m.get("role") == "assistant"]
            if replies:
                transcript.add("reply", _text_of(replies[0]), replies[0])
    return transcript


def run_conversation(toolbox: Any, messages: Sequence[str], **options: Any) -> Transcript:
    """Blocking `arun_conversation`."""
    return _run_sync(arun_conversation(toolbox, messages, **options))
