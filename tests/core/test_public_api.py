"""The public surface: a pinned `__all__` per public module, light imports, typed package."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import toolbridge

EXPECTED: dict[str, set[str]] = {
    "toolbridge": {
        "ArgumentError", "BackendError", "Content", "Correlation", "DocumentPart", "ImagePart",
        "PluginError",
        "ResultStore", "SchemaConversionError", "TextPart", "ToolCall", "ToolChoice",
        "ToolContext", "ToolDefinition", "ToolDefinitionError", "ToolError", "ToolResult",
        "Toolbox", "ToolbridgeError", "Transcript", "UnknownDialectError", "UsageError",
        "WireFormatError", "__version__", "dialects", "get_dialect", "open_store",
    },
    "toolbridge.plugin": {
        "MAX_ARGUMENT_BYTES", "MAX_NESTING_DEPTH", "MAX_PAYLOAD_BYTES",
        "ApprovalItemsCapability", "ApprovesItems", "Arguments", "Backend", "BackendApproval",
        "CallRecord", "PendingRecords", "Reading", "reading", "Capabilities", "Connection",
        "DemoCapability", "Demos",
        "Dialect", "DialectLimits", "DialectOptions", "DialectRegistry",
        "DiscoveringConnection", "Emulates",
        "EmulatorCapability", "ImportedTools", "LossPolicy", "MigratesFrom", "MigratesTo",
        "MigrationSourceCapability", "MigrationTargetCapability", "OptionHelp", "PendingCalls",
        "RenderedTools", "ServeCapability", "ServeOptions", "Serves", "SkippedTool", "Step",
        "StepStatus", "StreamingBackend", "Translations", "capabilities",
        "dialects", "get_dialect", "hookimpl", "lazy_attributes", "lazy_module",
        "lazy_options",
        "nests_deeper_than", "plugin_manager", "read_arguments", "register_plugin",
    },
    "toolbridge.schema": {
        "Conversion", "HttpRequestSpec", "LossPolicy", "SchemaLoss", "SchemaSource",
        "SchemaTarget", "SchemaTransformer", "StrictParameters", "build_http_request",
        "compile_decoder", "decode_strict_arguments", "strict_parameters",
        "convert_schema", "decode_arguments", "normalize_root", "normalize_schema",
        "to_json_schema", "tools_from_openapi", "unwrap_arguments",
    },
    "toolbridge.tools": {
        "FunctionSignature", "HeartbeatHook", "NeedsApproval", "RegisteredTool", "ToolContext",
        "ToolRetry",
        "heartbeats",
        "inspect_function", "read_function_tool",
        "schema_validator",
    },
    "toolbridge.runtime": {
        "Approvals", "Executor", "InlineExecutor", "LoopExecutor", "Oversize", "Pipeline",
        "PlannedCall", "SizePolicy", "ThreadExecutor", "output_is_json", "output_text",
    },
    "toolbridge.store": {
        "ApprovalRequest", "Decision", "MemoryRecords", "MemoryStore", "PostgresStore",
        "Records", "ResultStore", "SqliteStore", "StoreCall", "StoreClaim", "StoreCompletion",
        "StoreKey", "StoredResult", "end_owner", "fingerprint", "idempotency_key", "new_owner",
        "open_store", "owner_alive",
    },
    "toolbridge.http": {
        "AsyncSender", "Call", "Drain", "Emit", "Endpoint", "Flow", "Open", "Pause", "Reader",
        "Relay", "Sender", "Network", "JsonEvents", "Assembler", "assembled",
        "aread_events", "read_events",
        "RetryPolicy", "SSEDecoder", "Secret", "asend_with_retries", "exclusive_transport",
        "json_object", "raise_for_backend", "redact_text", "redact_url", "send_with_retries",
        "transport_error", "transport_failure",
    },
    "toolbridge.serve": {
        "CHECKPOINTS", "DEFAULT_RECOVERY", "AnswerReport", "BackendItems", "DriverSettings",
        "EntryKind", "Job", "Status", "Transcript", "TranscriptEntry", "Worker",
        "aanswer_pending", "aconverse", "answer_pending", "converse", "hold", "message_key",
        "refuse_late", "results_key", "tool_timeout",
    },
    "toolbridge.emulation": set(),  # deprecated: every name moved (test_deprecated_paths.py)
    "toolbridge.migration": {
        "AgentPlan", "Fate", "FateKind", "FileRecords", "Ledger", "MigrationReport",
        "MigrationTarget", "ThreadOutcome", "ThreadPlan", "Verification", "Workload",
        "delete_orphans", "migrate", "orphan_lines", "read_export",
    },
    "toolbridge.migration.targets": {
        "CURRENT_MODELS", "DEFAULT_MODEL", "EXPORT_VERSION", "RETIRED_MODELS", "UNFINISHED_RUNS",
        "ModelChoice", "config_hash", "message_fates", "message_text", "remapped",
        "resolve_model", "setting_fates", "thread_metadata",
    },
    "toolbridge.telemetry": {"CAPTURE_ENV", "configure", "tracer"},
    "toolbridge.testing": {
        "MISBEHAVIOURS", "FailRule", "Faults", "MemoryDialect", "Misbehaviour", "RunningEmulator",
        "Script", "ScriptApproval", "ScriptCall", "ScriptError", "ScriptTurn", "ScriptedBackend",
        "ScriptedConnection", "SeamFault", "StreamFaults", "acheck_backend", "aconverse",
        "check_backend", "check_dialect", "converse", "emulated_options", "emulator",
        "installed_dialects",
    },
    "toolbridge.testing.emulators": {
        "Emulator", "EmulatorOptions", "EmulatorServer", "Intake", "Journal", "JournalEntry",
        "ModelCall", "OpenAIApiError", "ScriptedModel", "StreamDropped", "faults_from",
        "instrument", "missing_parameter", "run_app", "sse_frames", "strict_schema_problem",
        "wrong_type",
    },
}
# Public modules whose names are documented through their module (``::: toolbridge.errors``)
# or their re-export (the model, `Toolbox` at the top), not one by one under their own path.
EXPECTED.update({
    "toolbridge.errors": {
        "ArgumentError", "AwaitingApproval", "BackendError", "PluginError", "ReplyLostError",
        "SchemaConversionError", "ServeError", "ToolDefinitionError", "ToolError",
        "ToolbridgeError", "TurnTimeoutError", "UnknownDialectError", "UsageError",
        "WireFormatError",
    },
    "toolbridge.model": {
        "NAME_PATTERN", "Content", "Correlation", "DocumentPart", "ImagePart", "TextPart",
        "ToolCall", "ToolChoice", "ToolDefinition", "ToolResult", "ToolRetry",
    },
    "toolbridge.toolbox": {"Toolbox"},
    "toolbridge.examples": {"Customer", "Ticket", "tickets", "toolbox"},
    "toolbridge.pytest_plugin": {"toolbridge_emulator"},
    "toolbridge.cli": {"main"},
    "toolbridge.plugin.hookspecs": {"hookimpl", "hookspec"},
})
DOCUMENTED_AS_MODULES = {"toolbridge.errors", "toolbridge.model", "toolbridge.toolbox",
                         "toolbridge.examples", "toolbridge.pytest_plugin", "toolbridge.cli",
                         "toolbridge.plugin.hookspecs"}
MODULES = sorted(EXPECTED)
HEAVY = ["httpx", "jsonschema", "openai", "google", "openapi_pydantic", "starlette", "uvicorn",
         "sqlite3", "jsonschema_rs", "psycopg"]


def test_every_public_module_is_pinned() -> None:
    """Every module of the package with no private part in its path is pinned above."""
    root = Path(toolbridge.__file__).parent
    found = {".".join(("toolbridge", *p.relative_to(root).with_suffix("").parts)).removesuffix(
        ".__init__") for p in root.rglob("*.py")}
    public = {m for m in found if not any(part.startswith("_") for part in m.split("."))}
    assert public == set(EXPECTED), sorted(public ^ set(EXPECTED))


SAME_NAME_ELSEWHERE = {"aconverse", "converse"}
"""Names two public modules export as different objects, with one meaning: the testing forms
hold the same conversation as `toolbridge.serve`'s, on an emulator they start."""


