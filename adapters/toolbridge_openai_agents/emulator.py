"""The emulated Agents API: sessions, events (SSE), items, on loopback, strict and scripted.

Routes (under ``/v1``, and at the root): ``POST`` and ``GET /agents/sessions`` (create, with
``stream: true`` too; list, ``metadata[key]=value`` filters),
``GET|POST /agents/sessions/{id}``, ``POST|GET /agents/sessions/{id}/events``,
``GET /agents/sessions/{id}/items``, ``GET /agents/sessions/{id}/turns/{turn_id}``; saved
agents: ``POST /agents``, ``GET /agents`` (list), ``GET /agents/{id}`` (a session created
with ``agent_id`` runs that agent's model, instructions and tools unless ``agent`` overrides).
Faults (`AgentsFaults`): the shared stream ones plus ``registration_race`` (the first
submission of each call is answered ``400 Unknown pending tool call``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolbridge.testing import RunningEmulator
from toolbridge.testing.emulators import Emulator, sse_frames

from ._emulator_checks import ApiError, check_create, check_events, check_tools, unknown_call
from ._emulator_session import APPROVALS, EmuSession, new_id
from .options import AgentsFaults
from .wire import TOOL_RESULT

__all__ = ["AgentsEmulator"]

_TERMINAL = ("agent.session.idle", "agent.session.failed")


class AgentsEmulator(Emulator):
    """OpenAI Agents API sessions on loopback. ``sessions`` maps id to `EmuSession`."""

    dialect = "openai-agents"
    faults_type = AgentsFaults
    faults: AgentsFaults

    def __init__(self, *, script: Any = None, faults: Any = None) -> None:
        super().__init__(script=script, faults=faults)
        self.sessions: dict[str, EmuSession] = {}
        self.agents: dict[str, dict[str, Any]] = {}
        """Saved agents (``POST /agents``) by id."""
        self.requires_action_at: dict[tuple[str, str], float] = {}
        """(session id, call id) -> ``perf_counter()`` when ``requires_action`` was emitted."""
        self.result_at: dict[tuple[str, str], float] = {}
        """(session id, call id) -> ``perf_counter()`` when its result was accepted."""
        self._idempotent: set[tuple[str, str]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def error_body(self, status: int, message: str) -> Any:
        kind = {429: ("requests", "rate_limit_exceeded")}.get(status, ("server_error", None))
        return {"error": {"message": message, "type": kind[0], "param": None, "code": kind[1]}}

    # ------------------------------------------------------------------ plumbing
    def _published(self, session: EmuSession, event: dict[str, Any]) -> None:
        if event["type"] == "agent.session.requires_action":
            now = time.perf_counter()
            for action in session.required_actions:
                if action.get("type") == "function_call":
                    self.requires_action_at.setdefault((session.id, action["call_id"]), now)

    def _session(self, session_id: str) -> EmuSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise ApiError(404, f"No session found with id '{session_id}'.", code="not_found")
        return session

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

    def _stream(self, session: EmuSession, queue: asyncio.Queue[dict[str, Any] | None], *,
                until_idle: bool) -> StreamingResponse:
        async def events() -> AsyncIterator[tuple[str | None, Any]]:
            try:
                while True:
                    event = await queue.get()
                    if event is None:
                        return
                    yield event["type"], event
                    if until_idle and event["type"] in _TERMINAL:
                        return
            finally:
                if queue in session.subscribers:
                    session.subscribers.remove(queue)

        return StreamingResponse(sse_frames(events(), self.faults),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})

    def _subscribe(self, session: EmuSession) -> asyncio.Queue[dict[str, Any] | None]:
        self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        session.subscribers.append(queue)
        return queue

    # ------------------------------------------------------------------ routes
    def build_app(self) -> Any:
        def route(path: str, endpoint: Any, methods: list[str]) -> Route:
            async def handle(request: Request) -> Response:
                try:
                    result: Response = await endpoint(request)
                    return result
                except ApiError as exc:
                    return JSONResponse(exc.body(), status_code=exc.status)
            return Route(path, handle, methods=methods)

        # Served under /v1 (the SDK's base URL) and at the root (a bare emulator base URL).
        routes = []
        for prefix in ("/v1", ""):
            base = prefix + "/agents/sessions/{session_id}"
            routes += [
                route(prefix + "/agents/sessions", self._create, ["POST"]),
                route(prefix + "/agents/sessions", self._list, ["GET"]),
                route(base, self._retrieve, ["GET"]),
                route(base, self._update, ["POST"]),
                route(base + "/events", self._post_events, ["POST"]),
                route(base + "/events", self._stream_events, ["GET"]),
                route(base + "/items", self._items, ["GET"]),
                route(base + "/turns/{turn_id}", self._turn, ["GET"]),
                route(prefix + "/agents", self._create_agent, ["POST"]),
                route(prefix + "/agents", self._list_agents, ["GET"]),
                route(prefix + "/agents/{agent_id}", self._retrieve_agent, ["GET"]),
            ]
        return Starlette(routes=routes)

    async def _json(self, request: Request) -> Any:
        raw = await request.body()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ApiError(400, "We could not parse the JSON body of your request.",
                           code="invalid_json") from None

    async def _create(self, request: Request) -> Response:
        body = check_create(await self._json(request))
        agent = body.get("agent") or {}
        if body.get("agent_id") is not None:
            saved = self._saved(str(body["agent_id"]))
            agent = {**{k: saved[k] for k in ("name", "model", "instructions", "tools")},
                     **agent}
            body = {**body, "agent": agent}
        tools = check_tools(agent.get("tools", []))
        session = EmuSession(body, tools, self.script, self._published)
        self.sessions[session.id] = session
        queue = self._subscribe(session) if body.get("stream") else None
        session.emit("agent.session.created", session=session.snapshot())
        if body.get("input") is not None:
            text = body["input"]
            self._start_turn(session, text)
        if queue is not None:
            return self._stream(session, queue, until_idle=True)
        return JSONResponse(session.snapshot())

    def _start_turn(self, session: EmuSession, given: Any) -> None:
        """A user turn of ``given`` (text, or a list of messages), recorded as taken."""
        messages = [{"role": "user", "content": given}] if isinstance(given, str) else given
        session.start_turn(list(messages))
        for message in messages:
            content = message.get("content")
            parts = [{"text": content}] if isinstance(content, str) else content or []
            self.intake.took_message(session.id, "".join(str(p.get("text", "")) for p in parts
                                                  if isinstance(p, dict)))

    async def _list(self, request: Request) -> Response:
        """``GET /agents/sessions``: newest first by default; ``metadata[key]=value`` filters."""
        query = request.query_params
        wanted = {k[len("metadata["):-1]: v for k, v in query.multi_items()
                  if k.startswith("metadata[") and k.endswith("]")}
        sessions = [s for s in self.sessions.values()
                    if all(s.metadata.get(k) == v for k, v in wanted.items())]
        return _page(sessions, query, "session", lambda s: s.id, EmuSession.snapshot)

    async def _retrieve(self, request: Request) -> Response:
        return JSONResponse(self._session(request.path_params["session_id"]).snapshot())

    async def _update(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        body = await self._json(request) or {}
        agent = body.get("agent") or {}
        if "tools" in agent:
            session.set_tools(check_tools(agent["tools"]))
        if "metadata" in body:
            session.metadata = dict(body["metadata"] or {})
        return JSONResponse(session.snapshot())

    async def _post_events(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        events = check_events(await self._json(request))
        key = request.headers.get("idempotency-key")
        if key and (session.id, key) in self._idempotent:
            return Response(status_code=202)  # a retry of an accepted request: not re-applied
        race = self.faults.registration_race
        answered: set[str] = set()
        for index, event in enumerate(events):  # check every event before applying any
            if event["type"] == TOOL_RESULT:
                param = f"events[{index}].call_id"
                if event["call_id"] in answered:  # a second result for one call
                    raise unknown_call(event["call_id"], param)
                answered.add(event["call_id"])
                session.pending(event["turn_id"], event["call_id"], param, race)
        for event in events:
            kind = event["type"]
            if kind == TOOL_RESULT:
                self.result_at.setdefault((session.id, event["call_id"]), time.perf_counter())
                session.accept_result(event)
                self.intake.took_results(session.id, [event["call_id"]])
            elif kind == "agent.session.input.message":
                self._start_turn(session, event["input"])
            elif kind == "agent.session.input.cancel":
                session.cancel()
            elif kind in APPROVALS:
                session.accept_approval(event, "events")
            else:
                raise ApiError(400, f"No pending approval request matches this '{kind}'.",
                               param="events", code="invalid_request_error")
        if key:
            self._idempotent.add((session.id, key))
        return Response(status_code=202)

    async def _stream_events(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        return self._stream(session, self._subscribe(session), until_idle=False)

    async def _items(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        query = request.query_params
        try:
            limit = int(query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            raise ApiError(400, "Invalid 'limit': must be between 1 and 100.", param="limit",
                           code="invalid_value")
        order = query.get("order", "desc")
        items = list(session.items) if order == "asc" else list(reversed(session.items))
        after = query.get("after")
        if after:
            ids = [i["id"] for i in items]
            if after not in ids:
                raise ApiError(400, f"Invalid 'after': no item '{after}'.", param="after",
                               code="invalid_value")
            items = items[ids.index(after) + 1:]
        return JSONResponse({"data": items[:limit], "has_more": len(items) > limit})

    async def _turn(self, request: Request) -> Response:
        session = self._session(request.path_params["session_id"])
        turn = session.turns.get(request.path_params["turn_id"])
        if turn is None:
            raise ApiError(404, "No turn found.", code="not_found")
        return JSONResponse(turn)

    # ------------------------------------------------------------------ saved agents
    def _saved(self, agent_id: str) -> dict[str, Any]:
        if agent_id not in self.agents:
            raise ApiError(404, f"No agent found with id '{agent_id}'.", code="not_found")
        return self.agents[agent_id]

    async def _create_agent(self, request: Request) -> Response:
        body = await self._json(request)
        if not isinstance(body, dict):
            raise ApiError(400, "Invalid body: expected an object.", param="body",
                           code="invalid_type")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise ApiError(400, "Missing required parameter: 'model'.", param="model",
                           code="missing_required_parameter")
        check_create({"environment": {"type": "openai_hosted"}, "agent": {
            "tools": body.get("tools", [])}, "metadata": body.get("metadata")})
        now = int(time.time())
        reasoning = body.get("reasoning") or {}
        agent = {"id": new_id("agent"), "object": "agent", "created_at": now,
                 "updated_at": now, "name": body.get("name"), "model": body["model"],
                 "instructions": body.get("instructions"),
                 "metadata": dict(body.get("metadata") or {}),
                 "tools": check_tools(body.get("tools", [])),
                 "multi_agent": {"enabled": False, "max_concurrent_subagents": None},
                 "reasoning": {"effort": reasoning.get("effort"), "summary": None},
                 "service_tier": "auto",
                 "text": {"format": (body.get("text") or {}).get("format") or {"type": "text"},
                          "verbosity": "medium"}}
        self.agents[agent["id"]] = agent
        return JSONResponse(agent)

    async def _retrieve_agent(self, request: Request) -> Response:
        return JSONResponse(self._saved(request.path_params["agent_id"]))

    async def _list_agents(self, request: Request) -> Response:
        """``GET /agents``: ``after``, ``limit``, ``order`` (no filters, like the API)."""
        return _page(list(self.agents.values()), request.query_params, "agent",
                     lambda a: a["id"], dict)


T = TypeVar("T")


def _page(items: list[T], query: Any, what: str, id_of: Callable[[T], str],
          render: Callable[[T], dict[str, Any]]) -> Response:
    """One page of a list endpoint (``items`` oldest first): ``order``, ``after``, ``limit``;
    only the page's items are rendered."""
    if query.get("order", "desc") == "desc":
        items = items[::-1]
    after = query.get("after")
    if after:
        ids = [id_of(item) for item in items]
        if after not in ids:
            raise ApiError(400, f"Invalid 'after': no {what} '{after}'.", param="after",
                           code="invalid_value")
        items = items[ids.index(after) + 1:]
    try:
        limit = int(query.get("limit", "20"))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise ApiError(400, "Invalid 'limit': must be between 1 and 100.", param="limit",
                       code="invalid_value")
    page = [render(item) for item in items[:limit]]
    return JSONResponse({"object": "list", "data": page, "has_more": len(items) > limit,
                         "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None})
