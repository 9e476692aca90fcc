"""Streamed ``chat.completion.chunk`` deltas assembled into one completion (pure, no I/O).

Per ``(choice index, tool_call index)``: the first non-empty ``id``, ``type`` and
``function.name`` win (servers that repeat them in later fragments are not concatenated, as
the SDK's accumulator would), ``function.arguments`` pieces are joined in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolbridge import WireFormatError

from .wire import DIALECT

__all__ = ["ChunkAssembler", "assemble_chunks"]


class _Choice:
    def __init__(self, index: int) -> None:
        self.index = index
        self.role = "assistant"
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.calls: dict[int, dict[str, Any]] = {}

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": self.role, "content": "".join(self.content) if self.content else None,
            "refusal": "".join(self.refusal) if self.refusal else None}
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": c["type"],
                 "function": {"name": c["name"], "arguments": "".join(c["arguments"])}}
                for _, c in sorted(self.calls.items())]
        return message


class ChunkAssembler:
    """Feed chunks as they arrive; `completion` is the assembled ``chat.completion``."""

    def __init__(self) -> None:
        self.id = ""
        self.model = ""
        self.created = 0
        self.usage: Any = None
        self._choices: dict[int, _Choice] = {}
        self.count = 0

    def feed(self, chunk: Any) -> None:
        """Add one chunk; `WireFormatError` names the malformed field."""
        at = f"chunks[{self.count}]"
        self.count += 1
        if not isinstance(chunk, Mapping):
            raise WireFormatError(DIALECT, at, "not an object", chunk)
        for field, kind in (("id", str), ("model", str), ("created", int)):
            value = chunk.get(field)
            if isinstance(value, kind) and value and not getattr(self, field):
                setattr(self, field, value)
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        choices = chunk.get("choices", [])
        if not isinstance(choices, list):
            raise WireFormatError(DIALECT, f"{at}.choices", "not a list", chunk)
        for j, choice in enumerate(choices):
            self._choice(choice, f"{at}.choices[{j}]", chunk)

    def _choice(self, choice: Any, at: str, chunk: Any) -> None:
        if not isinstance(choice, Mapping):
            raise WireFormatError(DIALECT, at, "not an object", chunk)
        index = choice.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            raise WireFormatError(DIALECT, f"{at}.index", "not an integer", chunk)
        state = self._choices.setdefault(index, _Choice(index))
        if isinstance(choice.get("finish_reason"), str):
            state.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") or {}
        if not isinstance(delta, Mapping):
            raise WireFormatError(DIALECT, f"{at}.delta", "not an object", chunk)
        if isinstance(delta.get("role"), str):
            state.role = delta["role"]
        for field, parts in (("content", state.content), ("refusal", state.refusal)):
            piece = delta.get(field)
            if piece is not None and not isinstance(piece, str):
                raise WireFormatError(DIALECT, f"{at}.delta.{field}", "not a string", chunk)
            if piece:
                parts.append(piece)
        calls = delta.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError(DIALECT, f"{at}.delta.tool_calls", "not a list", chunk)
        for k, fragment in enumerate(calls):
            self._fragment(state, fragment, f"{at}.delta.tool_calls[{k}]", chunk)

    @staticmethod
    def _fragment(state: _Choice, fragment: Any, at: str, chunk: Any) -> None:
        if not isinstance(fragment, Mapping):
            raise WireFormatError(DIALECT, at, "not an object", chunk)
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise WireFormatError(DIALECT, f"{at}.index", "missing or not an integer", chunk)
        call = state.calls.setdefault(index, {"id": "", "type": "function", "name": "",
                                              "arguments": []})
        function = fragment.get("function") or {}
        if not isinstance(function, Mapping):
            raise WireFormatError(DIALECT, f"{at}.function", "not an object", chunk)
        for field, value in (("id", fragment.get("id")), ("name", function.get("name"))):
            if value is not None and not isinstance(value, str):
                raise WireFormatError(DIALECT, f"{at}.{'function.' * (field == 'name')}{field}",
                                      "not a string", chunk)
            if value and not call[field]:
                call[field] = value
        if isinstance(fragment.get("type"), str) and fragment["type"]:
            call["type"] = fragment["type"]
        piece = function.get("arguments")
        if piece is not None and not isinstance(piece, str):
            raise WireFormatError(DIALECT, f"{at}.function.arguments", "not a string", chunk)
        if piece:
            call["arguments"].append(piece)

    @property
    def finished(self) -> bool:
        """Whether every choice seen so far has its ``finish_reason``."""
        return bool(self._choices) and all(c.finish_reason for c in self._choices.values())

    def completion(self) -> dict[str, Any]:
        """The assembled ``chat.completion`` (a choice without ``finish_reason`` keeps None)."""
        return {"id": self.id, "object": "chat.completion", "created": self.created,
                "model": self.model, "usage": self.usage,
                "choices": [{"index": c.index, "finish_reason": c.finish_reason,
                             "logprobs": None, "message": c.message()}
                            for _, c in sorted(self._choices.items())]}


def assemble_chunks(chunks: Iterable[Any]) -> dict[str, Any]:
    """One ``chat.completion`` from a stream's chunks (see `ChunkAssembler`)."""
    assembler = ChunkAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.completion()
