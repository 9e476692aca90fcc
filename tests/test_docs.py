"""Every ```python block in the docs and README runs, page by page, in one namespace per page,
and prints what the page says it prints.

The convention for what a block prints: a ```text block titled ``Output``

    ```text title="Output"

right after a ```python block (only blank lines between them) is that block's standard output.
It is compared line by line, ignoring trailing spaces; ``...`` in it stands for any text, within
a line or across lines (like doctest's ELLIPSIS). A block that prints without such a block
fails, so no printed example goes unchecked. A block holding a snippet include
(``--8<-- "name.py"``) runs the included file of docs/examples/, as the reader sees it.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolbridge.plugin._manager import _PLUGINS

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "docs" / "examples"
FENCE = re.compile(r"^```(?P<lang>[\w-]*)(?P<attrs>[^\n]*)\n(?P<body>.*?)^```[ \t]*$",
                   re.S | re.M)
INCLUDE = re.compile(r'^--8<-- "(?P<name>[^"]+)"$', re.M)
OUTPUT = 'title="Output"'


@dataclass(frozen=True)
class Example:
    code: str
    expected: str | None
    """What the block prints, from the Output block after it; None when there is none."""
    line: int


def examples(text: str, page: str) -> list[Example]:
    """The python blocks of a page, each with the Output block that follows it, if any."""
    fences = list(FENCE.finditer(text))
    found: list[Example] = []
    attached: set[int] = set()
    for index, fence in enumerate(fences):
        if fence.group("lang") != "python":
            continue
        after = fences[index + 1] if index + 1 < len(fences) else None
        expected = None
        if (after is not None and after.group("lang") == "text"
                and OUTPUT in after.group("attrs") and not text[fence.end():after.start()].strip()):
            expected = after.group("body")
            attached.add(index + 1)
        code = INCLUDE.sub(lambda m: (SNIPPETS / m.group("name")).read_text(encoding="utf-8"),
                           fence.group("body"))
        found.append(Example(code, expected, text.count("\n", 0, fence.start()) + 1))
    for index, fence in enumerate(fences):
        if OUTPUT in fence.group("attrs") and index not in attached:
            line = text.count("\n", 0, fence.start()) + 1
            raise AssertionError(f"{page}:{line}: an Output block must follow a python block")
    return found


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def matches(expected: str, actual: str) -> bool:
    """``actual`` is ``expected``, where ``...`` stands for any text."""
    pattern = ".*?".join(re.escape(part) for part in _lines(expected).split("..."))
    return re.fullmatch(pattern, _lines(actual), re.S) is not None


PAGES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
         if examples(p.read_text(encoding="utf-8"), p.name)]


@pytest.fixture(autouse=True)
def _fresh_plugins() -> Iterator[None]:
    _PLUGINS.reset()
    yield
    _PLUGINS.reset()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run_and_print_what_the_page_shows(
        page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # The page is a module while it runs, as a reader's file would be: what looks its own
    # module up (a pydantic model resolving its annotations when first built) finds it.
    module = types.ModuleType(f"docs_{page.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for example in examples(page.read_text(encoding="utf-8"), page.name):
        where = f"{page.name}:{example.line}"
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(example.code, where, "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{where} failed: {exc!r}\n{example.code}") from exc
        actual = printed.getvalue()
        if example.expected is None:
            assert not actual.strip(), (
                f'{where} prints, but no ```text title="Output" block follows it:\n{actual}')
        elif not matches(example.expected, actual):
            diff = "\n".join(difflib.unified_diff(
                _lines(example.expected).splitlines(), _lines(actual).splitlines(),
                "the page's Output", "what the block printed", lineterm=""))
            raise AssertionError(f"{where} printed something else:\n{diff}")


def test_output_blocks_are_compared() -> None:
    page = ('```python\nprint("a")\nprint("b c")\n```\n\n```text title="Output"\na\nb ...\n```\n'
            '```python\nx = 1\n```\n')
    first, second = examples(page, "page.md")
    assert first.expected == "a\nb ...\n" and second.expected is None
    assert matches(first.expected, "a\nb c  \n") and not matches(first.expected, "a\nc\n")
    assert matches("start\n...\nend", "start\none\ntwo\nend")
    with pytest.raises(AssertionError, match="must follow a python block"):
        examples('```text title="Output"\nx\n```\n', "page.md")


def test_readme_commands_are_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert first_block, "README must open with a bash block of two commands"
    commands = [c for c in first_block.group(1).splitlines() if c.strip()]
    assert len(commands) == 2
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text()
    assert commands[1] == "./scripts/test"
    assert "pip install" in commands[0] and "toolbridge" in commands[0]
