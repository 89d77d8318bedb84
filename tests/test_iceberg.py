"""Iceberg view metadata: export checked by pyiceberg and against the spec's appendix; import of the
reference implementation's own files, accepted and refused as it does."""

import copy
import gzip
import itertools
import json
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import time
import uuid
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from pyiceberg.schema import Schema as PySchema
from pyiceberg.types import IntegerType, NestedField, StringType
from pyiceberg.view.metadata import (SQLViewRepresentation, ViewHistoryEntry, ViewMetadata, ViewRepresentation,
                                     ViewVersion as PyViewVersion)

from viewstore import (Column, DamagedProjectionsError, IcebergMetadataError, NoSuchViewError,
                       SQLRepresentation, ValidationError, ViewAlreadyExistsError, ViewChange, ViewStore,
                       ViewStoreError)
from viewstore.iceberg import parse_metadata, read_metadata
from viewstore.model import VersionLogEntry

APPENDIX_SQL_1 = "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM events\nGROUP BY 2"
APPENDIX_SQL_2 = "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM prod.default.events\nGROUP BY 2"
APPENDIX_COLUMNS = [Column("event_count", "int", "Count of events"), Column("event_date", "date")]
SUMMARY = {"engine-name": "Spark", "engine-version": "3.3.2"}


def load(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw), raw


def normalise(meta):
    """Drop what the appendix comparison allows to differ: uuid, location, timestamps, schema ids."""
    meta = copy.deepcopy(meta)
    meta.pop("view-uuid")
    meta.pop("location")
    for v in meta["versions"]:
        v.pop("timestamp-ms")
        v["schema-id"] = "S"
    for e in meta["version-log"]:
        e.pop("timestamp-ms")
    for s in meta["schemas"]:
        s["schema-id"] = "S"
    return meta


def appendix_definition(sql):
    return dict(columns=APPENDIX_COLUMNS, representations=[SQLRepresentation("spark", sql)],
                default_namespace=["default"], default_catalog="prod", comment="Daily event counts", summary=SUMMARY)


def test_spec_appendix_replayed_through_the_api(store, conformance):
    store.create_view("default.event_agg", **appendix_definition(APPENDIX_SQL_1))
    first = store.export_iceberg("default.event_agg")
    store.replace_view("default.event_agg", **appendix_definition(APPENDIX_SQL_2))
    second = store.export_iceberg("default.event_agg")
    for path, name in ((first, "view-spec-appendix-a-00001.metadata.json"),
                       (second, "view-spec-appendix-a-00002.metadata.json")):
        mine, raw = load(path)
        expected = json.loads((conformance / "iceberg-view" / name).read_text())
        assert normalise(mine) == normalise(expected)
        parsed = ViewMetadata.model_validate_json(raw)
        assert parsed.view_uuid == store.load_view("default.event_agg").uuid
    assert first.name.startswith("00000-") and second.name.startswith("00001-")
    assert first.parent == store.warehouse / "default" / "event_agg" / "metadata"
    assert (first.parent / "version-hint.text").read_text().strip() == "1"


def test_export_key_order_gzip_and_pyiceberg_agreement(store, tmp_path):
    store.create_view("a.v", columns=[Column("s", "struct<x: int, y: list<string>>"),
                                      Column("m", "map<string, long>", nullable=False)],
                      representations=[("spark", "SELECT 1"), ("trino", "SELECT 1")], default_namespace="a",
                      properties={"k": "v", "hms.trino.x": "the codecs' own", "HMS.k": "a key of its own"})
    path = store.export_iceberg("a.v", tmp_path / "loc", gzip=True)
    assert path.name.endswith(".gz.metadata.json")
    meta, raw = load(path)
    assert list(meta) == ["view-uuid", "format-version", "location", "properties", "schemas", "current-version-id",
                          "versions", "version-log"]
    assert list(meta["versions"][0]) == ["version-id", "timestamp-ms", "schema-id", "summary", "default-catalog",
                                         "default-namespace", "representations"]
    parsed = ViewMetadata.model_validate_json(raw)
    assert parsed.properties == {"k": "v", "HMS.k": "a key of its own"}  # keys are case-sensitive
    view = store.load_view("a.v")
    assert parsed.current_version_id == view.current_version_id
    assert [r.root.dialect for r in parsed.versions[0].representations] == ["spark", "trino"]
    fields = parsed.schemas[0].fields
    assert [f.name for f in fields] == ["s", "m"] and fields[1].required
    assert str(fields[0].field_type).startswith("struct<")
    # properties only when there are some, as the reference writes them
    store.create_view("a.bare", columns=[Column("x", "int")], representations=[("spark", "SELECT 1")],
                      default_namespace="a")
    bare, raw = load(store.export_iceberg("a.bare", tmp_path / "bare"))
    assert list(bare) == ["view-uuid", "format-version", "location", "schemas", "current-version-id", "versions",
                          "version-log"]
    assert ViewMetadata.model_validate_json(raw).properties == {}


def test_an_export_writes_text_as_utf8_and_a_gzip_header_without_a_time(store, tmp_path):
    """Non-ASCII text is written as itself in UTF-8, as the reference's JSON writer does, not as
    \\u escapes, and a gzipped file's header carries no modification time, so an export's bytes
    depend on the view alone."""
    store.create_view("a.v", columns=[Column("größe", "int", "Maß")], representations=[("spark", "SELECT 'Grüße'")],
                      default_namespace="a")
    raw = store.export_iceberg("a.v", tmp_path / "plain").read_bytes()
    assert "SELECT 'Grüße'".encode() in raw and "größe".encode() in raw and b"\\u" not in raw
    packed = store.export_iceberg("a.v", tmp_path / "packed", gzip=True).read_bytes()
    assert packed[:2] == b"\x1f\x8b" and packed[4:8] == b"\0\0\0\0"


def test_an_export_writes_the_text_json_dumps_writes(store, tmp_path):
    """The metadata file is written by orjson; its text is that of ``json.dumps(indent=2,
    ensure_ascii=False)``, also with text that JSON escapes and wide characters; an integer orjson
    cannot write goes through json itself."""
    from viewstore.iceberg import _metadata_text

    odd = 'tab\there "quoted" \\ \x1b[31m \x7f \x00 ünï 😀 \u2028 end'
    store.create_view("a.v", columns=[Column("größe", "struct<x: int, y: list<string>>", odd)],
                      representations=[("spark", f"SELECT '{odd}'")], default_namespace="a",
                      properties={"k": odd, odd: "v"}, comment=odd, summary={"engine-name": odd})
    for gz in (False, True):
        meta, raw = load(store.export_iceberg("a.v", tmp_path / f"loc{gz}", gzip=gz))
        assert raw == json.dumps(meta, indent=2, ensure_ascii=False).encode()
        assert meta["properties"] == {"k": odd, odd: "v", "comment": odd}
    samples = [{}, {"a": [], "b": {}, "c": [1, -(2**63), 2**64 - 1, True, False, None, "x\u0001\n\t\"\\\x7f"]},
               {"n": 2**70}, {"t": [{"é": "😀"}]}]
    for data in samples:
        assert _metadata_text(data) == json.dumps(data, indent=2, ensure_ascii=False).encode()


def test_exported_schemas_are_listed_in_id_order_as_the_reference_lists_them(store, tmp_path):
    """A replace back to an earlier schema reuses its id (0), and with the version that brought it
    expired, the kept versions name schema 1 before schema 0: the file still lists schema 0 first,
    as the reference's list does (it appends each new schema with the highest id + 1)."""
    same = dict(default_namespace="a")
    store.create_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      properties={"version.history.num-entries": "2"}, **same)
    store.replace_view("a.v", columns=[Column("x", "bigint")], representations=[("spark", "SELECT 2 AS x")], **same)
    store.replace_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 3 AS x")], **same)
    meta, raw = load(store.export_iceberg("a.v", tmp_path / "loc"))
    assert [(v["version-id"], v["schema-id"]) for v in meta["versions"]] == [(2, 1), (3, 0)]
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1]
    assert [s.schema_id for s in ViewMetadata.model_validate_json(raw).schemas] == [0, 1]


def test_the_compression_codec_property_chooses_gzip_and_the_argument_overrides_it(store, tmp_path):
    store.create_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="a", properties={"write.metadata.compression-codec": "GZip"})
    zipped = store.export_iceberg("a.v", tmp_path / "loc")
    assert zipped.name.startswith("00000-") and zipped.name.endswith(".gz.metadata.json")
    meta, raw = load(zipped)
    assert ViewMetadata.model_validate_json(raw).properties["write.metadata.compression-codec"] == "GZip"
    assert read_metadata(zipped).view_uuid == store.load_view("a.v").uuid
    plain = store.export_iceberg("a.v", tmp_path / "loc", gzip=False)
    assert plain.name.startswith("00001-") and not plain.name.endswith(".gz.metadata.json")
    for none in ("none", "NONE"):  # any case, as for gzip
        store.alter_view("a.v", ViewChange.set_property("write.metadata.compression-codec", "GZIP"))
        assert store.export_iceberg("a.v", tmp_path / "loc").name.endswith(".gz.metadata.json")
        store.alter_view("a.v", ViewChange.set_property("write.metadata.compression-codec", none))
        assert not store.export_iceberg("a.v", tmp_path / "loc").name.endswith(".gz.metadata.json")
    store.alter_view("a.v", ViewChange.remove_property("write.metadata.compression-codec"))
    assert not store.export_iceberg("a.v", tmp_path / "loc").name.endswith(".gz.metadata.json")
    assert store.export_iceberg("a.v", tmp_path / "loc", gzip=True).name.endswith(".gz.metadata.json")


def test_a_gzip_argument_that_is_not_a_flag_is_refused_before_anything_is_written(store, tmp_path):
    """gzip="false" is truthy: taken as given, it wrote a gzipped file."""
    store.create_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="a")
    for bad in ("false", "true", 1, 0):
        with pytest.raises(ValidationError, match="gzip must be True, False or None"):
            store.export_iceberg("a.v", tmp_path / "loc", gzip=bad)
    assert not (tmp_path / "loc").exists()


def test_a_codec_the_reference_cannot_write_is_refused_when_set(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    count = store.event_count()
    for bad in ("zstd", "", " gzip", "snappy"):
        with pytest.raises(ValidationError, match="gzip or none"):
            store.alter_view("a.v", ViewChange.set_property("write.metadata.compression-codec", bad))
        with pytest.raises(ValidationError, match="gzip or none"):
            store.create_view("a.w", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                              properties={"write.metadata.compression-codec": bad})
    assert store.event_count() == count


@pytest.mark.parametrize("key, value, message", [
    ("write.metadata.compression-codec", "lz4", "gzip or none, not 'lz4'"),
    ("write.metadata.compression-codec", "gz", "gzip or none, not 'gz'"),  # gzip's abbreviation is no codec
    # the reference refuses a history size below 1 (ViewProperties): it would keep no version but the current
    ("version.history.num-entries", "0", "positive integer, not '0'"),
    ("version.history.num-entries", "ten", "positive integer, not 'ten'"),  # not the default of ten
])
def test_a_stored_property_the_exporter_cannot_follow_is_an_iceberg_error(store, tmp_path, key, value, message):
    """A value stored before the store refused it (an older release) fails the export, typed."""
    import sqlite3

    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                      properties={key: {"lz4": "gzip", "gz": "gzip", "0": "1", "ten": "1"}[value]})
    store.replace_view("a.v", columns=[], representations=[("spark", "SELECT 2")], default_namespace="a")
    raw = sqlite3.connect(store.path)
    raw.execute("UPDATE views SET properties = ?", (json.dumps({key: value}),))
    raw.commit()
    raw.close()
    fresh = type(store)(store.path)
    calls = []
    with pytest.raises(IcebergMetadataError, match=message):
        fresh.export_iceberg("a.v", tmp_path / "loc", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 4), (2, 4)]  # both versions read, of a total that counts all of them kept
    assert not (tmp_path / "loc").exists() or not any((tmp_path / "loc").rglob("*.metadata.json"))
    fresh.close()


