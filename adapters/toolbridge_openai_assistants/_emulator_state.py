"""The emulated Assistants service's state: assistants, threads, messages and runs.

Pure state machine (no HTTP): each operation returns the answer object and, for streamed
requests, the events the run produced, computed eagerly so a dropped stream leaves the run
in the state the real service would be in. Error texts are the real service's; the
request checks live in `_emulator_checks`.
"""

from __future__ import annotations

import copy
import math
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbridge.testing import Script, ScriptError
from toolbridge.testing.emulators import Intake, ModelCall, ScriptedModel

from ._emulator_checks import ApiError, check_tools, missing, wrong_type
from .wire import MAX_OUTPUT_CHARS

__all__ = ["ApiError", "EmulatedService", "Event"]

Event = tuple[str, dict[str, Any]]


def list_page(objects: list[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """One page of a list endpoint: ``order`` (default ``desc``), ``after``, ``limit``."""
    if query.get("order", "desc") == "desc":
        objects = objects[::-1]
    after = query.get("after")
    if after:
        ids = [o["id"] for o in objects]
        if after not in ids:
            raise ApiError(400, f"Invalid 'after': no object '{after}'.")
        objects = objects[ids.index(after) + 1:]
    try:
        limit = int(query.get("limit", 20))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise ApiError(400, "Invalid 'limit': must be between 1 and 100.")
    page = objects[:limit]
    return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None, "has_more": len(objects) > limit}


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


@dataclass
class _Thread:
    thread: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    model: ScriptedModel | None = None
    active_run: str | None = None


@dataclass
class _Run:
    run: dict[str, Any]
    deadline: float
    queue: list[ModelCall] = field(default_factory=list)
    """Calls of the scripted round still to ask for (one at a time without parallel calls)."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    """The run's steps (``thread.run.step``), oldest first."""

    def step(self, details: dict[str, Any], status: str = "completed") -> dict[str, Any]:
        """Add a step of this run (``step_details``), as the service returns it."""
        now = int(time.time())
        run = self.run
        self.steps.append({
            "id": _id("step"), "object": "thread.run.step", "created_at": now,
            "run_id": run["id"], "assistant_id": run["assistant_id"],
            "thread_id": run["thread_id"], "type": details["type"], "status": status,
            "cancelled_at": None, "completed_at": now if status == "completed" else None,
            "expired_at": None, "failed_at": None, "last_error": None,
            "step_details": details, "usage": None, "metadata": {}})
        return self.steps[-1]

    def end_steps(self, status: str) -> None:
        """The run ended ``status`` (expired, cancelled, failed): so do its open steps."""
        for step in self.steps:
            if step["status"] == "in_progress":
                step["status"] = status
                step[f"{status}_at"] = int(time.time())


class EmulatedService:
    """Assistants, threads, messages and runs, playing a scripted model per thread."""

    def __init__(self, script: Script, *, expire_after: float = 600.0,
                 intake: Intake | None = None) -> None:
        self.script = script
        self.intake = intake or Intake()
        """What it took: user messages, accepted tool outputs."""
        self.expire_after = expire_after
        self.assistants: dict[str, dict[str, Any]] = {}
        self.threads: dict[str, _Thread] = {}
        self.runs: dict[str, _Run] = {}
        self.deployments: dict[str, str] = {}
        """Foundry classic: the project's model deployments, name -> model (tests set it)."""

    # ------------------------------------------------------------------ lookups
    def _thread(self, thread_id: str) -> _Thread:
        if thread_id not in self.threads:
            raise ApiError(404, f"No thread found with id '{thread_id}'.")
        return self.threads[thread_id]

    def _run(self, thread_id: str, run_id: str) -> _Run:
        self._thread(thread_id)
        state = self.runs.get(run_id)
        if state is None or state.run["thread_id"] != thread_id:
            raise ApiError(404, f"No run found with id '{run_id}'.")
        self._expire_if_due(state)
        return state

    def _expire_if_due(self, state: _Run) -> list[Event]:
        run = state.run
        if run["status"] in ("queued", "in_progress", "requires_action") and (
                time.time() >= state.deadline):
            run["status"], run["required_action"] = "expired", None
            state.end_steps("expired")
            self._thread(run["thread_id"]).active_run = None
            return [("thread.run.expired", copy.deepcopy(run))]
        return []

    # ------------------------------------------------------------------ assistants, threads
    def create_assistant(self, body: dict[str, Any]) -> dict[str, Any]:
        if "model" not in body:
            raise missing("model")
        assistant = {
            "id": _id("asst"), "object": "assistant", "created_at": int(time.time()),
            "name": body.get("name"), "description": body.get("description"),
            "model": body["model"], "instructions": body.get("instructions"),
            "tools": check_tools(body.get("tools", [])), "metadata": body.get("metadata") or {},
            "top_p": body.get("top_p", 1.0), "temperature": body.get("temperature", 1.0),
            "response_format": body.get("response_format", "auto"),
            "tool_resources": body.get("tool_resources") or {},
        }
        self.assistants[assistant["id"]] = assistant
        return assistant

    def get_assistant(self, assistant_id: str) -> dict[str, Any]:
        if assistant_id not in self.assistants:
            raise ApiError(404, f"No assistant found with id '{assistant_id}'.")
        return self.assistants[assistant_id]

    def create_thread(self, body: dict[str, Any]) -> dict[str, Any]:
        thread_id = _id("thread")
        thread: dict[str, Any] = {"id": thread_id, "object": "thread",
                                  "created_at": int(time.time()),
                                  "metadata": body.get("metadata") or {}, "tool_resources": {}}
        self.threads[thread_id] = _Thread(thread)
        for i, message in enumerate(body.get("messages") or []):
            self._add_message(thread_id, message, f"messages[{i}].")
        return thread

    def get_thread(self, thread_id: str) -> dict[str, Any]:
        return self._thread(thread_id).thread

    def _add_message(self, thread_id: str, body: Any, at: str = "",
                     run_id: str | None = None, assistant_id: str | None = None
                     ) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise wrong_type(at.rstrip(".") or "body", "an object", body)
        for key in ("role", "content"):
            if key not in body:
                raise missing(f"{at}{key}")
        if body["role"] not in ("user", "assistant"):
            raise ApiError(400, f"Invalid value: '{body['role']}'. Supported values are: 'user' "
                           "and 'assistant'.", param=f"{at}role", code="invalid_value")
        content = body["content"]
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "".join(p.get("text", "") for p in content
                           if isinstance(p, dict) and p.get("type") == "text")
        else:
            raise wrong_type(f"{at}content", "a string or an array", content)
        now = int(time.time())
        message = {
            "id": _id("msg"), "object": "thread.message", "created_at": now,
            "thread_id": thread_id, "role": body["role"], "status": "completed",
            "content": [{"type": "text", "text": {"value": text, "annotations": []}}],
            "assistant_id": assistant_id, "run_id": run_id, "attachments": [],
            "metadata": body.get("metadata") or {}, "completed_at": now,
            "incomplete_at": None, "incomplete_details": None,
        }
        self._thread(thread_id).messages.append(message)
        if body["role"] == "user":
            self.intake.took_message(thread_id, text)
        return message

    def create_message(self, thread_id: str, body: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(thread_id)
        if thread.active_run is not None:
            self._expire_if_due(self.runs[thread.active_run])
        if thread.active_run is not None:
            raise ApiError(400, f"Can't add messages to {thread_id} while a run "
                           f"{thread.active_run} is active.")
        return self._add_message(thread_id, body)

    def list_messages(self, thread_id: str, query: Mapping[str, str]) -> dict[str, Any]:
        messages = list(self._thread(thread_id).messages)
        if query.get("run_id"):
            messages = [m for m in messages if m["run_id"] == query["run_id"]]
        return list_page(messages, query)

    def list_assistants(self, query: Mapping[str, str]) -> dict[str, Any]:
        return list_page(list(self.assistants.values()), query)

    def list_threads(self, query: Mapping[str, str]) -> dict[str, Any]:
        """Foundry classic agents only (OpenAI has no list-threads call)."""
        return list_page([t.thread for t in self.threads.values()], query)

    # ------------------------------------------------------------------ runs
    def create_run(self, thread_id: str, body: dict[str, Any], stream: bool
                   ) -> tuple[dict[str, Any], list[Event]]:
        thread = self._thread(thread_id)
        if "assistant_id" not in body:
            raise missing("assistant_id")
        assistant = self.get_assistant(body["assistant_id"])
        if thread.active_run is not None:
            self._expire_if_due(self.runs[thread.active_run])
        if thread.active_run is not None:
            raise ApiError(400, f"Thread {thread_id} already has an active run "
                           f"{thread.active_run}.")
        tools = check_tools(body["tools"]) if body.get("tools") is not None else assistant[
            "tools"]
        now = time.time()
        run = {
            "id": _id("run"), "object": "thread.run", "created_at": int(now),
            "assistant_id": assistant["id"], "thread_id": thread_id, "status": "queued",
            "started_at": None, "expires_at": math.ceil(now + self.expire_after),
            "cancelled_at": None, "failed_at": None, "completed_at": None,
            "required_action": None, "last_error": None, "incomplete_details": None,
            "model": body.get("model") or assistant["model"],
            "instructions": body.get("instructions") or assistant["instructions"] or "",
            "tools": copy.deepcopy(tools), "metadata": body.get("metadata") or {},
            "usage": None, "temperature": body.get("temperature", 1.0),
            "top_p": body.get("top_p", 1.0), "max_prompt_tokens": None,
            "max_completion_tokens": None,
            "truncation_strategy": {"type": "auto", "last_messages": None},
            "response_format": "auto", "tool_choice": body.get("tool_choice", "auto"),
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
        }
        state = _Run(run, now + self.expire_after)
        self.runs[run["id"]] = state
        thread.active_run = run["id"]
        functions = [t["function"] for t in tools if t.get("type") == "function"]
        if thread.model is None:
            thread.model = ScriptedModel(self.script, new_id=lambda: _id("call"))
        # A strict function's model spells out every property: null for the absent ones.
        thread.model.declare({f["name"]: f.get("parameters") or {} for f in functions},
                             strict=[f["name"] for f in functions if f.get("strict") is True])
        users = [m for m in thread.messages if m["role"] == "user"]
        thread.model.start_turn(users[-1]["content"][0]["text"]["value"] if users else "")
        events: list[Event] = [("thread.run.created", copy.deepcopy(run)),
                               ("thread.run.queued", copy.deepcopy(run))]
        if stream:
            events += self._advance(state, to_stop=True)
        return copy.deepcopy(run), events

    def list_runs(self, thread_id: str, query: Mapping[str, str]) -> dict[str, Any]:
        self._thread(thread_id)
        runs = [self._run(thread_id, r) for r, s in self.runs.items()
                if s.run["thread_id"] == thread_id]
        return list_page([copy.deepcopy(s.run) for s in runs], query)

    def list_steps(self, thread_id: str, run_id: str, query: Mapping[str, str]
                   ) -> dict[str, Any]:
        return list_page(copy.deepcopy(self._run(thread_id, run_id).steps), query)

    def get_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        state = self._run(thread_id, run_id)
        if state.run["status"] in ("queued", "in_progress"):
            self._advance(state, to_stop=False)
        return copy.deepcopy(state.run)

    def _advance(self, state: _Run, *, to_stop: bool) -> list[Event]:
        """Move the run on: queued → in_progress → requires_action or completed."""
        events: list[Event] = []
        run = state.run
        while run["status"] in ("queued", "in_progress"):
            expired = self._expire_if_due(state)
            if expired:
                return events + expired
            if run["status"] == "queued":
                run["status"] = "in_progress"
                run["started_at"] = run["started_at"] or int(time.time())
                events.append(("thread.run.in_progress", copy.deepcopy(run)))
            else:
                events += self._next_round(state)
            if not to_stop:
                break
        return events

    def _next_round(self, state: _Run) -> list[Event]:
        run = state.run
        thread = self._thread(run["thread_id"])
        assert thread.model is not None
        if not state.queue and run["tool_choice"] != "none":
            try:
                state.queue = list(thread.model.next_round())
            except ScriptError as exc:
                run.update(status="failed", failed_at=int(time.time()), last_error={
                    "code": "server_error", "message": f"emulator script error: {exc}"})
                state.end_steps("failed")
                thread.active_run = None
                return [("thread.run.failed", copy.deepcopy(run))]
        if state.queue:
            count = len(state.queue) if run["parallel_tool_calls"] else 1
            asked, state.queue = state.queue[:count], state.queue[count:]
            run["status"] = "requires_action"
            run["required_action"] = {"type": "submit_tool_outputs", "submit_tool_outputs": {
                "tool_calls": [{"id": c.id, "type": "function", "function": {
                    "name": c.name, "arguments": c.arguments_text}} for c in asked]}}
            state.step({"type": "tool_calls", "tool_calls": [
                {"id": c.id, "type": "function", "function": {
                    "name": c.name, "arguments": c.arguments_text, "output": None}}
                for c in asked]}, "in_progress")
            return [("thread.run.requires_action", copy.deepcopy(run))]
        return self._complete(state, thread)

    def _complete(self, state: _Run, thread: _Thread) -> list[Event]:
        run = state.run
        assert thread.model is not None
        message = self._add_message(run["thread_id"], {"role": "assistant",
                                                       "content": thread.model.reply()},
                                    run_id=run["id"], assistant_id=run["assistant_id"])
        created = {**copy.deepcopy(message), "status": "in_progress", "content": [],
                   "completed_at": None}
        delta = {"id": message["id"], "object": "thread.message.delta", "delta": {
            "content": [{"index": 0, **copy.deepcopy(message["content"][0])}]}}
        state.step({"type": "message_creation",
                    "message_creation": {"message_id": message["id"]}})
        run.update(status="completed", completed_at=int(time.time()), usage={
            "prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20})
        thread.active_run = None
        return [("thread.message.created", created), ("thread.message.in_progress", created),
                ("thread.message.delta", delta),
                ("thread.message.completed", copy.deepcopy(message)),
                ("thread.run.completed", copy.deepcopy(run))]

    def submit(self, thread_id: str, run_id: str, body: dict[str, Any], stream: bool
               ) -> tuple[dict[str, Any], list[Event]]:
        state = self._run(thread_id, run_id)
        outputs = self._check_outputs(body)
        run = state.run
        if run["status"] != "requires_action":
            raise ApiError(400, f'Runs in status "{run["status"]}" do not accept tool outputs.')
        expected = [c["id"] for c in run["required_action"]["submit_tool_outputs"]["tool_calls"]]
        got = [o["tool_call_id"] for o in outputs]
        if sorted(got) != sorted(expected):
            raise ApiError(400, f"Expected tool outputs for call_ids {expected}, got {got}")
        thread = self._thread(thread_id)
        assert thread.model is not None
        for output in outputs:  # a repeated id's outputs go to its calls in order
            thread.model.record(output["output"], output["tool_call_id"])
        for step in state.steps:
            if step["status"] == "in_progress":
                given = {o["tool_call_id"]: o["output"] for o in outputs}
                for call in step["step_details"]["tool_calls"]:
                    call["function"]["output"] = given.get(call["id"])
                step.update(status="completed", completed_at=int(time.time()))
        self.intake.took_results(thread_id, got)
        run.update(status="queued", required_action=None)
        events: list[Event] = [("thread.run.queued", copy.deepcopy(run))]
        if stream:
            events += self._advance(state, to_stop=True)
        return copy.deepcopy(run), events

    @staticmethod
    def _check_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
        if "tool_outputs" not in body:
            raise missing("tool_outputs")
        outputs = body["tool_outputs"]
        if not isinstance(outputs, list):
            raise wrong_type("tool_outputs", "an array", outputs)
        for i, item in enumerate(outputs):
            at = f"tool_outputs[{i}]"
            if not isinstance(item, dict):
                raise wrong_type(at, "an object", item)
            for key in ("tool_call_id", "output"):
                if key not in item:
                    raise missing(f"{at}.{key}")
                if not isinstance(item[key], str):
                    raise wrong_type(f"{at}.{key}", "a string", item[key])
            if len(item["output"]) > MAX_OUTPUT_CHARS:
                raise ApiError(400, f"Invalid '{at}.output': string too long. Expected a string "
                               f"with maximum length {MAX_OUTPUT_CHARS}, but got a string with "
                               f"length {len(item['output'])} instead.", param=f"{at}.output",
                               code="string_above_max_length")
        return outputs

    def cancel(self, thread_id: str, run_id: str) -> dict[str, Any]:
        state = self._run(thread_id, run_id)
        run = state.run
        if run["status"] not in ("queued", "in_progress", "requires_action"):
            raise ApiError(400, f"Cannot cancel run with status '{run['status']}'.")
        run.update(status="cancelled", cancelled_at=int(time.time()), required_action=None)
        state.end_steps("cancelled")
        self._thread(thread_id).active_run = None
        return copy.deepcopy(run)
