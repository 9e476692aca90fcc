"""Print ``-p <package>`` for every adapter package, for mypy."""

from pathlib import Path

root = Path(__file__).resolve().parent.parent / "adapters"
print(" ".join(f"-p {p.name}" for p in sorted(root.iterdir()) if (p / "__init__.py").exists()))
