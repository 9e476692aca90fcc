"""The CES service on loopback: tool resources and ``runSession``, strict, scripted."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbridge.schema import to_json_schema
from toolbridge.testing import Faults, Script, ScriptError
from toolbridge.testing.emulators import Emulator, ScriptedModel

from . import wire
from ._validate import (
    CONFIG_FIELDS,
    INPUT_TYPES,
    OUTPUT_ONLY,
    RESPONSE_FIELDS,
    TOOL_FIELDS,
    TOOL_PATH,
    TOOL_TYPES,
    Reject,
    camel,
    check_tool,
    numeric_enums,
    unknown,
)

__all__ = ["GoogleCesEmulator"]

_NO_ARGUMENT_TEXT = ("google-ces sends a call's arguments as args, a Struct (a JSON object), "
                     "never as text, so argument text that is not JSON cannot be expressed")

@dataclass
class _Session:
    model: ScriptedModel
    turn_index: int = 0
    pending: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """The listed calls waiting for their response, by (id, tool): a ToolResponse names
    both, so a repeated id naming another tool is a call of its own."""
    answered: set[tuple[str, str]] = field(default_factory=set)
    name: str = ""


class GoogleCesEmulator(Emulator):
    """CES ``runSession`` and tool resources, playing a `toolbridge.testing.Script`.

    A session's tools are its app's client-function tools. ``number_style`` says how Struct
    numbers (doubles) are printed: ``"proto"`` like protobuf JSON (``2``), ``"float"`` as
    ``2.0``; both round through a double, so integers above 2**53 lose precision as in CES.
    """

    dialect = "google-ces"

    def __init__(self, *, script: Any = None, faults: Faults | Mapping[str, Any] | None = None,
                 number_style: Literal["proto", "float"] = "proto") -> None:
        super().__init__(script=Script.load(script), faults=faults)
        self.number_style = number_style
        self.apps: dict[str, dict[str, dict[str, Any]]] = {}
        """App name -> tool resource name -> stored ``Tool``."""
        self.sessions: dict[str, _Session] = {}
        self.script_errors: list[str] = []

    def error_body(self, status: int, message: str) -> Any:
        return wire.error_body(status, message)

    def build_app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/{path:path}", self._dispatch,
                                       methods=["GET", "POST", "PATCH", "DELETE"])])

    # ------------------------------------------------------------------ plumbing
    def _json(self, body: Any, status: int = 200) -> Response:
        return Response(json.dumps(body), status, media_type="application/json")

    async def _dispatch(self, request: Request) -> Response:
        path = request.path_params["path"]
        numeric = "enum-encoding=int" in request.query_params.get("$alt", "")
        try:
            body: Any = None
            raw = await request.body()
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    raise Reject(400, "Invalid JSON payload received.") from None
            if request.method == "POST" and path.endswith(":runSession"):
                return self._json(self._run_session(path.removesuffix(":runSession"), body))
            match = TOOL_PATH.match(path)
            if match is None:
                raise Reject(404, f"The requested URL /v1/{path} was not found.")
            tool = self._tools(request, match, body)
            if tool is None:
                return self._json({})
            if isinstance(tool, list):
                return self._json({"tools": [numeric_enums(t) if numeric else t for t in tool]}
                                  if tool else {})
            return self._json(numeric_enums(tool) if numeric else tool)
        except Reject as exc:
            return self._json(wire.error_body(exc.code, exc.message, exc.status), exc.code)

    # ------------------------------------------------------------------ tool resources
    def _tools(self, request: Request, match: re.Match[str], body: Any) -> Any:
        app, tool_id = match.group("app"), match.group("tool")
        tools = self.apps.setdefault(app, {})
        method = request.method
        if tool_id is None:
            if method == "GET":
                return list(tools.values())
            if method != "POST":
                raise Reject(404, f"{method} is not supported on {app}/tools")
            if not isinstance(body, Mapping):
                raise Reject(400, "the request body must be a Tool object")
            tool_id = request.query_params.get("toolId") or uuid.uuid4().hex
            name = wire.tool_name(app, tool_id)
            if name in tools:
                raise Reject(409, f"Tool {name} already exists.")
            stored = self._stamp(name, check_tool(
                {k: v for k, v in body.items() if camel(k) not in OUTPUT_ONLY}), created=True)
            tools[name] = stored
            return stored
        name = wire.tool_name(app, tool_id)
        if name not in tools:
            raise Reject(404, f"Tool {name} not found.")
        if method == "GET":
            return tools[name]
        if method == "DELETE":
            del tools[name]
            return None
        if method != "PATCH" or not isinstance(body, Mapping):
            raise Reject(400, "PATCH needs a Tool object body")
        return self._patch(tools, name, body, request.query_params.get("updateMask"))

    def _patch(self, tools: dict[str, dict[str, Any]], name: str, body: Mapping[str, Any],
               mask: str | None) -> dict[str, Any]:
        current = tools[name]
        given = {camel(k): v for k, v in body.items()}
        if given.get("name", name) != name:
            raise Reject(400, f"tool.name {given['name']!r} does not match the URL")
        if "etag" in given and given["etag"] != current.get("etag"):
            raise Reject(409, "the tool changed since it was read (etag mismatch)", "ABORTED")
        merged = {k: v for k, v in current.items() if k not in OUTPUT_ONLY}
        paths = [p.strip() for p in mask.split(",") if p.strip()] if mask else [
            k for k in given if k not in OUTPUT_ONLY]
        for path in paths:
            parts = [camel(p) for p in path.split(".")]
            if parts[0] not in TOOL_FIELDS or parts[0] in OUTPUT_ONLY:
                raise Reject(400, f"updateMask: field {path!r} cannot be updated")
            source: Any = given
            target: dict[str, Any] = merged
            for part in parts[:-1]:
                source = source.get(part, {}) if isinstance(source, Mapping) else {}
                target = target.setdefault(part, {})
                if not isinstance(target, dict):
                    raise Reject(400, f"updateMask: {path!r} is not a message path")
            if isinstance(source, Mapping) and parts[-1] in source:
                target[parts[-1]] = source[parts[-1]]
            else:
                target.pop(parts[-1], None)
        if any(k in merged for k in TOOL_TYPES):  # a new type replaces the old one
            new = [k for k in TOOL_TYPES if k in given and k in paths]
            for kind in TOOL_TYPES:
                if new and kind not in new:
                    merged.pop(kind, None)
        tools[name] = self._stamp(name, check_tool(merged), created=False,
                                  create_time=current.get("createTime"))
        return tools[name]

    @staticmethod
    def _stamp(name: str, tool: dict[str, Any], *, created: bool,
               create_time: str | None = None) -> dict[str, Any]:
        now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
        stamped = {"name": name, **tool}
        function = tool.get("clientFunction")
        if isinstance(function, Mapping):
            stamped["displayName"] = function.get("name")
        stamped["createTime"] = now if created else (create_time or now)
        stamped["updateTime"] = now
        stamped["etag"] = uuid.uuid4().hex
        return stamped

    def declared(self, app: str) -> dict[str, tuple[str, dict[str, Any]]]:
        """Function name -> (tool resource name, JSON Schema of its arguments) in ``app``."""
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        for name, tool in self.apps.get(app, {}).items():
            function = tool.get("clientFunction")
            if isinstance(function, Mapping):
                params = function.get("parameters")
                schema = (to_json_schema(params, "ces").schema if isinstance(params, Mapping)
                          else {"type": "object"})
                out[str(function["name"])] = (name, schema)
        return out

    # ------------------------------------------------------------------ runSession
    def _run_session(self, session: str, body: Any) -> dict[str, Any]:
        try:
            parts = wire.parse_session(session)
        except ValueError as exc:
            raise Reject(404, str(exc)) from None
        if not wire.SESSION_ID_PATTERN.match(parts["session"]):
            raise Reject(400, f"session id {parts['session']!r} must match "
                               "[a-zA-Z0-9][a-zA-Z0-9-_]{4,62}")
        if not isinstance(body, Mapping):
            raise Reject(400, "the request body must be a RunSessionRequest object")
        for key in body:
            if camel(key) not in ("config", "inputs"):
                raise unknown(key, "")
        config = body.get("config", {})
        if not isinstance(config, Mapping):
            raise Reject(400, "config must be a SessionConfig object")
        for key in config:
            if camel(key) not in CONFIG_FIELDS:
                raise unknown(key, "config")
        if config.get("session", session) != session:
            raise Reject(400, f"config.session {config['session']!r} does not match the URL")
        inputs = body.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise Reject(400, "inputs is required: give at least one SessionInput")
        app = wire.app_of(session)
        state = self.sessions.get(session)
        if state is None:
            state = self.sessions[session] = _Session(ScriptedModel(
                self.script, new_id=lambda: f"toolcall-{uuid.uuid4().hex[:12]}",
                unsupported={"broken_json": _NO_ARGUMENT_TEXT}), name=session)
        state.model.declare({n: s for n, (_, s) in self.declared(app).items()})
        outputs: list[dict[str, Any]] = []
        for i, item in enumerate(inputs):
            outputs += self._input(state, app, item, f"inputs[{i}]")
        return {"outputs": outputs} if outputs else {}

    def _input(self, state: _Session, app: str, item: Any, where: str) -> list[dict[str, Any]]:
        if not isinstance(item, Mapping):
            raise Reject(400, f"{where} must be a SessionInput object")
        keys = {camel(k) for k in item}
        for key in keys - {*INPUT_TYPES, "willContinue"}:
            raise unknown(key, where)
        kinds = [k for k in INPUT_TYPES if k in keys]
        if len(kinds) != 1:
            raise Reject(400, f"{where} must set exactly one of {', '.join(INPUT_TYPES)}")
        value = item.get(kinds[0], item.get(re.sub(r"([A-Z])", r"_\1", kinds[0]).lower()))
        if kinds[0] == "text":
            if state.pending:
                raise Reject(400, "The session is waiting for the responses of tool calls "
                                   f"{sorted({i for i, _ in state.pending})}; send "
                                   "toolResponses before new input.", "FAILED_PRECONDITION")
            state.turn_index += 1
            state.model.start_turn(str(value))
            self.intake.took_message(state.name, str(value))
            return self._advance(state, app)
        if kinds[0] == "toolResponses":
            return self._answer(state, app, value, f"{where}.toolResponses")
        if kinds[0] == "variables":
            return []
        raise Reject(400, f"{where}: the emulator plays text sessions; {kinds[0]} input is "
                           "not emulated", "UNIMPLEMENTED")

    def _answer(self, state: _Session, app: str, value: Any,
                where: str) -> list[dict[str, Any]]:
        items = value.get("toolResponses", value.get("tool_responses")) if isinstance(
            value, Mapping) else None
        if not isinstance(items, list) or not items:
            raise Reject(400, f"{where}.toolResponses must be a non-empty list")
        accepted: list[tuple[tuple[str, str], Any]] = []
        for j, item in enumerate(items):
            here = f"{where}.toolResponses[{j}]"
            if not isinstance(item, Mapping):
                raise Reject(400, f"{here} must be a ToolResponse object")
            given = {camel(k): v for k, v in item.items()}
            for key in set(given) - RESPONSE_FIELDS:
                raise unknown(key, here)
            if "tool" in given and "toolsetTool" in given:
                raise Reject(400, f"{here}: tool and toolsetTool are one oneof; set one")
            call_id, tool = given.get("id"), given.get("tool")
            wanted = (call_id, tool) if isinstance(call_id, str) and isinstance(tool, str) else None
            if wanted is not None and (wanted in {k for k, _ in accepted} or (
                    wanted in state.answered and wanted not in state.pending)):
                raise Reject(400, f"{here}.id: tool call {call_id!r} of {tool!r} was already "
                                   "answered")
            tools = sorted(t for i, t in state.pending if i == call_id)
            if not tools:
                raise Reject(400, f"{here}.id: unknown tool call id {call_id!r}; pending: "
                                   f"{sorted({i for i, _ in state.pending})}")
            if wanted is None or wanted not in state.pending:
                raise Reject(400, f"{here}.tool must echo the call's tool "
                                   f"{' or '.join(map(repr, tools))}, got {tool!r}")
            response = given.get("response")
            if not isinstance(response, Mapping):
                raise Reject(400, f"{here}.response must be a JSON object (a Struct), e.g. "
                                   '{"output": ...}; got ' + type(response).__name__)
            accepted.append((wanted, response))
        self.intake.took_results(state.name, [call_id for (call_id, _), _ in accepted])
        for answered, response in accepted:
            del state.pending[answered]
            state.answered.add(answered)
            state.model.record(response["output"] if "output" in response else dict(response),
                               answered[0])
        return [] if state.pending else self._advance(state, app)

    def _advance(self, state: _Session, app: str) -> list[dict[str, Any]]:
        try:
            calls = state.model.next_round()
        except ScriptError as exc:
            self.script_errors.append(str(exc))
            raise Reject(400, f"emulator script error: {exc}", "FAILED_PRECONDITION") from None
        if not calls:
            return [{"text": state.model.reply(), "turnIndex": state.turn_index,
                     "turnCompleted": True}]
        declared = self.declared(app)
        wire_calls = []
        for call in calls:
            # An unknown tool is named by a resource the app does not have.
            tool = declared[call.name][0] if call.name in declared else f"{app}/tools/{call.name}"
            entry = {"id": call.id, "tool": tool, "displayName": call.name,
                     "args": self._struct(call.arguments)}
            # The session waits for what it lists, by id and tool: a hallucinated (reused) id
            # is pending again, a repeated id naming another tool is a call of its own.
            state.pending[(call.id, tool)] = entry
            wire_calls.append(entry)
        # Seed 003 shows toolCalls in an output that also says turnCompleted: true.
        return [{"toolCalls": {"toolCalls": wire_calls}, "turnIndex": state.turn_index,
                 "turnCompleted": True}]

    def _struct(self, value: Any) -> Any:
        """``value`` as a protobuf Struct holds it: every number a double."""
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        if isinstance(value, (int, float)):
            number = float(value)
            if self.number_style == "proto" and number.is_integer() and abs(number) < 1e17:
                return int(number)  # protobuf JSON prints integral doubles without ".0"
            return number
        if isinstance(value, Mapping):
            return {k: self._struct(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._struct(v) for v in value]
        return value
