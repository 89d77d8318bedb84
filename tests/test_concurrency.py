"""Several processes and threads writing one store file: no lost update, no gap, typed errors."""

import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

import viewstore.log as log_module
from viewstore import ConcurrencyError, ViewChange, ViewStore, ViewStoreError, signals
from viewstore.catalog import thread_holds_a_store

from spawned import spawned_results

VIEWS = ["a.v0", "a.v1", "a.v2"]


def _writer(path, actor, rounds, queue):
    ok = stale = 0
    with ViewStore(path, actor=actor) as store:
        for i in range(rounds):
            name = VIEWS[i % len(VIEWS)]
            store.alter_view(name, ViewChange.set_property(actor, str(i)))
            ok += 1
            # a deliberately stale expected_version must be refused, never written
            seen = store.load_view(name).stream_version
            try:
                store.alter_view(name, ViewChange.set_property(f"{actor}-stale", str(i)), expected_version=seen - 1)
            except ConcurrencyError:
                stale += 1
    queue.put((ok, stale))


def test_processes_lose_no_update(tmp_path):
    path = tmp_path / "shared.db"
    with ViewStore(path, actor="setup") as store:
        for name in VIEWS:
            store.create_view(name, columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    rounds, workers = 60, 3
    results = spawned_results(_writer, [(str(path), f"w{i}", rounds) for i in range(workers)])
    assert sum(ok for ok, _ in results) == rounds * workers
    assert all(stale == rounds for _, stale in results)
    with ViewStore(path) as store:
        total = 0
        for name in VIEWS:
            history = store.history(name)
            assert [e.stream_version for e in history] == list(range(1, len(history) + 1))
            assert store.load_view(name).stream_version == len(history)
            total += len(history) - 1  # minus the creation
            assert not any(k.endswith("-stale") for k in store.load_view(name).properties)
        assert total == rounds * workers
        live = store.projection_dump()
        store.rebuild()
        assert store.projection_dump() == live


def test_threads_share_one_store(store):
    store.create_view("a.t", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    errors = []

    def work(n):
        try:
            for i in range(50):
                store.alter_view("a.t", ViewChange.set_property(f"t{n}", str(i)))
                store.load_view("a.t")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    view = store.load_view("a.t")
    assert view.stream_version == 1 + 4 * 50
    assert {view.properties[f"t{n}"] for n in range(4)} == {"49"}


#: another process in a long write: it takes the file's write lock, says so, keeps it, lets go
_HOLD = """import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


@contextmanager
def another_process_writing(path, seconds):
    """Another process holds the file's write lock (``BEGIN IMMEDIATE``) for ``seconds`` from when the
    block is entered, then lets go; the block ends once that process has ended."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        try:
            assert holder.wait(timeout=60) == 0
        finally:
            holder.stdout.close()  # the pipe is the test's to close (left to the collector: a ResourceWarning)


def test_a_write_waiting_for_another_process_lock_sends_lock_wait_about_once_a_second(store, caplog):
    """Each second of the wait, lock_wait tells the store's receivers how long the write has waited
    and how long it waits in all; a receiver that raises is logged and the write goes on; a write
    that finds the lock free sends nothing."""
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    seen, inside = [], []

    def watch(sender, waited, timeout):  # noted here, asserted after: what a receiver raises is only logged
        seen.append((sender, waited, timeout))
        read = sender.load_view("a.v").comment  # a receiver reads the store
        try:  # and cannot write it: its write is under way (this store's, not another's)
            sender.alter_view("a.v", ViewChange.update_comment("from the receiver"))
            refused = None
        except ViewStoreError as error:
            refused = str(error)
        inside.append((read, refused, thread_holds_a_store()))  # it runs while the store is held

    def broken(sender, waited, timeout):
        raise RuntimeError("notice sink down")

    signals.lock_wait.connect(broken)
    signals.lock_wait.connect(watch)
    try:
        store.alter_view("a.v", ViewChange.update_comment("free"))
        assert seen == [] and "lock-wait" not in caplog.text  # no wait, no notice
        with another_process_writing(store.path, 2.5):
            start = time.monotonic()
            view = store.alter_view("a.v", ViewChange.update_comment("waited"))
            took = time.monotonic() - start
    finally:
        signals.lock_wait.disconnect(broken)
        signals.lock_wait.disconnect(watch)
    assert view.comment == "waited" and store.load_view("a.v") == view and took > 2
    assert [e.type for e in store.history("a.v")][-1] == "view.comment_updated"
    waited = [w for _, w, _ in seen]
    assert len(waited) >= 2 and [int(w) for w in waited] == list(range(1, len(waited) + 1)), waited
    assert waited == sorted(waited) and waited[-1] < took
    assert all(sender is store and timeout == 3 * log_module.BUSY_TIMEOUT_MS / 1000 for sender, _, timeout in seen)
    assert caplog.text.count("a viewstore.lock-wait receiver raised") == len(waited)
    assert "notice sink down" in caplog.text
    assert len(inside) == len(waited) and all(
        read == "free" and "already writing to" in refused and "through this or another ViewStore" in refused
        and held for read, refused, held in inside), inside
