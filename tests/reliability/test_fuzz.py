"""Fuzz: malformed input of every kind must end in a ViewStoreError subclass and change nothing.

Hypothesis generates malformed identifiers, column types, representations, properties and other
arguments, alter batches that go wrong part-way, and Iceberg metadata files (mutations of the
conformance files in ../shared/conformance/iceberg-view/). Every strategy here only makes input
that is wrong for a known reason, so every case must raise a ``ViewStoreError`` — never another
exception type — and leave the log and the projections exactly as they were. One property also
replaces arbitrary values in the metadata files: those cases may import, but must never fail any
other way.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import sqlite3
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import hypothesis.strategies as st
import pytest
from figures import record
from hypothesis import HealthCheck, assume, given, settings

from viewstore import Column, SQLRepresentation, ViewChange, ViewStore, ViewStoreError

CASES: Counter[str] = Counter()
SETTINGS = settings(max_examples=int(os.environ.get("VIEWSTORE_FUZZ_EXAMPLES", "150")), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
COLUMNS = [Column("id", "bigint"), Column("name", "string")]
REPS = [SQLRepresentation("spark", "SELECT 1 AS id, 'a' AS name"), SQLRepresentation("trino", "SELECT 1, 'a'")]
ACCEPTED = ["ValidViewMetadata.json", "view-spec-appendix-a-00001.metadata.json",
            "view-spec-appendix-a-00002.metadata.json"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = ViewStore(tmp_path_factory.mktemp("fuzz") / "fuzz.db", catalog="prod", actor="fuzzer")
    s.create_view("fuzz.base", columns=COLUMNS, representations=REPS, default_namespace="fuzz", comment="c")
    s.create_view("fuzz.single", columns=COLUMNS, representations=REPS[:1], default_namespace="fuzz")
    s.create_view("fuzz.other", columns=COLUMNS, representations=REPS, default_namespace="fuzz")
    s.alter_view("fuzz.base", ViewChange.update_representation("trino", "SELECT 2, 'b'"))
    yield s
    s.close()
    record("fuzz", cases=sum(CASES.values()), by_kind=dict(CASES))


def _fingerprint(store: ViewStore) -> Any:
    with sqlite3.connect(store.path) as raw:  # the log as stored, read beside the store
        log = raw.execute("SELECT count(*), max(position), total(length(payload)) FROM events").fetchone()
    return log, store.projection_dump()


def refused(store: ViewStore, kind: str, call: Callable[[], Any]) -> None:
    """``call`` must raise a ViewStoreError and leave the store unchanged."""
    CASES[kind] += 1
    before = _fingerprint(store)
    with pytest.raises(ViewStoreError):
        call()
    assert _fingerprint(store) == before


# -- identifiers ------------------------------------------------------------------------------

PART = st.builds(str.__add__, st.sampled_from("abcdefghkmnpqrstuvwxyz"), st.text("abcxyz_0189", max_size=8))
BAD_CHAR = st.sampled_from(["`", "\x00", "\t", "\n", "\x1f", "\x7f", "\r", "\ud800", "\udfff"])
SURROGATE = st.sampled_from(["\ud800", "\udc80", "\udfff"])  # not valid Unicode: cannot be stored as UTF-8


@st.composite
def bad_part(draw: st.DrawFn, *, in_string: bool) -> Any:
    part = draw(PART)
    kind = draw(st.sampled_from(["empty", "char", "space", "long"] + ([] if in_string else ["dot", "type"])))
    if kind == "empty":
        return ""
    if kind == "char":
        i = draw(st.integers(0, len(part)))
        return part[:i] + draw(BAD_CHAR) + part[i:]
    if kind == "space":
        return draw(st.sampled_from([" ", "  ", "\u00a0"])) + part if draw(st.booleans()) else part + " "
    if kind == "long":
        return part + "x" * 256
    if kind == "dot":
        return part + "." + part
    return draw(st.one_of(st.integers(), st.none(), st.floats(), st.binary(max_size=4), st.just(["a"])))


@st.composite
def bad_identifier(draw: st.DrawFn) -> Any:
    form = draw(st.sampled_from(["string", "tuple", "short", "other"]))
    if form == "short":  # a name without a namespace
        return draw(st.one_of(PART, PART.map(lambda p: (p,)), st.just(()), st.just("")))
    if form == "other":
        return draw(st.one_of(st.integers(), st.none(), st.floats(), st.binary(max_size=8),
                              st.dictionaries(PART, PART, max_size=2), st.sets(PART, min_size=2, max_size=2)))
    parts = draw(st.lists(PART, min_size=2, max_size=4))
    i = draw(st.integers(0, len(parts) - 1))
    parts[i] = draw(bad_part(in_string=form == "string"))
    if form == "string":
        return ".".join(parts)
    return tuple(parts) if draw(st.booleans()) else list(parts)


def _not_bare(identifier: Any) -> bool:
    """ViewChange.rename also takes a bare new name ("v2"): keep only what is bad there too."""
    return not (isinstance(identifier, str) and identifier and "." not in identifier)


def _bad_namespace(identifier: Any) -> Any:
    """A namespace that is bad for sure (a one-level tuple or None would be valid there)."""
    if isinstance(identifier, str):
        return identifier + ".."
    if isinstance(identifier, (tuple, list)):
        return (*identifier, "")
    return "" if identifier is None else identifier


def _bad_actor(identifier: Any) -> Any:
    """Not a string, or a string with a lone surrogate (None would mean: any actor)."""
    if isinstance(identifier, str):
        return identifier + "\udc00"
    return "\udc00" if identifier is None else identifier


IDENTIFIER_CALLS: dict[str, Callable[[ViewStore, Any], Any]] = {
    "create_view": lambda s, i: s.create_view(i, columns=COLUMNS, representations=REPS, default_namespace="fuzz"),
    "replace_view": lambda s, i: s.replace_view(i, columns=COLUMNS, representations=REPS, default_namespace="fuzz"),
    "load_view": lambda s, i: s.load_view(i),
    "load_view_as_of": lambda s, i: s.load_view(i, as_of=0),
    "view_exists": lambda s, i: s.view_exists(i),
    "drop_view": lambda s, i: s.drop_view(i),
    "rename_from": lambda s, i: s.rename_view(i, "fuzz.renamed"),
    "rename_to": lambda s, i: s.rename_view("fuzz.base", i),
    "alter_view": lambda s, i: s.alter_view(i, ViewChange.update_comment("x")),
    "alter_rename": lambda s, i: s.alter_view("fuzz.base", ViewChange.update_comment("y"),
                                              ViewChange.rename(i if _not_bare(i) else i + "`")),
    "history": lambda s, i: s.history(i),
    "rollback_view": lambda s, i: s.rollback_view(i, 1),
    "events": lambda s, i: s.events(view=i if i is not None else ""),
    "list_views": lambda s, i: s.list_views(_bad_namespace(i)),
    "events_by_actor": lambda s, i: s.events(actor=_bad_actor(i)),
    "export_iceberg": lambda s, i: s.export_iceberg(i),
}


@SETTINGS
@given(identifier=bad_identifier(), call=st.sampled_from(sorted(IDENTIFIER_CALLS)))
def test_malformed_identifiers(store, identifier, call):
    refused(store, "identifier", lambda: IDENTIFIER_CALLS[call](store, identifier))


# -- column types -----------------------------------------------------------------------------

VALID_TYPES = ["int", "bigint", "decimal(18,2)", "varchar(20)", "struct<a: int, b: string>", "list<string>",
               "array<int>", "map<string, int>", "fixed[16]", "timestamp with time zone", "double precision",
               "struct<a: list<map<string, decimal(9,3)>>>", "timestamptz"]


@st.composite
def bad_type(draw: st.DrawFn) -> Any:
    base = draw(st.sampled_from(VALID_TYPES))
    kind = draw(st.sampled_from(["truncate", "append", "prefix", "number", "value", "blank", "dup", "unknown"]))
    if kind == "truncate":  # drop the closing bracket or the last letter
        return base[:-1]
    if kind == "append":
        return base + draw(st.sampled_from([">", ")", "]", ",", "<", "(", " x", "§", "<int>", " not"]))
    if kind == "prefix":
        return draw(st.sampled_from(["<", ">", "(", "§", ",", "1", "not "])) + base
    if kind == "number":
        return draw(st.sampled_from(["decimal(0,0)", "decimal(39,2)", "decimal(10,11)", "decimal(-1,0)",
                                     "decimal(x,1)", "fixed[0]", "fixed[-3]", "fixed[]", "varchar(x)",
                                     "decimal(10,2,3)", "fixed(1.5)"]))
    if kind == "value":
        return draw(st.one_of(st.integers(), st.none(), st.floats(), st.lists(PART, max_size=2),
                              st.dictionaries(PART, PART, max_size=2), st.booleans(), st.binary(max_size=4)))
    if kind == "blank":
        return draw(st.sampled_from(["", " ", "\t", "\n"]))
    if kind == "dup":
        return "struct<a: int, A: string>" if draw(st.booleans()) else "struct<a: int, a: int>"
    if draw(st.booleans()):
        return base + draw(SURROGATE)
    return "zz" + draw(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8))


@SETTINGS
@given(t=bad_type(), where=st.sampled_from(["create", "replace", "column", "tuple", "dict"]))
def test_malformed_types(store, t, where):
    if where == "column":
        refused(store, "type", lambda: Column("x", t))
    elif where in ("tuple", "dict"):
        col: Any = ("x", t) if where == "tuple" else {"name": "x", "type": t}
        refused(store, "type", lambda: store.create_view("fuzz.typed", columns=[col], representations=REPS,
                                                         default_namespace="fuzz"))
    else:
        call = store.create_view if where == "create" else store.replace_view
        target = "fuzz.typed" if where == "create" else "fuzz.base"
        refused(store, "type", lambda: call(target, columns=[("id", "bigint"), ("x", t)], representations=REPS,
                                            default_namespace="fuzz"))


# -- representations --------------------------------------------------------------------------

NOT_STR = st.one_of(st.integers(), st.none(), st.floats(), st.lists(PART, max_size=2), st.binary(max_size=3))
BLANK = st.sampled_from(["", " ", "\t", "\n  "])


@st.composite
def bad_representation(draw: st.DrawFn, kind: str) -> Any:
    """One representation that is wrong in the given way."""
    if kind == "arity":
        return draw(st.sampled_from([("spark",), ("spark", "SELECT 1", "x"), (), ["a", "b", "c"]]))
    if kind == "dialect":
        return (draw(st.one_of(NOT_STR, BLANK, PART.map(lambda p: f" {p}"), PART.map(lambda p: f"{p} "))), "SELECT 1")
    if kind == "sql":
        return ("trino", draw(st.one_of(NOT_STR, BLANK, SURROGATE.map(lambda c: f"SELECT '{c}'"))))
    if kind == "duplicate":  # spark is already there, in another case
        return (draw(st.sampled_from(["spark", "SPARK", "Spark"])), "SELECT 2")
    return {"dialect": "trino", "sql": "SELECT 1", draw(st.sampled_from(["type", "x", "sq1"])): "y"}


@st.composite
def bad_representations(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["empty", "scalar", "arity", "dialect", "sql", "duplicate", "extra"]))
    if kind == "empty":
        return draw(st.sampled_from([[], (), None]))
    if kind == "scalar":
        return draw(st.one_of(st.integers(), st.text(max_size=5), st.floats()))
    good = [("spark", "SELECT 1 AS id, 'a' AS name")]
    at = draw(st.integers(0, len(good)))
    return good[:at] + [draw(bad_representation(kind))] + good[at:]


@SETTINGS
@given(reps=bad_representations(), call=st.sampled_from(["create", "replace"]))
def test_malformed_representations(store, reps, call):
    if call == "create":
        run = lambda: store.create_view("fuzz.reps", columns=COLUMNS, representations=reps, default_namespace="f")
    else:
        run = lambda: store.replace_view("fuzz.base", columns=COLUMNS, representations=reps, default_namespace="f")
    refused(store, "representation", run)


@SETTINGS
@given(data=st.data(), call=st.sampled_from(["add", "update"]))
def test_malformed_representation_changes(store, data, call):
    if call == "add":
        rep = data.draw(st.sampled_from(["arity", "dialect", "sql", "duplicate", "extra"]).flatmap(bad_representation))
        run = lambda: store.alter_view("fuzz.base", ViewChange.update_comment("z"), ViewChange.add_representation(rep))
    else:
        dialect, sql = data.draw(st.sampled_from(["dialect", "sql"]).flatmap(bad_representation))
        run = lambda: store.alter_view("fuzz.base", ViewChange.update_representation(dialect, sql))
    refused(store, "representation", run)


# -- properties and the other arguments -------------------------------------------------------

@st.composite
def bad_properties(draw: st.DrawFn, kinds: tuple[str, ...] = ("container", "key", "value")) -> Any:
    kind = draw(st.sampled_from(kinds))
    good = {"owner": "team-a"}
    if kind == "container":
        return draw(st.one_of(st.lists(PART, min_size=1, max_size=2), st.text(min_size=1, max_size=4),
                              st.integers(), st.tuples(PART, PART)))
    if kind == "key":
        key = draw(st.one_of(st.integers(), st.none(), st.tuples(PART), BLANK, st.floats(allow_nan=False)))
        return {**good, key: "v"}
    if draw(st.booleans()):
        if draw(st.booleans()):
            return {**good, draw(SURROGATE.map(lambda c: f"key{c}")): "v"}
        return {**good, "k": draw(SURROGATE)}
    return {**good, "k": draw(NOT_STR.filter(lambda v: v is not None) | st.none() | st.booleans())}


@SETTINGS
@given(data=st.data(), call=st.sampled_from(["create", "replace", "set", "remove", "import"]))
def test_malformed_properties(store, data, call):
    props = data.draw(bad_properties() if call in ("create", "replace", "import") else bad_properties(
        ("key",) if call == "remove" else ("key", "value")))
    if call == "create":
        run = lambda: store.create_view("fuzz.props", columns=COLUMNS, representations=REPS, default_namespace="f",
                                        properties=props)
    elif call == "replace":
        run = lambda: store.replace_view("fuzz.base", columns=COLUMNS, representations=REPS, default_namespace="f",
                                         properties=props)
    elif call == "set":
        run = lambda: store.alter_view("fuzz.base", *(ViewChange.set_property(k, v) for k, v in props.items()))
    elif call == "remove":
        bad_key = next(k for k in props if k != "owner")
        run = lambda: store.alter_view("fuzz.base", ViewChange.remove_property("owner"),
                                       ViewChange.remove_property(bad_key))
    else:
        view = store.load_view("fuzz.base")
        run = lambda: store.import_view("fuzz.imported_props", source="fuzz", versions=view.versions,
                                        version_log=view.version_log, current_version_id=view.current_version_id,
                                        properties=props)
    refused(store, "property", run)


OTHER_ARGUMENTS = {
    "columns": st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just([("id", "int"), ("ID", "int")]),
                         st.just([("x",)]), st.just([("x", "int", None, True, 5)]),
                         st.just([{"name": "", "type": "int"}]),
                         st.just([{"name": "x", "type": "int", "extra": 1}]), st.just([Column("a", "int"), 5])),
    "default_namespace": st.one_of(st.none(), st.integers(), st.just(["a", ""]), st.just("a..b"), st.just([3])),
    "default_catalog": st.one_of(st.just(""), st.just("  "), st.integers(), st.just(["c"])),
    "comment": st.one_of(st.integers(), st.lists(PART, max_size=1), st.booleans(), SURROGATE),
    "security_mode": st.one_of(st.sampled_from(["", "owner", "DEFINERS", "invoker "]), st.integers(), st.none()),
    "summary": st.one_of(st.integers(), st.just({"": "x"}), st.just({"k": 1}), st.just({1: "v"}), st.text(max_size=2),
                         SURROGATE.map(lambda c: {"engine": c})),
}


@SETTINGS
@given(data=st.data(), argument=st.sampled_from(sorted(OTHER_ARGUMENTS)), call=st.sampled_from(["create", "replace"]))
def test_malformed_view_arguments(store, data, argument, call):
    value = data.draw(OTHER_ARGUMENTS[argument])
    assume(not (call == "replace" and argument == "security_mode" and value is None))  # None: keep the view's
    kwargs: dict[str, Any] = {"columns": COLUMNS, "representations": REPS, "default_namespace": "fuzz", argument: value}
    target = store.create_view if call == "create" else store.replace_view
    refused(store, "argument", lambda: target("fuzz.args" if call == "create" else "fuzz.base", **kwargs))


# -- alter batches ----------------------------------------------------------------------------

GOOD_CHANGE = st.one_of(
    st.builds(lambda t: ViewChange.update_comment(t), st.text(max_size=10)),
    st.builds(lambda k, v: ViewChange.set_property(k, v), PART, st.text(max_size=5)),
    st.builds(lambda k: ViewChange.remove_property(k), PART),
    st.builds(lambda d: ViewChange.add_representation((d, "SELECT 3")), PART.map(lambda p: f"d_{p}")),
    st.just(ViewChange.update_representation("spark", "SELECT 9 AS id, 'z' AS name")),
)


@st.composite
def bad_change(draw: st.DrawFn) -> Callable[[], Any]:
    """A change that must fail, built lazily (some fail already when built)."""
    kind = draw(st.sampled_from(["missing-dialect", "remove-missing", "add-existing", "rename-taken", "not-a-change",
                                 "unknown-kind", "bad-key", "bad-comment", "bad-value", "bad-dialect", "blank-sql",
                                 "rename-bad", "surrogate-text"]))
    dialect = draw(PART.map(lambda p: f"x_{p}"))
    return {
        "missing-dialect": lambda: ViewChange.update_representation(dialect, "SELECT 1"),
        "remove-missing": lambda: ViewChange.remove_representation(dialect),
        "add-existing": lambda: ViewChange.add_representation((draw_case("spark"), "SELECT 1")),
        "rename-taken": lambda: ViewChange.rename("other"),
        "not-a-change": lambda: ("update_comment", "x"),
        "unknown-kind": lambda: ViewChange("explode"),
        "bad-key": lambda: ViewChange.set_property(draw(st.sampled_from(["", " ", None, 3])), "v"),
        "bad-comment": lambda: ViewChange.update_comment(draw(st.sampled_from([3, b"x", ["c"]]))),
        "bad-value": lambda: ViewChange.set_property("k", draw(st.sampled_from([None, 3, ["v"], True]))),
        "bad-dialect": lambda: ViewChange.remove_representation(draw(st.sampled_from(["", " ", None, 7]))),
        "blank-sql": lambda: ViewChange.update_representation("spark", draw(st.sampled_from(["", "  ", None]))),
        "rename-bad": lambda: ViewChange.rename(draw(bad_identifier().filter(_not_bare))),
        "surrogate-text": lambda: draw(st.sampled_from([
            lambda c: ViewChange.update_comment(f"a{c}"), lambda c: ViewChange.set_property(f"k{c}", "v"),
            lambda c: ViewChange.set_property("k", c),
            lambda c: ViewChange.update_representation("spark", f"SELECT '{c}'"),
            lambda c: ViewChange.add_representation((f"d{c}", "SELECT 1"))]))(draw(SURROGATE)),
    }[kind]


def draw_case(word: str) -> str:
    return word.upper()


@SETTINGS
@given(before=st.lists(GOOD_CHANGE, max_size=3), bad=bad_change(), after=st.lists(GOOD_CHANGE, max_size=2),
       target=st.sampled_from(["fuzz.base", "fuzz.single"]))
def test_alter_batches_fail_whole(store, before, bad, after, target):
    refused(store, "alter batch", lambda: store.alter_view(target, *before, bad(), *after))


@SETTINGS
@given(target=st.sampled_from(["fuzz.base", "fuzz.single"]), how=st.sampled_from(["last", "rollback", "version"]))
def test_impossible_alters(store, target, how):
    if how == "last":  # removing every representation
        dialects = store.load_view(target).dialects
        refused(store, "alter batch", lambda: store.alter_view(target, *(ViewChange.remove_representation(d)
                                                                          for d in dialects)))
    elif how == "rollback":
        refused(store, "alter batch", lambda: store.rollback_view(target, 99))
    else:
        refused(store, "alter batch", lambda: store.rollback_view(target, "1"))  # type: ignore[arg-type]


# -- Iceberg metadata -------------------------------------------------------------------------

REQUIRED = ["view-uuid", "format-version", "location", "schemas", "current-version-id", "versions", "version-log"]


def _base(conformance: Path, name: str) -> dict[str, Any]:
    return json.loads((conformance / "iceberg-view" / name).read_text())


@st.composite
def broken_metadata(draw: st.DrawFn, conformance: Path) -> bytes:
    """A conformance file broken in one way the reference implementation (or viewstore) rejects."""
    data = _base(conformance, draw(st.sampled_from(ACCEPTED)))
    kind = draw(st.sampled_from(["drop-key", "wrong-type", "format", "uuid", "current", "schema-ref", "dup-version",
                                 "dup-schema", "rep-type", "dup-dialect", "no-reps", "field-type", "field-missing",
                                 "no-versions", "top-level", "truncate", "gzip", "bytes", "sql-blank", "surrogate"]))
    versions = data["versions"]
    v = draw(st.sampled_from(versions))
    if kind == "drop-key":
        del data[draw(st.sampled_from(REQUIRED))]
    elif kind == "wrong-type":
        key = draw(st.sampled_from(REQUIRED))
        not_str, not_int = [None, 1, 1.5, ["x"], {"a": 1}, True], [None, "1", 1.5, True, [1], {}]
        wrong = {"view-uuid": not_str, "location": not_str, "format-version": not_int, "current-version-id": not_int}
        data[key] = draw(st.sampled_from(wrong.get(key, [None, "x", 1, {"a": 1}, True])))
    elif kind == "format":
        data["format-version"] = draw(st.sampled_from([0, 2, 3, -1]))
    elif kind == "uuid":
        data["view-uuid"] = draw(st.sampled_from(["", "not-a-uuid", "fa6506c3-7681-40c8-86dc", "z" * 36]))
    elif kind == "current":
        data["current-version-id"] = max(x["version-id"] for x in versions) + draw(st.integers(1, 1000))
    elif kind == "schema-ref":
        v["schema-id"] = max(s["schema-id"] for s in data["schemas"]) + draw(st.integers(1, 50))
    elif kind == "dup-version":
        versions.append(copy.deepcopy(v))
    elif kind == "dup-schema":
        data["schemas"].append(copy.deepcopy(data["schemas"][0]))
    elif kind == "rep-type":
        v["representations"][0]["type"] = draw(st.sampled_from(["substrait", "", "sqlx", None]))
    elif kind == "dup-dialect":
        rep = copy.deepcopy(v["representations"][0])
        rep["dialect"] = rep["dialect"].upper()
        v["representations"].append(rep)
    elif kind == "no-reps":
        v["representations"] = []
    elif kind == "field-type":
        draw(st.sampled_from(data["schemas"]))["fields"][0]["type"] = draw(st.sampled_from(
            ["zzz", "", 5, None, {"type": "list"}, {"type": "struct"}, "decimal(99,1)", "long long"]))
    elif kind == "field-missing":
        del draw(st.sampled_from(data["schemas"]))["fields"][0][draw(st.sampled_from(["name", "type"]))]
    elif kind == "no-versions":
        data["versions"] = []
    elif kind == "sql-blank":
        v["representations"][0]["sql"] = draw(st.sampled_from(["", "   ", None, 5]))
    elif kind == "top-level":
        return json.dumps(draw(st.sampled_from([[data], 5, "view", None]))).encode()
    elif kind == "surrogate":  # a JSON escape such as \ud800: text no store can hold, in any text it keeps
        parent, key = draw(st.sampled_from(_stored_text(data)))
        spot = draw(SURROGATE)
        if key is None:  # a key that is data (a property or summary key)
            name = draw(st.sampled_from(sorted(parent)))
            parent[name + spot] = parent.pop(name)
        else:
            parent[key] += spot
    text = json.dumps(data).encode()
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text) - 2))]
    if kind == "gzip":
        packed = bytearray(gzip.compress(text, mtime=0))
        if draw(st.booleans()):
            return bytes(packed[:draw(st.integers(2, len(packed) - 1))])
        # inside the deflate stream, before its last byte (whose padding bits may carry nothing)
        i = draw(st.integers(12, len(packed) - 10))
        packed[i] ^= draw(st.integers(1, 255))
        try:
            unchanged = gzip.decompress(bytes(packed)) == text
        except (OSError, EOFError, zlib.error):
            unchanged = False
        assume(not unchanged)  # a flipped bit that no code reads breaks nothing
        return bytes(packed)
    if kind == "bytes":
        return b"\xff\xfe" + text
    return text


def _stored_text(value: Any, top: bool = True) -> list[tuple[Any, Any]]:
    """Where the store keeps a file's text: (container, key) of every string value but the location
    and keys it ignores, and (map, None) of the properties and summaries, whose keys are data too."""
    out: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if top and key in ("location", "current-schema-id"):
            continue
        if isinstance(item, str):
            out.append((value, key))
        elif key in ("properties", "summary") and item:
            out.append((item, None))
        out += _stored_text(item, False)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-metadata")


@SETTINGS
@given(data=st.data())
def test_broken_iceberg_metadata(store, conformance, files, data):
    content = data.draw(broken_metadata(conformance))
    path = files / "broken.metadata.json"
    path.write_bytes(content)
    refused(store, "iceberg", lambda: store.import_iceberg(path, "fuzz.imported"))


# integers include those beyond Iceberg's int and beyond SQLite's 64 bits
JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers(-5, 5000) | st.sampled_from([2**31, 2**63, -2**64])
                          | st.text(max_size=6),
                          lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner,
                                                                                      max_size=2), max_leaves=4)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


@SETTINGS
@given(data=st.data(), name=st.sampled_from(ACCEPTED))
def test_arbitrary_metadata_values_import_or_refuse(store, conformance, files, data, name):
    meta = _base(conformance, name)
    path_in = data.draw(st.sampled_from(_paths(meta)))
    parent = meta
    for step in path_in[:-1]:
        parent = parent[step]
    if data.draw(st.booleans()):
        parent[path_in[-1]] = data.draw(JSON_VALUE)
    elif isinstance(parent, dict):
        del parent[path_in[-1]]
    else:
        parent.pop(path_in[-1])
    file = files / "mutated.metadata.json"
    file.write_text(json.dumps(meta))
    CASES["iceberg (any value)"] += 1
    before = _fingerprint(store)
    identifier = f"fuzz.imported_{CASES['iceberg (any value)']}"
    try:
        store.import_iceberg(file, identifier)
    except ViewStoreError:
        assert _fingerprint(store) == before
    else:
        store.drop_view(identifier)  # imported: fine, it was still valid metadata


@pytest.mark.parametrize("name", ["ViewMetadataMissingLocation.json", "ViewMetadataMissingCurrentVersion.json",
                                  "ViewMetadataInvalidCurrentVersion.json", "ViewMetadataInvalidCurrentSchema.json",
                                  "ViewMetadataMultipleSQLsForDialect.json"])
def test_conformance_files_the_store_refuses(store, conformance, name):
    refused(store, "iceberg", lambda: store.import_iceberg(conformance / "iceberg-view" / name, "fuzz.conf"))


# -- a damaged log ----------------------------------------------------------------------------
# The library only ever appends events it has validated, and triggers refuse UPDATE and DELETE. A row
# can still enter the log behind its back (another program, a restored or hand-edited file). Whatever
# such a row holds, reading the log (rebuild, time travel, history, audit) must raise CorruptLogError
# or succeed; rebuild that fails writes nothing; and a rebuild that succeeds leaves a view that loads.


@pytest.fixture(scope="module")
def every_event_type(tmp_path_factory):
    """A store whose log holds every event type, and one (type, payload) of each."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    with ViewStore(path, actor="fuzzer") as s:
        s.create_view("fuzz.v", columns=COLUMNS, representations=REPS, default_namespace="fuzz", comment="c")
        s.replace_view("fuzz.v", columns=COLUMNS, representations=REPS, default_namespace="fuzz", comment="d")
        s.alter_view("fuzz.v", ViewChange.remove_representation("trino"), ViewChange.add_representation(REPS[1]),
                     ViewChange.update_representation("trino", "SELECT 2, 'b'"), ViewChange.update_comment("e"),
                     ViewChange.set_property("k", "v"), ViewChange.remove_property("k"))
        s.rollback_view("fuzz.v", 1)
        s.alter_view("fuzz.v", *(ViewChange.update_comment(f"c{i}") for i in range(100)))  # a snapshot or two
        s.rename_view("fuzz.v", "fuzz.w")
        s.rename_view("fuzz.w", "fuzz.v")
        s.create_view("fuzz.gone", columns=COLUMNS, representations=REPS, default_namespace="fuzz")
        s.drop_view("fuzz.gone")
        v = s.load_view("fuzz.v")
        s.import_view("fuzz.imported", source="test", versions=v.versions, version_log=v.version_log,
                      current_version_id=1)
    with sqlite3.connect(path) as raw:
        templates = dict(raw.execute("SELECT type, payload FROM events ORDER BY position"))
        view_id = raw.execute("SELECT view_id FROM views WHERE name = 'v'").fetchone()[0]
    raw.close()
    return path, view_id, {kind: json.loads(payload) for kind, payload in templates.items()}