def test_one_meaning_per_name() -> None:
    """A name exported by several public modules is one object (a re-export), and no module
    exports a name its own package path already means (``toolbridge.serve.serve``)."""
    found: dict[str, set[int]] = {}
    for module in MODULES:
        imported = importlib.import_module(module)
        for name in imported.__all__:
            found.setdefault(name, set()).add(id(getattr(imported, name)))
        assert module.rpartition(".")[2] not in imported.__all__, module
    different = {name for name, objects in found.items() if len(objects) > 1}
    assert different == SAME_NAME_ELSEWHERE, sorted(different)


@pytest.mark.parametrize("module", MODULES)
def test_all_is_pinned(module: str) -> None:
    exported = set(importlib.import_module(module).__all__)
    assert exported == EXPECTED[module], sorted(exported ^ EXPECTED[module])


@pytest.mark.parametrize("module", sorted(set(MODULES) - DOCUMENTED_AS_MODULES))
def test_every_public_name_is_documented(module: str) -> None:
    docs = "\n".join(p.read_text() for p in (Path(__file__).parents[2] / "docs").rglob("*.md"))
    missing = [n for n in importlib.import_module(module).__all__
               if n != "__version__" and f"{module}.{n}" not in docs]
    assert not missing, f"public names without docs (add them to docs/reference.md): {missing}"


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_resolves(module: str) -> None:
    imported = importlib.import_module(module)
    for name in imported.__all__:
        assert getattr(imported, name) is not None, name


