"""Schema migrations: one transaction each; a newer file is refused; a failure changes nothing."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from vault.errors import IndexUnusable, PathRefused, SchemaTooNew
from vault.storage.index import Index
from vault.storage.migrations import connect, enter_wal, migrate


def test_migrations_apply_in_order_and_only_once(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    steps = ("CREATE TABLE a (x);", "CREATE TABLE b (y); CREATE TRIGGER t AFTER INSERT ON b "
             "BEGIN INSERT INTO a VALUES (NEW.y); END;")
    migrate(conn, steps)
    migrate(conn, steps)  # already at version 2: nothing runs twice
    conn.execute("INSERT INTO b VALUES (7)")
    assert conn.execute("SELECT x FROM a").fetchall() == [(7,)]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_failing_migration_leaves_the_old_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    migrate(conn, ("CREATE TABLE a (x);",))
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, ("CREATE TABLE a (x);", "CREATE TABLE c (z); CREATE TABLE a (x);"))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"a"}  # table c was rolled back with the failed step


def test_newer_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    Index.open(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(IndexUnusable):
        Index.open(path)
    with pytest.raises(SchemaTooNew):
        migrate(sqlite3.connect(path), ("x",))


def _holder(path: Path) -> sqlite3.Connection:
    """A second connection holding the exclusive lock of a fresh rollback-journal file."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("BEGIN EXCLUSIVE")
    return conn


def test_enter_wal_waits_out_a_lock_the_busy_handler_is_not_asked_about(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    holder = _holder(path)
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)  # no busy handler at all
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("PRAGMA journal_mode = WAL")  # what a plain switch does under the lock
    waiter = threading.Timer(0.05, holder.execute, args=("COMMIT",))
    waiter.start()
    enter_wal(conn, 5000)  # backs off until the holder commits
    waiter.join()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    holder.close()


def test_enter_wal_gives_up_after_its_budget(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    holder = _holder(path)
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enter_wal(conn, 50)  # the lock is never released: about 75 ms of pauses, then the error
    conn.close()
    holder.execute("ROLLBACK")
    holder.close()


def test_connect_refuses_a_symlink_wherever_it_points(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).close()
    (tmp_path / ".rmh").mkdir()
    (tmp_path / ".rmh" / "learned.sqlite").symlink_to(other)
    with pytest.raises(PathRefused, match=r"\.rmh/learned\.sqlite"):
        connect(tmp_path / ".rmh" / "learned.sqlite")
    connect(other).close()  # a plain file opens as before
