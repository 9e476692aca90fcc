"""Print ``-p <package>`` for every adapter and integration package, for mypy."""

from pathlib import Path

root = Path(__file__).resolve().parent.parent
packages = sorted(p for folder in ("adapters", "integrations") if (root / folder).is_dir()
                  for p in (root / folder).iterdir() if (p / "__init__.py").exists())
print(" ".join(f"-p {p.name}" for p in packages))
