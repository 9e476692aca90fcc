"""The Responses API on loopback, strict and scripted, in three URL forms.

- OpenAI: ``{base_url}/v1/...`` (and the bare root), ``Authorization: Bearer``;
- Azure OpenAI: ``{base_url}/openai/v1/...`` (the v1 API) and ``{base_url}/openai/...?api-version=``
  (what ``AzureOpenAI`` sends), ``api-key`` or a bearer token;
- Azure Foundry project: ``{base_url}/api/projects/{project}/openai/v1/...`` with an Entra
  bearer token (what ``AIProjectClient.get_openai_client()`` sends), plus
  ``POST|GET {base_url}/api/projects/{project}/agents/{name}/versions[/{version}]`` for saved
  prompt agents that responses reference by ``agent_reference``, and
  ``GET {base_url}/api/projects/{project}/deployments`` (``service.deployments``).

Routes under each: ``POST /responses``, ``GET /responses/{id}`` (``stream=true&starting_after=N``
re-attaches a background response), ``POST /responses/{id}/cancel``, ``POST /conversations``,
``GET|POST|DELETE /conversations/{id}``, ``GET|POST /conversations/{id}/items``. Faults: the shared
ones (``drop_stream_after``, ``duplicate_events``, ``fail_requests``, ``latency_ms``) and
``background_polls`` (reads a background response stays ``in_progress``, default 1).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from toolbridge.testing.emulators import Emulator, sse_frames

from ._emulator_checks import ApiError
from ._emulator_state import EmulatedService, StoredResponse
from .options import ResponsesFaults
from .wire import DIALECT

__all__ = ["ResponsesEmulator"]

Handler = Callable[[Any, dict[str, Any]], Any]
_NO_KEY = ("You didn't provide an API key. You need to provide your API key in an "
           "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")


class ResponsesEmulator(Emulator):
    """Responses, Conversations and Foundry agent versions with a scripted model.

    ``service`` holds the state (``responses``, ``conversations``, ``agents``).
    """

    dialect = DIALECT
    faults_type = ResponsesFaults
    faults: ResponsesFaults

    def __init__(self, *, script: Any = None, faults: Any = None,
                 background_polls: int | None = None) -> None:
        super().__init__(script=script, faults=faults)
        polls = next((v for v in (background_polls, self.faults.background_polls)
                      if v is not None), 1)
        self.service = EmulatedService(self.script, background_polls=polls,
                                       intake=self.intake)

    def error_body(self, status: int, message: str) -> Any:
        kind = {429: "requests", 500: "server_error", 502: "server_error",
                503: "server_error"}.get(status, "invalid_request_error")
        code = "rate_limit_exceeded" if status == 429 else None
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    # ------------------------------------------------------------------ HTTP
    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        s = self.service
        routes: list[Route] = []
        forms = (("/v1", "openai"), ("", "openai"), ("/openai/v1", "azure"),
                 ("/openai", "azure-dated"), ("/api/projects/{project}/openai/v1", "foundry"))
        for prefix, form in forms:
            def add(path: str, handler: Handler, method: str, form: str = form,
                    prefix: str = prefix) -> None:
                routes.append(Route(prefix + path, self._endpoint(handler, form),
                                    methods=[method]))
            add("/responses", self._create, "POST")
            add("/responses/{response_id}", self._retrieve, "GET")
            add("/responses/{response_id}/cancel",
                lambda r, p: _json(s.cancel(p["response_id"])), "POST")
            add("/conversations", lambda r, p: _json_body(r, s.create_conversation), "POST")
            add("/conversations/{conversation_id}",
                lambda r, p: _json(s.conversation(p["conversation_id"]).conversation), "GET")
            add("/conversations/{conversation_id}", self._update_conversation, "POST")
            add("/conversations/{conversation_id}",
                lambda r, p: _json(s.delete_conversation(p["conversation_id"])), "DELETE")
            add("/conversations/{conversation_id}/items",
                lambda r, p: _json_body(r, lambda b: s.add_items(p["conversation_id"], b)),
                "POST")
            add("/conversations/{conversation_id}/items",
                lambda r, p: _json(s.list_items(p["conversation_id"], r.query_params)), "GET")
        project = "/api/projects/{project}/agents/{name}/versions"
        routes += [
            Route(project, self._endpoint(lambda r, p: _json_body(
                r, lambda b: s.create_agent_version(p["name"], b)), "project"),
                methods=["POST"]),
            Route(project, self._endpoint(lambda r, p: _json(
                s.list_agent_versions(p["name"], r.query_params)), "project"), methods=["GET"]),
            Route(project + "/{version}", self._endpoint(lambda r, p: _json(
                s.agent_version(p["name"], p["version"])), "project"), methods=["GET"]),
            Route("/api/projects/{project}/deployments", self._endpoint(
                lambda r, p: _json(s.list_deployments()), "project"), methods=["GET"]),
        ]
        return Starlette(routes=routes)

    def _endpoint(self, handler: Handler, form: str) -> Callable[[Any], Awaitable[Any]]:
        from starlette.responses import JSONResponse

        async def endpoint(request: Any) -> Any:
            try:
                _authorize(request, form)
                if form == "project" and request.query_params.get("api-version") != "v1":
                    raise ApiError(400, "Missing or unsupported api-version; use v1.",
                                   param="api-version")
                if form == "azure-dated" and not request.query_params.get("api-version"):
                    raise ApiError(404, "Resource not found", code="404")
                request.state.form = form
                result = handler(request, dict(request.path_params))
                return await result if inspect.isawaitable(result) else result
            except ApiError as exc:
                body = exc.body()
                if form == "project":  # azure-core's ApiErrorResponse
                    body = {"error": {"code": exc.code or str(exc.status),
                                      "message": exc.message}}
                return JSONResponse(body, status_code=exc.status)

        return endpoint

    async def _create(self, request: Any, params: dict[str, Any]) -> Any:
        body = await _read_json(request)
        stored = self.service.create(body, foundry=request.state.form == "foundry")
        if isinstance(body, dict) and body.get("stream"):
            return self._stream(stored, -1)
        if stored.final["background"]:
            return _response({**stored.current(), "status": "queued"})
        return _response(stored.final)

    async def _retrieve(self, request: Any, params: dict[str, Any]) -> Any:
        response_id = params["response_id"]
        if request.query_params.get("stream") == "true":
            stored = self.service.response(response_id)
            if not stored.final["background"]:
                raise ApiError(400, "This response cannot be streamed because it was not "
                               "created with background=true.", param="stream")
            try:
                after = int(request.query_params.get("starting_after", "-1"))
            except ValueError:
                raise ApiError(400, "Invalid 'starting_after': expected an integer.",
                               param="starting_after", code="invalid_type") from None
            return self._stream(stored, after)
        return _response(self.service.read(response_id))

    async def _update_conversation(self, request: Any, params: dict[str, Any]) -> Any:
        body = await _read_json(request)
        conversation = self.service.conversation(params["conversation_id"])
        if not isinstance(body, dict) or "metadata" not in body:
            raise ApiError(400, "Missing required parameter: 'metadata'.", param="metadata",
                           code="missing_required_parameter")
        conversation.conversation["metadata"] = dict(body["metadata"] or {})
        return _json(conversation.conversation)

    def _stream(self, stored: StoredResponse, after: int) -> Any:
        from starlette.responses import StreamingResponse

        stored.polls_left = 0  # the stream delivers the response to its end

        async def events() -> AsyncIterator[tuple[str | None, Any]]:
            for event in stored.events:
                if event["sequence_number"] > after:
                    yield event["type"], event

        return StreamingResponse(sse_frames(events(), self.faults),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})


def _authorize(request: Any, form: str) -> None:
    headers = request.headers
    bearer = headers.get("authorization", "").startswith("Bearer ")
    if form.startswith("azure") and (bearer or headers.get("api-key")):
        return
    if bearer:
        return
    if form in ("foundry", "project"):
        raise ApiError(401, "Unauthorized. Access token is missing, invalid, audience is "
                       "incorrect (https://ai.azure.com), or have expired.",
                       code="PermissionDenied")
    raise ApiError(401, _NO_KEY)


async def _read_json(request: Any) -> Any:
    raw = await request.body()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise ApiError(400, "We could not parse the JSON body of your request.",
                       code="invalid_json") from None


async def _json_body(request: Any, action: Callable[[Any], Any]) -> Any:
    return _json(action(await _read_json(request)))


def _json(data: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(data)


def _response(data: Any) -> Any:
    return _json(data)