@st.composite
def damaged_payload(draw: st.DrawFn, templates: dict[str, Any]) -> tuple[str, str]:
    """An event type and the payload text of a damaged row of it."""
    kind = draw(st.sampled_from(sorted(templates)))
    how = draw(st.sampled_from(["value", "value", "value", "delete", "whole", "text"]))
    payload = copy.deepcopy(templates[kind])
    if how == "text":
        return kind, draw(st.sampled_from(["", "{", "not json", "[1,", "{\"a\":}", "\ufeff{}"]))
    paths = _paths(payload)
    if how == "whole" or not paths:
        return kind, json.dumps(draw(JSON_VALUE))
    where = draw(st.sampled_from(paths))
    parent = payload
    for step in where[:-1]:
        parent = parent[step]
    if how == "value":
        parent[where[-1]] = draw(JSON_VALUE)
    elif isinstance(parent, dict):
        del parent[where[-1]]
    else:
        parent.pop(where[-1])
    return kind, json.dumps(payload)


def _read(call: Callable[[], Any]) -> bool:
    """``call`` must succeed (True) or raise a ViewStoreError (False): never another exception type."""
    try:
        call()
    except ViewStoreError:
        return False
    return True


@SETTINGS
@given(data=st.data(), new_stream=st.booleans())
def test_damaged_event_rows_end_in_corrupt_log_error(every_event_type, tmp_path_factory, data, new_stream):
    template, view_id, templates = every_event_type
    kind, payload = data.draw(damaged_payload(templates))
    CASES["damaged log row"] += 1
    folder = tmp_path_factory.mktemp("damaged")
    path = folder / "damaged.db"
    shutil.copyfile(template, path)
    with sqlite3.connect(path) as raw:  # the damaged row, appended behind the library's back
        next_version = raw.execute("SELECT max(stream_version) + 1 FROM events WHERE view_id = ?", (view_id,))
        stream, version = ("another", 1) if new_stream else (view_id, next_version.fetchone()[0])
        raw.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                    "payload) VALUES ('damaged', ?, ?, ?, 'fuzz.v', 'intruder', 4102444800000, ?)",
                    (stream, version, kind, payload))
    raw.close()
    with ViewStore(path, actor="fuzzer") as store:
        before = store.projection_dump()
        if not _read(store.rebuild):
            assert store.projection_dump() == before  # a failed rebuild wrote nothing
        else:
            store.history("fuzz.v"), store.events()  # what the fold took, the event models take too
        for call in (lambda: store.load_view("fuzz.v", as_of=4102444800001), lambda: store.history("fuzz.v"),
                     lambda: store.events(), lambda: store.events(actor="intruder"),
                     lambda: store.load_view("fuzz.v"), lambda: store.list_views("fuzz"),
                     lambda: store.export_iceberg("fuzz.v", folder / "export")):
            _read(call)


