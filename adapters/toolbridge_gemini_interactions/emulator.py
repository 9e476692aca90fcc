"""The Gemini Interactions API on loopback, strict and scripted.

``POST {base_url}/v1/interactions`` (``stream: true`` answers SSE), ``GET
{base_url}/v1/interactions/{id}`` (``?stream=true&last_event_id=...`` re-attaches), ``POST
.../{id}/cancel``, ``DELETE .../{id}`` (also under ``/v1beta``); the key in
``x-goog-api-key`` or ``?key=``. What google-genai's ``client.interactions`` sends, unchanged:
``genai.Client(api_key=..., http_options={"base_url": base_url})``. Faults: the shared and
stream ones.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from toolbridge.testing.emulators import Emulator, sse_frames

from ._emulator_state import ApiError, EmulatedService, StoredInteraction
from .options import InteractionsFaults
from .wire import DIALECT

__all__ = ["InteractionsEmulator"]

_NO_KEY = ("Method doesn't allow unregistered callers (callers without established "
           "identity). Please use API Key or other form of API consumer identity to call this "
           "API.")


class InteractionsEmulator(Emulator):
    """Interactions chained by ``previous_interaction_id``, with a scripted model;
    ``service`` holds them."""

    dialect = DIALECT
    faults_type = InteractionsFaults
    faults: InteractionsFaults

    def __init__(self, *, script: Any = None, faults: Any = None) -> None:
        super().__init__(script=script, faults=faults)
        self.service = EmulatedService(self.script, self.intake)

    def error_body(self, status: int, message: str) -> Any:
        return ApiError(status, message).body()

    def build_app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        routes = []
        for version in ("/v1", "/v1beta"):
            base = f"{version}/interactions"
            routes += [
                Route(base, self._endpoint(self._create), methods=["POST"]),
                Route(base + "/{id}", self._endpoint(self._get), methods=["GET"]),
                Route(base + "/{id}/cancel", self._endpoint(self._cancel), methods=["POST"]),
                Route(base + "/{id}", self._endpoint(self._delete), methods=["DELETE"]),
            ]
        return Starlette(routes=routes)

    def _endpoint(self, handler: Callable[[Any], Awaitable[Any]]
                  ) -> Callable[[Any], Awaitable[Any]]:
        from starlette.responses import JSONResponse

        async def endpoint(request: Any) -> Any:
            try:
                if not (request.headers.get("x-goog-api-key")
                        or request.query_params.get("key")):
                    raise ApiError(403, _NO_KEY)
                return await handler(request)
            except ApiError as exc:
                return JSONResponse(exc.body(), status_code=exc.status)

        return endpoint

    async def _create(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            raise ApiError(400, "Invalid JSON payload received.") from None
        stored = self.service.create(body)
        if isinstance(body, dict) and body.get("stream"):
            return self._stream(stored, None)
        return JSONResponse(stored.interaction)

    async def _get(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        stored = self.service.get(request.path_params["id"])
        if request.query_params.get("stream") == "true":
            return self._stream(stored, request.query_params.get("last_event_id"))
        return JSONResponse(stored.interaction)

    async def _cancel(self, request: Any) -> Any:
        stored = self.service.get(request.path_params["id"])
        raise ApiError(400, f"Interaction {stored.interaction['id']} is not running in the "
                       "background: only background interactions can be cancelled")

    async def _delete(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        stored = self.service.get(request.path_params["id"])
        del self.service.interactions[stored.interaction["id"]]
        return JSONResponse({})

    def _stream(self, stored: StoredInteraction, after: str | None) -> Any:
        from starlette.responses import StreamingResponse

        ids = [e["event_id"] for e in stored.events]
        if after is not None and after not in ids:
            raise ApiError(400, f"Invalid last_event_id {after!r} for this interaction")
        start = ids.index(after) + 1 if after is not None else 0

        async def events() -> AsyncIterator[tuple[str | None, Any]]:
            for event in stored.events[start:]:
                yield event["event_type"], event

        return StreamingResponse(sse_frames(events(), self.faults, done=b"data: [DONE]\n\n"),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})
