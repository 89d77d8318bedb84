"""Random operation sequences: after every step the live projections equal a rebuild from the log,
streams have no gaps, and every live view exports metadata that pyiceberg parses and that agrees
with load_view."""

import json
import tempfile
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from pyiceberg.view.metadata import ViewMetadata

from view_changes import CHANGES, DIALECTS, SQL
from viewstore import Column, ViewStore, ViewStoreError

NAMES = st.sampled_from(["a.v1", "a.v2", "b.v3", "b.c.v4"])
COLUMNS = st.sampled_from([
    [Column("x", "int")], [Column("x", "bigint", "the x")], [Column("y", "struct<a: int, b: list<string>>")],
    [Column("x", "int"), Column("z", "decimal(9,2)", nullable=False)],
])


class StoreMachine(RuleBasedStateMachine):
    @initialize()
    def open(self):
        self.dir = Path(tempfile.mkdtemp())
        self.store = ViewStore(self.dir / "s.db", catalog="cat", actor="fuzz")
        self.exports = 0

    def teardown(self):
        self.store.close()

    def attempt(self, call):
        count = self.store.event_count()
        try:
            call()
        except ViewStoreError:
            assert self.store.event_count() == count  # a failed call writes nothing

    @rule(name=NAMES, cols=COLUMNS,
          reps=st.lists(st.tuples(DIALECTS, SQL), min_size=1, max_size=3), replace=st.booleans())
    def create_or_replace(self, name, cols, reps, replace):
        call = self.store.replace_view if replace else self.store.create_view
        self.attempt(lambda: call(name, columns=cols, representations=reps, default_namespace=name.split(".")[:-1]))

    @rule(name=NAMES, changes=st.lists(CHANGES, min_size=1, max_size=4))
    def alter(self, name, changes):
        self.attempt(lambda: self.store.alter_view(name, *changes))

    @rule(name=NAMES, new_name=NAMES)
    def rename(self, name, new_name):
        self.attempt(lambda: self.store.rename_view(name, new_name))

    @rule(name=NAMES)
    def drop(self, name):
        self.attempt(lambda: self.store.drop_view(name))

    @rule(name=NAMES, version=st.integers(1, 5))
    def rollback(self, name, version):
        self.attempt(lambda: self.store.rollback_view(name, version))

    @rule(steps=st.lists(st.tuples(st.sampled_from(["alter", "rename", "drop", "create"]), NAMES, NAMES,
                                   st.lists(CHANGES, min_size=1, max_size=2)), min_size=1, max_size=4),
          commit=st.booleans())
    def transaction(self, steps, commit):
        """Several calls in one transaction (each may fail on its own), committed or rolled back whole."""
        before = (self.store.event_count(), self.store.projection_dump())
        calls = {"alter": lambda name, other, changes: self.store.alter_view(name, *changes),
                 "rename": lambda name, other, changes: self.store.rename_view(name, other),
                 "drop": lambda name, other, changes: self.store.drop_view(name),
                 "create": lambda name, other, changes: self.store.create_view(
                     name, columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                     default_namespace=name.split(".")[:-1])}
        try:
            with self.store.transaction():
                for kind, name, other, changes in steps:
                    self.attempt(lambda: calls[kind](name, other, changes))
                if not commit:
                    raise LookupError("rolled back")
        except LookupError:
            assert (self.store.event_count(), self.store.projection_dump()) == before

    @invariant()
    def projections_equal_rebuild(self):
        live = self.store.projection_dump()
        self.store.rebuild()
        assert self.store.projection_dump() == live

    @invariant()
    def streams_have_no_gaps(self):
        streams = {}
        for e in self.store.events():
            streams.setdefault(e.view_id, []).append(e.stream_version)
        for versions in streams.values():
            assert versions == list(range(1, len(versions) + 1))

    @invariant()
    def namespaces_are_those_of_the_live_views(self):
        assert self.store.list_namespaces() == sorted({ident[:-1] for ident in self.store.list_views()},
                                                      key=".".join)

    @invariant()
    def exports_agree_with_load_view(self):
        for ident in self.store.list_views():
            view = self.store.load_view(ident)
            self.exports += 1
            path = self.store.export_iceberg(ident, self.dir / f"export{self.exports}")
            meta = ViewMetadata.model_validate_json(path.read_bytes())
            data = json.loads(path.read_text())
            assert meta.view_uuid == view.uuid
            assert meta.current_version_id == view.current_version_id
            current = next(v for v in data["versions"] if v["version-id"] == view.current_version_id)
            assert [(r["dialect"], r["sql"]) for r in current["representations"]] == \
                [(r.dialect, r.sql) for r in view.representations]
            schema = next(s for s in data["schemas"] if s["schema-id"] == current["schema-id"])
            assert [f["name"] for f in schema["fields"]] == [c.name for c in view.columns]
            assert data.get("properties", {}) == view.properties
            assert len({r.dialect.lower() for r in view.representations}) == len(view.representations) >= 1


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(max_examples=30, stateful_step_count=15, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
