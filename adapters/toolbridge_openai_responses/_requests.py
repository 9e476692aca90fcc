"""The Responses API described once: every call and flow of both clients (they send them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from toolbridge import BackendError, WireFormatError
from toolbridge.http import Call, Drain, Flow, JsonEvents, Pause, raise_for_backend

from ._config import ClientConfig
from ._gather import StreamGatherer
from .wire import ACTIVE_STATUSES, DIALECT, MAX_ITEMS_PER_CREATE

__all__ = ["OnEvent", "Requests", "ResponseStreamError", "chunks", "decode", "events_reader"]

OnEvent = Callable[[dict[str, Any]], None] | None


class ResponseStreamError(BackendError):
    """A stream broke off where nothing can recover it (before ``response.created``)."""


def decode(response: httpx.Response, what: str) -> Any:
    raise_for_backend(response, f"{DIALECT}: {what}")
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise WireFormatError(DIALECT, "<body>", f"{what}: answer is not JSON",
                              response.text[:2000]) from None


def _reader(what: str) -> Callable[[httpx.Response], Any]:
    return lambda response: decode(response, what)


def _versions(what: str) -> Callable[[httpx.Response], Any]:
    """A page of agent versions; ``None`` for an unknown agent (404)."""
    return lambda response: None if response.status_code == 404 else decode(response, what)


def events_reader() -> JsonEvents:
    """A `toolbridge.http.Reader` of decoded events; ``[DONE]`` ends the stream, a drop
    ends it quietly."""
    return JsonEvents(DIALECT, "<event>")


def chunks(items: list[Any]) -> list[list[Any]]:
    """``items`` in requests of at most `MAX_ITEMS_PER_CREATE`."""
    return [items[i:i + MAX_ITEMS_PER_CREATE] for i in range(0, len(items),
                                                             MAX_ITEMS_PER_CREATE)] or [[]]


def _gathering(gatherer: StreamGatherer, on_event: OnEvent
               ) -> Callable[[dict[str, Any]], bool]:
    def take(event: dict[str, Any]) -> bool:
        if gatherer.feed(event) and on_event is not None:
            on_event(event)
        return gatherer.done

    return take


class Requests:
    """Every call and flow of both clients; `config` is their endpoint."""

    config: ClientConfig

    def _project(self, path: str) -> str:
        if self.config.project_endpoint is None:
            raise BackendError(f"{DIALECT}: agent versions live on a Foundry project; "
                               "construct the client with project_endpoint=...")
        return self.config.project_endpoint + path

    def _create_body(self, fields: Mapping[str, Any], stream: bool) -> dict[str, Any]:
        body = dict(fields)
        if self.config.agent is not None and "agent_reference" not in body:
            body["agent_reference"] = self.config.agent
        if stream:
            body["stream"] = True
        else:
            body.pop("stream", None)
        return body

    # ------------------------------------------------------------------ responses
    def _create(self, body: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "/responses", _reader("create response"),
                    body=self._create_body(body, False), idempotent=False)

    @staticmethod
    def _retrieve(response_id: str) -> Call[dict[str, Any]]:
        return Call("GET", f"/responses/{response_id}",
                    _reader(f"retrieve response {response_id}"))

    def _poll(self, response_id: str, timeout: float | None) -> Flow[dict[str, Any]]:
        import time

        started = time.monotonic()
        while True:
            response: dict[str, Any] = yield self._retrieve(response_id)
            if response.get("status") not in ACTIVE_STATUSES:
                return response
            if timeout is not None and time.monotonic() - started > timeout:
                raise BackendError(f"{DIALECT}: response {response_id} still "
                                   f"{response.get('status')} after {timeout:g} s",
                                   body=response)
            yield Pause(self.config.poll_interval)

    @staticmethod
    def _cancel(response_id: str) -> Call[dict[str, Any]]:
        return Call("POST", f"/responses/{response_id}/cancel",
                    _reader(f"cancel response {response_id}"))

    def _events(self, method: str, path: str, idempotent: bool, *, body: Any = None,
                params: Mapping[str, Any] | None = None) -> Call[None]:
        """A stream call; errors name it by its URL's path."""
        where = httpx.URL(self.config.base_url + path).path
        return Call(method, path, _reader(f"stream {where}"), body=body, params=params,
                    stream=True, idempotent=idempotent, what=f"{DIALECT}: {method} {where}")

    def _stream(self, body: Mapping[str, Any]) -> Call[None]:
        return self._events("POST", "/responses", False, body=self._create_body(body, True))

    def _attach(self, response_id: str, starting_after: int | None) -> Call[None]:
        return self._events("GET", f"/responses/{response_id}", True,
                            params={"stream": "true", "starting_after": starting_after})

    def _stream_response(self, on_event: OnEvent, body: Mapping[str, Any]
                         ) -> Flow[dict[str, Any]]:
        gatherer = StreamGatherer()
        take = _gathering(gatherer, on_event)
        yield Drain(self._stream(body), events_reader(), take)
        attempt = 0
        while not gatherer.done:
            if gatherer.response_id is None:
                raise ResponseStreamError(f"{DIALECT}: the stream broke off before "
                                          "response.created; the response id is unknown")
            attempt += 1
            if not gatherer.background or attempt >= self.config.retry.max_attempts:
                return (yield from self._poll(gatherer.response_id, None))
            yield Pause(self.config.retry.delay(attempt, None))
            yield Drain(self._attach(gatherer.response_id, gatherer.last_sequence), events_reader(),
                        take)
        return gatherer.result()

    # ------------------------------------------------------------------ conversations
    def _create_conversation(self, items: Sequence[Mapping[str, Any]],
                             metadata: Mapping[str, str] | None) -> Flow[dict[str, Any]]:
        first, *rest = chunks([dict(i) for i in items])
        body: dict[str, Any] = {"items": first}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        conversation = yield Call("POST", "/conversations", _reader("create conversation"),
                                  body=body, idempotent=False)
        for part in rest:
            yield from self._add_items(conversation["id"], part)
        result: dict[str, Any] = conversation
        return result

    @staticmethod
    def _retrieve_conversation(conversation_id: str) -> Call[dict[str, Any]]:
        return Call("GET", f"/conversations/{conversation_id}",
                    _reader(f"retrieve conversation {conversation_id}"))

    @staticmethod
    def _add_items(conversation_id: str, items: Sequence[Mapping[str, Any]]
                   ) -> Flow[list[dict[str, Any]]]:
        added: list[dict[str, Any]] = []
        for part in chunks([dict(i) for i in items]):
            page = yield Call("POST", f"/conversations/{conversation_id}/items",
                              _reader(f"add items to {conversation_id}"),
                              body={"items": part}, idempotent=False)
            added += page.get("data", [])
        return added

    @staticmethod
    def _list_items(conversation_id: str, after: str | None, limit: int, order: str
                    ) -> Call[dict[str, Any]]:
        return Call("GET", f"/conversations/{conversation_id}/items",
                    _reader(f"list items of {conversation_id}"),
                    params={"after": after, "limit": limit, "order": order})

    def _all_items(self, conversation_id: str) -> Flow[list[dict[str, Any]]]:
        items: list[dict[str, Any]] = []
        after = None
        while True:
            page = yield self._list_items(conversation_id, after, 100, "asc")
            items += page.get("data", [])
            if not page.get("has_more") or not page.get("last_id"):
                return items
            after = page["last_id"]

    # ------------------------------------------------------------------ Foundry agents
    def _create_agent_version(self, name: str, definition: Mapping[str, Any],
                              fields: Mapping[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", self._project(f"/agents/{name}/versions"),
                    _reader(f"create agent version of {name}"),
                    body={"definition": dict(definition), **fields},
                    params={"api-version": "v1"}, idempotent=False)

    def _list_agent_versions(self, name: str) -> Flow[list[dict[str, Any]]]:
        versions: list[dict[str, Any]] = []
        after = None
        while True:
            page = yield Call("GET", self._project(f"/agents/{name}/versions"),
                              _versions(f"list agent versions of {name}"),
                              params={"after": after, "limit": 100, "order": "asc",
                                      "api-version": "v1"})
            if page is None:
                return versions
            data = page.get("data") or []
            versions += data
            if not page.get("has_more") or not data:
                return versions
            after = data[-1]["id"]

    @staticmethod
    def _delete_conversation(conversation_id: str) -> Call[None]:
        return Call("DELETE", f"/conversations/{conversation_id}",
                    _reader(f"delete conversation {conversation_id}"))

    def _list_deployments(self) -> Flow[dict[str, str]]:
        """Every model deployment of the project, following ``nextLink`` pages."""
        found: dict[str, str] = {}
        url: str = self._project("/deployments")
        params: dict[str, Any] | None = {"api-version": "v1"}
        while True:
            page = yield Call("GET", url, _reader("list deployments"), params=params)
            for deployment in (page or {}).get("value") or []:
                if deployment.get("type", "ModelDeployment") == "ModelDeployment":
                    found[str(deployment["name"])] = str(deployment.get("modelName") or "")
            link = (page or {}).get("nextLink")
            if not link:
                return found
            url, params = str(link), None

    @staticmethod
    def _given(request: httpx.Request, idempotent: bool) -> Call[None]:
        """The call of a stream request built already (`events`)."""
        path = request.url.path
        return Call(request.method, path, _reader(f"stream {path}"), stream=True,
                    idempotent=idempotent, what=f"{DIALECT}: {request.method} {path}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.config!r}>"