def test_retention_and_log_trimming_follow_the_reference(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 0")], default_namespace="a",
                      properties={"version.history.num-entries": "3"})
    for i in range(1, 6):
        store.replace_view("a.v", columns=[], representations=[("spark", f"SELECT {i}")], default_namespace="a")
    time.sleep(0.002)  # so the rollback's time differs from version 2's
    store.rollback_view("a.v", 2)
    meta, raw = load(store.export_iceberg("a.v", tmp_path / "v"))
    ViewMetadata.model_validate_json(raw)
    # current (2) plus the highest ids up to 3 in all
    assert sorted(v["version-id"] for v in meta["versions"]) == [2, 5, 6]
    # everything up to the last entry naming an expired version is dropped
    assert [e["version-id"] for e in meta["version-log"]] == [5, 6, 2]
    # the rollback made 2 current, and its log entry is dated by the rollback, not by version 2
    rollback = store.history("a.v")[-1]
    assert meta["current-version-id"] == 2 and rollback.type == "view.rolled_back"
    assert meta["version-log"][-1]["timestamp-ms"] == rollback.occurred_at
    assert next(v for v in meta["versions"] if v["version-id"] == 2)["timestamp-ms"] < rollback.occurred_at
    # the store itself keeps everything
    assert len(store.load_view("a.v").versions) == 6


def test_without_the_property_an_export_keeps_the_reference_default_of_ten_versions(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 0")], default_namespace="a")
    for i in range(1, 12):
        store.replace_view("a.v", columns=[], representations=[("spark", f"SELECT {i}")], default_namespace="a")
    meta, _ = load(store.export_iceberg("a.v", tmp_path / "v"))
    assert [v["version-id"] for v in meta["versions"]] == list(range(3, 13))
    assert [e["version-id"] for e in meta["version-log"]] == list(range(3, 13))


def test_export_refuses_a_location_of_another_view(store, tmp_path):
    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    store.create_view("a.two", columns=[], representations=[("spark", "SELECT 2")], default_namespace="a")
    store.export_iceberg("a.one", tmp_path / "shared")
    with pytest.raises(IcebergMetadataError, match="another view"):
        store.export_iceberg("a.two", tmp_path / "shared")
    assert len(list((tmp_path / "shared" / "metadata").glob("*.metadata.json"))) == 1
    # nor is a file that names no view this one's: it is not written over either
    folder = tmp_path / "nameless" / "metadata"
    folder.mkdir(parents=True)
    (folder / f"00000-{uuid.uuid4()}.metadata.json").write_text('{"format-version": 1}')
    with pytest.raises(IcebergMetadataError, match="holds metadata of view None, not of a.one .*another view"):
        store.export_iceberg("a.one", tmp_path / "nameless")
    assert len(list(folder.iterdir())) == 1


def test_an_export_over_a_latest_file_it_cannot_read_names_that_file_and_writes_nothing(store, tmp_path):
    """Whose view a damaged latest file held cannot be told: the export says so, not that it is
    another view's (of the view None)."""
    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    first = store.export_iceberg("a.one", tmp_path / "loc")
    first.write_text("{not json")
    store.alter_view("a.one", ViewChange.update_comment("changed"))
    with pytest.raises(IcebergMetadataError,
                       match=f"cannot check the view UUID at .*{first.name} is not view metadata"):
        store.export_iceberg("a.one", tmp_path / "loc")
    assert sorted(p.name for p in first.parent.iterdir()) == sorted([first.name, "version-hint.text"])


def test_a_metadata_folder_that_cannot_be_written_is_an_iceberg_error(store, tmp_path):
    """A file where the metadata folder or the version hint goes fails the write as the location's,
    typed, and writes nothing: the temporary file of the hint and the new metadata file go with it."""
    from viewstore.iceberg import write_metadata

    view = store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    (tmp_path / "file").mkdir()
    (tmp_path / "file" / "metadata").write_text("not a folder")
    with pytest.raises(IcebergMetadataError, match="cannot write metadata under .*file"):
        write_metadata(view, tmp_path / "file")
    with pytest.raises(IcebergMetadataError, match=r"^cannot write metadata under .*file: .*File exists"):
        store.export_iceberg("a.one", tmp_path / "file")  # the folder it would lock
    assert (tmp_path / "file" / "metadata").read_text() == "not a folder"
    (tmp_path / "hint" / "metadata" / "version-hint.text").mkdir(parents=True)  # a folder of the hint's name
    with pytest.raises(IcebergMetadataError, match="cannot write metadata under .*hint"):
        store.export_iceberg("a.one", tmp_path / "hint")
    assert [p.name for p in (tmp_path / "hint" / "metadata").iterdir()] == ["version-hint.text"]


def _export_many(path, location, times):  # in a process of its own
    from viewstore import ViewStore

    with ViewStore(path, actor="exporter") as store:
        return [store.export_iceberg("a.one", location).name for _ in range(times)]


def test_concurrent_exports_take_turns(store, tmp_path):
    """Threads and processes exporting to one location: every number once, in the order of the
    state they wrote, and another view's export refused even when it starts at the same moment."""
    import multiprocessing as mp
    import threading

    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    store.create_view("a.two", columns=[], representations=[("spark", "SELECT 2")], default_namespace="a")
    location = tmp_path / "shared"
    written = [store.export_iceberg("a.one", location)]  # the location is a.one's
    start, errors = threading.Barrier(5), []

    def alter():
        start.wait()
        for i in range(1, 40):
            store.alter_view("a.one", ViewChange.update_comment(str(i)))

    def export(name):
        start.wait()
        for _ in range(6):
            try:
                written.append(store.export_iceberg(name, location))
            except IcebergMetadataError as e:
                errors.append(str(e))

    threads = [threading.Thread(target=alter)] + [threading.Thread(target=export, args=("a.one",)) for _ in range(3)]
    threads.append(threading.Thread(target=export, args=("a.two",)))
    for t in threads:
        t.start()
    with mp.get_context("spawn").Pool(2) as pool:
        names = sum(pool.starmap(_export_many, [(store.path, location, 5)] * 2), [])
    for t in threads:
        t.join(60)
    files = sorted((location / "metadata").glob("*.metadata.json"))
    numbers = [int(f.name.split("-")[0]) for f in files]
    assert numbers == list(range(len(files)))  # each number once (an export of an unchanged view writes none)
    assert {f.name for f in files} == {f.name for f in written} | set(names)
    assert len(errors) == 6 and all("another view" in e for e in errors)  # a.two never got in
    comments = [int(load(f)[0].get("properties", {}).get("comment", "0")) for f in files]
    assert comments == sorted(set(comments))  # a higher number never holds an older state, nor the same


def test_an_export_removes_what_killed_exports_left(store, tmp_path):
    import uuid

    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    folder = tmp_path / "loc" / "metadata"
    first = store.export_iceberg("a.one", tmp_path / "loc")
    stale = [folder / f".00001-{uuid.uuid4()}.metadata.json.{uuid.uuid4().hex}.tmp",
             folder / f".version-hint.text.{uuid.uuid4().hex}.tmp"]
    other = [folder / ".keep", folder / "notes.tmp",  # not written by an export: left alone
             folder / f".version-hint.text.{uuid.uuid4().hex}.tmp.orig"]
    for path in stale + other:
        path.write_text("partial")
    stuck = folder / f".version-hint.text.{uuid.uuid4().hex}.tmp"
    (stuck / "inside").mkdir(parents=True)  # of a leftover's name, but no file: it cannot be removed, nor stops one
    store.alter_view("a.one", ViewChange.update_comment("changed"))
    second = store.export_iceberg("a.one", tmp_path / "loc")
    assert sorted(p.name for p in folder.iterdir()) == sorted([first.name, second.name, "version-hint.text",
                                                                *(p.name for p in other), stuck.name])


def test_an_export_of_an_unchanged_view_writes_nothing(store, tmp_path):
    """An export whose metadata would equal the latest file's (same view, same state, same codec) is
    a commit with nothing to commit: no new file, that file's path is returned, and a version hint
    left behind (a kill between the file and its hint) is set right."""
    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    folder = tmp_path / "loc" / "metadata"
    first = store.export_iceberg("a.one", tmp_path / "loc")
    assert store.export_iceberg("a.one", tmp_path / "loc") == first
    assert sorted(p.name for p in folder.iterdir()) == sorted([first.name, "version-hint.text"])
    zipped = store.export_iceberg("a.one", tmp_path / "loc", gzip=True)  # another codec: another file
    assert zipped.name.startswith("00001-") and zipped.name.endswith(".gz.metadata.json")
    assert store.export_iceberg("a.one", tmp_path / "loc", gzip=True) == zipped
    store.alter_view("a.one", ViewChange.update_comment("changed"))
    (folder / "version-hint.text").write_text("1\n")
    third = store.export_iceberg("a.one", tmp_path / "loc", gzip=True)
    assert third.name.startswith("00002-") and (folder / "version-hint.text").read_text() == "2\n"
    (folder / "version-hint.text").write_text("1\n")  # as a kill after the file, before its hint, leaves it
    assert store.export_iceberg("a.one", tmp_path / "loc", gzip=True) == third
    assert (folder / "version-hint.text").read_text() == "2\n"
    assert len(list(folder.glob("*.metadata.json"))) == 3


def test_metadata_numbers_run_on_past_five_digits(store, tmp_path):
    """Five digits are the least a number is written with (%05d), not the most: after 99999 come
    100000 and 100001, and the latest file is the highest number, also for an unchanged view."""
    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    first = store.export_iceberg("a.one", tmp_path / "loc")
    first.rename(first.with_name("99999" + first.name[5:]))
    store.alter_view("a.one", ViewChange.set_property("k", "1"))
    second = store.export_iceberg("a.one", tmp_path / "loc")
    assert second.name.startswith("100000-") and store.export_iceberg("a.one", tmp_path / "loc") == second
    store.alter_view("a.one", ViewChange.set_property("k", "2"))
    assert store.export_iceberg("a.one", tmp_path / "loc").name.startswith("100001-")
    assert (tmp_path / "loc" / "metadata" / "version-hint.text").read_text() == "100001\n"
    assert read_metadata(tmp_path / "loc").properties == {"k": "2"}


def test_an_export_waits_for_the_location_lock_within_a_bound(store, tmp_path, monkeypatch):
    import viewstore.iceberg

    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    monkeypatch.setattr(viewstore.iceberg, "EXPORT_LOCK_TIMEOUT_S", 0.2)
    with viewstore.iceberg.exclusive(tmp_path / "loc"):  # another export holding the location
        with pytest.raises(IcebergMetadataError, match="held its lock"):
            store.export_iceberg("a.one", tmp_path / "loc")
    assert not list((tmp_path / "loc" / "metadata").iterdir())  # nothing written
    assert store.export_iceberg("a.one", tmp_path / "loc").name.startswith("00000-")


def test_an_export_whose_metadata_path_changed_while_it_waited_takes_the_lock_of_the_folder_it_names_now(
        store, tmp_path):
    """The export waits for the lock of the folder write.metadata.path names (unset: <location>/metadata);
    another store sets it to another folder meanwhile: once in, the export sees that and waits for
    the lock of that folder (held by other exports here, the lock of each folder by one) before it
    writes there, the new path in the file, nothing in the old folder."""
    import threading

    from viewstore.iceberg import exclusive

    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    location, written = tmp_path / "loc", []
    export = threading.Thread(target=lambda: written.append(store.export_iceberg("a.one", location)))
    with ViewStore(store.path, actor="bob") as other, exclusive(location, location / "elsewhere"):
        with exclusive(location):
            export.start()
            time.sleep(1)  # the export has read the view by now, and waits for the lock of <location>/metadata
            other.alter_view("a.one", ViewChange.set_property("write.metadata.path", "elsewhere"))
        time.sleep(1)  # the export got that lock, found the path changed, and waits for the other
        assert written == [] and not list((location / "elsewhere").iterdir())
    export.join(30)
    assert len(written) == 1 and written[0].parent == location / "elsewhere"
    assert load(written[0])[0]["properties"]["write.metadata.path"] == "elsewhere"
    assert not list((location / "metadata").iterdir())


@pytest.mark.parametrize("value", ["0", "-3", "ten", "1.5", " 4", str(2**31), "9" * 5000])
def test_version_history_size_is_refused_when_set_not_at_export(store, value):
    """As the reference refuses the commit, a bad version.history.num-entries never gets stored."""
    store.create_view("a.one", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                      properties={"version.history.num-entries": "2"})
    with pytest.raises(ValidationError, match="positive integer"):
        store.alter_view("a.one", ViewChange.set_property("version.history.num-entries", value))
    with pytest.raises(ValidationError, match="positive integer"):
        store.create_view("a.two", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                          properties={"version.history.num-entries": value})
    assert store.event_count() == 1 and store.load_view("a.one").properties["version.history.num-entries"] == "2"


def test_a_history_size_with_thousands_of_leading_zeros_keeps_that_many_versions(store, tmp_path):
    """The reference reads the size with Java's Integer.parseInt, zeros and all; Python's int() refused
    more than 4300 digits, so the store refused the property with a ValueError that was no ViewStoreError."""
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                      properties={"version.history.num-entries": "0" * 5000 + "2"})
    for i in (2, 3):
        store.replace_view("a.v", columns=[], representations=[("spark", f"SELECT {i}")], default_namespace="a")
    meta, _ = load(store.export_iceberg("a.v", tmp_path / "v"))
    assert sorted(v["version-id"] for v in meta["versions"]) == [2, 3]


