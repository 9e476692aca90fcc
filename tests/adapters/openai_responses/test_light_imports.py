"""The hidden-cost rule for the two new adapters: `import toolbridge` loads neither, and each
package's __init__ loads its client (httpx) and emulator (starlette) only on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ["httpx", "starlette", "uvicorn", "openai", "jsonschema"]


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(sorted(m for m in "
                          f"{[*HEAVY, 'toolbridge_openai_responses', 'toolbridge_openai_chat']!r}"
                          " if m in sys.modules))"], capture_output=True, text=True, check=True)
    return list(eval(out.stdout))


def test_import_toolbridge_loads_no_adapter() -> None:
    assert _loaded("import toolbridge") == []


@pytest.mark.parametrize("package", ["toolbridge_openai_responses", "toolbridge_openai_chat"])
def test_adapter_init_is_light(package: str) -> None:
    assert _loaded(f"import {package}") == [package]


@pytest.mark.parametrize("package, use, module", [
    ("toolbridge_openai_responses", "ResponsesClient", "httpx"),
    ("toolbridge_openai_responses", "ResponsesEmulator().app", "starlette"),
    ("toolbridge_openai_chat", "ChatClient", "httpx"),
    ("toolbridge_openai_chat", "ChatEmulator().app", "starlette"),
])
def test_client_and_emulator_load_on_first_use(package: str, use: str, module: str) -> None:
    assert module in _loaded(f"import {package}\n{package}.{use}")