@SETTINGS
@given(data=st.data())
def test_a_damaged_row_reads_as_validating_the_whole_event_reads_it(every_event_type, data):
    """events() and history() build the library's own rows without validating each event whole
    (events.StoredEvents). Whatever a damaged row holds, they answer what whole validation does
    (decode_event): the same event, built alike model by model, or the same CorruptLogError."""
    import orjson
    from test_events import assert_read_as_validated

    from viewstore.errors import CorruptLogError
    from viewstore.log import row_to_event

    kind, payload = data.draw(damaged_payload(every_event_type[2]))
    CASES["damaged log row, read alone"] += 1
    row = (9, "damaged", "another", 1, kind, "fuzz.v", "intruder", 4102444800000, payload)
    try:
        parsed = orjson.loads(payload)  # as the log parses it
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):  # not a JSON object: refused before any event is built
        with pytest.raises(CorruptLogError):
            row_to_event(row)
        return
    assert_read_as_validated(row)


# -- damaged projections ----------------------------------------------------------------------
# The projection tables are derived data: no trigger guards them, and rebuild() exists to repair
# them. Whatever one cell is changed to, reads raise a ViewStoreError or succeed, and rebuild()
# restores every table exactly.

PROJECTION_CELLS = {"views": ["namespace", "name", "live", "stream_version", "current_version_id", "properties",
                              "security_mode", "creator", "created_at", "modifier", "modified_at", "last_position"],
                    "view_versions": ["version_id", "timestamp_ms", "schema_id", "columns", "representations",
                                      "default_catalog", "default_namespace", "summary"],
                    "view_version_log": ["seq", "timestamp_ms", "version_id"],
                    "view_snapshots": ["stream_version", "occurred_at", "state"]}
