"""Records beside the result store: the same API in memory, SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolbridge
from toolbridge.store import MemoryStore, Records, ResultStore, SqliteStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ResultStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        opened: ResultStore = SqliteStore(tmp_path / "results.db")
        yield opened
        opened.close()
        return
    url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TOOLBRIDGE_TEST_POSTGRES_URL is unset in CI")
        pytest.skip('no PostgreSQL server: run eval "$(scripts/postgres start)" first')
    schema = f"tb_{uuid.uuid4().hex[:12]}"
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    opened = toolbridge.open_store(f"{url}{'&' if '?' in url else '?'}table={schema}.calls")
    yield opened
    opened.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_get_put_delete_list(store: ResultStore) -> None:
    records = store.records()
    assert isinstance(records, Records) and store.records() is records
    assert records.get("ns", "a") is None
    records.put("ns", "a/1", "one")
    records.put("ns", "a/2", "two")
    records.put("ns", "b/1", "three")
    records.put("other", "a/1", "elsewhere")
    records.put("ns", "a/1", "one again")  # replaces
    assert records.get("ns", "a/1") == "one again"
    assert records.list("ns", "a/") == {"a/1": "one again", "a/2": "two"}
    assert records.list("ns") == {"a/1": "one again", "a/2": "two", "b/1": "three"}
    assert records.delete("ns", "a/2") and not records.delete("ns", "a/2")
    assert records.list("ns", "a/") == {"a/1": "one again"}
    assert records.get("other", "a/1") == "elsewhere"
    text = "é" * 10_000 + "\n\\u0000{}"
    records.put("ns", "unicode", text)
    assert records.get("ns", "unicode") == text
    with pytest.raises(TypeError):
        records.put("ns", "x", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NUL"):
        records.put("ns", "x", "a\0b")
    assert records.durable is store.durable


def test_sqlite_records_share_the_file_and_survive_the_process(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    code = ("import sys; from toolbridge.store import SqliteStore; "
            "s = SqliteStore(sys.argv[1]); s.records().put('ns', 'k', 'from a child'); "
            "s.close()")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)
    store = SqliteStore(path)
    assert store.records().get("ns", "k") == "from a child"
    import sqlite3

    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"toolbridge_calls", "toolbridge_records"} <= tables
    store.close()


def test_a_store_without_records_says_so() -> None:
    class Bare(MemoryStore):
        def records(self) -> None:  # type: ignore[override]
            return None

    assert Bare().records() is None
    assert ResultStore.records(MemoryStore()) is None  # the base: third-party stores