@pytest.mark.parametrize("name", ["ValidViewMetadata.json", "view-spec-appendix-a-00001.metadata.json",
                                  "view-spec-appendix-a-00002.metadata.json"])
def test_import_accepts_what_the_reference_accepts(store, conformance, tmp_path, name):
    source = conformance / "iceberg-view" / name
    original = json.loads(source.read_text())
    view = store.import_iceberg(source, "imported.v")
    assert view.uuid == original["view-uuid"]
    assert view.current_version_id == original["current-version-id"]
    assert view.properties == original.get("properties", {})
    history = store.history("imported.v")
    assert history[0].type == "view.imported" and history[0].occurred_at == original["version-log"][0]["timestamp-ms"]
    # re-export reproduces versions, log, properties and timestamps
    meta, raw = load(store.export_iceberg("imported.v", tmp_path / "again"))
    ViewMetadata.model_validate_json(raw)
    assert meta["versions"] == sorted(original["versions"], key=lambda v: v["version-id"])
    assert meta["version-log"] == original["version-log"]
    assert meta.get("properties", {}) == original.get("properties", {})
    assert [s["fields"] for s in meta["schemas"]] == [s["fields"] for s in original["schemas"]]
    # history works on imported views: as_of and rollback
    first_log = original["version-log"][0]
    assert store.load_view("imported.v", as_of=first_log["timestamp-ms"]).current_version_id == first_log["version-id"]
    if len(original["versions"]) > 1:
        assert store.rollback_view("imported.v", 1).current_version_id == 1
    before = store.projection_dump()
    store.rebuild()
    assert store.projection_dump() == before


@pytest.mark.parametrize("not_an_id", ["2", 2.0, True])
def test_an_imported_view_made_by_hand_holds_a_version_id_not_what_converts_to_one(conformance, not_an_id):
    """ImportedView (what import_iceberg takes as it takes a path) took "2", 2.0 and True for its current
    version id, as 2 or 1, which the file's own reader refuses, and a bad one as pydantic's own error."""
    from viewstore.iceberg import ImportedView

    meta = parse_metadata(json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text()))
    fields = dict(meta)
    with pytest.raises(ValidationError, match=f"^bad imported view: current_version_id: Input should be a valid "
                                              f"integer, not {re.escape(repr(not_an_id))}$"):
        ImportedView(**{**fields, "current_version_id": not_an_id})
    assert ImportedView(**fields) == meta

def test_an_imported_view_made_by_hand_holds_an_iceberg_int_as_its_version_id(conformance):
    """ImportedView's current version id is bounded as the file's reader bounds it, refused as the
    library's ValidationError naming the bound, not left to a later check."""
    from viewstore.iceberg import ImportedView

    meta = parse_metadata(json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text()))
    with pytest.raises(ValidationError, match="^bad imported view: current_version_id: Input should be less than or "
                                              "equal to 2147483647$"):
        ImportedView(**{**dict(meta), "current_version_id": 2**31})


def test_import_iceberg_takes_what_read_metadata_returned_and_reads_nothing_again(store, conformance, tmp_path):
    """What read_metadata returned is imported as the path would be, the file not read again (here it
    is gone by then): the path as given, a view location's folder too, is the source location. What
    parse_metadata made of a dict has no path: none is recorded. A refusal writes nothing, as from a path."""
    (tmp_path / "loc" / "metadata").mkdir(parents=True)
    file = tmp_path / "loc" / "metadata" / f"00000-{uuid.uuid4()}.metadata.json"
    shutil.copy(conformance / "iceberg-view" / "ValidViewMetadata.json", file)
    given = f"{tmp_path}/loc"
    meta = read_metadata(given)
    assert meta.path == given
    file.unlink()
    view = store.import_iceberg(meta, "a.v", security_mode="INVOKER")
    assert (view.uuid, view.current_version_id, view.security_mode) == (meta.view_uuid, 2, "INVOKER")
    imported = store.history("a.v")[0]
    assert (imported.type, imported.source, imported.source_location) == ("view.imported", "iceberg", given)
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError, match=rf"^a view with UUID {meta.view_uuid} is already in the store"):
        store.import_iceberg(meta, "a.w")
    parsed = parse_metadata(json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text()))
    assert parsed.path is None and store.event_count() == count
    with ViewStore(tmp_path / "other.db") as other:
        other.import_iceberg(parsed, "a.v")
        assert other.history("a.v")[0].source_location is None


def test_import_gzip_and_uuid_clash(store, conformance, tmp_path):
    gz = tmp_path / "00000-x.gz.metadata.json"
    gz.write_bytes(gzip.compress((conformance / "iceberg-view" / "ValidViewMetadata.json").read_bytes()))
    store.import_iceberg(gz, "a.first")
    imported = store.history("a.first")[0]
    assert (imported.type, imported.source, imported.source_location) == ("view.imported", "iceberg", str(gz))
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError) as info:
        store.import_iceberg(gz, "a.second")
    assert str(info.value) == (f"a view with UUID {store.load_view('a.first').uuid} is already in the store: a.first "
                               "(a view is recorded once; its history is there)")
    assert store.event_count() == count and not store.view_exists("a.second")
    # the bytes say gzip, whatever the name says: a gzipped file named as plain JSON is read
    plain_name = tmp_path / "00001-y.metadata.json"
    plain_name.write_bytes(gz.read_bytes())
    assert read_metadata(plain_name).view_uuid == store.load_view("a.first").uuid


def test_a_view_uuid_is_kept_as_the_file_writes_it(store, conformance, tmp_path):
    """A view-uuid in capitals is the view's as written, as the reference keeps it: the next export
    to the folder the file came from finds its own view there and numbers on."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["view-uuid"] = meta["view-uuid"].upper()
    folder = tmp_path / "loc" / "metadata"
    folder.mkdir(parents=True)
    (folder / f"00000-{uuid.uuid4()}.metadata.json").write_text(json.dumps(meta))
    assert store.import_iceberg(tmp_path / "loc", "a.v").uuid == meta["view-uuid"]
    store.alter_view("a.v", ViewChange.update_comment("changed"))
    path = store.export_iceberg("a.v", tmp_path / "loc")
    assert path.name.startswith("00001-") and load(path)[0]["view-uuid"] == meta["view-uuid"]


def _with_view_uuid(conformance, tmp_path, spelling):
    """A metadata file: the reference's ValidViewMetadata.json with ``spelling`` as its view-uuid."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["view-uuid"] = spelling
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    return path


@pytest.mark.parametrize("spelling", [
    "{fa6506c3-7681-40c8-86dc-e36561f83385}",  # braces
    "urn:uuid:fa6506c3-7681-40c8-86dc-e36561f83385",
    "fa6506c3768140c886dce36561f83385",  # no hyphens
    "fa6506c3-7681-40c8-86dc-e36561f83385\n",  # what a regular expression's $ would let by
    " fa6506c3-7681-40c8-86dc-e36561f83385",
    "fa6506c3-7681-40c8-86dc-e36561f8338",  # one digit short
])
def test_a_view_uuid_in_a_spelling_other_than_the_specs_is_refused(store, conformance, tmp_path, spelling):
    """Python's uuid.UUID takes all but the last; Java's UUID.fromString refuses the first five (a
    reader that parses the view's UUID in Java would fail). The import kept such a spelling as the
    file wrote it, and the next export wrote it again. Now the import refuses it, naming the field,
    and writes nothing."""
    path = _with_view_uuid(conformance, tmp_path, spelling)
    count = store.event_count()
    message = f"{path}: view-uuid {spelling!r} is not a UUID written as the spec writes one (8-4-4-4-12 hex digits)"
    with pytest.raises(IcebergMetadataError, match=f"^{re.escape(message)}$"):
        store.import_iceberg(path, "a.v")
    assert (store.event_count(), store.view_exists("a.v")) == (count, False)


@pytest.mark.parametrize("spelling", ["FA6506C3-7681-40C8-86DC-E36561F83385", "fa6506c3-7681-40C8-86dc-E36561F83385"])
def test_a_view_uuid_in_the_specs_spelling_is_kept_and_exported_for_every_reader(store,
                                                                                 conformance, tmp_path, spelling):
    view = store.import_iceberg(_with_view_uuid(conformance, tmp_path, spelling), "a.v")
    assert view.uuid == spelling
    exported = store.export_iceberg("a.v", tmp_path / "out")
    data, raw = load(exported)
    assert data["view-uuid"] == spelling
    assert ViewMetadata.model_validate_json(raw).view_uuid == spelling  # pyiceberg reads it
    assert str(uuid.UUID(spelling)) == spelling.lower()


def test_import_view_refuses_a_view_uuid_an_export_could_not_write(store, tmp_path):
    """import_view took any text as the view's UUID, and export_iceberg wrote it as the view-uuid."""
    version = store.create_view("a.v", columns=[Column(name="x", type="int")], default_namespace=["a"],
                                representations=[SQLRepresentation(sql="SELECT 1 AS x", dialect="spark")]).version(1)
    log = [VersionLogEntry(timestamp_ms=version.timestamp_ms, version_id=1)]
    count = store.event_count()
    for bad in ("not-a-uuid", "{fa6506c3-7681-40c8-86dc-e36561f83385}", "fa6506c3768140c886dce36561f83385",
                "fa6506c3-7681-40c8-86dc-e36561f833851", "fa6506c3-7681-40c8-86dc-e36561f8338",
                "ga6506c3-7681-40c8-86dc-e36561f83385", "fa6506c3-7681-40c8-86dc-e36561f83385\n",
                " fa6506c3-7681-40c8-86dc-e36561f83385"):
        with pytest.raises(ValidationError, match=rf"^view_uuid must be a UUID written as 8-4-4-4-12 hex digits, "
                                                  rf"not {re.escape(repr(bad))}$"):
            store.import_view("a.other", source="test", versions=[version], version_log=log, current_version_id=1,
                              view_uuid=bad)
    assert store.event_count() == count and not store.view_exists("a.other")
    given = "FA6506C3-7681-40C8-86DC-E36561F83385"
    assert store.import_view("a.other", source="test", versions=[version], version_log=log, current_version_id=1,
                             view_uuid=given).uuid == given


def test_the_security_mode_is_not_in_the_file_and_an_import_takes_it_as_an_argument(store, tmp_path):
    store.create_view("a.v", columns=[Column(name="x", type="int")], security_mode="INVOKER", default_namespace=["a"],
                      representations=[SQLRepresentation(sql="SELECT 1 AS x", dialect="spark")])
    path = store.export_iceberg("a.v", tmp_path / "loc")
    assert "INVOKER" not in path.read_text().upper()  # the spec's metadata has no field for it
    store.drop_view("a.v")
    count = store.event_count()
    for bad in ("OWNER", "", None):  # checked before anything is written
        with pytest.raises(ValidationError, match="security_mode must be DEFINER or INVOKER"):
            store.import_iceberg(path, "a.bad", security_mode=bad)
    assert store.event_count() == count
    for mode, expected in ((None, "DEFINER"), ("invoker", "INVOKER"), ("DEFINER", "DEFINER")):
        with ViewStore(tmp_path / f"{mode}.db") as other:  # the file's UUID is taken in the store it came from
            given = {} if mode is None else {"security_mode": mode}
            assert other.import_iceberg(path, "b.v", **given).security_mode == expected
            assert other.load_view("b.v").security_mode == expected


