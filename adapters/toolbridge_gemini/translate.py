"""Pure translations between the neutral model and ``generateContent`` (no I/O)."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolbridge import (
    Content,
    Correlation,
    DocumentPart,
    ImagePart,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UsageError,
    WireFormatError,
)
from toolbridge.plugin import (
    MAX_NESTING_DEPTH,
    CallRecord,
    PendingCalls,
    PendingRecords,
    lazy_module,
    nests_deeper_than,
    reading,
)

from .wire import DIALECT

if TYPE_CHECKING:
    from toolbridge import schema
else:
    schema = lazy_module("toolbridge.schema")  # the schema engine: on first use

__all__ = [
    "GeminiCorrelation",
    "function_response",
    "model_content_of",
    "read_calls",
    "read_records",
    "render_tool_choice",
    "write_records",
    "write_results",
]



class GeminiCorrelation(Correlation):
    """What answering a call needs: the wire id (Gemini may send none), the part it came in
    and the ``thoughtSignature`` that part carried (echoed with the model turn)."""

    call_id: str | None = None
    """``functionCall.id`` as sent; None when the model sent no id (then none is echoed)."""
    part: int = 0
    """Index of the ``functionCall`` part in the model content's ``parts``."""
    position: int | None = None
    """Index of the model content in the conversation's ``contents``, when known."""
    thought_signature: str | None = None
    """The part's ``thoughtSignature`` (base64), kept with the call."""


class _Asked(NamedTuple):
    """`GeminiCorrelation`'s fields, as a record holds them (`read_records`): the writer reads
    the wire id as it is; called, they are the correlation (`toolbridge.plugin.CallRecord`
    calls it when the record's `ToolCall` is made)."""

    call_id: str | None
    part: int
    position: int | None
    thought_signature: str | None

    def __call__(self) -> GeminiCorrelation:
        return GeminiCorrelation.trusted(call_id=self.call_id, part=self.part,
                                         position=self.position,
                                         thought_signature=self.thought_signature)


_new_asked = tuple.__new__  # _Asked(...) without its Python __new__


# ---------------------------------------------------------------------- pending calls
def model_content_of(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, int | None]:
    """The model content of ``payload``, its field path and its position (if known).

    Accepts a ``GenerateContentResponse`` (its first candidate: the others are
    alternatives), a ``Content`` of role ``model``, or a conversation ``{"contents": [...]}``
    ending with the model's content.
    """
    if "candidates" in payload:
        candidates = payload["candidates"]
        if not isinstance(candidates, list) or not candidates:
            raise WireFormatError(DIALECT, "candidates", "not a non-empty list (a blocked "
                                  "prompt has none: see promptFeedback)", payload)
        candidate = candidates[0]
        if not isinstance(candidate, Mapping):
            raise WireFormatError(DIALECT, "candidates[0]", "not an object", payload)
        content = candidate.get("content", {})
        if not isinstance(content, Mapping):
            raise WireFormatError(DIALECT, "candidates[0].content", "not an object", payload)
        return content, "candidates[0].content.", None
    if "contents" in payload:
        contents = payload["contents"]
        if not isinstance(contents, list) or not contents:
            raise WireFormatError(DIALECT, "contents", "not a non-empty list", payload)
        position = len(contents) - 1
        content = contents[position]
        at = f"contents[{position}]"
        if not isinstance(content, Mapping) or content.get("role") != "model":
            raise WireFormatError(DIALECT, f"{at}.role", "the last content is not the "
                                  "model's: nothing is pending", payload)
        return content, f"{at}.", position
    if "parts" in payload or "role" in payload:
        if payload.get("role", "model") != "model":
            raise WireFormatError(DIALECT, "role", "not the model's content", payload)
        return payload, "", None
    raise WireFormatError(DIALECT, "candidates", "missing: expected a GenerateContentResponse, "
                          "a model Content or {\"contents\": [...]}", payload)


