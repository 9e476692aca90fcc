"""The complete example of docs/testing.md runs as a user runs it: plain pytest on the file,
outside this repository, with toolbridge's pytest plugin found through its entry point."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from toolbridge.testing import installed_dialects

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / \
    "test_toolbox_on_every_backend.py"


def test_the_documented_example_passes_on_every_installed_backend(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
         "ignore::DeprecationWarning", EXAMPLE.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    tests = len(re.findall(r"^@every_backend$", EXAMPLE.read_text(), re.M))
    assert tests == 3
    assert f"{tests * len(installed_dialects())} passed" in done.stdout, done.stdout


def test_the_example_is_shown_in_the_docs() -> None:
    page = (EXAMPLE.parents[1] / "testing.md").read_text(encoding="utf-8")
    assert f'--8<-- "{EXAMPLE.name}"' in page
