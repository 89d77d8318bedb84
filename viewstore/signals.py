"""Blinker signals for audit sinks and event hooks.

The sender is always the :class:`~viewstore.catalog.ViewStore`; the events (or the seconds of a wait) go
in keyword arguments.

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
    Its events were never committed, so they have no position (``None``). The caller still gets the
    write's own error: an exception raised by a receiver is logged (logger ``viewstore``), the other
    receivers still run, and each such exception is added to that error as a note.
``lock_wait(store, waited=2.03, timeout=30.0)``
    Sent while a write waits for another connection's write lock on the file (another process's
    write or ``transaction()`` block): once the write has waited a second, then about once a second
    until it takes the lock or gives up, in the waiting thread, with the seconds waited so far and
    the seconds it waits in all before it raises :class:`~viewstore.errors.ConcurrencyError` with
    ``busy`` set. A ``transaction()`` block waits as it begins, and sends it then. A write that finds
    the lock free sends nothing, and so do reads and the wait an opening store may make (there is no
    store yet to send). What a receiver raises is logged (logger ``viewstore``) and the wait goes on;
    Ctrl-C's KeyboardInterrupt, which is no ``Exception``, ends the wait at once, as it does between
    two tries. ``viewstore``'s commands show the wait on stderr when it is a terminal.

Inside :meth:`ViewStore.transaction() <viewstore.catalog.ViewStore.transaction>`, ``before_commit``
is sent per write as usual; ``committed`` is sent for each write once the block has committed, and
if the block rolls back, ``commit_failed`` for each write it had made (with the block's error).

A receiver may read the store. Writing from a ``before_commit`` or ``lock_wait`` receiver is
refused with a :class:`~viewstore.errors.ViewStoreError` (this thread's write is under way), through
this store or through another ``ViewStore`` on the same file, which would otherwise wait for this
thread's own write lock.

Example::

    from viewstore import signals

    @signals.committed.connect
    def audit(store, events):
        for e in events:
            print(e.position, e.actor, e.type, e.view)
"""

from __future__ import annotations

from blinker import Namespace

__all__ = ["before_commit", "committed", "commit_failed", "lock_wait"]

_signals = Namespace()

before_commit = _signals.signal("viewstore.before-commit", doc="Sent before events are written; raise to veto.")
committed = _signals.signal("viewstore.committed", doc="Sent after events were committed.")
commit_failed = _signals.signal("viewstore.commit-failed", doc="Sent when a write failed.")
lock_wait = _signals.signal("viewstore.lock-wait", doc="Sent about once a second while a write waits for another "
                                                       "connection's write lock.")