def _turn(payload: Mapping[str, Any], position: int | None, conversation: str) -> str:
    if position is not None:
        return str(position)
    response_id = payload.get("responseId") if "candidates" in payload else None
    if isinstance(response_id, str) and response_id:
        return response_id
    raise UsageError(f"{DIALECT}: conversation={conversation!r} needs to know which turn the "
                     "calls belong to: pass the GenerateContentResponse (its responseId) or "
                     "the conversation {\"contents\": [...]} (the model's content last), not "
                     "a bare Content")


def _signature(part: Mapping[str, Any], where: str, payload: Any) -> str | None:
    signature = part.get("thoughtSignature")
    if signature is None:
        return None
    if not isinstance(signature, str):
        raise WireFormatError(DIALECT, f"{where}.thoughtSignature", "not a base64 string",
                              payload)
    return signature


def read_calls(payload: Mapping[str, Any], conversation: str | None = None) -> PendingCalls:
    """The ``functionCall`` parts of the model content, in order (parallel calls).

    Calls without an ``id`` get ``call_<part index>`` as their neutral id (none is echoed).
    With ``conversation`` calls are keyed ``(conversation, turn, id)`` in the result store,
    the turn being the content's position in ``{"contents": [...]}`` or the response's
    ``responseId``; without it nothing identifies the conversation and nothing is stored.
    """
    pending: PendingCalls = _read(payload, conversation, False)
    return pending


def read_records(payload: Mapping[str, Any], conversation: str | None = None) -> PendingRecords:
    """`read_calls`, the calls as the runtime's records (`Dialect.read_records`). Each
    record keeps its correlation's fields (writing reads the wire id), the correlation made
    only with the record's `ToolCall`."""
    pending: PendingRecords = _read(payload, conversation, True)
    return pending


def _read(payload: Mapping[str, Any], conversation: str | None, records: bool) -> Any:
    pending, make = reading(records)
    content, at, position = model_content_of(payload)
    turn = _turn(payload, position, conversation) if conversation is not None else ""
    parts = content.get("parts")
    if parts is None:
        return pending((), reason="the model content has no parts")
    if not isinstance(parts, list):
        raise WireFormatError(DIALECT, f"{at}parts", "not a list", payload)
    calls: list[Any] = []
    for i, part in enumerate(parts):
        # Exact types first (JSON gives dicts: the Mapping ABC check is slow per part); a
        # field path is formatted only for its error.
        if type(part) is not dict and not isinstance(part, Mapping):
            raise WireFormatError(DIALECT, f"{at}parts[{i}]", "not an object", payload)
        function = part.get("functionCall")
        if function is None:
            continue
        if type(function) is not dict and not isinstance(function, Mapping):
            raise WireFormatError(DIALECT, f"{at}parts[{i}].functionCall", "not an object",
                                  payload)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise WireFormatError(DIALECT, f"{at}parts[{i}].functionCall.name",
                                  "missing or not a non-empty string", payload)
        call_id = function.get("id")
        if call_id is not None and (not isinstance(call_id, str) or not call_id):
            raise WireFormatError(DIALECT, f"{at}parts[{i}].functionCall.id",
                                  "not a non-empty string", payload)
        args = function.get("args", {})
        error = None
        if args is None:
            args = {}
        if not isinstance(args, dict):
            args, error = {}, "functionCall.args is not a JSON object"
        elif nests_deeper_than(args, MAX_NESTING_DEPTH):
            args, error = {}, f"the arguments nest deeper than {MAX_NESTING_DEPTH} levels"
        signature = part.get("thoughtSignature")
        if signature is not None and type(signature) is not str:
            signature = _signature(part, f"{at}parts[{i}]", payload)
        calls.append(make(
            id=call_id or f"call_{i}", name=name, arguments=args, argument_error=error,
            dialect=DIALECT, conversation=conversation or "", turn=turn,
            # for records, the correlation's fields: made into it with the ToolCall, if ever
            correlation=_new_asked(_Asked, (call_id, i, position, signature)) if records
            else GeminiCorrelation.trusted(call_id=call_id, part=i, position=position,
                                           thought_signature=signature)))
    return pending(tuple(calls), (), "" if calls else
                   "the model content has no functionCall parts")



