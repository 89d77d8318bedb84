"""An independent oracle for the catalog: random operation sequences checked against a plain-Python
reference model of what every view should be.

The model is written from the Iceberg view spec and the reference implementation's rules
(``../shared/reference/``) and from viewstore's documented behaviour (README.md, the docstrings of
``viewstore/catalog.py`` and ``viewstore/model.py``), never from the fold in ``projections.py``: if
that fold were wrong, ``tests/test_state_machine.py`` (live projections equal a rebuild) would still
pass, this would not. After every step each name is loaded, through two stores on one file (two
actors, two catalog names), and compared field by field with the model: columns, representations
per dialect, comment, properties, security mode, current version id, every version, the version
log, default catalog and namespace, audit, stream version. The events each call appends are
compared with the ones the model predicts (type, view, identifier, stream version, actor; one
commit's share one time), and a call the model refuses must raise the ``ViewStoreError`` subclass
it names and append nothing.

``expected_version``: every write that takes it (create, replace, alter, rename, drop, rollback) is
sometimes given one, either the stream version the model counts for the view (its events; 0 for a
name no live view has, as ``create_view``'s docstring says), one more or one less, 0, or ``True``.
The model refuses a stale one with ``ConcurrencyError`` naming the expected and the counted version
(not ``busy``), a non-int with ``ValidationError`` (besides any other reason it refuses the call
for, in which case either error will do); a matching one changes nothing about the call.

Time travel: after every commit the model's whole state is recorded with the commit's events and
time. ``load_view(name, as_of=event)`` of each recorded event, and ``as_of`` each recorded time
(and the millisecond before it), must give the recorded state; ``history()`` and
``events(view=...)`` must list what the model's log holds. Every commit outside a transaction is
made in a millisecond of its own (the test waits for the clock to move on), so a time names one
commit; the writes of a ``transaction()`` block share the block's time, so only the block's end is
checked by time, and its writes one by one by event.

Each event's own fields are compared too where they say what changed (the comment, the properties
set or removed, the name it was renamed from, a representation's dialect and SQL, the current
version id an event moves to). A snapshot is taken every few events of a stream here, so that
``as_of`` also starts from snapshots.

UUIDs and times: their values are not the model's to predict, but which ones are. A view's first
event gives its UUID, which must parse as a UUID and be one no other view of the store ever had (a
view created under the name of a dropped one is a new view); every later event of the view, and
the View loaded, must carry that one, across every write and rename. A commit's time must lie
between the clock just before the call and just after it (inside a ``transaction()`` block:
around the block's start, the time all its writes carry); every version's time, log entry and
audit time the commit makes must be that time, as the spec's rules say.

Export and import: a step exports a live view (``export_iceberg`` to a fresh location, plain or
gzip) and reads the file with pyiceberg's ``ViewMetadata``, an independent reader. It must be the
location's first file (``00000-``, ``.gz`` only when asked) and hold what the spec and the
reference's rules say: the view's UUID, format version 1, the location, the current version id, the
properties, the versions ``version.history.num-entries`` retains (the current one plus the highest
ids; the machine sets the property to 1, 2 or 3 at times, and a 0 is refused when set) with their
times, schema ids, summaries, default catalog and namespace and ``sql`` representations, the version
log less every entry up to the last naming a version left out, and each kept version's schema (field
names, types, docs, required; not field ids, which the file numbers itself). The file is then
imported into a fresh store: the View must be the model's with the documented differences (what the
file keeps of the versions and log; ``DEFINER``, as the file has no security mode; the importer as
creator and last modifier, at the first and last kept log entries' times), and its history the
events ``import_view``'s docstring names (``view.imported``, then a ``view.replaced`` or
``view.rolled_back`` per later entry). Imported into the store it came from under a free name, it
or a file exported earlier (of a view perhaps dropped since) must be refused
(``ViewAlreadyExistsError``: the UUID is taken) and append nothing.

What is not compared, and why: a version event's ``version`` and ``log_entry`` are not compared
field by field, as the View's ``versions`` and ``version_log`` after it are; field ids are not part
of a View. Not covered here, left to their own tests: ``import_view`` of histories the store did not
write (foreign files: out-of-order times, versions never current), ``import_hms`` and ``export_hms``,
exports to a location that already holds files (numbering, an unchanged view writing nothing, another
view's UUID there), the ``write.metadata.*`` properties, and time travel through an imported view.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import gzip
import random
import re
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pyiceberg.types import IcebergType
from pyiceberg.view.metadata import ViewMetadata

from view_changes import SQL
from viewstore import (Column, ConcurrencyError, NoSuchViewError, ValidationError, View, ViewAlreadyExistsError,
                       ViewChange, ViewStore, ViewStoreError, projections)

DROP_ALLOWED = "replace.drop-dialect.allowed"
HISTORY_SIZE = "version.history.num-entries"
NAMES = ["a.v1", "a.v2", "b.v3", "b.c.v4"]
# every name a view can get: those above, and those ViewChange.rename("v1" / "v5") gives in their namespaces
POOL = sorted({tuple(n.split(".")) for n in NAMES} | {tuple(n.split("."))[:-1] + (new,) for n in NAMES
                                                    for new in ("v1", "v5")})
DIALECTS = st.sampled_from(["spark", "trino", "Hive", "hive", "flink"])
PROBED_DIALECTS = ["spark", "SPARK", "trino", "hive", "HIVE", "flink", "presto"]
# (what the call is given, the Column it must become: name, Iceberg type, comment, nullable)
COLUMN_CHOICES = [
    ([Column("x", "int")], (("x", "int", None, True),)),
    ([Column("x", "bigint", "the x")], (("x", "long", "the x", True),)),
    ([("y", "struct<a: int, b: list<string>>")], (("y", "struct<a: int, b: list<string>>", None, True),)),
    ([Column("x", "int"), Column("z", "decimal(9,2)", nullable=False)],
     (("x", "int", None, True), ("z", "decimal(9,2)", None, False))),
    ([("x", "varchar(10)")], (("x", "string", None, True),)),
]
CATALOGS = ["cat", "other"]      # the two stores' catalog names: a view's default catalog when none is given
ACTORS = ["alice", "bob"]
SNAPSHOT_EVERY_HERE = 4
NAMING_TYPES = {"view.created", "view.renamed", "view.imported"}


class Refused(Exception):
    """The model's verdict that a call must fail: the error classes it may raise (one per reason),
    and for a stale ``expected_version`` the (expected, actual) stream versions the error must name."""

    def __init__(self, *kinds: type[ViewStoreError], stale: tuple[int, int] | None = None) -> None:
        super().__init__(kinds)
        self.kinds = kinds
        self.stale = stale


@dataclass
class Version:
    version_id: int
    timestamp_ms: int
    schema_id: int
    columns: tuple
    representations: tuple
    default_catalog: str | None
    default_namespace: tuple
    summary: dict
    added_at: int = -1   # the position in the view's version log of the entry that added it

    def definition(self) -> tuple:
        """What makes two versions identical (the reference's rule: all but the id and the time)."""
        return (self.schema_id, self.representations, self.default_catalog, self.default_namespace,
                tuple(sorted(self.summary.items())))

    def as_tuple(self) -> tuple:
        return (self.version_id, self.timestamp_ms, self.schema_id, self.columns, self.representations,
                self.default_catalog, self.default_namespace, self.summary)


@dataclass
class Stream:
    """One view (one UUID) as the model sees it."""

    sid: int
    identifier: tuple
    properties: dict
    security_mode: str
    creator: str
    created_at: int
    uuid: str | None = None
    live: bool = True
    schemas: list = field(default_factory=list)      # columns per schema id
    versions: list = field(default_factory=list)
    current: int = 0
    log: list = field(default_factory=list)           # (timestamp_ms, version_id)
    events: list = field(default_factory=list)        # (type, identifier after the event)
    modifier: str = ""
    modified_at: int = 0

    def version(self, version_id: int) -> Version | None:
        return next((v for v in self.versions if v.version_id == version_id), None)

    def retained(self) -> tuple[list[Version], list[tuple[int, int]]]:
        """The versions and version log an Iceberg metadata file of this view holds (iceberg-java-view-
        rules.md): the current version plus the highest ids, ``version.history.num-entries`` (default
        10) in all; the log less every entry up to and including the last that names a version left out."""
        size = int(self.properties.get(HISTORY_SIZE, "10"))
        others = sorted((v.version_id for v in self.versions if v.version_id != self.current), reverse=True)
        kept = {self.current, *others[:size - 1]}
        gone = [i for i, (_, version_id) in enumerate(self.log) if version_id not in kept]
        return [v for v in self.versions if v.version_id in kept], self.log[gone[-1] + 1 if gone else 0:]

    def imported(self, identifier: tuple, actor: str) -> tuple[dict[str, Any], list[str]]:
        """The View an import of this view's metadata file gives, in the form of ``observed()``, and
        the types of the events it records (``import_view``'s docstring: ``view.imported`` with the
        versions there at the first log entry, then ``view.replaced`` per later entry making a new
        version current, ``view.rolled_back`` per one making an older one current again). The file
        has what it retains, and no security mode: the view is imported as ``DEFINER`` (what
        ``import_iceberg`` leaves ``import_view``'s ``security_mode`` at). The importer created and
        last modified it, at the times of the first and last entries (the history keeps its times)."""
        versions, log = self.retained()
        start = len(self.log) - len(log)
        known = {v.version_id for v in versions if v.added_at <= start}
        types = ["view.imported"]
        for _, version_id in log[1:]:
            types.append("view.rolled_back" if version_id in known else "view.replaced")
            known.add(version_id)
        view = {**self.expected(), "identifier": identifier, "security_mode": "DEFINER",
                "versions": tuple(v.as_tuple() for v in versions), "version_log": tuple(log),
                "audit": (actor, log[0][0], actor, log[-1][0]), "stream_version": len(types)}
        return view, types

    def expected(self) -> dict[str, Any]:
        """The View this stream must load as, in the form of ``observed()``."""
        cur = self.version(self.current)
        assert cur is not None
        return dict(identifier=self.identifier, uuid=self.uuid, properties=self.properties,
                    comment=self.properties.get("comment"), security_mode=self.security_mode,
                    current_version_id=self.current, columns=cur.columns, representations=cur.representations,
                    default_catalog=cur.default_catalog, default_namespace=cur.default_namespace,
                    summary=cur.summary, versions=tuple(v.as_tuple() for v in self.versions),
                    version_log=tuple(self.log), audit=(self.creator, self.created_at, self.modifier,
                                                        self.modified_at),
                    stream_version=len(self.events),
                    sql_for={d: next((s for dd, s in cur.representations if dd.lower() == d.lower()), None)
                             for d in PROBED_DIALECTS})


def _iceberg_type(t: IcebergType) -> str:
    """A type pyiceberg read, spelt as ``str(Column.type)`` spells it: pyiceberg's spelling less the
    field ids and a nested field's optional or required (``struct<3: a: optional int>``), and with
    ``decimal(9,2)`` for its ``decimal(9, 2)``."""
    return re.sub(r"decimal\((\d+), (\d+)\)", r"decimal(\1,\2)", re.sub(r"\d+: |(?:optional|required) ", "", str(t)))


def observed(view: View) -> dict[str, Any]:
    """A loaded View in the form of ``Stream.expected()``."""
    def cols(columns):
        return tuple((c.name, str(c.type), c.comment, c.nullable) for c in columns)

    def reps(representations):
        return tuple((r.dialect, r.sql) for r in representations)

    a = view.audit
    return dict(identifier=view.identifier, uuid=view.uuid, properties=dict(view.properties), comment=view.comment,
                security_mode=view.security_mode, current_version_id=view.current_version_id,
                columns=cols(view.columns), representations=reps(view.representations),
                default_catalog=view.default_catalog, default_namespace=view.default_namespace,
                summary=dict(view.summary),
                versions=tuple((v.version_id, v.timestamp_ms, v.schema_id, cols(v.columns), reps(v.representations),
                                v.default_catalog, v.default_namespace, dict(v.summary)) for v in view.versions),
                version_log=tuple((e.timestamp_ms, e.version_id) for e in view.version_log),
                audit=(a.creator, a.create_time_ms, a.last_modifier, a.last_modified_time_ms),
                stream_version=view.stream_version, sql_for={d: view.sql_for(d) for d in PROBED_DIALECTS})


def _find(reps: list, dialect: str) -> int | None:
    return next((i for i, (d, _) in enumerate(reps) if d.lower() == dialect.lower()), None)


def _duplicate_dialects(reps) -> bool:
    return len({d.lower() for d, _ in reps}) != len(reps)


@dataclass
class Context:
    now: int
    actor: str
    catalog: str


class Model:
    """What the store should hold: every stream, and the log as (stream, type, identifier) in order,
    with the fields each event must carry beside its envelope."""

    def __init__(self) -> None:
        self.streams: dict[int, Stream] = {}
        self.log: list[tuple[int, str, tuple]] = []
        self.fields: list[dict[str, Any]] = []

    def live(self, ident: tuple) -> Stream | None:
        return next((s for s in self.streams.values() if s.live and s.identifier == ident), None)

    def known_as(self, ident: tuple) -> Stream | None:
        """The view known by this identifier now: the live one of that name, else the one dropped last
        under it (one renamed away since is known by its new name)."""
        found = self.live(ident)
        if found is None:
            dropped = [sid for sid, kind, name in self.log if kind == "view.dropped" and name == ident]
            found = self.streams[dropped[-1]] if dropped else None
        return found

    def pick(self, ident: tuple) -> Stream | None:
        """The view ``history(ident)`` means: the one known by that identifier, else the one that took
        the name last (and has been renamed since)."""
        found = self.known_as(ident)
        if found is None:
            took = [sid for sid, kind, name in self.log if kind in NAMING_TYPES and name == ident]
            found = self.streams[took[-1]] if took else None
        return found

    def carried(self, ident: tuple) -> set[int]:
        return {sid for sid, _, name in self.log if name == ident}

    def emit(self, s: Stream, kind: str, ctx: Context, **fields: Any) -> None:
        s.events.append((kind, s.identifier))
        self.log.append((s.sid, kind, s.identifier))
        self.fields.append(fields)
        s.modifier, s.modified_at = ctx.actor, ctx.now

    # -- the rules of versions (iceberg-java-view-rules.md, "Building new metadata") --

    @staticmethod
    def _schema_id(s: Stream, columns: tuple) -> int:
        """A structurally identical schema keeps its id; otherwise the highest + 1, the first being 0."""
        if columns not in s.schemas:
            s.schemas.append(columns)
        return s.schemas.index(columns)

    @staticmethod
    def _make_current(s: Stream, candidate: Version, ctx: Context) -> bool:
        """Make ``candidate``'s definition current: an identical version keeps its id, another gets the
        highest + 1; the log grows only when the current version id changes (at the commit's time)."""
        cur = s.version(s.current)
        if cur is not None and cur.definition() == candidate.definition():
            return False
        same = next((v for v in s.versions if v.definition() == candidate.definition()), None)
        if same is None:
            candidate.version_id = max((v.version_id for v in s.versions), default=0) + 1
            candidate.timestamp_ms = ctx.now
            candidate.added_at = len(s.log)
            s.versions.append(candidate)
            same = candidate
        s.current = same.version_id
        s.log.append((ctx.now, same.version_id))
        return True

    # -- the calls --

    def stream_version(self, ident: tuple) -> int:
        """How many events the live view of that name has; 0 when there is none (a view not yet
        created, as ``create_view``'s docstring has it)."""
        s = self.live(ident)
        return len(s.events) if s is not None else 0

    def expecting(self, ident: tuple, expected: Any, decide: Callable[[], Any]) -> Any:
        """A write given ``expected_version``: refused with ``ConcurrencyError`` (besides whatever else
        refuses it) when that is not the view's stream version, a ``ValidationError`` when it is not
        an int; given the version the view is at, the write is the one without it."""
        kinds: list[type[ViewStoreError]] = []
        actual = self.stream_version(ident)
        if expected is not None and type(expected) is not int:
            kinds.append(ValidationError)
        elif expected is not None and expected != actual:
            kinds.append(ConcurrencyError)
        stale = (expected, actual) if ConcurrencyError in kinds else None
        try:
            result = decide()
        except Refused as refused:
            raise Refused(*refused.kinds, *kinds, stale=stale) from None
        if kinds:
            raise Refused(*kinds, stale=stale)
        return result

    def create(self, ident, columns, reps, namespace, catalog, comment, properties, security_mode, summary,
               ctx: Context) -> Stream:
        errors: list[type[ViewStoreError]] = []
        if _duplicate_dialects(reps):
            errors.append(ValidationError)   # at most one representation per dialect, case-insensitively
        if self.live(ident) is not None:
            errors.append(ViewAlreadyExistsError)
        if errors:
            raise Refused(*errors)
        props = dict(properties or {})
        if comment is not None:
            props["comment"] = comment
        s = Stream(sid=len(self.streams), identifier=ident, properties=props, security_mode=security_mode,
                   creator=ctx.actor, created_at=ctx.now)
        self.streams[s.sid] = s
        self._make_current(s, Version(0, 0, self._schema_id(s, columns), columns, tuple(reps),
                                      catalog or ctx.catalog, namespace, dict(summary or {})), ctx)
        self.emit(s, "view.created", ctx, current_version_id=1, properties=props, security_mode=security_mode)
        return s

    def replace(self, ident, columns, reps, namespace, catalog, comment, properties, security_mode, summary,
                replace_properties, ctx: Context) -> Stream:
        s = self.live(ident)
        if s is None:
            return self.create(ident, columns, reps, namespace, catalog, comment, properties,
                               security_mode or "DEFINER", summary, ctx)
        # Iceberg merges the given properties; CREATE OR REPLACE's own map replaces them all
        props = dict(properties or {}) if replace_properties else {**s.properties, **(properties or {})}
        if comment is not None:
            props["comment"] = comment
        errors: list[type[ViewStoreError]] = []
        if _duplicate_dialects(reps):
            errors.append(ValidationError)
        cur = s.version(s.current)
        dropped = {d.lower() for d, _ in cur.representations} - {d.lower() for d, _ in reps}
        if dropped and props.get(DROP_ALLOWED, "false").lower() != "true":
            errors.append(ValidationError)   # the reference reads the property of the metadata it builds
        if errors:
            raise Refused(*errors)
        moved = self._make_current(s, Version(0, 0, self._schema_id(s, columns), columns, tuple(reps),
                                              catalog or ctx.catalog, namespace, dict(summary or {})), ctx)
        secured = security_mode if security_mode not in (None, s.security_mode) else None
        if moved or secured:
            s.security_mode = secured or s.security_mode
            self.emit(s, "view.replaced", ctx, current_version_id=s.current if moved else None,
                      security_mode=secured)
        # what was set (the comment first), then what was removed (the comment first)
        old, s.properties = s.properties, props
        if props.get("comment") not in (None, old.get("comment")):
            self.emit(s, "view.comment_updated", ctx, comment=props["comment"])
        updates = {k: v for k, v in props.items() if k != "comment" and old.get(k) != v}
        if updates:
            self.emit(s, "view.properties_set", ctx, updates=updates)
        if "comment" in old and "comment" not in props:
            self.emit(s, "view.comment_updated", ctx, comment=None)
        removals = sorted(k for k in old if k != "comment" and k not in props)
        if removals:
            self.emit(s, "view.properties_removed", ctx, removals=removals)
        return s

    def alter(self, ident, changes, ctx: Context) -> Stream:
        # a value refused when set (model.py, validate_property_value) is bad input, view or no view
        bad = [ValidationError for change in changes if change[:2] == ("set", HISTORY_SIZE)
               and not (change[2].isdigit() and int(change[2]) > 0)]
        s = self.live(ident)
        if s is None:
            raise Refused(NoSuchViewError, *bad)
        if bad:
            raise Refused(*bad)
        cur = s.version(s.current)
        props, name, reps = dict(s.properties), s.identifier, list(cur.representations)
        simple: list[tuple[str, tuple, dict, dict]] = []   # (event type, identifier, properties after it, fields)
        rep_events: list[tuple[str, dict]] = []
        errors: list[type[ViewStoreError]] = []
        for change in changes:
            kind = change[0]
            if kind in ("comment", "set", "remove"):
                key = "comment" if kind == "comment" else change[1]
                value = change[1] if kind == "comment" else change[2] if kind == "set" else None
                if props.get(key) != value:
                    if value is None:
                        del props[key]
                    else:
                        props[key] = value
                    # the comment is the property "comment"; its event is the call's, not the key's
                    simple.append(("view.comment_updated", name, dict(props), {"comment": value})
                                  if kind == "comment" else
                                  ("view.properties_set", name, dict(props), {"updates": {key: value}})
                                  if value is not None else
                                  ("view.properties_removed", name, dict(props), {"removals": [key]}))
            elif kind == "rename":
                target = name[:-1] + (change[1],)
                if target != name:
                    other = self.live(target)
                    if other is not None and other is not s:
                        errors.append(ViewAlreadyExistsError)
                    simple.append(("view.renamed", target, dict(props), {"from_identifier": name}))
                    name = target
            elif kind == "add":
                if _find(reps, change[1]) is not None:
                    errors.append(ValidationError)
                else:
                    reps.append((change[1], change[2]))
                    rep_events.append(("view.representation_added", {"dialect": change[1], "sql": change[2]}))
            elif kind == "update":
                i = _find(reps, change[1])
                if i is None:
                    errors.append(ValidationError)
                elif reps[i][1] != change[2]:     # the same SQL again is no change
                    reps[i] = (reps[i][0], change[2])     # the dialect as the view spells it
                    rep_events.append(("view.representation_updated", {"dialect": reps[i][0], "sql": change[2]}))
            elif kind == "remove_rep":
                i = _find(reps, change[1])
                if i is None or len(reps) == 1:   # the last one cannot go, even if a later change adds one
                    errors.append(ValidationError)
                else:
                    rep_events.append(("view.representation_removed", {"dialect": reps.pop(i)[0]}))
        if errors:
            raise Refused(*errors)
        for kind, name, props, fields in simple:
            s.identifier, s.properties = name, props
            self.emit(s, kind, ctx, **fields)
        if tuple(reps) != cur.representations:   # changes that end where they began write nothing
            self._make_current(s, Version(0, 0, cur.schema_id, cur.columns, tuple(reps), cur.default_catalog,
                                          cur.default_namespace, dict(cur.summary)), ctx)
            for n, (kind, fields) in enumerate(rep_events, 1):   # the last one carries the version change
                self.emit(s, kind, ctx, **fields, current_version_id=s.current if n == len(rep_events) else None)
        return s

    def rename(self, ident, new_name: str, ctx: Context) -> Stream:
        new = _ident(new_name)
        s = self.live(ident)
        errors: list[type[ViewStoreError]] = []
        if s is None:
            errors.append(NoSuchViewError)
        if self.live(new) is not None and self.live(new) is not s:
            errors.append(ViewAlreadyExistsError)
        if errors:
            raise Refused(*errors)
        if new != ident:   # its own name: no change
            s.identifier = new
            self.emit(s, "view.renamed", ctx, from_identifier=ident)
        return s

    def drop(self, ident, ctx: Context) -> bool:
        s = self.live(ident)
        if s is None:
            return False
        s.live = False
        self.emit(s, "view.dropped", ctx)
        return True

    def rollback(self, ident, version_id, ctx: Context) -> Stream:
        s = self.live(ident)
        if s is None:
            raise Refused(NoSuchViewError)
        if s.version(version_id) is None:
            raise Refused(ValidationError)
        if version_id != s.current:   # the log grows only when the current version changes
            s.current = version_id
            s.log.append((ctx.now, version_id))
            self.emit(s, "view.rolled_back", ctx, current_version_id=version_id)
        return s


# -- the operations, as values hypothesis can draw, print and shrink --

def _ident(name: str) -> tuple:
    return tuple(name.split("."))


@dataclass(frozen=True)
class Create:
    name: str   # an int when drawn: see NAME
    columns: int
    reps: tuple
    namespace: tuple | None
    catalog: str | None
    comment: str | None
    properties: dict | None
    security_mode: str | None
    summary: dict | None
    expect: Any = None   # expected_version: drawn as in EXPECT, resolved by ReferenceMachine.resolve

    def _namespace(self) -> tuple:
        return _ident(self.name)[:-1] if self.namespace is None else self.namespace

    def call(self, store: ViewStore) -> Any:
        return store.create_view(self.name, columns=COLUMN_CHOICES[self.columns][0], representations=list(self.reps),
                                 default_namespace=self._namespace(), default_catalog=self.catalog,
                                 comment=self.comment, properties=self.properties, security_mode=self.security_mode,
                                 summary=self.summary, expected_version=self.expect)

    def plan(self, m: Model, ctx: Context) -> Any:
        return m.expecting(_ident(self.name), self.expect, lambda: m.create(
            _ident(self.name), COLUMN_CHOICES[self.columns][1], self.reps, self._namespace(), self.catalog,
            self.comment, self.properties, self.security_mode, self.summary, ctx))


@dataclass(frozen=True)
class Replace(Create):
    replace_properties: bool = False

    def call(self, store: ViewStore) -> Any:
        return store.replace_view(self.name, columns=COLUMN_CHOICES[self.columns][0], representations=list(self.reps),
                                  default_namespace=self._namespace(), default_catalog=self.catalog,
                                  comment=self.comment, properties=self.properties, security_mode=self.security_mode,
                                  summary=self.summary, replace_properties=self.replace_properties,
                                  expected_version=self.expect)

    def plan(self, m: Model, ctx: Context) -> Any:
        return m.expecting(_ident(self.name), self.expect, lambda: m.replace(
            _ident(self.name), COLUMN_CHOICES[self.columns][1], self.reps, self._namespace(), self.catalog,
            self.comment, self.properties, self.security_mode, self.summary, self.replace_properties, ctx))


def _view_change(change: tuple) -> ViewChange:
    kind = change[0]
    if kind == "comment":
        return ViewChange.update_comment(change[1])
    if kind == "set":
        return ViewChange.set_property(change[1], change[2])
    if kind == "remove":
        return ViewChange.remove_property(change[1])
    if kind == "rename":
        return ViewChange.rename(change[1])
    if kind == "add":
        return ViewChange.add_representation((change[1], change[2]))
    if kind == "update":
        return ViewChange.update_representation(change[1], change[2])
    return ViewChange.remove_representation(change[1])


@dataclass(frozen=True)
class Call:
    """``ViewStore.<kind>_view(name, *args)``, which ``Model.<kind>`` answers: ``alter`` (its one
    argument the changes, as tuples), ``rename`` (the new name), ``drop``, ``rollback`` (a version id)."""

    kind: str
    name: str
    args: tuple = ()
    expect: Any = None

    def call(self, store: ViewStore) -> Any:
        args = [_view_change(c) for c in self.args[0]] if self.kind == "alter" else self.args
        return getattr(store, f"{self.kind}_view")(self.name, *args, expected_version=self.expect)

    def plan(self, m: Model, ctx: Context) -> Any:
        ident = _ident(self.name)
        return m.expecting(ident, self.expect, lambda: getattr(m, self.kind)(ident, *self.args, ctx))


@dataclass(frozen=True)
class RollbackToOne:
    """A rollback to one of the view's versions, the ``pick``-th of those the model knows (not the
    current one, when there are others): drawn ids alone seldom name a version to go back to."""

    name: str
    pick: int
    expect: Any = None

    def resolve(self, m: Model) -> Call | None:
        s = m.live(_ident(self.name))
        others = [v.version_id for v in s.versions if v.version_id != s.current] if s else []
        return Call("rollback", self.name, (others[self.pick % len(others)],), self.expect) if others else None


# The draws lean towards what makes the rules meet (the same definition again, versions to roll
# back to, dialects a change names that the view has); repeated entries weight a sampled_from.
# a name, or (an int) the pick-th live view's name, so that most calls meet a view
NAME = st.one_of(st.sampled_from(NAMES), st.integers(0, 7))
ADDED = st.sampled_from(["trino", "trino", "Hive", "flink", "spark"])       # mostly one the view lacks
CHANGED = st.sampled_from(["spark", "spark", "trino", "hive", "flink"])     # mostly one it has
REPS = st.one_of(
    st.sampled_from([(("spark", "SELECT 1"),), (("spark", "SELECT 2 AS x"),),
                     (("spark", "SELECT 1"), ("trino", "SELECT 1")), (("Hive", "SELECT 1"), ("spark", "SELECT 1")),
                     (("spark", "SELECT 1"), ("SPARK", "SELECT 1"))]),   # one dialect twice: refused
    st.lists(st.tuples(DIALECTS, SQL), min_size=1, max_size=3).map(tuple),
)
PROPERTIES = st.sampled_from([None, None, {}, {"k1": "v"}, {"k1": "w", "k2": "v"}, {DROP_ALLOWED: "true"},
                              {DROP_ALLOWED: "TRUE"}, {HISTORY_SIZE: "1"}, {HISTORY_SIZE: "2", "k1": "v"}])
# expected_version: mostly none; else the version the model counts for the view (+ 0, 1 or -1), or as given
EXPECT = st.sampled_from([None] * 9 + [("own", 0), ("own", 0), ("own", 0), ("own", 1), ("own", -1), ("is", 0),
                                       ("is", True)])
DEFINITION = dict(name=st.sampled_from(NAMES), columns=st.sampled_from([0, 0, *range(len(COLUMN_CHOICES))]), reps=REPS,
                  namespace=st.sampled_from([None, None, ("other",)]), catalog=st.sampled_from([None, None, "cat2"]),
                  comment=st.sampled_from([None, "c1", "c2"]), properties=PROPERTIES,
                  summary=st.sampled_from([None, None, {"engine-name": "spark"}]), expect=EXPECT)
CHANGE = st.one_of(
    st.tuples(st.just("comment"), st.sampled_from([None, "c1", "c2"])),
    st.tuples(st.just("set"), st.sampled_from(["k1", "k2", "comment", DROP_ALLOWED]), st.sampled_from(["true", "v"])),
    st.tuples(st.just("remove"), st.sampled_from(["k1", "k2", "comment", DROP_ALLOWED, HISTORY_SIZE])),
    # how many versions an export keeps (a few, so that retention happens; "0" is refused)
    st.tuples(st.just("set"), st.just(HISTORY_SIZE), st.sampled_from(["1", "2", "3", "0"])),
    st.tuples(st.just("rename"), st.sampled_from(["v1", "v5"])),
    st.tuples(st.just("add"), ADDED, SQL), st.tuples(st.just("add"), ADDED, SQL),
    st.tuples(st.just("update"), CHANGED, SQL), st.tuples(st.just("update"), CHANGED, SQL),
    st.tuples(st.just("remove_rep"), CHANGED),
)
REPLACE = st.builds(Replace, security_mode=st.sampled_from([None, None, "DEFINER", "INVOKER"]),
                    replace_properties=st.booleans(), **{**DEFINITION, "name": NAME})
# a few definitions over and over: replacing with an earlier one makes it current again, no new version
REPLACE_AGAIN = st.builds(Replace, name=NAME, columns=st.just(0), reps=st.sampled_from(
    [(("spark", "SELECT 1"),), (("spark", "SELECT 2 AS x"),), (("spark", "SELECT 1"),), (("spark", "SELECT 2 AS x"),),
     (("spark", "SELECT 1"), ("trino", "SELECT 1"))]),
    namespace=st.just(None), catalog=st.just("cat2"), comment=st.sampled_from([None, "c1"]),
    properties=st.sampled_from([None, {DROP_ALLOWED: "true"}]), security_mode=st.just(None), summary=st.just(None),
    expect=EXPECT)
ALTER = st.builds(Call, st.just("alter"), NAME, st.lists(CHANGE, min_size=1, max_size=3).map(lambda c: (tuple(c),)),
                  EXPECT)
OPERATION = st.one_of(
    st.builds(Create, security_mode=st.sampled_from(["DEFINER", "INVOKER"]), **DEFINITION),
    REPLACE, REPLACE, REPLACE_AGAIN, REPLACE_AGAIN, ALTER, ALTER,
    st.builds(Call, st.just("rename"), NAME, st.sampled_from(NAMES).map(lambda n: (n,)), EXPECT),
    st.builds(Call, st.just("drop"), st.sampled_from(NAMES), st.just(()), EXPECT),
    st.builds(Call, st.just("rollback"), NAME, st.integers(1, 4).map(lambda v: (v,)), EXPECT),   # often one it lacks
    st.builds(RollbackToOne, NAME, st.integers(0, 9), EXPECT),
    st.builds(RollbackToOne, NAME, st.integers(0, 9), EXPECT),
)


def _label(op: Any) -> str:
    return op.kind if isinstance(op, Call) else type(op).__name__


def _settling(step: Callable[..., None]) -> Callable[..., None]:
    """A rule or invariant that leaves the machine settled if it ends without an error: teardown
    checks every recorded point only then, so that a failed step's report is not buried under the
    errors its unfinished bookkeeping would cause there."""
    @functools.wraps(step)
    def run(self: "ReferenceMachine", *args: Any, **kwargs: Any) -> None:
        self.settled = False
        step(self, *args, **kwargs)
        self.settled = True
    return run


@dataclass
class Point:
    """The model's state right after one commit: its events as the store logged them, and its time."""

    events: list
    time: int
    model: Model
    timed: bool   # a time names this state (not a write inside a transaction block but its last)


class ReferenceMachine(RuleBasedStateMachine):
    @initialize()
    def open(self) -> None:
        # a snapshot every few events of a stream, so that as_of starts from snapshots too (one every
        # 100 events would need histories this machine never makes)
        self.patch = pytest.MonkeyPatch()
        self.patch.setattr(projections, "SNAPSHOT_EVERY", SNAPSHOT_EVERY_HERE)
        self.dir = Path(tempfile.mkdtemp())
        self.stores = [ViewStore(self.dir / "s.db", catalog=c, actor=a) for c, a in zip(CATALOGS, ACTORS)]
        self.model = Model()
        self.points: list[Point] = []
        self.logged = 0       # how many events of the log the model has accounted for
        self.exports = 0
        self.files: list[Path] = []   # the files exported
        self.checks = 0
        self.settled = True

    def teardown(self) -> None:
        try:
            if getattr(self, "settled", False):
                for point in self.points:
                    self.check_point(point)
        finally:
            for store in getattr(self, "stores", []):
                store.close()
            if hasattr(self, "patch"):
                self.patch.undo()

    # -- making calls --

    def perform(self, op: Any, writer: int, *, block: tuple[int, int] | None = None) -> None:
        """Make the call and check it against the model. ``block``: inside a ``transaction()``, the
        clock just before the block began and just after (its writes carry the time it began)."""
        if isinstance(op.name, int):
            live = sorted(".".join(s.identifier) for s in self.model.streams.values() if s.live) or NAMES
            op = dataclasses.replace(op, name=live[op.name % len(live)])
        if isinstance(op.expect, tuple):   # ("own", d): the version the model counts, + d; ("is", v): v
            how, value = op.expect
            op = dataclasses.replace(op, expect=self.model.stream_version(_ident(op.name)) + value
                                     if how == "own" else value)
        if isinstance(op, RollbackToOne):
            op = op.resolve(self.model)
            if op is None:
                return
        store = self.stores[writer]
        count = self.stores[0].event_count()
        assert count == self.logged
        before = time.time_ns() // 1_000_000
        try:
            result, error = op.call(store), None
        except ViewStoreError as e:
            result, error = None, e
        after = time.time_ns() // 1_000_000
        new = self.stores[0].events()[count:]
        trial = copy.deepcopy(self.model)
        ctx = Context(now=new[0].occurred_at if new else -1, actor=ACTORS[writer], catalog=CATALOGS[writer])
        try:
            expected = op.plan(trial, ctx)
        except Refused as refused:
            event(f"{_label(op)}: refused, {type(error).__name__}")   # --hypothesis-show-statistics
            assert isinstance(error, refused.kinds), \
                f"{op}: the model refuses it ({refused.kinds}); the store: {error!r}"
            assert not new, f"{op} was refused but appended {new}"
            if isinstance(error, ConcurrencyError):   # it names the versions, and it is a lost race, not a busy file
                assert refused.stale == (error.expected, error.actual) and not error.busy, \
                    f"{op}: {error!r} names {(error.expected, error.actual)}, not the model's {refused.stale}"
                event(f"{_label(op)}: a stale expected_version")
            return
        assert error is None, f"{op}: the model accepts it; the store raised {error!r}"
        if op.expect is not None:
            event(f"{_label(op)}: the expected_version matched")
        # the commit's time is the clock's at the call (in a block: when the block began)
        if new:
            lo, hi = block or (before, after)
            assert lo <= new[0].occurred_at <= hi, f"{op}: committed at {new[0].occurred_at}, not in [{lo}, {hi}]"
        event(f"{_label(op)}: {'no change' if not new else ', '.join(sorted({e.type for e in new}))}")
        if any(len(s.log) > len(self.model.streams[sid].log)
               and len(s.versions) == len(self.model.streams[sid].versions)
               for sid, s in trial.streams.items() if sid in self.model.streams):
            event(f"{_label(op)}: an earlier version current again")   # no version added
        # the events: those the model predicts, one commit at one time
        by_sid = {s.uuid: sid for sid, s in trial.streams.items() if s.uuid is not None}
        predicted = trial.log[len(self.model.log):]
        fields = trial.fields[len(self.model.log):]
        assert len(new) == len(predicted), (f"{op}: predicted {predicted}, "
                                            f"logged {[(e.type, e.identifier) for e in new]}")
        versions: dict[int, int] = {}
        for e, (sid, kind, ident) in zip(new, predicted):
            s = trial.streams[sid]
            if s.uuid is None:   # a new view (a create, also of a dropped view's name): a UUID none had
                assert e.view_id not in by_sid, f"{op}: a new view got the UUID of another"
                assert uuid.UUID(e.view_id), f"{op}: {e.view_id!r} is not a UUID"
                s.uuid = e.view_id
                by_sid[e.view_id] = sid
            versions[sid] = versions.get(sid,
                                         len(self.model.streams[sid].events) if sid in self.model.streams else 0) + 1
            assert (e.view_id, e.type, e.identifier, e.stream_version, e.actor) == \
                (s.uuid, kind, ident, versions[sid], ACTORS[writer]), f"{op}: event {e} is not {(kind, ident)}"
        for e, wanted in zip(new, fields):
            found = {key: getattr(e, key) for key in wanted}
            if "removals" in found:
                found["removals"] = sorted(found["removals"])
            assert found == wanted, f"{op}: event {e} does not carry {wanted}"
        assert len({(e.commit_id, e.occurred_at) for e in new}) <= 1, f"{op}: one call, one commit: {new}"
        if isinstance(expected, Stream):
            self.compare_load(lambda: result, expected.expected(), f"{op}: the view returned")
        else:
            assert result == expected, f"{op}: returned {result!r}"
        self.model = trial
        self.logged += len(new)
        if new:
            self.points.append(Point(new, new[0].occurred_at, copy.deepcopy(trial), timed=block is None))
            if block is None:
                self.next_millisecond(new[0].occurred_at)

    @staticmethod
    def next_millisecond(ms: int) -> None:
        """Wait until the clock has left ``ms``, so that the next commit has a time of its own."""
        while time.time_ns() // 1_000_000 <= ms:
            time.sleep(0.0002)

    @rule(op=OPERATION, writer=st.integers(0, 1))
    @_settling
    def step(self, op: Any, writer: int) -> None:
        self.perform(op, writer)

    @rule(ops=st.lists(OPERATION, min_size=1, max_size=4), commit=st.booleans())
    @_settling
    def transaction(self, ops: list, commit: bool) -> None:
        """Several calls in one block (each may be refused on its own), committed or rolled back whole."""
        model, points, logged = self.model, len(self.points), self.logged
        store = self.stores[0]
        try:
            began = time.time_ns() // 1_000_000
            with store.transaction():
                block = (began, time.time_ns() // 1_000_000)
                for op in ops:
                    self.perform(op, 0, block=block)
                    self.compare_current([store])      # the block's writes see each other's
                if not commit:
                    raise LookupError("rolled back")
        except LookupError:
            self.model, self.points, self.logged = model, self.points[:points], logged
        block = self.points[points:]
        if block:
            assert len({p.time for p in block}) == 1, "a block's writes carry one time"
            block[-1].timed = True
            self.next_millisecond(block[-1].time)
        assert store.event_count() == self.logged

    @rule(pick=st.integers(0, 7), writer=st.integers(0, 1), zipped=st.sampled_from([None, None, True, False]))
    @_settling
    def export_and_import(self, pick: int, writer: int, zipped: bool | None) -> None:
        """Export a live view's Iceberg metadata, check the file (read by pyiceberg) against what the
        spec and the model say it holds, then import it into a fresh store and into this one."""
        live = sorted((s for s in self.model.streams.values() if s.live), key=lambda s: s.identifier)
        if not live:
            return
        s = live[pick % len(live)]
        self.exports += 1
        location = self.dir / f"export{self.exports}"
        path = self.stores[writer].export_iceberg(s.identifier, location, gzip=zipped)
        assert self.stores[0].event_count() == self.logged, "an export appends no event"
        # the first file of a location, gzipped only when asked (the model never sets the codec property)
        assert path.parent == location / "metadata" and path.name.startswith("00000-")
        assert path.name.endswith(".metadata.json") and path.name.endswith(".gz.metadata.json") == bool(zipped)
        raw = path.read_bytes()
        meta = ViewMetadata.model_validate_json(gzip.decompress(raw) if zipped else raw)
        versions, log = s.retained()
        assert (meta.view_uuid, meta.format_version, Path(meta.location), meta.current_version_id, meta.properties) == \
            (s.uuid, 1, location.resolve(), s.current, s.properties), f"export of {s.identifier}: {meta}"
        assert sorted((v.version_id, v.timestamp_ms, v.schema_id, v.summary, tuple(
            (r.root.type, r.root.dialect, r.root.sql) for r in v.representations), v.default_catalog,
            tuple(v.default_namespace)) for v in meta.versions) == \
            [(v.version_id, v.timestamp_ms, v.schema_id, v.summary, tuple(("sql", d, q) for d, q in v.representations),
              v.default_catalog, v.default_namespace) for v in versions], f"export of {s.identifier}: versions"
        assert [(e.timestamp_ms, e.version_id) for e in meta.version_log] == log, f"export of {s.identifier}: log"
        schemas = {schema.schema_id: tuple((f.name, _iceberg_type(f.field_type), f.doc, not f.required)
                                           for f in schema.fields) for schema in meta.schemas}
        assert {v.schema_id: schemas.get(v.schema_id) for v in versions} == \
            {v.schema_id: v.columns for v in versions}, f"export of {s.identifier}: schemas"
        event(f"export: {'some' if len(versions) < len(s.versions) else 'no'} versions left out, "
              f"{'some' if len(log) < len(s.log) else 'no'} log entries")
        # imported into a fresh store: the model's view, as far as the file holds it
        with ViewStore(self.dir / f"import{self.exports}.db", catalog="third", actor="carol") as other:
            view, types = s.imported(s.identifier, "carol")
            self.compare_load(lambda: other.import_iceberg(path, s.identifier), view, "import_iceberg's view")
            self.compare_load(lambda: other.load_view(s.identifier), view, "the view imported")
            assert [(e.type, e.view_id, e.actor) for e in other.history(s.identifier)] == \
                [(kind, s.uuid, "carol") for kind in types], f"history of the import of {s.identifier}"
        # this file or an earlier one, into this store under a free name: its UUID is taken (a view
        # keeps its UUID; one dropped since keeps it too)
        self.files.append(path)
        again = self.files[pick % len(self.files)]
        free = next((i for i in POOL if self.model.live(i) is None), None)
        if free is not None:
            self.compare_load(lambda: self.stores[writer].import_iceberg(again, free), ViewAlreadyExistsError,
                              f"import_iceberg({again.name}, {free}) into the store it came from")
            assert self.stores[0].event_count() == self.logged, "a refused import appends no event"

    # -- checking --

    def names(self) -> list[tuple]:
        """The names of the pool that a view ever had, and one that none had (if any is left): the
        others answer as that one does, and cost as much to ask."""
        carried = {name for _, _, name in self.model.log}
        return [i for i in POOL if i in carried] + [i for i in POOL if i not in carried][:1]

    def compare_current(self, stores: list[ViewStore]) -> None:
        for store in stores:
            live = [s.identifier for s in self.model.streams.values() if s.live]
            assert store.list_views() == sorted(live, key=lambda i: (".".join(i[:-1]), i[-1]))
            assert store.list_namespaces() == sorted({i[:-1] for i in live}, key=".".join)
            for ident in self.names():
                s = self.model.live(ident)
                assert store.view_exists(ident) == (s is not None)
                self.compare_load(lambda: store.load_view(ident), s.expected() if s else NoSuchViewError,
                                  f"load_view({ident}) via {store}")

    @staticmethod
    def compare_load(load: Callable[[], View], expected: Any, what: str) -> None:
        if isinstance(expected, dict):
            try:
                found = observed(load())
            except ViewStoreError as e:
                raise AssertionError(f"{what}: {e!r}, not the model's view") from e
            assert found == expected, f"{what}: " + "; ".join(
                f"{key} is {found[key]!r}, not {expected[key]!r}" for key in expected if found[key] != expected[key])
        else:
            try:
                view = load()
            except ViewStoreError as e:
                assert isinstance(e, expected), f"{what}: {e!r}, not {expected.__name__}"
            else:
                raise AssertionError(f"{what}: loaded {view.identifier} v{view.current_version_id}, "
                                     f"not {expected.__name__}")

    @invariant()
    @_settling
    def views_are_the_models(self) -> None:
        self.compare_current(self.stores)

    @invariant()
    @_settling
    def history_and_events_are_the_models(self) -> None:
        store = self.stores[self.checks % 2]
        log = self.stores[0].events()
        assert [(e.type, e.identifier) for e in log] == [(kind, ident) for _, kind, ident in self.model.log]
        for ident in self.names():
            s = self.model.pick(ident)
            carried = self.model.carried(ident)
            if s is None:
                for ask in (store.history, lambda i: store.events(view=i)):
                    try:
                        ask(ident)
                    except NoSuchViewError:
                        continue
                    raise AssertionError(f"no view ever had {ident}, yet it has a history")
                continue
            assert [(e.view_id, e.type, e.identifier, e.stream_version) for e in store.history(ident)] == \
                [(s.uuid, kind, name, n) for n, (kind, name) in enumerate(s.events, 1)], f"history({ident})"
            assert [(e.type, e.identifier) for e in store.events(view=ident)] == \
                [(kind, name) for sid, kind, name in self.model.log if sid in carried], f"events(view={ident})"

    @invariant()
    @_settling
    def time_travel_is_the_models(self) -> None:
        """The newest recorded state and two older ones, drawn at random (all of them at teardown)."""
        self.checks += 1
        if not self.points:
            return
        rng = random.Random(self.checks)
        for point in {id(p): p for p in [self.points[-1], *rng.sample(self.points, min(2, len(self.points)))]}.values():
            self.check_point(point)

    def model_at(self, ms: int) -> Model:
        """The model as of a time: after the last commit at or before it."""
        found = Model()
        for point in self.points:
            if point.timed and point.time <= ms:
                found = point.model
        return found

    def check_point(self, point: Point) -> None:
        store = self.stores[self.points.index(point) % 2]
        now = self.model
        for e in point.events:   # as_of an event: the view right after that event's commit
            s = next(s for s in point.model.streams.values() if s.uuid == e.view_id)
            for ident in {e.identifier, now.streams[s.sid].identifier, POOL[e.position % len(POOL)]}:
                # an event of any view that carried the name (as events(view=ident) lists them)
                expected = (ValidationError if s.sid not in now.carried(ident) else
                            s.expected() if s.live else NoSuchViewError)
                self.compare_load(lambda: store.load_view(ident, as_of=e), expected,
                                  f"load_view({ident}, as_of=event {e.position} {e.type})")
        if not point.timed:
            return
        for ms in (point.time, point.time - 1):
            then = self.model_at(ms)
            when = datetime.fromtimestamp(ms // 1000, timezone.utc) + timedelta(milliseconds=ms % 1000)
            as_of = [ms, when, when.isoformat(timespec="milliseconds")][ms % 3]   # each form of a time
            for ident in self.names():
                # the view of that name then; else the one known by that name now, as it was then
                s = then.live(ident)
                if s is None:
                    owner = now.known_as(ident)
                    s = then.streams.get(owner.sid) if owner is not None else None
                    s = s if s is not None and s.live else None
                self.compare_load(lambda: store.load_view(ident, as_of=as_of),
                                  s.expected() if s is not None else NoSuchViewError,
                                  f"load_view({ident}, as_of={as_of!r})")


TestReferenceModel = ReferenceMachine.TestCase
TestReferenceModel.settings = settings(max_examples=30, stateful_step_count=30, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])