@pytest.mark.parametrize("name, message", [
    ("ViewMetadataMissingLocation.json", "Cannot parse missing string: location"),
    ("ViewMetadataMissingCurrentVersion.json", "Cannot parse missing int: current-version-id"),
    ("ViewMetadataInvalidCurrentVersion.json", "Cannot find current version 1234 in view versions: [1, 2]"),
    ("ViewMetadataInvalidCurrentSchema.json", "Cannot find current schema with id 1234 in schemas: [1]"),
    ("ViewMetadataMultipleSQLsForDialect.json",
     "Invalid view version 1: Cannot add multiple queries for dialect spark-sql"),
])
def test_import_refuses_what_the_reference_refuses(store, conformance, name, message):
    count = store.event_count()
    with pytest.raises(IcebergMetadataError) as info:
        store.import_iceberg(conformance / "iceberg-view" / name, "bad.v")
    assert str(info.value) == f"{conformance / 'iceberg-view' / name}: {message}"  # the file, then the reason
    assert store.event_count() == count and not store.view_exists("bad.v")


@pytest.mark.parametrize("mutate, message", [
    (lambda m: m.update({"format-version": 2}), "Unsupported format version: 2"),
    (lambda m: m.update({"format-version": 0}), "Unsupported format version: 0"),
    (lambda m: m.update({"view-uuid": "not-a-uuid"}), "view-uuid 'not-a-uuid' is not a UUID"),
    (lambda m: m["versions"].append(copy.deepcopy(m["versions"][0])), "duplicate version id"),
    (lambda m: m["schemas"].append(copy.deepcopy(m["schemas"][0])), "duplicate schema id"),
    (lambda m: m["versions"][0]["representations"][0].update({"type": "substrait"}), "only 'sql'"),
    # another type holding sql and dialect all the same is no sql representation
    (lambda m: m["versions"][1]["representations"][0].update({"type": "view"}),
     "version 2 has a representation of type 'view'; only 'sql'"),
    # a dialect the store refuses (it begins with a blank) is told as the file's fault
    (lambda m: m["versions"][0]["representations"][0].update({"dialect": " spark"}),
     "version 1 has a bad representation: .*dialect"),
    (lambda m: m.update({"location": None}), "Cannot parse missing string: location"),  # null is missing
    (lambda m: m.update({"format-version": True}), "Cannot parse format-version to a int: True"),
    # a version with no query at all is the file's fault, typed as every other one (not the store's
    # ValidationError for an imported version without representations)
    (lambda m: m["versions"][0].update({"representations": []}), "version 1 has no representation"),
    (lambda m: m["versions"][1].update({"representations": []}), "version 2 has no representation"),
    (lambda m: m["schemas"][0]["fields"][0].update({"type": "blob"}), "bad field"),
    (lambda m: m.pop("version-log"), "missing array: version-log"),
    (lambda m: m.pop("versions"), "Cannot parse missing array: versions"),
    # read as strictly as the reference reads (JsonUtil.getInt / getBool): no coercion
    (lambda m: m["versions"][0].update({"version-id": "1"}), "versions.0.version-id: Input should be a valid integer"),
    (lambda m: m.update({"current-version-id": 2**31}), "current-version-id: Input should be less than or equal"),
    (lambda m: [v.update({"schema-id": 2**63}) for v in m["versions"]],
     "schema-id: Input should be less than or equal"),
    (lambda m: m["versions"][1].update({"timestamp-ms": 2**64}), "timestamp-ms: Input should be less than or equal"),
    (lambda m: m["versions"][1].update({"timestamp-ms": 1.0}), "timestamp-ms: Input should be a valid integer"),
    (lambda m: m["versions"][1]["summary"].update({"n": 1}), "summary.n: Input should be a valid string"),
    (lambda m: m["schemas"][0]["fields"][0].update({"required": "false"}), "'required' must be a boolean"),
    (lambda m: m["schemas"][0]["fields"][0].pop("id"), "missing int 'id'"),
    (lambda m: m["schemas"][0]["fields"][0].update({"doc": 7}), "doc of struct field 'x' must be a string"),
    (lambda m: m["schemas"][0]["fields"][0].update({"name": 5}), "'name' must be a string"),
    (lambda m: m["schemas"][0]["fields"][0].update(
        {"type": {"type": "list", "element-id": 9, "element": "int", "element-required": "false"}}),
     "'element-required' must be a boolean"),
    (lambda m: m["schemas"][0]["fields"][0].update({"type": {"type": "struct", "fields": [
        {"id": 8, "name": "a", "required": False, "type": "int"},
        {"id": 9, "name": "A", "required": False, "type": "int"}]}}), "unique \\(ignoring case\\), not 'A'"),
    (lambda m: m["schemas"][0]["fields"][0].update({"type": _nested_lists(150)}), "nest deeper than 100"),
    # what the reference parser and its Schema refuse beyond the JSON shape
    (lambda m: m.update({"properties": None}), "properties: Input should be a valid dictionary"),
    (lambda m: m["schemas"][0].pop("type"), "schemas.0.type: Field required"),
    (lambda m: m["schemas"][0]["fields"][1].update({"id": 1}), "schema 0 has a bad field: field id 1 is used twice: "
                                                               "by 'x' and by 'y'"),
    (lambda m: m["schemas"][0]["fields"][0].update({"type": {
        "type": "map", "key-id": 3, "key": "string", "value-id": 9, "value": "int", "value-required": False}}),
     "field id 3 is used twice: by 'x.key' and by 'z'"),  # ids of list elements and map keys and values count too
    (lambda m: m["schemas"][0].update({"identifier-field-ids": [99]}), "identifier field 99 does not exist"),
    (lambda m: m["schemas"][0].update({"identifier-field-ids": [1, 99]}), "identifier field 99 does not exist"),
    # a version other than the current one is named as itself
    (lambda m: m["versions"][0].update({"schema-id": 1234}),
     "Cannot find schema of version 1 with id 1234 in schemas: \\[0\\]"),
    # an optional map value is told as optional before as nested, as the reference checks in that order
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [9]}), m["schemas"][0]["fields"][0].update({"type": {
        "type": "map", "key-id": 8, "key": "string", "value-id": 9, "value": "int", "value-required": False}})),
     "identifier field 9 is not a required field"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [1]}),
                m["schemas"][0]["fields"][0].update({"required": False})), "identifier field 1 is not a required"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [1]}),
                m["schemas"][0]["fields"][0].update({"type": "double"})), "must not be a float or double"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [9]}), m["schemas"][0]["fields"][0].update({"type": {
        "type": "list", "element-id": 9, "element": "int", "element-required": True}})),
     "must not be nested in a list"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [9]}), m["schemas"][0]["fields"][0].update({"type": {
        "type": "list", "element-id": 9, "element": "int", "element-required": False}})),
     "identifier field 9 is not a required field"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [9]}), m["schemas"][0]["fields"][0].update(
        {"required": False, "type": {"type": "struct", "fields": [{"id": 9, "name": "a", "required": True,
                                                                    "type": "int"}]}})),
     "identifier field 9 must not be nested"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [1]}), m["schemas"][0]["fields"][0].update(
        {"type": {"type": "struct", "fields": [{"id": 9, "name": "a", "required": True, "type": "int"}]}})),
     "identifier field 1 is not a primitive"),
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [1]}),
                m["schemas"][0]["fields"][0].update({"type": "float"})), "identifier field 1 must not be a float"),
    # a map's key is required, but nested in the map all the same
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [8]}), m["schemas"][0]["fields"][0].update({"type": {
        "type": "map", "key-id": 8, "key": "string", "value-id": 9, "value": "int", "value-required": True}})),
     "identifier field 8 must not be nested"),
    # a required field of a required struct inside a list is still inside the list
    (lambda m: (m["schemas"][0].update({"identifier-field-ids": [10]}), m["schemas"][0]["fields"][0].update({"type": {
        "type": "list", "element-id": 9, "element-required": True, "element": {"type": "struct", "fields": [
            {"id": 10, "name": "a", "required": True, "type": "int"}]}}})),
     "identifier field 10 must not be nested in a list"),
    # two queries for one dialect, told apart only by case (the reference lower-cases the dialect)
    (lambda m: m["versions"][1]["representations"].append({"type": "sql", "sql": "select 2", "dialect": "Spark-SQL"}),
     "Invalid view version 2: Cannot add multiple queries for dialect spark-sql"),
    (lambda m: m["versions"][1]["representations"].insert(0, {"type": "sql", "sql": "select 2",
                                                              "dialect": "Spark-SQL"}),
     "Invalid view version 2: Cannot add multiple queries for dialect spark-sql"),
])
def test_import_refuses_broken_files(store, conformance, tmp_path, mutate, message):
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    mutate(meta)
    path = tmp_path / "broken.metadata.json"
    path.write_text(json.dumps(meta))
    with pytest.raises(IcebergMetadataError, match=message):
        store.import_iceberg(path, "bad.v")
    assert store.event_count() == 0


def test_import_reads_a_representation_type_in_any_case_as_the_reference_does(store, conformance, tmp_path):
    """The reference lower-cases a representation's type on read: "SQL" is an sql representation."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["versions"][0]["representations"][0]["type"] = "SQL"
    meta["versions"][1]["representations"][0]["type"] = "Sql"
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    view = store.import_iceberg(path, "a.v")
    assert [(r.dialect, r.sql) for v in view.versions for r in v.representations] == [
        ("spark-sql", "select 'foo' foo"), ("spark-sql", "select 1 id, 'abc' data")]
    exported, _ = load(store.export_iceberg("a.v", tmp_path / "out"))
    assert [r["type"] for v in exported["versions"] for r in v["representations"]] == ["sql", "sql"]


def _nested_lists(depth):
    t = "int"
    for i in range(depth):
        t = {"type": "list", "element-id": 100 + i, "element": t, "element-required": False}
    return t


def test_import_refuses_json_nested_too_deep_for_the_parser(store, tmp_path):
    path = tmp_path / "deep.metadata.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(IcebergMetadataError, match="not view metadata JSON"):
        store.import_iceberg(path, "bad.v")
    assert store.event_count() == 0


def test_import_takes_what_the_reference_parser_takes(store, conformance, tmp_path):
    """A schema without an id is schema 0, and identifier fields that are required primitives
    (also inside required structs) are fine."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    del meta["schemas"][0]["schema-id"]
    meta["schemas"][0]["identifier-field-ids"] = [1, 9]
    meta["schemas"][0]["fields"][2]["type"] = {"type": "struct", "fields": [
        {"id": 9, "name": "a", "required": True, "type": "int"}]}
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    view = store.import_iceberg(path, "a.v")
    assert [v.schema_id for v in view.versions] == [0, 0] and [c.name for c in view.columns] == ["x", "y", "z"]


