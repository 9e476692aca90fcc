"""The PostgreSQL result store: one table for workers on several machines, liveness by lock.

Needs a server: ``eval "$(scripts/postgres start)"`` sets TOOLBRIDGE_TEST_POSTGRES_URL
(scripts/test does it). Without it these tests skip, except in CI, where they fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_cases import mixed_claim

import toolbridge
from toolbridge import Content, TextPart, Toolbox, UsageError, open_store
from toolbridge.store import PostgresStore, StoredResult, StoreKey

WORKER = Path(__file__).parent / "workers" / "store_worker.py"
KEY = StoreKey("echo", "conv-1", "", "call-1")
PAYLOAD = {"conversation": "conv-1", "calls": [{"id": "call-1", "tool": "charge",
                                                "args": {"amount": 5}}]}


@pytest.fixture
def pg_url() -> str:
    url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TOOLBRIDGE_TEST_POSTGRES_URL is unset in CI: scripts/test starts a "
                        "server with scripts/postgres")
        pytest.skip('no PostgreSQL server: run eval "$(scripts/postgres start)" first')
    return url


@pytest.fixture
def store_url(pg_url: str) -> Iterator[str]:
    """A URL naming a fresh table of its own, dropped afterwards."""
    table = f"tb_{uuid.uuid4().hex[:16]}"
    yield f"{pg_url}{'&' if '?' in pg_url else '?'}table={table}"
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}"')


@pytest.fixture
def store(store_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(store_url)
    yield opened
    opened.close()


def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


# ---------------------------------------------------------------------------- the store
def test_claim_complete_and_replay(store: PostgresStore) -> None:
    content = Content(parts=(TextPart(text="hi"), toolbridge.ImagePart(url="data:x")))
    for stored in (StoredResult(True, {"a": [1, "é"]}), StoredResult(True, content),
                   StoredResult(False, None, "boom")):
        key = KEY._replace(call_id=repr(stored)[:40])
        claim = store.claim_one(key, "tool", {})
        assert claim.state == "claimed"
        assert store.claim_one(key, "tool", {}).state == "running"
        assert store.complete(key, claim.owner, stored)
        again = store.claim_one(key, "tool", {})
        assert again.state == "completed" and again.result == stored
    reused = store.claim_one(KEY._replace(call_id=repr(stored)[:40]), "tool", {"other": 1})
    assert reused.state == "reused"  # the runtime refuses it


def test_one_claim_answers_new_stored_reused_held_and_abandoned_calls(store: PostgresStore
                                                                    ) -> None:
    mixed_claim(store)


def test_the_toolbox_replays_completed_calls(store_url: str, echo_dialect: str) -> None:
    toolbox = Toolbox(store=store_url)
    assert isinstance(toolbox.store, PostgresStore)
    runs: list[int] = []

    @toolbox.tool(side_effects=True)
    def charge(amount: int) -> str:
        runs.append(amount)
        return f"charged {amount}"

    first = toolbox.handle(echo_dialect, PAYLOAD)
    assert toolbox.handle(echo_dialect, PAYLOAD) == first
    assert runs == [5] and first["answers"][0]["value"] == "charged 5"
    toolbox.store.close()


def test_release_and_prune(store: PostgresStore) -> None:
    claim = store.claim_one(KEY, "t", {})
    store.release(KEY, "someone-else")
    assert store.get(KEY) is not None
    store.release(KEY, claim.owner)
    assert store.get(KEY) is None
    claim = store.claim_one(KEY, "t", {})
    assert claim.state == "claimed"
    store.complete(KEY, claim.owner, StoredResult(True, "x"))
    assert store.prune(older_than=60) == 0
    assert store.prune(older_than=-1) == 1
    assert store.get(KEY) is None


def test_threads_with_their_own_stores_claim_a_call_once(store_url: str) -> None:
    stores = [PostgresStore(store_url) for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    states: list[str] = []

    def contend(mine: PostgresStore) -> None:
        barrier.wait()
        states.append(mine.claim_one(KEY, "tool", {}).state)

    threads = [threading.Thread(target=contend, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(states) == ["claimed"] + ["running"] * 5
    for s in stores:
        s.close()


# ---------------------------------------------------------------------------- liveness
def test_a_started_call_is_running_while_its_lock_is_held(
    store: PostgresStore, pg_url: str
) -> None:
    """The owner's host and pid do not matter: only the advisory lock does."""
    import psycopg

    owner = "another-machine:4242:1234:abcdef:0"
    store._run("INSERT INTO {table} (dialect, conversation, turn, call_id, state, tool, "
               "fingerprint, owner, claimed_at, started_at) VALUES (%s, %s, %s, %s, 'started', "
               "'t', NULL, %s, %s, %s)", (*KEY, owner, time.time(), time.time()))
    found = store.get(KEY)
    assert found is not None and found.state == "abandoned" and found.owner == owner
    from toolbridge.store._postgres import _lock_id

    with psycopg.connect(pg_url, autocommit=True) as other:  # the worker elsewhere, alive
        other.execute("SELECT pg_advisory_lock(%s)", (_lock_id(store.table, *KEY),))
        assert store.get(KEY).state == "running"  # type: ignore[union-attr]
        assert store.claim_one(KEY, "t", {}).state == "running"
    wait_for(lambda: store.get(KEY).state == "abandoned")  # type: ignore[union-attr]
    claim = store.claim_one(KEY, "t", {})  # its worker is gone: taken over in the claim
    assert claim.state == "claimed" and claim.started_at > 0  # it had started
    assert store.claim_one(KEY, "t", {}).state == "running"  # ours now: nobody takes it
    assert store.complete(KEY, claim.owner, StoredResult(True, "reconciled"))


