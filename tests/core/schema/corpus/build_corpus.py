"""Build the schema corpus: ``python tests/core/schema/corpus/build_corpus.py``.

Writes ``corpus.jsonl``: one ``{"origin": ..., "name": ..., "schema": ...}`` per line. See
README.md in this folder for the sources. Deterministic (seeded), so re-running gives the same
file for the same package versions.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import importlib
import inspect
import json
import pkgutil
import random
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, create_model

HERE = Path(__file__).parent
SITE = Path(pydantic.__file__).parent.parent


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    """A point."""

    x: float
    y: float = 0.0


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = Field(9, ge=0, le=9)


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


FIELD_POOL: list[tuple[Any, Any]] = [
    (str, ...), (int, ...), (float, ...), (bool, ...),
    (str | None, None), (int | None, None), (int, 3), (str, "x"),
    (Annotated[int, Field(gt=0, le=100)], ...), (Annotated[float, Field(ge=0, lt=1)], 0.5),
    (Annotated[str, Field(min_length=1, max_length=20)], ...),
    (Annotated[str, Field(pattern=r"^[a-z]+$")], ...),
    (Annotated[int, Field(multiple_of=5)], 10),
    (list[int], ...), (list[str], []), (set[int], set()), (tuple[int, str], ...),
    (tuple[float, ...], ()), (dict[str, int], {}), (dict[str, Any], {}), (Any, None),
    (Color, Color.RED), (Level, ...), (Literal["a", "b"], "a"), (Literal[1, 2, 3], 1),
    (dt.date, ...), (dt.datetime, ...), (uuid.UUID, ...), (decimal.Decimal, ...),
    (bytes, b""), (Point, ...), (Point | None, None), (list[Point], []),
    (int | str, ...), (Cat | Dog, ...),
    (Annotated[Cat | Dog, Field(discriminator="kind")], ...), (Node, ...),
    (Closed, ...), (list[int | None] | None, None),
    (Annotated[str, Field(description="A described field", examples=["ex"])], ...),
    (Annotated[int, Field(deprecated=True)], 0),
    (Annotated[list[int], Field(max_length=3)], []),
]


def generated(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` pydantic models with random field mixes from FIELD_POOL."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        fields = {f"f{j}_{rng.randrange(1000)}": rng.choice(FIELD_POOL)
                  for j in range(rng.randint(1, 8))}
        model = create_model(f"Generated{i}", __doc__=f"Generated model {i}.", **fields)
        out.append({"origin": "pydantic-generated", "name": model.__name__,
                    "schema": model.model_json_schema()})
    return out


def openai_sdk_models(count: int) -> list[dict[str, Any]]:
    """Real response/request models from the installed openai SDK, every k-th by name."""
    import openai.types

    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.walk_packages(openai.types.__path__, "openai.types."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # pragma: no cover - optional extras
            continue
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseModel)
                    and obj.__module__ == info.name):
                found[f"{info.name}.{name}"] = obj
    names = sorted(found)
    step = max(1, len(names) // count)
    out = []
    for name in names[::step][:count]:
        try:
            schema = found[name].model_json_schema()
        except Exception:  # pragma: no cover
            continue
        out.append({"origin": f"openai {openai.__version__} (openai.types)", "name": name,
                    "schema": schema})
    return out


def openapi_pydantic_models() -> list[dict[str, Any]]:
    """OpenAPI 3.0 and 3.1 document models of openapi-pydantic (large, recursive)."""
    from openapi_pydantic.v3 import v3_0, v3_1

    out = []
    for module in (v3_0, v3_1):
        for name in ("OpenAPI", "Operation", "Schema", "Parameter", "PathItem", "Components"):
            model = getattr(module, name)
            out.append({"origin": "openapi-pydantic 0.6.0", "name": f"{module.__name__}.{name}",
                        "schema": model.model_json_schema()})
    return out


def files() -> list[dict[str, Any]]:
    """Metaschemas from jsonschema-specifications, a jsonschema benchmark, protocol samples."""
    out = []
    specs = SITE / "jsonschema_specifications" / "schemas"
    for draft in ("draft4", "draft6", "draft7"):
        out.append({"origin": "jsonschema-specifications", "name": f"{draft} metaschema",
                    "schema": json.loads((specs / draft / "metaschema.json").read_text())})
    bench = SITE / "jsonschema" / "benchmarks" / "issue232" / "issue.json"
    if bench.exists():
        data = json.loads(bench.read_text())
        for i, case in enumerate(data if isinstance(data, list) else [data]):
            schema = case.get("schema") if isinstance(case, dict) else None
            if isinstance(schema, dict):
                out.append({"origin": "jsonschema benchmarks/issue232", "name": f"issue232-{i}",
                            "schema": schema})
    # The protocol reference beside the checkout (../shared), as when the corpus was built.
    samples = Path(__file__).resolve().parents[5] / "shared" / "protocols" / "samples"
    for path in sorted(samples.glob("openai-*tools.json")):
        for tool in json.loads(path.read_text()):
            fn = tool.get("function", tool)
            out.append({"origin": f"protocols/samples/{path.name}", "name": fn["name"],
                        "schema": fn["parameters"]})
    return out


def main() -> None:
    entries = [*files(), *openapi_pydantic_models(), *openai_sdk_models(160), *generated(200)]
    with (HERE / "corpus.jsonl").open("w") as fh:
        for entry in entries:
            fh.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
    print(f"wrote {len(entries)} schemas")


if __name__ == "__main__":
    main()
