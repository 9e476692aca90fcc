"""The public surface: pinned `__all__`, light import, typed package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import toolbridge

EXPECTED = {
    "ArgumentError", "BackendError", "Content", "Conversion", "Correlation", "Dialect",
    "DialectLimits", "DialectRegistry", "Emulator", "Faults", "ImagePart", "Journal",
    "MemoryStore", "Oversize", "PendingCalls", "PluginError", "PostgresStore", "RenderedTools",
    "ResultStore", "RetryPolicy", "RunningEmulator", "SchemaConversionError", "SSEDecoder",
    "SchemaLoss",
    "Script", "ScriptCall", "ScriptError", "ScriptedModel", "Secret", "SizePolicy",
    "SqliteStore", "StoreClaim", "StoreKey", "StoredResult", "StreamDropped", "TextPart",
    "ToolCall", "ToolChoice", "ToolContext", "ToolDefinition", "ToolDefinitionError",
    "ToolError", "ToolResult", "Toolbox", "ToolbridgeError", "Transcript", "TranscriptEntry",
    "UnknownDialectError", "UsageError", "WireFormatError", "__version__", "asend_with_retries",
    "build_http_request", "compile_decoder", "convert_schema", "decode_arguments", "dialects",
    "get_dialect", "hookimpl", "normalize_schema", "open_store", "output_text",
    "plugin_manager", "raise_for_backend", "register_plugin", "send_with_retries", "sse_frames",
    "to_json_schema", "tools_from_openapi",
}


def test_all_is_pinned() -> None:
    assert set(toolbridge.__all__) == EXPECTED, sorted(set(toolbridge.__all__) ^ EXPECTED)


def test_every_public_name_is_documented() -> None:
    docs = "\n".join(p.read_text() for p in (Path(__file__).parents[2] / "docs").rglob("*.md"))
    missing = [n for n in toolbridge.__all__
               if n != "__version__" and f"toolbridge.{n}" not in docs]
    assert not missing, f"public names without docs (add them to docs/reference.md): {missing}"


def test_every_exported_name_resolves() -> None:
    for name in toolbridge.__all__:
        assert getattr(toolbridge, name) is not None, name


def test_import_is_light() -> None:
    heavy = ["httpx", "jsonschema", "openai", "google", "openapi_pydantic", "starlette",
             "uvicorn", "sqlite3", "jsonschema_rs", "psycopg"]
    code = ("import sys, toolbridge\n"
            f"print([m for m in {heavy!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_package_is_typed() -> None:
    assert (Path(toolbridge.__file__).parent / "py.typed").exists()