@cache
def _attribute_docstrings(package: str) -> frozenset[str]:
    """The names given a docstring where they are assigned (a string right after
    ``NAME = ...``) in ``package``'s source files or the top level's private modules (what
    two subpackages share, ``toolbridge/_policy.py``), and the names its ``__init__`` imports
    them as (``from ._checkpoints import NAMESPACE as CHECKPOINTS``)."""
    root = Path(importlib.import_module(package).__file__ or "").parent
    shared = Path(toolbridge.__file__).parent.glob("_*.py")
    found = set()
    for path in itertools.chain(root.rglob("*.py"), shared):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, after in itertools.pairwise(body):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    init = ast.parse((root / "__init__.py").read_text(encoding="utf-8")).body
    found.update(alias.asname for node in init if isinstance(node, ast.ImportFrom)
                 for alias in node.names if alias.asname and alias.name in found)
    return frozenset(found)


def _has_docstring(module: str, name: str) -> bool:
    value = getattr(importlib.import_module(module), name)
    if inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value):
        return bool(inspect.getdoc(value))
    # data and type aliases (``hookimpl`` too, a pluggy marker): a docstring where assigned
    return name in _attribute_docstrings(module)


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_has_a_docstring(module: str) -> None:
    missing = [n for n in importlib.import_module(module).__all__
               if n != "__version__" and not _has_docstring(module, n)]
    assert not missing, f"public names without a docstring: {missing}"


