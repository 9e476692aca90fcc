"""The Assistants API on loopback: OpenAI (``/v1/...``), Azure (``/openai/...``) and Foundry
classic agents (``/api/projects/{project}/...``: ``api-version=v1``, Entra bearer token only,
no ``OpenAI-Beta`` header, no ``strict`` on functions, ``GET /threads`` lists threads,
``GET /deployments`` lists ``service.deployments``).

Strict like the real service (see `_emulator_state`); streams SSE with ``data: [DONE]``;
sends ``openai-poll-after-ms`` on every answer; unknown paths get the service's 404 body
(Azure: ``Resource not found``; OpenAI: ``Invalid URL``). Faults (`AssistantsFaults`): the
shared stream ones plus ``expire_after`` (seconds until a run expires).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from toolbridge.testing.emulators import Emulator, sse_frames

from ._emulator_state import ApiError, EmulatedService, Event
from .options import AssistantsFaults
from .wire import DIALECT

__all__ = ["AssistantsEmulator"]

Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]

_AZURE_NOT_FOUND = {"error": {"code": "404", "message": "Resource not found"}}
_AZURE_DENIED = {"error": {"code": "401", "message": (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide "
    "a valid key for an active subscription and use a correct regional API endpoint for your "
    "resource.")}}


class AssistantsEmulator(Emulator):
    """Assistants, threads, messages and runs, with a scripted model.

    ``poll_after_ms`` is the ``openai-poll-after-ms`` hint sent on every answer (read per
    answer, so changing it mid-run takes effect at once);
    ``expire_after`` (also accepted as a fault) is the run lifetime in seconds.
    """

    dialect = DIALECT
    faults_type = AssistantsFaults
    faults: AssistantsFaults

    def __init__(self, *, script: Any = None, faults: Any = None, poll_after_ms: int = 20,
                 expire_after: float | None = None) -> None:
        super().__init__(script=script, faults=faults)
        lifetime = next((v for v in (expire_after, self.faults.expire_after) if v is not None),
                        600.0)
        self.poll_after_ms = poll_after_ms
        self.service = EmulatedService(self.script, expire_after=float(lifetime),
                                       intake=self.intake)

    def error_body(self, status: int, message: str) -> Any:
        kind = {429: "requests", 500: "server_error", 502: "server_error",
                503: "server_error"}.get(status, "invalid_request_error")
        code = "rate_limit_exceeded" if status == 429 else None
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    # ------------------------------------------------------------------ HTTP
    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Mount, Route

        s = self.service

        async def assistants(r: Any, b: dict[str, Any]) -> Any:
            if r.method == "GET":
                return s.list_assistants(r.query_params)
            if r.state.form == "foundry":
                _refuse_strict(b)
            return s.create_assistant(b)

        async def threads(r: Any, b: dict[str, Any]) -> Any:
            if r.method == "GET":
                return s.list_threads(r.query_params)
            return s.create_thread(b)

        async def get_assistant(r: Any, b: dict[str, Any]) -> Any:
            return s.get_assistant(r.path_params["assistant_id"])

        async def get_thread(r: Any, b: dict[str, Any]) -> Any:
            return s.get_thread(r.path_params["thread_id"])

        async def messages(r: Any, b: dict[str, Any]) -> Any:
            if r.method == "GET":
                return s.list_messages(r.path_params["thread_id"], r.query_params)
            return s.create_message(r.path_params["thread_id"], b)

        async def create_run(r: Any, b: dict[str, Any]) -> Any:
            if r.method == "GET":
                return s.list_runs(r.path_params["thread_id"], r.query_params)
            run, events = s.create_run(r.path_params["thread_id"], b, bool(b.get("stream")))
            return events if b.get("stream") else run

        async def get_run(r: Any, b: dict[str, Any]) -> Any:
            return s.get_run(r.path_params["thread_id"], r.path_params["run_id"])

        async def submit(r: Any, b: dict[str, Any]) -> Any:
            run, events = s.submit(r.path_params["thread_id"], r.path_params["run_id"], b,
                                   bool(b.get("stream")))
            return events if b.get("stream") else run

        async def steps(r: Any, b: dict[str, Any]) -> Any:
            return s.list_steps(r.path_params["thread_id"], r.path_params["run_id"],
                                r.query_params)

        async def cancel(r: Any, b: dict[str, Any]) -> Any:
            return s.cancel(r.path_params["thread_id"], r.path_params["run_id"])

        async def deployments(r: Any, b: dict[str, Any]) -> Any:
            return {"value": [{"type": "ModelDeployment", "name": name, "modelName": model,
                               "modelVersion": "1", "modelPublisher": "OpenAI"}
                              for name, model in s.deployments.items()]}

        def routes(form: str) -> list[Route]:
            table: list[tuple[str, Handler, list[str]]] = [
                ("/assistants", assistants, ["GET", "POST"]),
                ("/assistants/{assistant_id}", get_assistant, ["GET"]),
                ("/threads", threads, ["GET", "POST"] if form == "foundry" else ["POST"]),
                ("/threads/{thread_id}", get_thread, ["GET"]),
                ("/threads/{thread_id}/messages", messages, ["GET", "POST"]),
                ("/threads/{thread_id}/runs", create_run, ["GET", "POST"]),
                ("/threads/{thread_id}/runs/{run_id}", get_run, ["GET"]),
                ("/threads/{thread_id}/runs/{run_id}/submit_tool_outputs", submit, ["POST"]),
                ("/threads/{thread_id}/runs/{run_id}/cancel", cancel, ["POST"]),
                ("/threads/{thread_id}/runs/{run_id}/steps", steps, ["GET"]),
            ]
            if form == "foundry":  # the project's deployments (azure-ai-projects)
                table.append(("/deployments", deployments, ["GET"]))
            return [Route(path, self._endpoint(handler, form), methods=methods)
                    for path, handler, methods in table]

        return Starlette(routes=[
            Mount("/v1", routes=[*routes("openai"), self._unknown(False)]),
            Mount("/openai", routes=[*routes("azure"), self._unknown(True)]),
            Mount("/api/projects/{project}", routes=[*routes("foundry"), self._unknown(True)])])

    def _hint(self) -> dict[str, str]:
        return {"openai-poll-after-ms": str(self.poll_after_ms)}

    def _unknown(self, azure: bool) -> Any:
        """Any other path under the prefix: the service's own 404, not Starlette's text."""
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def not_found(request: Any) -> Any:
            if azure:
                return JSONResponse(_AZURE_NOT_FOUND, status_code=404, headers=self._hint())
            error = ApiError(404, f"Invalid URL ({request.method} {request.url.path})")
            return JSONResponse(error.body(), status_code=404, headers=self._hint())

        return Route("/{path:path}", not_found, methods=["GET", "POST", "DELETE", "PUT",
                                                         "PATCH"])

    def _endpoint(self, handler: Handler, form: str) -> Callable[[Any], Awaitable[Any]]:
        from starlette.responses import JSONResponse, StreamingResponse

        async def endpoint(request: Any) -> Any:
            hint = self._hint()  # read per answer: tests change poll_after_ms mid-run
            request.state.form = form
            denied = self._check_request(request, form)
            if denied is not None:
                return JSONResponse(denied[1], status_code=denied[0], headers=hint)
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = None
            if not isinstance(body, dict):
                error = ApiError(400, "We could not parse the JSON body of your request. (HINT: "
                                 "This likely means you aren't using your HTTP library "
                                 "correctly. The OpenAI API expects a JSON payload, but what "
                                 "was sent was not valid JSON.")
                return JSONResponse(error.body(), status_code=400, headers=hint)
            try:
                result = await handler(request, body)
            except ApiError as exc:
                return JSONResponse(exc.body(), status_code=exc.status, headers=hint)
            if isinstance(result, list):
                return StreamingResponse(
                    sse_frames(_aiter(result), self.faults, done=b"event: done\ndata: [DONE]\n\n"),
                    media_type="text/event-stream", headers=hint)
            return JSONResponse(result, headers=hint)

        return endpoint

    @staticmethod
    def _check_request(request: Any, form: str) -> tuple[int, Any] | None:
        headers = request.headers
        if form == "foundry":
            if request.query_params.get("api-version") != "v1":
                return 400, ApiError(400, "Missing or unsupported api-version; use v1.").body()
            if not headers.get("authorization", "").startswith("Bearer ") or headers.get(
                    "api-key"):
                return 401, {"error": {"code": "PermissionDenied", "message": (
                    "Foundry classic agents take a Microsoft Entra ID bearer token "
                    "(scope https://ai.azure.com/.default); API keys are not accepted.")}}
            return None
        if form == "azure":
            if not request.query_params.get("api-version"):
                return 404, _AZURE_NOT_FOUND
            bearer = headers.get("authorization", "").startswith("Bearer ")
            if not headers.get("api-key") and not bearer:
                return 401, _AZURE_DENIED
            return None
        if not headers.get("authorization", "").startswith("Bearer "):
            return 401, ApiError(401, "You didn't provide an API key. You need to provide your "
                                 "API key in an Authorization header using Bearer auth (i.e. "
                                 "Authorization: Bearer YOUR_KEY).").body()
        if headers.get("openai-beta") != "assistants=v2":
            return 400, ApiError(400, "You must provide the 'OpenAI-Beta' header to access the "
                                 "Assistants API. Please try again by setting the header "
                                 "'OpenAI-Beta: assistants=v2'.").body()
        return None


def _refuse_strict(body: dict[str, Any]) -> None:
    """Foundry classic's FunctionDefinition has name, description and parameters only."""
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and "strict" in function:
            raise ApiError(400, f"Unknown parameter: 'tools[{i}].function.strict'.")


async def _aiter(events: list[Event]) -> AsyncIterator[tuple[str | None, Any]]:
    for name, data in events:
        yield name, data
