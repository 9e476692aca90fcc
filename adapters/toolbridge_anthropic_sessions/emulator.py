"""The emulated Managed Agents API: agents, environments, sessions and their events (list,
send, SSE stream), on loopback, strict and scripted.

Routes (under ``/v1``): ``POST|GET /agents``, ``GET /agents/{id}``, ``POST /environments``,
``GET /environments/{id}``, ``POST|GET /sessions``, ``GET /sessions/{id}``,
``GET|POST /sessions/{id}/events`` and ``GET /sessions/{id}/events/stream`` (also at
``/sessions/{id}/stream``). Every request needs a key (``x-api-key``, or the
``Authorization: Bearer`` the SDK 2.15 sends) and the
``anthropic-beta: managed-agents-2026-04-01`` header, as the real API does. Faults
(`SessionsFaults`): the shared stream ones.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolbridge.testing import RunningEmulator
from toolbridge.testing.emulators import Emulator, sse_frames

from ._emulator_session import ApiError, EmuSession, new_id, now
from .options import SessionsFaults
from .wire import BETA, CONFIRMATION, CUSTOM_TOOL_RESULT, MAX_TOOL_NAME

__all__ = ["SessionsEmulator"]

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class SessionsEmulator(Emulator):
    """Claude Managed Agents sessions on loopback. ``sessions`` maps id to `EmuSession`."""

    dialect = "anthropic-sessions"
    faults_type = SessionsFaults
    faults: SessionsFaults

    def __init__(self, *, script: Any = None, faults: Any = None) -> None:
        super().__init__(script=script, faults=faults)
        self.sessions: dict[str, EmuSession] = {}
        self.agents: dict[str, dict[str, Any]] = {}
        self.environments: dict[str, dict[str, Any]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def error_body(self, status: int, message: str) -> Any:
        kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error",
                404: "not_found_error"}.get(status, "api_error")
        return ApiError(status, message, kind).body()

    @contextmanager
    def run(self, host: str = "127.0.0.1", port: int = 0,
            tls: tuple[str, str] | None = None) -> Iterator[RunningEmulator]:
        """Serve on loopback; open event streams are ended when the block exits."""
        with super().run(host, port, tls) as running:
            try:
                yield running
            finally:
                loop = self._loop
                if loop is not None and not loop.is_closed():
                    for session in list(self.sessions.values()):
                        for queue in list(session.subscribers):
                            loop.call_soon_threadsafe(queue.put_nowait, None)

    # ------------------------------------------------------------------ routes
    def build_app(self) -> Any:
        def route(path: str, endpoint: Any, methods: list[str]) -> Route:
            async def handle(request: Request) -> Response:
                try:
                    _check_headers(request)
                    result: Response = await endpoint(request)
                    return result
                except ApiError as exc:
                    return JSONResponse(exc.body(), status_code=exc.status)
            return Route("/v1" + path, handle, methods=methods)

        base = "/sessions/{session_id}"
        return Starlette(routes=[
            route("/agents", self._create_agent, ["POST"]),
            route("/agents", self._list_agents, ["GET"]),
            route("/agents/{agent_id}", self._retrieve_agent, ["GET"]),
            route("/environments", self._create_environment, ["POST"]),
            route("/environments/{environment_id}", self._retrieve_environment, ["GET"]),
            route("/sessions", self._create_session, ["POST"]),
            route("/sessions", self._list_sessions, ["GET"]),
            route(base, self._retrieve_session, ["GET"]),
            route(base + "/events", self._list_events, ["GET"]),
            route(base + "/events", self._send_events, ["POST"]),
            route(base + "/events/stream", self._stream, ["GET"]),
            route(base + "/stream", self._stream, ["GET"]),
        ])

    async def _json(self, request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            raise ApiError(400, "The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.")
        return body

    # ------------------------------------------------------------------ agents
    async def _create_agent(self, request: Request) -> Response:
        body = await self._json(request)
        name, model = body.get("name"), body.get("model")
        if not isinstance(name, str) or not name:
            raise ApiError(400, "name: Field required")
        if isinstance(model, str):
            model = {"id": model}
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            raise ApiError(400, "model: Field required")
        tools = _checked_tools(body.get("tools", []))
        stamp, agent_id = now(), new_id("agent")
        agent: dict[str, Any] = {"id": agent_id, "type": "agent", "archived_at": None,
                 "created_at": stamp, "updated_at": stamp, "description": body.get(
                     "description"), "execution_identity": {"type": "service_account"},
                 "mcp_servers": list(body.get("mcp_servers") or []),
                 "metadata": dict(body.get("metadata") or {}), "model": model, "name": name,
                 "skills": [], "system": body.get("system"), "tools": tools, "version": 1}
        self.agents[agent_id] = agent
        return JSONResponse(agent)

    async def _retrieve_agent(self, request: Request) -> Response:
        return JSONResponse(self._agent(request.path_params["agent_id"]))

    async def _list_agents(self, request: Request) -> Response:
        return JSONResponse({"data": list(self.agents.values()), "next_page": None})

    def _agent(self, agent_id: str) -> dict[str, Any]:
        agent = self.agents.get(agent_id)
        if agent is None:
            raise ApiError(404, f"Agent {agent_id} not found.", "not_found_error")
        return agent

    # ------------------------------------------------------------------ environments
    async def _create_environment(self, request: Request) -> Response:
        body = await self._json(request)
        if not isinstance(body.get("name"), str) or not body["name"]:
            raise ApiError(400, "name: Field required")
        stamp = now()
        config = body.get("config") or {"type": "cloud"}
        environment = {"id": new_id("env"), "type": "environment", "archived_at": None,
                       "config": {"networking": {"type": "unrestricted"},
                                  "packages": {}, **config},
                       "created_at": stamp, "updated_at": stamp,
                       "description": body.get("description"), "name": body["name"],
                       "metadata": dict(body.get("metadata") or {})}
        self.environments[environment["id"]] = environment
        return JSONResponse(environment)

    async def _retrieve_environment(self, request: Request) -> Response:
        found = self.environments.get(request.path_params["environment_id"])
        if found is None:
            raise ApiError(404, "Environment not found.", "not_found_error")
        return JSONResponse(found)

    # ------------------------------------------------------------------ sessions
    def _published(self, session: EmuSession, event: dict[str, Any]) -> None:
        """Where a subclass may watch events (none by default)."""

    async def _create_session(self, request: Request) -> Response:
        body = await self._json(request)
        reference = body.get("agent")
        if isinstance(reference, str):
            reference = {"type": "agent", "id": reference}
        if not isinstance(reference, dict) or not isinstance(reference.get("id"), str):
            raise ApiError(400, "agent: Field required")
        agent = dict(self._agent(reference["id"]))
        if reference.get("type") == "agent_with_overrides":
            for key in ("model", "system", "skills", "mcp_servers"):
                if key in reference:
                    agent[key] = reference[key]
            if "tools" in reference:
                agent["tools"] = _checked_tools(reference["tools"])
        environment_id = body.get("environment_id")
        if environment_id not in self.environments:
            raise ApiError(400 if environment_id is None else 404,
                           "environment_id: Field required" if environment_id is None else
                           f"Environment {environment_id} not found.",
                           "invalid_request_error" if environment_id is None
                           else "not_found_error")
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict) or len(metadata) > 16:
            raise ApiError(400, "metadata: at most 16 string pairs")
        session = EmuSession(agent, str(environment_id), metadata, body.get("title"),
                             self.script, self.intake, self._published)
        self.sessions[session.id] = session
        for event in body.get("initial_events") or []:
            if isinstance(event, dict) and event.get("type") == "user.message":
                session.user_message(event, new_id("sevt"))
        return JSONResponse(session.snapshot())

    async def _list_sessions(self, request: Request) -> Response:
        sessions = list(self.sessions.values())[::-1]
        return JSONResponse({"data": [s.snapshot() for s in sessions], "next_page": None})

    def _session(self, session_id: str) -> EmuSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise ApiError(404, f"Session {session_id} not found.", "not_found_error")
        return session

    async def _retrieve_session(self, request: Request) -> Response:
        return JSONResponse(self._session(request.path_params["session_id"]).snapshot())

    # ------------------------------------------------------------------ events
    async def _list_events(self, request: Request) -> Response:
        """One page: ``limit`` (1-1000, default 20), ``order`` (``asc`` default), ``page``
        (the ``next_page`` cursor), ``types[]`` filters."""
        session = self._session(request.path_params["session_id"])
        query = request.query_params
        try:
            limit = int(query.get("limit", "20"))
            start = int(query.get("page") or 0)
        except ValueError:
            raise ApiError(400, "limit and page must be integers") from None
        if not 1 <= limit <= 1000:
            raise ApiError(400, "limit: must be between 1 and 1000")
        types = set(query.getlist("types[]") + query.getlist("types"))
        events = [e for e in session.events if not types or e["type"] in types]
        if query.get("order", "asc") == "desc":
            events = events[::-1]
        page = events[start:start + limit]
        more = start + limit < len(events)
        return JSONResponse({"data": page, "next_page": str(start + limit) if more else None})

    async def _send_events(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        events = (await self._json(request)).get("events")
        if not isinstance(events, list) or not events:
            raise ApiError(400, "events: Field required (a non-empty list)")
        answers: dict[int, str] = {}
        for index, event in enumerate(events):  # check every event before applying any
            param = f"events[{index}]"
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                raise ApiError(400, f"{param}.type: Field required")
            kind = event["type"]
            if kind in (CUSTOM_TOOL_RESULT, CONFIRMATION):
                held = session.check_answer(event, param)
                if held in answers.values():
                    raise ApiError(400, f"{param}: event {held!r} is answered twice")
                answers[index] = held
            elif kind == "user.message":
                if not isinstance(event.get("content"), list) or not event["content"]:
                    raise ApiError(400, f"{param}.content: Field required")
            elif kind != "user.interrupt":
                raise ApiError(400, f"{param}.type: {kind!r} cannot be sent to this session")
        sent = [{**event, "id": new_id("sevt"), "processed_at": now()} for event in events]
        if answers:
            session.answer([(events[i], held) for i, held in answers.items()])
        for index, event in enumerate(events):
            if index in answers:
                continue
            if event["type"] == "user.message":
                session.user_message(event, sent[index]["id"])
            else:
                session.interrupt()
        return JSONResponse({"data": sent})

    async def _stream(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        session.subscribers.append(queue)

        async def events() -> AsyncIterator[tuple[str | None, Any]]:
            try:
                while True:
                    event = await queue.get()
                    if event is None:
                        return
                    yield event["type"], event
            finally:
                if queue in session.subscribers:
                    session.subscribers.remove(queue)

        return StreamingResponse(sse_frames(events(), self.faults),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})


def _check_headers(request: Request) -> None:
    bearer = request.headers.get("authorization", "")
    if not request.headers.get("x-api-key") and not (
            bearer.startswith("Bearer ") and bearer[7:].strip()):
        raise ApiError(401, "x-api-key header is required", "authentication_error")
    betas = {b.strip() for b in request.headers.get("anthropic-beta", "").split(",")}
    if BETA not in betas:
        raise ApiError(400, f"This endpoint is in beta: send 'anthropic-beta: {BETA}'.")


def _checked_tools(tools: Any) -> list[dict[str, Any]]:
    """An agent's ``tools``, refused as the API refuses them (custom tools checked)."""
    if not isinstance(tools, list):
        raise ApiError(400, "tools: Input should be a valid list")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise ApiError(400, f"{where}.type: Field required")
        if tool["type"] != "custom":
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= MAX_TOOL_NAME or (
                set(name) - _NAME_CHARS):
            raise ApiError(400, f"{where}.name: 1-{MAX_TOOL_NAME} letters, digits, "
                           "underscores or hyphens")
        if name in names:
            raise ApiError(400, f"{where}.name: tool names must be unique ({name!r})")
        names.add(name)
        if not isinstance(tool.get("description"), str) or not tool["description"]:
            raise ApiError(400, f"{where}.description: Field required")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ApiError(400, f"{where}.input_schema.type: Input should be 'object'")
    return [dict(t) for t in tools]
