"""Every field of every recorded payload, deleted or given the wrong type: a typed error, never
a bare KeyError/TypeError/AttributeError (issue 4 §4)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge import WireFormatError

PAYLOADS = Path(__file__).parent / "adapters"
CASES = [
    ("openai-agents",
     "openai_agents/payloads/openai-agents-sessions.session.retrieve.response.json"),
    ("openai-agents", "openai_agents/payloads/openai-agents-sessions.requires-action.event.json"),
    ("openai-assistants",
     "openai_assistants/payloads/openai-assistants-runs.run.requires-action.response.json"),
    ("openai-assistants",
     "openai_assistants/payloads/openai-assistants-runs.stream.requires-action.event.json"),
    ("google-ces", "google_ces/payloads/google-ces.run-session.response.tool-calls.json"),
    ("openai-responses",
     "openai_responses/payloads/openai-responses.response.function-calls.json"),
    ("openai-responses",
     "openai_responses/payloads/openai-responses.response.background-queued.json"),
    ("openai-chat", "openai_chat/payloads/openai-chat.completion.tool-calls.response.json"),
    ("openai-chat", "openai_chat/payloads/openai-chat.tool-messages.request.json"),
]
WRONG = [None, 7, "text", [], {}, True]


def mutations(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, replacement) for every value: deleted (``...``) or replaced by a wrong type."""
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for key, value in items:
        here = (*path, key)
        yield here, ...
        for wrong in WRONG:
            if type(wrong) is not type(value):
                yield here, wrong
        yield from mutations(value, here)


def mutate(payload: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    out = copy.deepcopy(payload)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if replacement is ...:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return out


@pytest.mark.parametrize("dialect, sample", CASES, ids=[c[1].split("/")[-1] for c in CASES])
def test_malformed_payloads_raise_typed_errors(dialect: str, sample: str) -> None:
    payload = json.loads((PAYLOADS / sample).read_text())
    reader = toolbridge.get_dialect(dialect)
    tried = 0
    for path, replacement in mutations(payload):
        tried += 1
        try:
            reader.read_calls(mutate(payload, path, replacement))
        except WireFormatError as exc:
            assert exc.dialect == dialect and exc.field, (path, exc)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{dialect}: {'.'.join(map(str, path))} = {replacement!r} raised "
                        f"{type(exc).__name__}: {exc}")
    assert tried > 20


def test_malformed_chat_stream_chunks_raise_typed_errors() -> None:
    from toolbridge_openai_chat import assemble_chunks

    chunks = json.loads((PAYLOADS / "openai_chat/payloads/openai-chat.stream.tool-call.chunks.json"
                         ).read_text())
    for path, replacement in mutations(chunks):
        try:
            toolbridge.get_dialect("openai-chat").read_calls(
                assemble_chunks(mutate(chunks, path, replacement)))
        except WireFormatError as exc:
            assert exc.dialect == "openai-chat" and exc.field, (path, exc)
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{'.'.join(map(str, path))} = {replacement!r} raised "
                        f"{type(exc).__name__}: {exc}")
