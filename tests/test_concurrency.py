"""Several processes and threads writing one store file: no lost update, no gap, typed errors."""

import threading

from viewstore import ConcurrencyError, ViewChange, ViewStore

from spawned import spawned_results

VIEWS = ["a.v0", "a.v1", "a.v2"]


def _writer(path, actor, rounds, queue):
    ok = stale = 0
    store = ViewStore(path, actor=actor)
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
    store.close()
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