@pytest.mark.parametrize("module", MODULES)
def test_import_is_light(module: str) -> None:
    """No public module pulls a heavy library in on import (``toolbridge.store`` not psycopg,
    ``toolbridge.http`` not httpx): each is imported where it is used."""
    code = (f"import sys, {module}\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_package_is_typed() -> None:
    assert (Path(toolbridge.__file__).parent / "py.typed").exists()


def test_library_logs_nothing_without_logging_configured() -> None:
    code = ("from toolbridge import Toolbox\n"
            "tb = Toolbox()\n"
            "@tb.tool\n"
            "def boom() -> str:\n"
            "    raise RuntimeError('handler failed')\n"
            "r = tb.execute([__import__('toolbridge').ToolCall(dialect='x', id='c1', name='boom',"
            " arguments={})])\n"
            "assert not r[0].success, r\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stderr == "", out.stderr


ADAPTERS = Path(__file__).parents[2] / "adapters"
BUILT_IN_ADAPTERS = sorted(p.name for p in ADAPTERS.iterdir() if (p / "__init__.py").exists())
"""Every adapter package in the repository (a new one is checked with no edit here)."""
DIALECTS = {name for name, d in toolbridge.dialects().items()
            if type(d).__module__.split(".")[0] in BUILT_IN_ADAPTERS}
NOT_ON_IMPORT = [
    *HEAVY, "asyncio", "ssl", "concurrent.futures", "docstring_parser", "pydantic.networks",
    # toolbridge's own heavy parts: the runtime's pipeline and workers, the store, the schema
    # engine, tool inspection, the serve driver, the emulator and the adapters' clients.
    "toolbridge.runtime._pipeline", "toolbridge.runtime._threads", "toolbridge.runtime._journal",
    "toolbridge.store", "toolbridge.schema", "toolbridge.tools", "toolbridge.toolbox",
    "toolbridge.serve", "toolbridge.testing.emulators._server",
    "toolbridge.testing.emulators._scripted",
    "toolbridge.http._transport",
    *(f"{a}.{m}" for a in BUILT_IN_ADAPTERS
      for m in ("client", "backend", "emulator", "serve", "tools_import")),
    # The translation layer: each adapter's translate module is a `lazy_module` (in
    # sys.modules, not run), and what running any of them would load: the runtime's
    # output_text, the plugin API's result types and argument reader, json. Chat's stream
    # assembler. The plugin API's option classes and serve seam.
    "json", "toolbridge.runtime", "toolbridge.plugin._translated", "toolbridge.plugin._arguments",
    "toolbridge.plugin._limits", "toolbridge_openai_chat.stream", "toolbridge.plugin._options",
    "toolbridge.plugin._backend",
]
"""What ``import toolbridge`` and every built-in adapter's package (plugin discovery imports them
all) must leave for first use; bench_import.py measures what that saves."""


def test_importing_toolbridge_and_every_adapter_is_light() -> None:
    code = (f"import sys, toolbridge, {', '.join(BUILT_IN_ADAPTERS)}\n"
            f"print([m for m in {NOT_ON_IMPORT!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_every_dialect_translates_on_first_use() -> None:
    """The lazy translate modules run when a dialect is first used, through `Dialect`."""
    code = ("import sys, toolbridge\n"
            "from toolbridge.plugin import RenderedTools\n"
            "tool = toolbridge.ToolDefinition(name='add', description='Adds.', parameters={"
            "'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']})\n"
            f"for name in {sorted(DIALECTS)!r}:\n"
            "    rendered = toolbridge.get_dialect(name).render_tools([tool])\n"
            "    assert isinstance(rendered, RenderedTools), rendered\n"
            "    assert len(rendered.definitions) == 1, (name, rendered)\n"
            "    assert 'add' in repr(rendered.definitions), (name, rendered)\n"
            "print(sorted(m for m in ('toolbridge.runtime', 'toolbridge.plugin._translated')"
            " if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(["toolbridge.plugin._translated", "toolbridge.runtime"])


def test_the_lazy_names_resolve_where_they_are_used() -> None:
    code = ("import sys, toolbridge\n"
            "assert 'toolbridge.toolbox' not in sys.modules\n"
            "box = toolbridge.Toolbox()\n"
            "@box.tool\n"
            "def add(a: int, b: int) -> int:\n"
            "    return a + b\n"
            "body = box.handle('openai-chat', {'role': 'assistant', 'tool_calls': [{'id': 'c',"
            " 'type': 'function', 'function': {'name': 'add',"
            " 'arguments': '{\"a\": 1, \"b\": 2}'}}]})\n"
            "assert body['messages'][0]['content'] == '3', body\n"
            "print(sorted(m for m in ('toolbridge.runtime._pipeline', 'toolbridge.store', "
            "'toolbridge.schema') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(["toolbridge.runtime._pipeline", "toolbridge.schema",
                                      "toolbridge.store"]), out.stdout + out.stderr