def test_a_default_catalog_of_empty_text_stays_apart_from_none_through_an_import_and_an_export(
        store, conformance, tmp_path):
    """The reference reads "default-catalog": "" as given and writes it back, as it leaves out only
    a null one: so do the import and the export."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["versions"][0]["default-catalog"] = ""
    del meta["versions"][1]["default-catalog"]
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    view = store.import_iceberg(path, "a.v")
    assert [v.default_catalog for v in view.versions] == ["", None]
    exported, raw = load(store.export_iceberg("a.v", tmp_path / "out"))
    assert exported["versions"] == meta["versions"]
    assert [v.default_catalog for v in ViewMetadata.model_validate_json(raw).versions] == ["", None]


def test_a_block_that_returns_to_a_version_it_added_imports_as_one_addition(store, tmp_path):
    """One transaction replaces the view and rolls back and forth: three log entries in one
    millisecond, two naming the new version at its own time. The version comes once, with the first;
    the second is a return to it, as in the history of the store that wrote the file."""
    store.create_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="a")
    time.sleep(0.002)  # the block in a later millisecond than the create
    with store.transaction():
        store.replace_view("a.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 2 AS x")],
                           default_namespace="a")
        store.rollback_view("a.v", 1)
        store.rollback_view("a.v", 2)
    view = store.load_view("a.v")
    assert len({e.timestamp_ms for e in view.version_log[1:]}) == 1 == len(view.version_log[1:]) - 2
    other = ViewStore(tmp_path / "other.db")
    try:
        imported = other.import_iceberg(store.export_iceberg("a.v", tmp_path / "loc"), "a.v")
        assert [(e.type, e.current_version_id) for e in other.history("a.v")] == [
            ("view.imported", 1), ("view.replaced", 2), ("view.rolled_back", 1), ("view.rolled_back", 2)]
        assert imported.versions == view.versions and imported.version_log == view.version_log
    finally:
        other.close()


def test_read_metadata_gives_the_versions_in_id_order_whatever_the_file_order(conformance, tmp_path):
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["versions"].reverse()
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    assert [v["version-id"] for v in meta["versions"]] == [2, 1]
    assert [v.version_id for v in read_metadata(path).versions] == [1, 2]


def test_import_keeps_the_version_log_in_file_order(store, conformance, tmp_path):
    """A log whose times do not rise (one writer stamps a new version with its clock, another a
    rollback with its own) stays a list in file order, and its current version stays current."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["current-version-id"] = 1
    meta["versions"][0]["timestamp-ms"], meta["versions"][1]["timestamp-ms"] = 1000, 3000
    meta["version-log"] = [{"timestamp-ms": 1000, "version-id": 1}, {"timestamp-ms": 3000, "version-id": 2},
                           {"timestamp-ms": 2000, "version-id": 1}]
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    view = store.import_iceberg(path, "a.v")
    assert view.current_version_id == 1
    assert [(e.timestamp_ms, e.version_id) for e in view.version_log] == [(1000, 1), (3000, 2), (2000, 1)]
    times = [e.occurred_at for e in store.history("a.v")]
    assert times == sorted(times) == [1000, 3000, 3000]  # the events' own times never go backwards
    exported, _ = load(store.export_iceberg("a.v", tmp_path / "again"))
    assert exported["version-log"] == meta["version-log"] and exported["current-version-id"] == 1
    before = store.projection_dump()
    store.rebuild()
    assert store.projection_dump() == before


@pytest.mark.parametrize("log, kept", [
    ([0, 1, 2], [1, 2]),  # an expired version's entry at the start goes alone
    ([1, 7, 2], [2]),  # in the middle it takes every entry before it: 1 was not current up to 2
    ([7, 1, 8, 1, 2], [1, 2]),  # of several, the last one does
    ([1, 2, 9], [2]),  # the current version gains an entry at the file's latest time
    ([], [2]),
    ([1], [1, 2]),  # the current version's entry at its own time, not at the log's (before it existed)
])
def test_import_drops_log_entries_of_versions_the_file_lacks_as_the_reference_retention_does(
        store, conformance, tmp_path, log, kept):
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["version-log"] = [{"timestamp-ms": 1000 + 1000 * i, "version-id": v} for i, v in enumerate(log)]
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    view = store.import_iceberg(path, "a.v")
    assert [e.version_id for e in view.version_log] == kept and view.current_version_id == 2
    entries = {(e["timestamp-ms"], e["version-id"]) for e in meta["version-log"]}
    newest = max([e[0] for e in entries] + [v["timestamp-ms"] for v in meta["versions"]])
    assert all((e.timestamp_ms, e.version_id) in entries or (e.timestamp_ms, e.version_id) == (newest, 2)
               for e in view.version_log)
    assert [e["version-id"] for e in load(store.export_iceberg("a.v", tmp_path / "out"))[0]["version-log"]] == kept


