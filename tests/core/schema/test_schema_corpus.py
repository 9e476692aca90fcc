"""Every corpus schema converts to every target, and the target's own implementation accepts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schema_checks import CHECKS

from toolbridge.errors import SchemaConversionError
from toolbridge.schema import convert_schema

CORPUS = [json.loads(line) for line in
          (Path(__file__).parent / "corpus" / "corpus.jsonl").read_text().splitlines()]
# Uses remote `$ref`s (http://json-schema.org/...): must fail clearly, never half-convert.
EXPECTED_ERRORS = {"issue232-0"}


def test_corpus_is_large_and_varied():
    assert len(CORPUS) >= 300
    assert len({entry["origin"] for entry in CORPUS}) >= 5


@pytest.mark.parametrize("target", sorted(CHECKS))
def test_corpus_converts_and_target_accepts(target):
    converted = 0
    for entry in CORPUS:
        if entry["name"] in EXPECTED_ERRORS:
            with pytest.raises(SchemaConversionError, match="not local"):
                convert_schema(entry["schema"], target)
            continue
        conversion = convert_schema(entry["schema"], target)
        try:
            CHECKS[target](conversion.schema)
        except Exception as exc:  # name the schema that failed
            raise AssertionError(f"{entry['origin']} {entry['name']}: {exc}") from exc
        for loss in conversion.losses:
            assert loss.pointer == "" or loss.pointer.startswith("/"), loss
        converted += 1
    assert converted >= 300


def test_corpus_policies_error_and_lossless_list_what_fails_them():
    for entry in CORPUS[:60]:
        if entry["name"] in EXPECTED_ERRORS:
            continue
        described = convert_schema(entry["schema"], "ces")
        unenforced = tuple(loss for loss in described.losses if not loss.enforced)
        if not unenforced:
            assert convert_schema(entry["schema"], "ces", policy="error") == described
        else:
            with pytest.raises(SchemaConversionError) as info:
                convert_schema(entry["schema"], "ces", policy="error")
            assert info.value.losses == unenforced
        if described.lossless:
            assert convert_schema(entry["schema"], "ces", policy="lossless") == described
            continue
        with pytest.raises(SchemaConversionError) as info:
            convert_schema(entry["schema"], "ces", policy="lossless")
        assert info.value.losses == described.losses
