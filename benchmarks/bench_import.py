"""Import cost: ``import toolbridge`` plus every built-in adapter, against ``import openai``.

Each sample is a fresh interpreter (``python -c``) that times its own imports with
``time.perf_counter`` (interpreter start-up is not counted: it is the same for every
configuration). Configurations are interleaved, sample by sample, so a busy machine slows them
alike; the median of each is reported with its ratio to ``import openai`` measured in the same
run. The floor is what any library built on pydantic and pluggy pays: pydantic with one model
class, plus pluggy.

Every module is imported from its cached bytecode, as an installed package is (pip compiles
it): the warm-up writes the ``.pyc`` files even where ``PYTHONDONTWRITEBYTECODE`` is set, so
toolbridge's own sources are not compiled in every sample while openai's come compiled.

    python benchmarks/bench_import.py            # --samples N
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Mapping

ADAPTERS = ["toolbridge_google_ces", "toolbridge_openai_agents", "toolbridge_openai_assistants",
            "toolbridge_openai_chat", "toolbridge_openai_responses"]

CONFIGS: dict[str, str] = {
    "openai": "import openai",
    "toolbridge + adapters": "import toolbridge\n" + "".join(f"import {a}\n" for a in ADAPTERS),
    "toolbridge + dialects()": "import toolbridge\ntoolbridge.dialects()",
    "floor (pydantic model + pluggy)": (
        "import pydantic, pluggy\n"
        "class Model(pydantic.BaseModel):\n"
        "    name: str\n"
        "    value: int = 0\n"),
}
"""What each sample runs; the baseline is ``openai``, the headline ``toolbridge + adapters``."""


def sample(code: str, env: Mapping[str, str] | None = None) -> float:
    """Seconds the imports of ``code`` take in a fresh interpreter (environment ``env``)."""
    timed = ("import time\n_t = time.perf_counter()\n" + code
             + "\nprint(time.perf_counter() - _t)\n")
    out = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True,
                         check=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15, help="fresh interpreters per config")
    args = parser.parse_args()
    # Warm the file system cache and write the .pyc files (see the module docstring).
    writing = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for code in CONFIGS.values():
        sample(code, writing)
    times: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for _ in range(args.samples):
        for name, code in CONFIGS.items():
            times[name].append(sample(code))
    base = statistics.median(times["openai"])
    print(f"python {sys.version.split()[0]}, {args.samples} fresh interpreters per config, "
          "median import time, modules loaded from their .pyc")
    print(f"{'configuration':34} {'ms':>8} {'ratio to openai':>16}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:34} {median * 1000:8.1f} {median / base:15.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
