"""Every ```python block in the docs and README runs, page by page, in one namespace per page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbridge.plugin._manager import _PLUGINS

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PAGES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
         if BLOCK.search(p.read_text())]


@pytest.fixture(autouse=True)
def _fresh_plugins() -> Iterator[None]:
    _PLUGINS.reset()
    yield
    _PLUGINS.reset()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{page.name}[block {number}]", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{page.name} block {number} failed: {exc!r}\n{code}") from exc


def test_readme_commands_are_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert first_block, "README must open with a bash block of two commands"
    commands = [c for c in first_block.group(1).splitlines() if c.strip()]
    assert len(commands) == 2
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text()
    assert commands[1] == "./scripts/test"
    assert "pip install" in commands[0] and "toolbridge" in commands[0]
