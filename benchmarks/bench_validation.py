"""Per-call argument validation over the schema corpus: toolbridge vs ``jsonschema.validate``.

Run: ``python benchmarks/bench_validation.py [--schemas N] [--repeat R]``. Prints the verdict
check (must be identical on every case) and the time ratio (target <= 0.01x).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsonschema
from _common import best_of, validation_cases

from toolbridge.errors import ArgumentError
from toolbridge.tools import schema_validator


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", type=int, default=None, help="use the first N schemas")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    cases = validation_cases(args.schemas)
    compiled = {}
    started = time.perf_counter()
    for schema, _ in cases:
        if id(schema) not in compiled:
            compiled[id(schema)] = schema_validator(schema)
    compile_s = time.perf_counter() - started
    checks = [(compiled[id(schema)], schema, instance) for schema, instance in cases]

    mismatches = 0
    valid = 0
    for check, schema, instance in checks:
        try:
            check(instance)
            ours = True
        except ArgumentError:
            ours = False
        try:
            jsonschema.validate(instance, schema)
            reference = True
        except jsonschema.ValidationError:
            reference = False
        valid += reference
        mismatches += ours != reference

    def ours_all() -> None:
        for check, _, instance in checks:
            with contextlib.suppress(ArgumentError):
                check(instance)

    def reference_all() -> None:
        for _, schema, instance in checks:
            with contextlib.suppress(jsonschema.ValidationError):
                jsonschema.validate(instance, schema)

    ours_s = best_of(ours_all, repeat=args.repeat)
    reference_s = best_of(reference_all, repeat=max(1, args.repeat // 2))
    n = len(checks)
    ratio = ours_s / reference_s
    print(f"cases: {n} ({valid} valid, {n - valid} invalid) over {len(compiled)} schemas; "
          f"compiled once in {compile_s * 1000:.0f} ms")
    print(f"verdicts identical to jsonschema: {n - mismatches}/{n}")
    print(f"toolbridge:          {ours_s / n * 1e6:9.2f} us/call")
    print(f"jsonschema.validate: {reference_s / n * 1e6:9.2f} us/call")
    print(f"ratio: {ratio:.4f}x (target <= 0.01x)")
    if mismatches:
        raise SystemExit(f"{mismatches} verdicts differ from jsonschema")
    return {"ratio": ratio, "cases": n, "mismatches": mismatches}


if __name__ == "__main__":
    main()