def test_a_result_stored_with_a_mark_keeps_its_lock_until_the_next_lock_work(
    store: PostgresStore, store_url: str, pg_url: str
) -> None:
    """The mark's thread runs its handler next: no unlock round trip between the two. A call
    whose result is committed is answered from its row, so its lock held a little longer
    changes no answer."""
    import psycopg

    from toolbridge.store import StoreCall, StoreCompletion
    from toolbridge.store._postgres_locks import LOCKED, lock_halves, lock_id

    def locked(key: StoreKey) -> bool:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            row = conn.execute(LOCKED, lock_halves(lock_id(store.table, *key))).fetchone()
        return bool(row and row[0])

    done, marked = KEY, KEY._replace(call_id="call-2")
    claims = store.claim([StoreCall(done, "t", {}), StoreCall(marked, "t", {})])
    owner = claims[0].owner
    assert store.write(started=[(marked, owner)],
                       completed=[StoreCompletion(done, owner, StoredResult(True, "one"))]
                       ) == [True]
    assert locked(done) and locked(marked)  # the result's lock waits for the next lock work
    other = PostgresStore(store_url)  # another worker: the committed row answers
    try:
        answer = other.claim_one(done, "t", {})
        assert answer.state == "completed" and answer.result == StoredResult(True, "one")
        assert other.claim_one(marked, "t", {}).state == "running"
    finally:
        other.close()
    assert store.complete(marked, owner, StoredResult(True, "two"))  # no mark: both dropped
    assert not locked(done) and not locked(marked)


def run_worker(url: str, runs: Path, mode: str, side_effects: bool = True,
               calls: str = "call-1:5", **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), url, str(runs), mode, "1" if side_effects else "0",
         calls], stdout=subprocess.PIPE, text=True, **kw)