def test_exported_files_are_readable_by_other_users(store, tmp_path):
    """Metadata files are made like any other file (0666 less the umask), not owner-only."""
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    old = os.umask(0o022)
    try:
        path = store.export_iceberg("a.v", tmp_path / "loc")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert stat.S_IMODE((path.parent / "version-hint.text").stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_read_metadata_errors(tmp_path):
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(IcebergMetadataError, match="not view metadata JSON"):
        read_metadata(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("[]")
    with pytest.raises(IcebergMetadataError, match="not an object"):
        read_metadata(tmp_path / "b.json")
    with pytest.raises(IcebergMetadataError, match="cannot read"):
        read_metadata(tmp_path / "missing.json")


def test_a_damaged_gzip_file_is_an_iceberg_error_and_a_path_no_file_can_have_a_validation_error(tmp_path):
    """A gzip stream cut short or corrupt inside fails as metadata that cannot be read, not with
    gzip's or zlib's error; a name the file system cannot encode (a lone surrogate) is refused before
    anything is read, as import_iceberg refuses it: the result would carry it, and no store can record it."""
    whole = gzip.compress(json.dumps({"view-uuid": str(uuid.uuid4())}).encode() * 20, mtime=0)
    (tmp_path / "cut.metadata.json").write_bytes(whole[:len(whole) // 2])
    (tmp_path / "corrupt.metadata.json").write_bytes(whole[:10] + b"\xff" * 8 + whole[18:])
    for name in ("cut", "corrupt"):
        with pytest.raises(IcebergMetadataError, match=f"{name}.metadata.json is not view metadata JSON"):
            read_metadata(tmp_path / f"{name}.metadata.json")
    name = str(tmp_path / "\ud800.metadata.json")
    with pytest.raises(ValidationError, match="^" + re.escape(
            f"a metadata path must be a path in UTF-8, not {name!r} ('utf-8' codec can't encode character "
            f"'\\ud800' in position {name.index(chr(0xd800))}: surrogates not allowed)") + "$"):
        read_metadata(name)


def test_export_survives_a_copied_warehouse(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    first = store.export_iceberg("a.v", tmp_path / "loc")
    shutil.copytree(tmp_path / "loc", tmp_path / "copy")
    second = store.export_iceberg("a.v", tmp_path / "copy")
    assert second.name.startswith("00001-") and first.name.startswith("00000-")


def test_a_relative_location_is_written_as_the_absolute_path_it_names(store, tmp_path, monkeypatch):
    """The file's location is the view's base location for any reader, which does not share this
    process's working directory."""
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    monkeypatch.chdir(tmp_path)
    path = store.export_iceberg("a.v", "relative")
    assert load(path)[0]["location"] == str((tmp_path / "relative").resolve())
    assert read_metadata(path).location == str((tmp_path / "relative").resolve())


def test_import_from_a_view_location_takes_the_latest_file(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    store.export_iceberg("a.v", tmp_path / "loc")
    store.replace_view("a.v", columns=[], representations=[("spark", "SELECT 2")], default_namespace="a")
    store.export_iceberg("a.v", tmp_path / "loc")
    other = type(store)(tmp_path / "other.db")
    view = other.import_iceberg(tmp_path / "loc", "b.v")
    assert view.sql_for("spark") == "SELECT 2" and len(view.versions) == 2
    count = other.event_count()
    with pytest.raises(IcebergMetadataError) as info:
        other.import_iceberg(tmp_path, "b.w")
    assert str(info.value) == f"{tmp_path} holds no metadata file (NNNNN-<uuid>.metadata.json), in metadata/ or itself"
    assert other.event_count() == count and other.list_views() == [("b", "v")]
    other.close()


def test_a_file_numbered_with_fewer_than_five_digits_is_no_metadata_file(store, tmp_path):
    """Metadata files are NNNNN-<uuid>.metadata.json: a 0001-... beside them is neither read nor
    counted when the next export picks its number."""
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    first = store.export_iceberg("a.v", tmp_path / "loc")
    (first.parent / f"0009-{uuid.uuid4()}.metadata.json").write_text("{not json")
    assert read_metadata(tmp_path / "loc").view_uuid == store.load_view("a.v").uuid
    store.replace_view("a.v", columns=[], representations=[("spark", "SELECT 2")], default_namespace="a")
    assert store.export_iceberg("a.v", tmp_path / "loc").name.startswith("00001-")
    lone = tmp_path / "lone" / "metadata"
    lone.mkdir(parents=True)
    (lone / f"0001-{uuid.uuid4()}.metadata.json").write_bytes(first.read_bytes())
    with pytest.raises(IcebergMetadataError, match="holds no metadata file"):
        read_metadata(tmp_path / "lone")


def test_import_under_a_name_another_view_renamed_away_from_starts_after_the_rename(store, conformance):
    store.create_view("default.event_agg", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="default")
    created = store.history("default.event_agg")[0]
    time.sleep(0.02)
    renamed = store.rename_view("default.event_agg", "default.elsewhere")  # the rename carries the new name
    let_go = renamed.audit.last_modified_time_ms
    assert let_go > created.occurred_at + 10
    view = store.import_iceberg(conformance / "iceberg-view" / "ValidViewMetadata.json", "default.event_agg")
    assert store.history("default.event_agg")[0].occurred_at == let_go + 1
    for at in (created.occurred_at, created.occurred_at + 5, let_go - 1):  # the first view held the name then
        assert store.load_view("default.event_agg", as_of=at).uuid == renamed.uuid
    assert store.load_view("default.event_agg", as_of=let_go + 1).uuid == view.uuid


def test_import_under_a_name_another_view_held_starts_after_it(store, conformance, tmp_path):
    """History brought in under a name that a dropped view held is dated from when that view let go,
    so a time names one view: as_of a time agrees with as_of the event of that time."""
    store.create_view("default.event_agg", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="default")
    created = store.history("default.event_agg")[0]
    time.sleep(0.005)  # times have millisecond resolution: the drop comes a few ms later
    store.drop_view("default.event_agg")
    dropped = store.history("default.event_agg")[-1]
    assert dropped.type == "view.dropped"
    # ValidViewMetadata's history is dated 2023, long before the view above existed
    view = store.import_iceberg(conformance / "iceberg-view" / "ValidViewMetadata.json", "default.event_agg")
    imported = store.history("default.event_agg")
    assert imported[0].occurred_at == dropped.occurred_at + 1
    assert [e.occurred_at for e in imported] == sorted(e.occurred_at for e in imported)
    for at in (created.occurred_at, dropped.occurred_at - 1):
        assert store.load_view("default.event_agg", as_of=at).uuid != view.uuid
    assert store.load_view("default.event_agg", as_of=created).uuid == store.load_view(
        "default.event_agg", as_of=created.occurred_at).uuid
    assert store.load_view("default.event_agg", as_of=imported[-1].occurred_at) == view
    # the versions keep their own times, and the export gives them back unchanged
    original = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta, _ = load(store.export_iceberg("default.event_agg", tmp_path / "again"))
    assert meta["version-log"] == original["version-log"]


def test_write_metadata_path_names_the_folder_of_the_metadata_files(store, tmp_path):
    """As the reference writer does: the files go to the folder the property names (a path or a
    file: URI), numbered on from those already there; the location in the file stays the view's."""
    elsewhere = tmp_path / "meta files"
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a",
                      properties={"write.metadata.path": str(elsewhere)})
    first = store.export_iceberg("a.v", tmp_path / "loc")
    assert first.parent == elsewhere and first.name.startswith("00000-")
    assert (elsewhere / "version-hint.text").read_text() == "0\n"
    assert not (tmp_path / "loc" / "metadata").exists()
    data, _ = load(first)
    assert data["location"] == str((tmp_path / "loc").resolve())
    assert data["properties"]["write.metadata.path"] == str(elsewhere)
    ViewMetadata.model_validate(data)
    store.alter_view("a.v", ViewChange.set_property("write.metadata.path", elsewhere.as_uri()))
    second = store.export_iceberg("a.v", tmp_path / "loc")
    assert second.parent == elsewhere and second.name.startswith("00001-")
    assert read_metadata(second).view_uuid == read_metadata(elsewhere).view_uuid == store.load_view("a.v").uuid
    assert sorted(p.name[:5] for p in elsewhere.iterdir() if p.name.endswith(".json")) == ["00000", "00001"]
    # a relative folder is under the location, whatever the working directory
    store.alter_view("a.v", ViewChange.set_property("write.metadata.path", "meta"))
    assert store.export_iceberg("a.v", tmp_path / "loc").parent == tmp_path / "loc" / "meta"
    # one letter and a colon is no URI scheme (a drive, were it followed by a slash): a folder name
    store.alter_view("a.v", ViewChange.set_property("write.metadata.path", "m:eta"))
    assert store.export_iceberg("a.v", tmp_path / "loc").parent == tmp_path / "loc" / "m:eta"
    # a blank one names no folder: the files go to <location>/metadata, not to the location itself
    for blank in ("", "  "):
        store.alter_view("a.v", ViewChange.set_property("write.metadata.path", blank))
        assert store.export_iceberg("a.v", tmp_path / "blank").parent == tmp_path / "blank" / "metadata"
    # a folder of another system (a view imported from one) is not this export's to write: the
    # files go to the location given, as they would without the property
    for remote in ("s3://bucket/meta", "S3://bucket/meta", "file://otherhost/meta", "C:\\wh\\meta",
                   "\\\\server\\meta"):
        store.alter_view("a.v", ViewChange.set_property("write.metadata.path", remote))
        assert store.export_iceberg("a.v", tmp_path / "copy").parent == tmp_path / "copy" / "metadata"
    # a URI's scheme and host ignore case
    store.alter_view("a.v", ViewChange.set_property("write.metadata.path", "FILE://LOCALHOST" + str(elsewhere)))
    assert store.export_iceberg("a.v", tmp_path / "loc").parent == elsewhere
    # a location with metadata files both in metadata/ and itself is ambiguous to read
    store.alter_view("a.v", ViewChange.set_property("write.metadata.path", "."))
    store.export_iceberg("a.v", tmp_path / "copy")
    with pytest.raises(IcebergMetadataError, match="both in metadata/ and itself") as info:
        read_metadata(tmp_path / "copy")
    # the two it names are told apart by their folders, though a copy may give them one name
    nested = max(p.name for p in (tmp_path / "copy" / "metadata").glob("*.metadata.json"))
    own = max(p.name for p in (tmp_path / "copy").glob("*.metadata.json"))
    assert str(info.value).endswith(f"give the file to read (metadata/{nested} or {own})")
    (tmp_path / "copy" / own).unlink()
    shutil.copy(tmp_path / "copy" / "metadata" / nested, tmp_path / "copy" / nested)
    with pytest.raises(IcebergMetadataError) as info:
        read_metadata(tmp_path / "copy")
    assert str(info.value).endswith(f"give the file to read (metadata/{nested} or {nested})")


def test_a_view_is_imported_once_and_the_refusal_names_the_holder(store, tmp_path):
    store.create_view("a.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="a")
    path = store.export_iceberg("a.v", tmp_path / "loc")
    count = store.event_count()
    with pytest.raises(ViewAlreadyExistsError, match=r"already in the store: a\.v \(a view is recorded once"):
        store.import_iceberg(path, "b.copy")
    store.drop_view("a.v")
    with pytest.raises(ViewAlreadyExistsError, match=r"already in the store: a\.v, dropped "):
        store.import_iceberg(path, "a.v")
    assert store.event_count() == count + 1 and not store.view_exists("b.copy")


def test_import_refuses_a_summary_key_that_is_not_valid_unicode(store, conformance, tmp_path):
    """A lone surrogate (a JSON escape such as \\ud800) in a summary key was stored changed, as
    replacement characters, and exported so: create_view refuses that key, and so does an import."""
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["versions"][1]["summary"]["\ud800engine"] = "x"
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))  # ASCII, the key as the escape \ud800
    with pytest.raises(ValidationError, match="bad summary key '\\\\ud800engine': it is not valid Unicode"):
        store.import_iceberg(path, "a.v")
    assert store.event_count() == 0 and not store.view_exists("a.v")


# -- a history another writer made ---------------------------------------------------------------
# Built with pyiceberg's own models, as a writer other than viewstore would write it: versions listed
# out of id order, rollbacks in the log, a version made in the same commit as the first one, a version
# added without becoming current (made current later), and two never current, whose ids do not
# follow their times.

FOREIGN_TIMES = {1: 1000, 8: 1000, 2: 2000, 3: 3000, 4: 4500, 5: 5000, 6: 9000, 7: 8000}
FOREIGN_LOG = [(1000, 1), (2000, 2), (3000, 3), (4000, 1), (5000, 5), (6000, 4), (7000, 2)]
#: when each version joins the imported view (import_view's docstring and docs/ARCHITECTURE.md): with
#: the log entry that made it current at its own time, or, made at the first entry's time, with the
#: import (8); one added without becoming current with the first entry after its time (4, made at
#: 4500, current from 6000); those never current after the log at their own times (7, then 6)
FOREIGN_ARRIVALS = {1: 1000, 8: 1000, 2: 2000, 3: 3000, 5: 5000, 4: 5000, 7: 8000, 6: 9000}


def _foreign_version(version_id):
    return PyViewVersion(version_id=version_id, timestamp_ms=FOREIGN_TIMES[version_id], schema_id=version_id % 2,
                         summary={"engine-name": "Trino"}, default_namespace=["n"], default_catalog="prod",
                         representations=[ViewRepresentation(SQLViewRepresentation(
                             type="sql", sql=f"SELECT {version_id} AS x", dialect="trino"))])


def test_a_history_another_writer_made_imports_with_its_rollbacks_and_travels_in_time(store, tmp_path):
    schemas = [PySchema(NestedField(1, "x", IntegerType(), required=False), schema_id=0),
               PySchema(NestedField(1, "x", IntegerType(), required=False),
                        NestedField(2, "y", StringType(), required=False, doc="why"), schema_id=1)]
    versions = [_foreign_version(vid) for vid in (5, 2, 7, 1, 8, 6, 4, 3)]
    metadata = ViewMetadata(view_uuid=str(uuid.uuid4()), format_version=1, location="s3://bucket/v",
                            schemas=schemas, current_version_id=2, versions=versions,
                            version_log=[ViewHistoryEntry(timestamp_ms=t, version_id=v) for t, v in FOREIGN_LOG])
    path = tmp_path / "00003-x.metadata.json"
    path.write_text(metadata.model_dump_json())
    view = store.import_iceberg(path, "a.v")
    assert view.current_version_id == 2 and [v.version_id for v in view.versions] == list(range(1, 9))
    assert [(e.timestamp_ms, e.version_id) for e in view.version_log] == FOREIGN_LOG
    # one event per log entry, in the file's order: a new version made current, or an older one again;
    # a version that never became current by one that leaves the current version as it was
    history = [(e.occurred_at, e.type, e.current_version_id) for e in store.history("a.v")]
    assert [t for t, _, _ in history] == sorted(t for t, _, _ in history)
    assert sorted(history, key=repr) == sorted([
        (1000, "view.imported", 1), (2000, "view.replaced", 2), (3000, "view.replaced", 3),
        (4000, "view.rolled_back", 1), (5000, "view.replaced", 5), (5000, "view.replaced", None),
        (6000, "view.rolled_back", 4), (7000, "view.rolled_back", 2), (8000, "view.replaced", None),
        (9000, "view.replaced", None)], key=repr)
    with pytest.raises(NoSuchViewError):
        store.load_view("a.v", as_of=999)
    by_id = {v.version_id: v for v in versions}
    moments = {t + d for t in [*FOREIGN_TIMES.values(), *(t for t, _ in FOREIGN_LOG)] for d in (-1, 0, 1)}
    for t in sorted(moments - {999}):
        then = store.load_view("a.v", as_of=t)
        current = by_id[[v for at, v in FOREIGN_LOG if at <= t][-1]]
        assert then.current_version_id == current.version_id, t
        assert [(e.timestamp_ms, e.version_id) for e in then.version_log] == [e for e in FOREIGN_LOG if e[0] <= t]
        assert [v.version_id for v in then.versions] == sorted(v for v, at in FOREIGN_ARRIVALS.items() if at <= t), t
        assert then.current_version.timestamp_ms == current.timestamp_ms
        assert [(r.dialect, r.sql) for r in then.current_version.representations] == [
            (r.root.dialect, r.root.sql) for r in current.representations]
        assert [c.name for c in then.columns] == [f.name for f in schemas[current.schema_id].fields]
    # the store's rules apply to it as to its own views, and an export gives the file's history back
    assert store.rollback_view("a.v", 3).current_version_id == 3
    read = ViewMetadata.model_validate_json(load(store.export_iceberg("a.v", tmp_path / "out"))[1])
    assert [v.model_dump() for v in read.versions] == [by_id[vid].model_dump() for vid in range(1, 9)]
    assert [(e.timestamp_ms, e.version_id) for e in read.version_log][:-1] == FOREIGN_LOG
    assert read.version_log[-1].version_id == read.current_version_id == 3


# -- generated histories -------------------------------------------------------------------------
# Random histories made through the public API, exported (plain, gzip, to one location, several
# times), then imported into a fresh store and exported again; and random files such as another
# implementation may write, imported and exported. What each file must satisfy is the spec's and the
# reference's rules; what an import may change is what docs/ARCHITECTURE.md lists under "Export and
# import" (field ids, identifier fields, unused schemas, the location, log entries of missing versions).

GENERATED = settings(max_examples=int(os.environ.get("VIEWSTORE_ICEBERG_EXAMPLES", "30")), deadline=None,
                     database=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["x", "Ünïcode", "日付", "a b", "Z"]
TYPES = ["int", "bigint", "decimal(9,2)", "fixed[16]", "timestamptz", "timestamp_ns", "uuid", "binary",
         "struct<a: int not null comment 'an a', `b c`: list<string not null>>",
         "map<string, struct<x: decimal(38,0), y: map<int, list<double>>>>", "list<map<long, string> not null>",
         "struct<s: struct<t: date comment 'ça'>>"]
DOCS = st.sampled_from([None, "doc", "émoji ✓", "line\nbreak", ""])
DIALECTS = st.sampled_from(["spark", "trino", "Hive", "flink", "Spark"])
SQLS = st.sampled_from(["SELECT 1", "select\n  y\nfrom u -- ✓", "SELECT 'ß'"])
PROPERTY = st.sampled_from([("k1", "v"), ("ключ", "välue"), ("version.history.num-entries", "1"),
                            ("version.history.num-entries", "2"), ("write.metadata.compression-codec", "gzip"),
                            ("write.metadata.compression-codec", "NONE"), ("replace.drop-dialect.allowed", "true"),
                            ("comment", "via property"), ("hms.trino.x", "kept out of the file")])
CHANGE = st.one_of(
    st.builds(ViewChange.update_comment, st.sampled_from([None, "c1", "ĉ2"])),
    PROPERTY.map(lambda kv: ViewChange.set_property(*kv)),
    st.builds(ViewChange.remove_property, st.sampled_from(["k1", "version.history.num-entries",
                                                           "write.metadata.compression-codec"])),
    st.builds(lambda d, s: ViewChange.add_representation(SQLRepresentation(d, s)), DIALECTS, SQLS),
    st.builds(ViewChange.update_representation, DIALECTS, SQLS),
    st.builds(ViewChange.remove_representation, DIALECTS))
STEP = st.one_of(
    st.fixed_dictionaries({
        "columns": st.lists(st.builds(Column, st.sampled_from(NAMES), st.sampled_from(TYPES), DOCS, st.booleans()),
                            max_size=3, unique_by=lambda c: c.name.lower()),
        "representations": st.lists(st.builds(SQLRepresentation, DIALECTS, SQLS), min_size=1, max_size=3,
                                    unique_by=lambda r: r.dialect.lower()),
        "default_namespace": st.sampled_from([["a"], ["a", "b"], []]),
        "default_catalog": st.sampled_from([None, "cat2"]), "comment": DOCS,
        "properties": st.lists(PROPERTY, max_size=2).map(dict),
        "security_mode": st.sampled_from([None, "DEFINER", "INVOKER"]),
        "summary": st.sampled_from([None, {"engine-name": "Spark", "engine-version": "4.3"}]),
        "replace_properties": st.booleans()}),
    st.lists(CHANGE, min_size=1, max_size=3),
    st.tuples(st.just("rename"), st.sampled_from(["a.v", "b.w", "ünï.vue"])),
    st.tuples(st.just("rollback"), st.integers(1, 6)),
    st.tuples(st.just("export"), st.sampled_from([None, True, False])),
    st.just("tick"))


def check_metadata(path, view, *, own=True):
    """``path`` is a file pyiceberg reads and the spec and the reference's rules allow, of ``view``."""
    data, raw = load(path)
    assert ViewMetadata.model_validate_json(raw).view_uuid == view.uuid and data["format-version"] == 1
    assert list(data) == [k for k in ("view-uuid", "format-version", "location", "properties", "schemas",
                                      "current-version-id", "versions", "version-log") if k in data]
    versions = {v["version-id"]: v for v in data["versions"]}
    schemas = {s["schema-id"]: s for s in data["schemas"]}
    assert len(versions) == len(data["versions"]) and len(schemas) == len(data["schemas"])
    assert data["current-version-id"] == view.current_version_id and view.current_version_id in versions
    assert set(schemas) == {v["schema-id"] for v in versions.values()}
    for v in versions.values():
        dialects = [r["dialect"].lower() for r in v["representations"]]
        assert dialects and len(set(dialects)) == len(dialects)
    # retention: the current version plus the highest ids, as many as version.history.num-entries
    size = int(view.properties.get("version.history.num-entries", "10"))
    others = sorted((v.version_id for v in view.versions if v.version_id != view.current_version_id), reverse=True)
    assert set(versions) == {view.current_version_id, *others[:size - 1]}
    # the log: the view's, less every entry up to the last one naming a version the file lacks
    log = [(e["timestamp-ms"], e["version-id"]) for e in data["version-log"]]
    full = [(e.timestamp_ms, e.version_id) for e in view.version_log]
    assert log and log == full[len(full) - len(log):] and log[-1][1] == view.current_version_id
    assert all(vid in versions for _, vid in log)
    assert len(log) == len(full) or full[len(full) - len(log) - 1][1] not in versions
    if own:  # the store's own history: times never go back, and a version is current only once it exists
        assert [t for t, _ in log] == sorted(t for t, _ in log)
        assert all(versions[vid]["timestamp-ms"] <= t for t, vid in log)
    assert data.get("properties", {}) == {k: v for k, v in view.properties.items() if not k.startswith("hms.")}
    return data


def _apply(store, name, step):
    if isinstance(step, dict):
        store.replace_view(name, **step)
    elif isinstance(step, list):
        store.alter_view(name, *step)
    elif step == "tick":
        time.sleep(0.002)
    elif step[0] == "rename":
        store.rename_view(name, step[1])
        return step[1]
    elif step[0] == "rollback":
        store.rollback_view(name, step[1])
    return name


@GENERATED
@given(steps=st.lists(STEP, max_size=12))
def test_generated_histories_export_and_import_round_trip(steps):
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        store, other = ViewStore(tmp / "s.db", catalog="cat", actor="a"), ViewStore(tmp / "o.db", catalog="cat")
        try:
            name, location, exported = "a.v", tmp / "loc", []
            store.create_view(name, columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="a", comment="first")
            for step in steps + [("export", None)]:
                try:
                    if isinstance(step, tuple) and step[0] == "export":
                        exported.append((store.export_iceberg(name, location, gzip=step[1]), store.load_view(name)))
                    else:
                        name = _apply(store, name, step)
                except ViewStoreError:
                    pass
            # every file is valid; numbers run on from 0, and an unchanged view's export wrote none
            for path, view in exported:
                check_metadata(path, view)
            paths = list(dict.fromkeys(path for path, _ in exported))
            assert [int(p.name[:5]) for p in paths] == list(range(len(paths)))
            assert sorted(p.name for p in (location / "metadata").iterdir()) == sorted(
                [p.name for p in paths] + ["version-hint.text"])
            assert (location / "metadata" / "version-hint.text").read_text() == f"{len(paths) - 1}\n"
            last, view = exported[-1]
            first = check_metadata(last, view)
            # imported into a fresh store and exported again: the same file but for its location
            imported = other.import_iceberg(last, "c.v")
            second = check_metadata(other.export_iceberg("c.v", tmp / "again"), imported)
            assert first.pop("location") == str(location.resolve())
            assert second.pop("location") == str((tmp / "again").resolve())
            assert second == first
            assert other.export_iceberg("c.v", location) == last  # to the same location: nothing to commit
            # history: as_of answers as the original's from the file's first log entry on
            assert all(imported.version(v["version-id"]) == view.version(v["version-id"]) for v in first["versions"])
            log = first["version-log"]
            times = {t for e in log for t in (e["timestamp-ms"], e["timestamp-ms"] + 1)} | {
                t for v in first["versions"] for t in (v["timestamp-ms"] - 1, v["timestamp-ms"])}
            for t in sorted(t for t in times if t >= log[0]["timestamp-ms"]):
                ours, theirs = other.load_view("c.v", as_of=t), store.load_view(name, as_of=t)
                assert ours.current_version_id == theirs.current_version_id
                assert ours.current_version == theirs.current_version
        finally:
            store.close()
            other.close()


PRIMITIVE = st.sampled_from(["int", "long", "string", "decimal(9, 2)", "fixed[4]", "timestamptz", "uuid",
                             "boolean", "double", "timestamp_ns"])
FIELD_NAMES = st.sampled_from(["a", "B", "ünï", "日", "x y"])


@st.composite
def json_type(draw, ids, depth=0):
    kind = draw(st.sampled_from(["primitive", "primitive", "struct", "list", "map"] if depth < 3 else ["primitive"]))
    if kind == "primitive":
        return draw(PRIMITIVE)
    if kind == "struct":
        return {"type": "struct", "fields": draw(json_fields(ids, depth + 1))}
    if kind == "list":
        return {"type": "list", "element-id": next(ids), "element": draw(json_type(ids, depth + 1)),
                "element-required": draw(st.booleans())}
    return {"type": "map", "key-id": next(ids), "key": draw(PRIMITIVE), "value-id": next(ids),
            "value": draw(json_type(ids, depth + 1)), "value-required": draw(st.booleans())}


@st.composite
def json_fields(draw, ids, depth=0):
    fields = []
    for name in draw(st.lists(FIELD_NAMES, max_size=3, unique_by=str.lower)):
        field = {"id": next(ids), "name": name, "required": draw(st.booleans()), "type": draw(json_type(ids, depth))}
        if draw(st.booleans()):
            field["doc"] = draw(st.sampled_from(["d", "dõc", ""]))
        fields.append(field)
    return fields


@st.composite
def foreign_metadata(draw):
    """A file another implementation may write: any ids (negative, the highest int), unsorted
    versions, shared and unused schemas, a log in any order naming versions the file lacks."""
    ids = itertools.count(draw(st.integers(-5, 2**31 - 1000)))
    schema_ids = draw(st.lists(st.integers(-3, 2**31 - 1), min_size=1, max_size=3, unique=True))
    schemas = [{"type": "struct", "fields": draw(json_fields(ids)), "schema-id": sid} for sid in schema_ids]
    for schema in schemas:
        if schema["schema-id"] == 0 and draw(st.booleans()):
            del schema["schema-id"]  # the reference's default
    version_ids = draw(st.lists(st.integers(-5, 2**31 - 1), min_size=1, max_size=6, unique=True))
    times = st.integers(0, 2**41)
    versions = []
    for vid in version_ids:
        version = {"version-id": vid, "timestamp-ms": draw(times), "schema-id": draw(st.sampled_from(schema_ids)),
                   "summary": draw(st.dictionaries(st.sampled_from(["engine-name", "app-id", "ü"]),
                                                   st.sampled_from(["Spark", ""]), max_size=2))}
        catalog = draw(st.sampled_from(["absent", None, "prod", "ĉat"]))
        if catalog != "absent":
            version["default-catalog"] = catalog
        version["default-namespace"] = draw(st.sampled_from([[], ["default"], ["a", "b"], ["ñs"]]))
        pairs = st.tuples(st.sampled_from(["spark", "trino", "Hive", "x"]), st.sampled_from(["SELECT 1", "select ✓"]))
        version["representations"] = [{"type": "sql", "sql": sql, "dialect": dialect} for dialect, sql in draw(
            st.lists(pairs, min_size=1, max_size=3, unique_by=lambda p: p[0].lower()))]
        versions.append(version)
    missing = min(version_ids) - 1
    log = draw(st.lists(st.tuples(times, st.sampled_from(version_ids + [missing])), max_size=6))
    properties = draw(st.dictionaries(st.sampled_from(["comment", "k", "ключ"]), st.sampled_from(["1", "v"]),
                                      max_size=2))
    if draw(st.booleans()):
        properties["version.history.num-entries"] = draw(st.sampled_from(["1", "3", "+2"]))
    data = {"view-uuid": str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1)))), "format-version": 1,
            "location": draw(st.sampled_from(["s3://b/v", "file:///w/ü"]))}
    if properties or draw(st.booleans()):
        data["properties"] = properties
    return {**data, "schemas": schemas, "current-version-id": draw(st.sampled_from(version_ids)),
            "versions": versions, "version-log": [{"timestamp-ms": t, "version-id": v} for t, v in log]}


def _type_shape(t):
    """A schema JSON type without its field ids, primitives as the reference reads them."""
    if isinstance(t, str):
        return t.replace(" ", "")
    if t["type"] == "struct":
        return [(f["name"], f["required"], f.get("doc"), _type_shape(f["type"])) for f in t["fields"]]
    if t["type"] == "list":
        return ("list", _type_shape(t["element"]), t["element-required"])
    return ("map", _type_shape(t["key"]), _type_shape(t["value"]), t["value-required"])


def _retained(data):
    """The versions and log an export of ``data`` keeps: the import's log (entries up to the last
    naming a version the file lacks dropped, one for the current version added at the file's latest
    time if it does not end there), then the reference's retention."""
    current, have = data["current-version-id"], {v["version-id"] for v in data["versions"]}
    log = []
    for entry in data["version-log"]:
        log = log + [entry] if entry["version-id"] in have else []
    if not log or log[-1]["version-id"] != current:
        last = max([e["timestamp-ms"] for e in log] +
                   [v["timestamp-ms"] for v in data["versions"] if v["version-id"] == current])
        log.append({"timestamp-ms": last, "version-id": current})
    size = int(data.get("properties", {}).get("version.history.num-entries", "10"))
    keep = {current, *sorted(have - {current}, reverse=True)[:size - 1]}
    trimmed = []
    for entry in log:
        trimmed = trimmed + [entry] if entry["version-id"] in keep else []
    versions = sorted((v for v in data["versions"] if v["version-id"] in keep), key=lambda v: v["version-id"])
    return versions, trimmed


@GENERATED
@given(data=foreign_metadata())
def test_files_of_another_writer_import_and_export_as_the_docs_say(data):
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        source = tmp / "00007-source.metadata.json"
        source.write_text(json.dumps(data, ensure_ascii=False))
        ViewMetadata.model_validate_json(source.read_bytes())  # a file pyiceberg reads too
        store, other = ViewStore(tmp / "s.db", catalog="cat"), ViewStore(tmp / "o.db", catalog="cat")
        try:
            store.import_iceberg(source, "a.v")
            path = store.export_iceberg("a.v", tmp / "loc")
            exported = check_metadata(path, store.load_view("a.v"), own=False)
            versions, log = _retained(data)
            assert exported["view-uuid"] == data["view-uuid"]
            assert exported["current-version-id"] == data["current-version-id"]
            assert exported.get("properties", {}) == data.get("properties", {})
            assert exported["versions"] == [{k: v for k, v in version.items() if (k, v) != ("default-catalog", None)}
                                            for version in versions]
            assert exported["version-log"] == log
            shapes = {s.get("schema-id", 0): _type_shape(s) for s in data["schemas"]}
            assert [(s["schema-id"], _type_shape(s)) for s in exported["schemas"]] == sorted(
                (sid, shapes[sid]) for sid in {v["schema-id"] for v in versions})
            # what an export wrote, an import and export reproduce exactly
            other.import_iceberg(path, "b.v")
            assert other.export_iceberg("b.v", tmp / "loc") == path
            times = [e["timestamp-ms"] for e in log]
            for i, entry in enumerate(log):  # a log whose times rise is the history as_of answers from
                if times == sorted(times) and times[i + 1:i + 2] != [times[i]]:
                    assert other.load_view("b.v", as_of=times[i]).current_version_id == entry["version-id"]
        finally:
            store.close()
            other.close()


def _long_history(store, ident, versions, keep=None):
    props = {"version.history.num-entries": str(keep)} if keep is not None else None
    store.create_view(ident, columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                      default_namespace="a", properties=props)
    for i in range(2, versions + 1):
        store.replace_view(ident, columns=[Column("x", "int")], representations=[("spark", f"SELECT {i} AS x")],
                           default_namespace="a")


def _check_calls(calls, total, at_most):
    """A progress's calls: one total throughout, done rising (never past it) to end at it, and not one a version."""
    assert calls and {t for _, t in calls} == {total}, calls
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[0] > 0 and done[-1] == total and len(set(done)) == len(done), calls
    assert len(calls) <= at_most, len(calls)


@pytest.mark.parametrize("versions, keep, total", [(1, None, 2), (30, None, 40), (250, 250, 500), (250, 20, 270)])
def test_an_export_reports_its_versions_read_then_put_in_its_file(store, tmp_path, versions, keep, total):
    """export_iceberg's progress counts each version once read and once put in the file (only
    those the file keeps), and ends at its total; an export of the view unchanged since it wrote
    the latest file does all of it at once."""
    _long_history(store, "a.long", versions, keep)
    calls = []
    path = store.export_iceberg("a.long", tmp_path / "loc", progress=lambda d, t: calls.append((d, t)))
    assert path.name.startswith("00000-")
    _check_calls(calls, total, at_most=202)
    assert (versions, total) in calls  # every version read, none put in the file yet
    assert len(load(path)[0]["versions"]) == total - versions
    calls.clear()
    assert store.export_iceberg("a.long", tmp_path / "loc", progress=lambda d, t: calls.append((d, t))) == path
    assert calls == [(total, total)]
    store.rename_view("a.long", "a.renamed")  # a new state of the same metadata: built, compared, not written
    assert store.export_iceberg("a.renamed", tmp_path / "loc", progress=lambda d, t: calls.append((d, t))) == path
    _check_calls(calls[1:], total, at_most=202)


@pytest.mark.parametrize("change, calls_after_read", [
    # two versions more: the file keeps 5 where 3 were counted, and the count stops at the total
    ("replace", [(4, 6), (5, 6), (6, 6), (6, 6), (6, 6)]),
    # the file keeps 1 of the 3: the count jumps to the total at the end
    ("keep one", [(4, 6), (6, 6)]),
])
def test_an_export_of_a_view_another_process_changes_while_its_versions_are_read_ends_at_its_total(
        store, tmp_path, change, calls_after_read):
    """The versions are counted before the folder's lock is taken; another process that changes the
    view meanwhile changes how many the file keeps, yet done never passes total and the last call
    has done == total."""
    _long_history(store, "a.long", 3)
    calls = []

    def progress(done, total):
        calls.append((done, total))
        if done == 3:  # every version read: another process changes the view before the lock is taken
            with ViewStore(store.path, actor="bob") as other:
                if change == "replace":
                    for i in (4, 5):
                        other.replace_view("a.long", columns=[Column("x", "int")],
                                           representations=[("spark", f"SELECT {i} AS x")], default_namespace="a")
                else:
                    other.alter_view("a.long", ViewChange.set_property("version.history.num-entries", "1"))

    path = store.export_iceberg("a.long", tmp_path / "loc", progress=progress)
    assert calls == [(1, 6), (2, 6), (3, 6)] + calls_after_read
    assert len(load(path)[0]["versions"]) == (5 if change == "replace" else 1)


def test_build_metadata_reports_the_versions_it_puts_in_about_a_hundred_times_and_after_the_last(store):
    from viewstore.iceberg import build_metadata

    _long_history(store, "a.long", 250, 250)
    calls = []
    data = build_metadata(store.load_view("a.long"), "file:/loc", calls.append)
    assert calls == [*range(3, 250, 3), 250] and len(data["versions"]) == 250


def test_an_export_whose_progress_raises_writes_nothing_and_raises_it_as_it_was(store, tmp_path):
    class Stop(Exception):
        pass

    _long_history(store, "a.long", 30, 30)
    for stop_at in (1, 45):  # as the versions are read, as they are put in the file
        def progress(done, total):
            if done >= stop_at:
                raise Stop(done)

        with pytest.raises(Stop) as raised:
            store.export_iceberg("a.long", tmp_path / "loc", progress=progress)
        assert raised.value.args[0] >= stop_at and raised.value.__context__ is None
        assert not list((tmp_path / "loc").rglob("*.metadata.json"))
    with pytest.raises(ValidationError, match=r"^progress must be callable as progress\(done, total\), not 'no'$"):
        store.export_iceberg("a.long", tmp_path / "other", progress="no")
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("versions", [1, 3, 181])
def test_an_import_reports_its_events_made_then_written(store, tmp_path, versions):
    """import_iceberg's progress counts each event of the history once made and once written: its
    total is twice the events the view gets, the last call has done == total, and the calls are
    about a hundred however long the history."""
    _long_history(store, "a.long", versions, versions)
    path = store.export_iceberg("a.long", tmp_path / "loc")
    calls = []
    with ViewStore(tmp_path / "other.db", actor="bob") as other:
        view = other.import_iceberg(path, "b.copy", progress=lambda d, t: calls.append((d, t)))
        assert view.stream_version == versions and len(view.versions) == versions
        _check_calls(calls, 2 * versions, at_most=102)
        assert (versions, 2 * versions) in calls  # every event made, none written yet


def test_an_import_whose_progress_raises_records_nothing_and_raises_it_as_it_was(store, tmp_path):
    from viewstore import signals

    class Stop(BaseException):  # not even an Exception: Ctrl-C's KeyboardInterrupt is none
        pass

    _long_history(store, "a.long", 60, 60)
    path = store.export_iceberg("a.long", tmp_path / "loc")
    failed = []

    with ViewStore(tmp_path / "other.db", actor="bob") as other:
        def told(sender, events, error):
            failed.append((len(events), error))

        signals.commit_failed.connect(told, sender=other)
        for stop_at in (1, 60, 61, 120):  # the first made, the last made, the first written, the last written
            def progress(done, total):
                if done >= stop_at:
                    raise Stop(done)

            with pytest.raises(Stop) as raised:
                other.import_iceberg(path, "b.copy", progress=progress)
            assert raised.value.args[0] >= stop_at and raised.value.__context__ is None
            assert other.event_count() == 0 and other.list_views() == []
        # a write told as failed (its events made) is told the callback's own exception
        assert [(n, type(e)) for n, e in failed] == [(60, Stop), (60, Stop)]
        signals.commit_failed.disconnect(told, sender=other)
        with pytest.raises(ValidationError, match=r"^progress must be callable as progress\(done, total\), not 3$"):
            other.import_iceberg(tmp_path / "no such file", "b.copy", progress=3)
        with pytest.raises(ValidationError, match=r"^progress must be callable as progress\(done, total\), not 3$"):
            other.import_view("b.copy", source="x", versions=[], version_log=[], current_version_id=1, progress=3)
        assert other.import_iceberg(path, "b.copy").stream_version == 60  # the store goes on


def test_an_export_of_a_view_unchanged_since_it_wrote_the_latest_file_knows_it_by_the_file_s_name(store, tmp_path):
    """The <uuid> of an exported file names the state it holds (export_uuid: the view, its stream
    version and the commit that made it, the location, the codec), so an export of that state again
    finds the file by its name and neither builds the metadata nor reads the file (metadata files
    are never changed once written: one changed by hand is not looked at)."""
    from viewstore.iceberg import export_uuid

    _long_history(store, "a.v", 3)
    loc = tmp_path / "loc"
    first = store.export_iceberg("a.v", loc)
    view = store.load_view("a.v")
    (last,) = store.events(view="a.v", since_position=3, until_position=3)
    assert first.name == f"00000-{export_uuid(view.uuid, 3, last.commit_id, loc, False)}.metadata.json"
    text = first.read_bytes()
    first.write_bytes(text.replace(b'"SELECT 3 AS x"', b'"SELECT 33 AS x"'))  # not read again: returned as it is
    (loc / "metadata" / "version-hint.text").write_text("7\n")
    assert store.export_iceberg("a.v", loc) == first and (loc / "metadata" / "version-hint.text").read_text() == "0\n"
    first.write_bytes(text)
    zipped = store.export_iceberg("a.v", loc, gzip=True)  # another codec: another name, another file
    assert zipped.name == f"00001-{export_uuid(view.uuid, 3, last.commit_id, loc, True)}.gz.metadata.json"
    assert store.export_iceberg("a.v", loc, gzip=True) == zipped
    other = store.export_iceberg("a.v", tmp_path / "elsewhere")  # another location: another name
    assert other.name == (f"00000-{export_uuid(view.uuid, 3, last.commit_id, tmp_path / 'elsewhere', False)}"
                          ".metadata.json")
    assert other.name != first.name and load(other)[0]["versions"] == load(first)[0]["versions"]
    assert sorted(p.name for p in (loc / "metadata").iterdir()) == sorted([first.name,
                                                                           zipped.name, "version-hint.text"])


def test_a_copy_of_the_store_that_went_on_apart_exports_its_own_state_at_the_same_stream_version(store, tmp_path):
    """Two copies of one store file that each changed the view once have it at the same stream
    version in different states: the commit's random id tells them apart, so the second export to
    the location writes its own file rather than taking the first's for its own."""
    _long_history(store, "a.v", 2)
    store.close()
    shutil.copyfile(tmp_path / "views.db", tmp_path / "copy.db")
    loc = tmp_path / "loc"
    with ViewStore(tmp_path / "views.db") as one, ViewStore(tmp_path / "copy.db") as two:
        one.alter_view("a.v", ViewChange.set_property("k", "one"))
        two.alter_view("a.v", ViewChange.set_property("k", "two"))
        assert one.load_view("a.v").stream_version == two.load_view("a.v").stream_version == 3
        first = one.export_iceberg("a.v", loc)
        second = two.export_iceberg("a.v", loc)
        assert (first.name[:6], second.name[:6]) == ("00000-", "00001-")
        assert (load(first)[0]["properties"]["k"], load(second)[0]["properties"]["k"]) == ("one", "two")
        assert one.export_iceberg("a.v", loc).name.startswith("00002-")  # the latest is two's: compared, differs


def _file_uuid(path):
    """The <uuid> of a metadata file's name ``NNNNN-<uuid>.metadata.json``."""
    return uuid.UUID(path.name[6:42])


@pytest.mark.parametrize("damage",
                         ["the projection claims an event the log lacks", "the log lacks the projection's event"])
def test_an_export_of_a_view_whose_projection_and_log_disagree_is_refused(store, tmp_path, damage):
    """The name of an exported file is the state it holds, by the commit of the view's last event in
    the log (export_uuid). Where the projection's stream version is not the log's last of the view
    (the row changed behind the library's back, or an event deleted from the log), the view's rows
    are no state of the log: reading them is refused (DamagedProjectionsError), so the export writes no file.
    (Before reads checked, the export named such a file at random, after a state no event made.)"""
    _long_history(store, "a.v", 3)
    loc = tmp_path / "loc"
    assert _file_uuid(store.export_iceberg("a.v", loc)).version == 5  # a state's name
    if damage.startswith("the log lacks"):
        store.alter_view("a.v", ViewChange.set_property("k", "v"))  # stream version 4
    with sqlite3.connect(store.path) as raw:
        if damage.startswith("the projection"):  # the projection at 4, the log at 3
            raw.execute("UPDATE views SET stream_version = stream_version + 1, properties = '{\"k\": \"w\"}'")
        else:  # the projection is at 3 and event 3 is gone; the log holds 4
            raw.execute("UPDATE views SET stream_version = 3")
            raw.execute("DROP TRIGGER events_append_only_delete")
            raw.execute("DELETE FROM events WHERE stream_version = 3")
    raw.close()
    said = ("ahead of the log for view a.v .*: they hold it at stream version 4, its log ends at stream version 3;"
            if damage.startswith("the projection") else
            "behind the log for view a.v .*: they hold it at stream version 3, its log goes on to stream version 4;")
    with ViewStore(store.path) as reader:  # (the store itself keeps the view it last read)
        assert [e.stream_version for e in reader.events(view="a.v")] == (
            [1, 2, 3] if damage.startswith("the projection") else [1, 2, 4])
        for read in (lambda: reader.load_view("a.v"), lambda: reader.export_iceberg("a.v", loc)):
            with pytest.raises(DamagedProjectionsError, match=rf"^the projections are {said} rebuild\(\) repairs them "
                                                                r"from the log$"):
                read()
    assert sorted(p.name[:6] for p in (loc / "metadata").glob("*.metadata.json")) == ["00000-"]