def decode_arguments(arguments: dict[str, Any], tool: ToolDefinition) -> dict[str, Any]:
    """Struct numbers are doubles: integral values become ints where the schema says
    integer; stringified enum values get their declared type back."""
    decoded = schema.compile_decoder(tool.parameters)(arguments)
    return decoded if isinstance(decoded, dict) else dict(arguments)


# ---------------------------------------------------------------------- results
def _response(result: ToolResult) -> dict[str, Any]:
    if not result.success:
        return {"error": result.error or "the tool failed"}
    output = result.output
    if isinstance(output, Content):
        output = output.as_text()
    return {"output": output}


def _document(part: DocumentPart) -> dict[str, Any]:
    """A ``FunctionResponsePart``: the file inline (``inlineData``) or by URI (``fileData``),
    named by its title when it has one."""
    named = {"displayName": part.title} if part.title else {}
    if part.data is not None:
        return {"inlineData": {"mimeType": part.media_type, "data": part.data, **named}}
    return {"fileData": {"mimeType": part.media_type, "fileUri": part.url, **named}}


def _image(part: ImagePart) -> dict[str, Any] | None:
    """A ``FunctionResponsePart`` for an image: a ``data:`` URL's bytes inline, an address by
    URI with the media type its name gives; ``None`` (the text alone) when it gives none."""
    if part.url.startswith("data:") and ";base64," in part.url:
        head, data = part.url.split(";base64,", 1)
        return {"inlineData": {"mimeType": head[5:], "data": data}}
    media_type = mimetypes.guess_type(part.url.split("?", 1)[0])[0]
    if media_type is None or not media_type.startswith("image/"):
        return None
    return {"fileData": {"mimeType": media_type, "fileUri": part.url}}


def _media(content: Content) -> list[dict[str, Any]]:
    media = [_document(p) if isinstance(p, DocumentPart) else _image(p)
             for p in content.parts if isinstance(p, (DocumentPart, ImagePart))]
    return [m for m in media if m is not None]


def function_response(result: ToolResult) -> dict[str, Any]:
    """``{"functionResponse": {id?, name, response, parts?}}`` answering one call: the call's
    wire id when it had one, and always its name (Gemini matches by both); documents of a
    content result as ``parts`` with its images, its text (describing them too) as the
    response."""
    corr = result.call.correlation
    entry: dict[str, Any] = {}
    call_id = corr.call_id if isinstance(corr, GeminiCorrelation) else result.call.id
    if call_id:
        entry["id"] = call_id
    entry["name"] = result.call.name
    entry["response"] = _response(result)
    if result.success and isinstance(result.output, Content):
        media = _media(result.output)
        if media:  # a multimodal response: the files beside the text describing them
            entry["parts"] = media
    return {"functionResponse": entry}


def write_results(results: Sequence[ToolResult]) -> dict[str, Any]:
    """``{"contents": [{"role": "user", "parts": [functionResponse, ...]}]}``: one turn with
    a part per call, appended after the model's content (which keeps its signatures)."""
    return {"contents": [{"role": "user", "parts": [function_response(r) for r in results]}]}


def write_records(records: Sequence[CallRecord]) -> dict[str, Any]:
    """`write_results` of answered records (`Dialect.write_records`)."""
    parts = []
    for record in records:
        output = record.output
        if record.success and isinstance(output, Content):
            result = record.result()
            assert result is not None  # answered
            parts.append(function_response(result))
            continue
        corr = record.correlation
        entry: dict[str, Any] = {}
        call_id = (corr.call_id if type(corr) is _Asked or isinstance(corr, GeminiCorrelation)
                   else record.id)
        if call_id:
            entry["id"] = call_id
        entry["name"] = record.name
        entry["response"] = ({"output": output} if record.success else
                             {"error": record.error or "the tool failed"})
        parts.append({"functionResponse": entry})
    return {"contents": [{"role": "user", "parts": parts}]}


def render_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """``toolConfig``: ``AUTO``, ``NONE``, ``ANY``, or ``ANY`` limited to one function."""
    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}[choice.mode]
    config: dict[str, Any] = {"mode": mode}
    if choice.mode == "tool" and choice.tool:
        config["allowedFunctionNames"] = [choice.tool]
    return {"functionCallingConfig": config}