CELL_VALUE = (st.none() | st.integers(-3, 3) | st.sampled_from(["", "x", "{", "[]", "{}", "null", "[[1,2]]"])
              | JSON_VALUE.map(json.dumps))


@SETTINGS
@given(data=st.data())
def test_rebuild_repairs_any_damaged_projection_cell(every_event_type, tmp_path_factory, data):
    template, _view_id, _templates = every_event_type
    table = data.draw(st.sampled_from(sorted(PROJECTION_CELLS)))
    column = data.draw(st.sampled_from(PROJECTION_CELLS[table]))
    value = data.draw(CELL_VALUE)
    CASES["damaged projection cell"] += 1
    folder = tmp_path_factory.mktemp("projection")
    path = folder / "damaged.db"
    shutil.copyfile(template, path)
    with ViewStore(path, actor="fuzzer") as store:
        good = store.projection_dump()
    with sqlite3.connect(path) as raw:
        rowids = [r[0] for r in raw.execute(f"SELECT rowid FROM {table}")]
        rowid = data.draw(st.sampled_from(rowids))
        try:
            raw.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rowid))
        except sqlite3.IntegrityError:  # a NOT NULL or unique column: this damage cannot happen
            pass
    raw.close()
    with ViewStore(path, actor="fuzzer") as store:
        for call in (lambda: store.load_view("fuzz.v"), lambda: store.load_view("fuzz.imported"),
                     lambda: store.load_view("fuzz.v", as_of=4102444800001), lambda: store.list_views(),
                     lambda: store.list_namespaces(), lambda: store.history("fuzz.v"),
                     lambda: store.view_exists("fuzz.v"), lambda: store.export_iceberg("fuzz.v", folder / "export")):
            _read(call)
        store.rebuild()
        assert store.projection_dump() == good
        store.load_view("fuzz.v")
