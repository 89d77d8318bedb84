"""Blinker signals for audit sinks and event hooks.

The sender is always the :class:`~viewstore.catalog.ViewStore`; the events go in keyword arguments.

``before_commit(store, events=[...])``
    Sent inside the write transaction, after the events are decided and before they are written.
    A receiver may veto the change by raising: nothing is written and the caller gets the error
    (wrapped in :class:`~viewstore.errors.ViewStoreError` unless it already is one).
``committed(store, events=[...])``
    Sent after a successful commit, with the stored events (positions set). The call has succeeded:
    an exception raised by a receiver is logged (logger ``viewstore``), the other receivers still
    run, and the caller gets its result. A sink that must not miss an event can read what it
    missed from the log by position (``store.query("SELECT * FROM events WHERE position > ?", [last])``).
``commit_failed(store, events=[...], error=exc)``
    Sent when a write fails after its events were decided (a veto, a lost race, a database error);
    a refusal found while deciding (no such view, a name taken, a bad change) sends nothing.
    Its events were never committed, so they have no position (``None``). The caller still gets the write's own error: an exception raised by a receiver is logged (logger
    ``viewstore``), the other receivers still run, and each such exception is added to that error
    as a note.

Inside :meth:`ViewStore.transaction() <viewstore.catalog.ViewStore.transaction>`, ``before_commit``
is sent per write as usual; ``committed`` is sent for each write once the block has committed, and
if the block rolls back, ``commit_failed`` for each write it had made (with the block's error).

A receiver may read the store. Writing from a ``before_commit`` receiver is refused with a
:class:`~viewstore.errors.ViewStoreError` (the write transaction is open), through this store or
through another ``ViewStore`` on the same file, which would otherwise wait for this thread's own
write lock.

Example::

    from viewstore import signals

    @signals.committed.connect
    def audit(store, events):
        for e in events:
            print(e.position, e.actor, e.type, e.view)
"""

from __future__ import annotations

from blinker import Namespace

__all__ = ["before_commit", "committed", "commit_failed"]

_signals = Namespace()

before_commit = _signals.signal("viewstore.before-commit", doc="Sent before events are written; raise to veto.")
committed = _signals.signal("viewstore.committed", doc="Sent after events were committed.")
commit_failed = _signals.signal("viewstore.commit-failed", doc="Sent when a write failed.")