def answer_of(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    answer: dict[str, Any] = json.loads(out)["answers"][0]
    return answer


def test_a_live_worker_process_is_running_until_it_dies(store: PostgresStore,
                                                         store_url: str, tmp_path: Path) -> None:
    holder = run_worker(store_url, tmp_path / "runs", "hold", stdin=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
    assert store.claim_one(KEY, "charge", {"amount": 5}).state == "running"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    wait_for(lambda: store.get(KEY).state == "abandoned")  # type: ignore[union-attr]
    taken = store.claim_one(KEY, "charge", {"amount": 5})
    assert taken.state == "claimed" and taken.started_at == 0  # claimed, never started


def start_and_kill(url: str, runs: Path, side_effects: bool = True, mode: str = "hang",
                   calls: str = "call-1:5") -> None:
    proc = run_worker(url, runs, mode, side_effects, calls)
    deadline = time.monotonic() + 20
    while not (runs.exists() and runs.read_text().endswith("\n")):
        assert time.monotonic() < deadline and proc.poll() is None, "the worker never started"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_side_effect_killed_mid_call_is_never_run_again(store_url: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    start_and_kill(store_url, runs)
    first = answer_of(run_worker(store_url, runs, "fast"))
    assert first["ok"] is False
    assert "outcome of charge (call call-1) is unknown" in first["error"]
    assert "not repeated" in first["error"]
    assert answer_of(run_worker(store_url, runs, "fast")) == first  # the verdict is stored
    assert runs.read_text() == "ran 5\n"


def test_a_side_effect_claimed_but_never_started_is_run_after_a_kill(
    store: PostgresStore, store_url: str, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.txt"
    start_and_kill(store_url, runs, mode="queue", calls="call-1:5,call-2:6")
    states = dict(store._run("SELECT call_id, state FROM {table}", ()).fetchall())
    assert states == {"call-1": "started", "call-2": "claimed"}
    second = answer_of(run_worker(store_url, runs, "fast", calls="call-2:6"))
    assert second == {"id": "call-2", "ok": True, "value": "charged 6"}
    first = answer_of(run_worker(store_url, runs, "fast", calls="call-1:5"))
    assert "outcome of charge (call call-1) is unknown" in first["error"]
    assert runs.read_text() == "ran 5\nran 6\n"


def test_a_killed_call_without_side_effects_is_run_again(store_url: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    start_and_kill(store_url, runs, side_effects=False)
    answer = answer_of(run_worker(store_url, runs, "fast", side_effects=False))
    assert answer == {"id": "call-1", "ok": True, "value": "charged 5"}
    assert runs.read_text() == "ran 5\nran 5\n"


def test_worker_processes_racing_run_a_call_once(store: PostgresStore, store_url: str,
                                                 tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    workers = [run_worker(store_url, runs, "slow", side_effects=False) for _ in range(3)]
    answers = [answer_of(w) for w in workers]
    assert answers == [{"id": "call-1", "ok": True, "value": "charged 5"}] * 3
    assert runs.read_text() == "ran 5\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_uses_its_own_connections(store: PostgresStore) -> None:
    claim = store.claim_one(KEY, "t", {})
    pid = os.fork()
    if pid == 0:  # the child: sees the parent's call running, works on its own sessions
        code = 1
        try:
            other = KEY._replace(call_id="child")
            mine = store.claim_one(other, "t", {})
            ok = (store.get(KEY).state == "running"  # type: ignore[union-attr]
                  and mine.state == "claimed"
                  and store.complete(other, mine.owner, StoredResult(True, "child")))
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.complete(KEY, claim.owner, StoredResult(True, "parent"))
    child = store.get(KEY._replace(call_id="child"))
    assert child is not None and child.result == StoredResult(True, "child")


def test_a_failed_transaction_leaves_nothing_and_the_store_goes_on(store: PostgresStore
                                                                   ) -> None:
    """Transactions are begun and committed in one libpq call each; one that fails is rolled
    back the driver's way, and the statements it had prepared (after 5 uses) still work."""
    import psycopg

    claim = store.claim_one(KEY, "t", {})
    for _ in range(6):  # the lookup is now a prepared statement on the server
        assert store.get(KEY).state == "running"  # type: ignore[union-attr]

    def fails(conn: Any) -> None:
        conn.execute(f"UPDATE {store._table} SET state = 'started' WHERE call_id = %s",
                     (KEY.call_id,))
        conn.execute("SELECT 1 / 0")

    with pytest.raises(psycopg.errors.DivisionByZero):
        store._in_transaction(fails)
    assert store._run("SELECT state FROM {table}", ()).fetchall() == [("claimed",)]
    assert store.get(KEY).state == "running"  # type: ignore[union-attr]
    assert store.write(started=[(KEY, claim.owner)]) == []
    assert store.complete(KEY, claim.owner, StoredResult(True, "done"))
    assert store.get(KEY).result == StoredResult(True, "done")  # type: ignore[union-attr]


def test_a_lost_session_fails_one_write_and_the_next_reconnects(store: PostgresStore,
                                                                pg_url: str) -> None:
    import psycopg

    claim = store.claim_one(KEY, "t", {})
    assert store._conn is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (store._conn.info.backend_pid,))
    with pytest.raises(psycopg.OperationalError):
        store.write(started=[(KEY, claim.owner)])
    assert store.write(started=[(KEY, claim.owner)]) == []  # a new session
    assert store._run("SELECT state FROM {table}", ()).fetchall() == [("started",)]


# ---------------------------------------------------------------------------- configuration
def test_urls_and_secrets(pg_url: str, store_url: str) -> None:
    opened = open_store(store_url.replace("postgresql://", "postgres://", 1))
    assert isinstance(opened, PostgresStore) and opened.table == store_url.rsplit("=", 1)[1]
    opened.close()
    # trust auth ignores the password, so it can stand in for a real one here
    secret = PostgresStore(store_url.replace("postgres@", "postgres:hunter2@", 1))
    assert "hunter2" not in repr(secret) and "hunter2" not in secret.url
    secret.close()
    for table in ("bad-name", "a.b.c", "x; DROP TABLE y"):
        with pytest.raises(UsageError, match="table name"):
            PostgresStore(pg_url, table=table)


def test_a_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(UsageError, match=r"toolbridge\[postgres\]"):
        PostgresStore("postgresql://postgres@127.0.0.1:1/db")


# ---------------------------------------------------------------------------- commits
class _WritingTransactions:
    """Counts the transactions that write rows of one table. A row trigger logs each
    writer's transaction id, so the server's other writers (autovacuum's analyze, a test's
    leftover process) do not count, as they would in the server-wide next transaction id."""

    def __init__(self, pg_url: str, table: str) -> None:
        import psycopg

        self.pg_url, self.table, self.log = pg_url, table, f'"{table}_writers"'
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {self.log} (xid xid8 NOT NULL)")
            conn.execute(f"""CREATE FUNCTION "{table}_log"() RETURNS trigger LANGUAGE plpgsql
                AS $$ BEGIN INSERT INTO {self.log} VALUES (pg_current_xact_id());
                RETURN NULL; END $$""")
            conn.execute(f"""CREATE TRIGGER "{table}_log" AFTER INSERT OR UPDATE OR DELETE
                ON "{table}" FOR EACH ROW EXECUTE FUNCTION "{table}_log"()""")

    def count(self) -> int:
        """How many transactions have written the table since the last count."""
        import psycopg

        with psycopg.connect(self.pg_url, autocommit=True) as conn:
            row = conn.execute(f"WITH gone AS (DELETE FROM {self.log} RETURNING xid) "
                               "SELECT count(DISTINCT xid) FROM gone").fetchone()
        assert row is not None
        return int(row[0])

    def drop(self) -> None:
        """The log, the trigger and the table it watches."""
        import psycopg

        with psycopg.connect(self.pg_url, autocommit=True) as conn:
            conn.execute(f'DROP TABLE IF EXISTS "{self.table}"')  # its trigger goes with it
            conn.execute(f"DROP TABLE {self.log}")
            conn.execute(f'DROP FUNCTION "{self.table}_log"()')


def test_commits_are_counted_by_transaction(store_url: str, pg_url: str) -> None:
    """8 new calls without side effects: 2 writing transactions; 8 side effects run one
    after another: the claim, 8 marks (each with the result before it), the last result."""
    from toolbridge import ToolCall
    from toolbridge.runtime import InlineExecutor

    store = PostgresStore(store_url)
    writers = _WritingTransactions(pg_url, store_url.rsplit("=", 1)[1])
    toolbox = Toolbox(store=store)

    @toolbox.tool
    def plain(n: int) -> int:
        return n

    @toolbox.tool(side_effects=True)
    def effect(n: int) -> int:
        return n

    def calls(tool: str, turn: str) -> list[ToolCall]:
        return [ToolCall(id=f"c{i}", name=tool, arguments={"n": i}, dialect="d",
                         conversation="s", turn=turn) for i in range(8)]

    try:
        assert [r.output for r in toolbox.execute(calls("plain", "t1"))] == list(range(8))
        assert writers.count() == 2
        toolbox.executor = InlineExecutor()
        assert [r.output for r in toolbox.execute(calls("effect", "t2"))] == list(range(8))
        assert writers.count() == 10
        assert [r.output for r in toolbox.execute(calls("effect", "t2"))] == list(range(8))
        assert writers.count() == 0  # a replay reads; it writes nothing
    finally:
        store.close()
        writers.drop()


# ---------------------------------------------------------------------------- schema version
def test_a_version_0_table_is_migrated_in_place(store_url: str, pg_url: str) -> None:
    import psycopg

    table = store_url.rsplit("=", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"""CREATE TABLE "{table}" (
            dialect TEXT NOT NULL, conversation TEXT NOT NULL, turn TEXT NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('started', 'completed')),
            tool TEXT NOT NULL, fingerprint TEXT NOT NULL, owner TEXT NOT NULL,
            started_at DOUBLE PRECISION NOT NULL, completed_at DOUBLE PRECISION, result TEXT,
            PRIMARY KEY (dialect, conversation, turn, call_id))""")
        conn.execute(f'INSERT INTO "{table}" VALUES (%s, %s, %s, %s, \'completed\', '
                     "'charge', 'rawdigest', 'nohost:1:tok:0', 1, 2, %s)",
                     (*KEY, StoredResult(True, "charged 5").to_json()))
    store = PostgresStore(store_url)
    replay = store.claim_one(KEY, "charge", {"amount": 5})
    assert replay.state == "completed" and replay.result == StoredResult(True, "charged 5")
    other = KEY._replace(call_id="new")
    assert store.claim_one(other, "charge", {}).state == "claimed"  # the new states fit
    versions = store._run("SELECT version FROM toolbridge_schema WHERE name = %s",
                          (table,)).fetchone()
    assert versions == (2,)
    store.close()
    PostgresStore(store_url).close()  # opening again changes nothing


def test_a_version_1_table_gains_the_awaiting_state_in_place(store_url: str, pg_url: str
                                                             ) -> None:
    import psycopg

    from toolbridge.store import ApprovalRequest, StoreCall

    table = store_url.rsplit("=", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"""CREATE TABLE "{table}" (
            dialect TEXT NOT NULL, conversation TEXT NOT NULL, turn TEXT NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('claimed', 'started', 'completed')),
            tool TEXT NOT NULL, fingerprint TEXT, owner TEXT NOT NULL,
            claimed_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION,
            completed_at DOUBLE PRECISION, result TEXT,
            PRIMARY KEY (dialect, conversation, turn, call_id))""")
        conn.execute("CREATE TABLE IF NOT EXISTS toolbridge_schema "
                     "(name TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        conn.execute("INSERT INTO toolbridge_schema VALUES (%s, 1) ON CONFLICT (name) DO "
                     "UPDATE SET version = 1", (table,))
        conn.execute(f'INSERT INTO "{table}" VALUES (%s, %s, %s, %s, \'completed\', '
                     "'charge', NULL, 'nohost:1:tok:0', 1, 1, 2, %s)",
                     (*KEY, StoredResult(True, "charged 5").to_json()))
    store = PostgresStore(store_url)
    try:
        replay = store.claim_one(KEY, "charge", {"amount": 5})
        assert replay.state == "completed" and replay.result == StoredResult(True, "charged 5")
        other = KEY._replace(call_id="new")
        request = ApprovalRequest.of(other, "charge", {})
        [answer] = store.claim([StoreCall(other, "charge", {}, request.to_json())])
        assert answer.state == "awaiting"  # the new state fits the altered table
        versions = store._run("SELECT version FROM toolbridge_schema WHERE name = %s",
                              (table,)).fetchone()
        assert versions == (2,)
    finally:
        store.close()


def test_a_newer_version_is_refused_with_the_fix(store_url: str) -> None:
    store = PostgresStore(store_url)
    store._run("UPDATE toolbridge_schema SET version = 7 WHERE name = %s", (store.table,))
    store.close()
    with pytest.raises(UsageError, match=r"schema version 7, written by a newer toolbridge.*"
                                         r"Upgrade toolbridge"):
        PostgresStore(store_url)
