"""``viewstore hms import`` and ``viewstore hms export``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import CONFORMANCE
from interrupted import interrupted

from viewstore import ViewStore, formats
from viewstore.cli import main
from viewstore.errors import ValidationError
from viewstore.formats import ViewDefinition
from viewstore.model import Column

ENGINE_VIEWS = CONFORMANCE / "engine-views"
SPARK_FILE = ENGINE_VIEWS / "spark-hms-view-3.5.reconstructed.json"  # sales.v_customers, owner bob
TRINO_FILE = ENGINE_VIEWS / "trino-hms-starrocks-trinoviewtest-basic.json"  # no dbName/tableName


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.delenv("VIEWSTORE_DB", raising=False)
    monkeypatch.delenv("VIEWSTORE_ACTOR", raising=False)
    db = tmp_path / "hms.db"
    runner = CliRunner()

    def invoke(*args, code=0):
        result = runner.invoke(main, ["--db", str(db), "--actor", "carol", *args], catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.stdout if code == 0 else result.output

    invoke.db = db
    return invoke


def record(name: str, sql: str = "SELECT 1 AS a", engine: str = "spark") -> dict:
    return formats.encode(ViewDefinition(dialect=engine, sql=sql, columns=(Column("a", "int", "an a"),),
                                         comment=f"view {name}", owner="olga", database="sales", name=name), engine)


def test_import_one_conformance_file_and_export_it_again(run):
    assert run("hms", "import", str(SPARK_FILE)).strip() == \
        "imported sales.v_customers from a spark record (1 version, 1 event)"
    assert "imported s.t from a trino record" in run("hms", "import", str(TRINO_FILE), "s.t")
    view = json.loads(run("show", "sales.v_customers", "--json"))
    assert view["properties"]["owner"] == "bob" and view["comment"] == "customers view"
    assert view["representations"] == [{"dialect": "spark", "sql": "SELECT Id, name FROM customers"}]

    exported = json.loads(run("hms", "export", "sales.v_customers", "--engine", "SPARK", "--json"))
    original = json.loads(SPARK_FILE.read_text())["hms_table"]
    assert exported["owner"] == "bob" and exported["viewOriginalText"] == original["viewOriginalText"]
    assert formats.decode(exported).columns == formats.decode(original).columns
    assert json.loads(run("hms", "export", "sales.v_customers", "--engine", "spark")) == exported
    trino = json.loads(run("hms", "export", "s.t", "--engine", "trino", "--json"))
    assert formats.decode(trino).owner == "wenbo"


def test_import_a_list_with_a_progress_summary_and_json(run, tmp_path):
    dump = tmp_path / "dump.json"
    conformance_style = json.loads(SPARK_FILE.read_text())
    dump.write_text(json.dumps([record("one"), conformance_style, record("two", engine="trino")]))
    text = run("hms", "import", str(dump))
    assert "imported 3, skipped 0, failed 0" in text and "sales.one" in text and "sales.v_customers" in text
    with ViewStore(run.db) as store:
        assert store.list_views("sales") == [("sales", "one"), ("sales", "two"), ("sales", "v_customers")]

    # again, with one new record and one broken one: the known ones are skipped, the broken one fails
    broken = {**record("three"), "parameters": {"spark.sql.create.version": "4.3.0",
                                                "spark.sql.sources.schema": "{not json"}}
    dump.write_text(json.dumps([record("one"), broken, record("four")]))
    report = json.loads(run("hms", "import", str(dump), "--json", code=1))
    assert [i["identifier"] for i in report["imported"]] == ["sales.four"]
    assert report["imported"][0]["engine"] == "spark" and report["imported"][0]["versions"] == 1
    assert [(s["name"], s["reason"]) for s in report["skipped"]] == [("sales.one", "exists")]
    assert report["seconds"] > 0  # the time the import took, not the default
    (failed,) = report["failed"]
    assert failed["name"] == "sales.three" and failed["error"] == "ValidationError"
    assert failed["message"] == ("parameters.spark.sql.sources.schema: the Spark schema is not valid JSON: Expecting "
                                 "property name enclosed in double quotes: line 1 column 2 (char 1)")
    with ViewStore(run.db) as store:
        assert store.event_count() == 4

    text = run("hms", "import", str(dump), code=1)
    assert "imported 0, skipped 2, failed 1" in text and "spark.sql.sources.schema" in text
    assert any(line.startswith("│ sales.three │ ValidationError │") for line in text.splitlines()), text


def test_import_a_list_draws_its_progress_on_a_terminal_only(run, tmp_path):
    from terminal import run_with_terminal_stderr

    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([record("one"), record("two", engine="trino"), record("three")]))
    code, stdout, terminal = run_with_terminal_stderr(main, ["--db", str(run.db), "hms", "import", str(dump), "--json"])
    assert code == 0 and [i["identifier"] for i in json.loads(stdout)["imported"]] == [
        "sales.one", "sales.two", "sales.three"]
    assert "importing" in terminal and "3/3" in terminal, terminal

    dump.write_text(json.dumps([record("four"), record("five")]))
    piped = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(run.db), "hms", "import", str(dump)],
                           capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert "imported 2, skipped 0, failed 0" in piped.stdout and "importing" not in piped.stdout


def test_a_metastore_dump_with_tables_imports_its_views_and_skips_the_rest(run, tmp_path):
    dump = tmp_path / "dump.json"
    table = {"dbName": "sales", "tableName": "orders", "tableType": "MANAGED_TABLE", "parameters": {}}
    materialized = {"dbName": "sales", "tableName": "mv", "tableType": "MATERIALIZED_VIEW", "parameters": {}}
    dump.write_text(json.dumps([table, record("one"), materialized]))
    report = json.loads(run("hms", "import", str(dump), "--json"))  # exit code 0
    assert [i["identifier"] for i in report["imported"]] == ["sales.one"]
    assert [(s["name"], s["reason"], s["detail"]) for s in report["skipped"]] == [
        ("sales.orders", "not-a-view", "a MANAGED_TABLE"), ("sales.mv", "not-a-view", "a MATERIALIZED_VIEW")]
    assert report["failed"] == []
    text = run("hms", "import", str(dump))
    assert "imported 0, skipped 3, failed 0" in text and "not-a-view" in text and "sales.one" not in text
    assert "skipped as in the store already: 1 view (--json lists them)\n" in text, text
    assert "│ sales.orders │ not-a-view │ a MANAGED_TABLE" in text, text  # each record's detail
    assert "│ sales.mv     │ not-a-view │ a MATERIALIZED_VIEW" in text, text
    with ViewStore(run.db) as store:
        assert store.list_views("sales") == [("sales", "one")]


def test_a_record_without_a_database_or_name_is_reported_by_its_place(run, tmp_path):
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([record("one"), {**record("two"), "dbName": ""}, {**record("three"), "tableName": ""},
                                {**record("four"), "dbName": 5}, {**record("five"), "tableName": ["five"]}]))
    report = json.loads(run("hms", "import", str(dump), "--json", code=1))
    assert [i["identifier"] for i in report["imported"]] == ["sales.one"]
    assert [f["name"] for f in report["failed"]] == ["record 1", "record 2", "record 3", "record 4"]


def test_import_json_of_one_record(run, tmp_path):
    single = tmp_path / "one.json"
    single.write_text(json.dumps(record("solo")))
    report = json.loads(run("hms", "import", str(single), "--json"))
    assert [(i["identifier"], i["engine"]) for i in report["imported"]] == [("sales.solo", "spark")]
    assert report["skipped"] == report["failed"] == []


def test_import_json_is_plain_on_a_terminal_for_one_record_and_for_many(tmp_path):
    """The import report's --json is for scripts: plain JSON on a terminal too, whether the file
    holds one record (a path of its own) or several."""
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    one.write_text(json.dumps(record("solo")))
    many.write_text(json.dumps([record("a"), record("b")]))
    for path, names in ((one, ["sales.solo"]), (many, ["sales.a", "sales.b"])):
        result = CliRunner().invoke(main, ["--db", str(tmp_path / "t.db"), "hms", "import", str(path), "--json"],
                                    env={"FORCE_COLOR": "1"})  # rich's switch for a terminal
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.stdout and [i["identifier"] for i in json.loads(result.stdout)["imported"]] == names


def test_one_record_imported_under_another_name_is_reported_by_both(tmp_path):
    """A file of one record imported under IDENTIFIER: its row names the view in the store by the
    identifier given, and the record by its own dbName.tableName, as a file of many names them."""
    single = tmp_path / "one.json"
    single.write_text(json.dumps(record("solo")))
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "s.db"), "hms", "import", str(single), "copies.solo",
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] == [{"identifier": "copies.solo", "engine": "spark", "versions": 1,
                                                      "name": "sales.solo"}]


def test_records_piped_in_are_read_from_stdin_given_as_a_dash(tmp_path):
    """'-' is stdin, as for --sql-file: hms export --json piped into another store's hms import."""
    runner = CliRunner()
    source, copy = str(tmp_path / "source.db"), str(tmp_path / "copy.db")
    assert runner.invoke(main, ["--db", source, "hms", "import", str(SPARK_FILE)]).exit_code == 0
    exported = runner.invoke(main, ["--db", source, "hms", "export", "sales.v_customers", "--engine", "spark",
                                    "--json"]).stdout
    one = runner.invoke(main, ["--db", copy, "hms", "import", "-", "copies.c", "--json"], input=exported)
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["imported"] == [{"identifier": "copies.c", "engine": "spark", "versions": 1,
                                                   "name": "sales.v_customers"}]
    many = runner.invoke(main, ["--db", copy, "hms", "import", "-", "--json"],
                         input=json.dumps([record("p1"), record("p2")]))
    assert many.exit_code == 0, many.output
    assert [row["identifier"] for row in json.loads(many.stdout)["imported"]] == ["sales.p1", "sales.p2"]
    assert ViewStore(copy).list_views() == [("copies", "c"), ("sales", "p1"), ("sales", "p2")]
    bad = runner.invoke(main, ["--db", copy, "hms", "import", "-", "--json"], input="{not json")
    assert (bad.exit_code, bad.stdout) == (1, "")
    assert json.loads(bad.stderr)["error"]["message"].startswith("<stdin> is not JSON: ")


def test_records_read_from_stdin_are_utf_8_and_said_as_stdin_in_every_error(tmp_path):
    """stdin is read as UTF-8, as a file is (SQL in another script kept whole); each refusal of
    what it held names it <stdin>, not '-': bytes that are not UTF-8, an item that is no record,
    and several records given one IDENTIFIER."""
    runner = CliRunner()
    db = str(tmp_path / "views.db")
    sql = "SELECT 'Übersicht der Verkäufe 売上' AS a"
    done = runner.invoke(main, ["--db", db, "hms", "import", "-"],
                         input=json.dumps(record("uni", sql), ensure_ascii=False).encode())
    assert done.exit_code == 0, done.output
    assert ViewStore(db).load_view("sales.uni").representations[0].sql == sql
    for given, message in [(b"\xff{}", "cannot read <stdin>: "),
                           (b"[1]", "<stdin>[0]: an HMS record must be a JSON object, not int"),
                           (json.dumps([record("p1"), record("p2")]).encode(),
                            "<stdin> holds 2 records; IDENTIFIER and --metadata apply to one record only")]:
        args = ["--db", db, "hms", "import", "-", "--json"] + (["sales.one"] if b"p2" in given else [])
        bad = runner.invoke(main, args, input=given)
        assert (bad.exit_code, bad.stdout) == (1, ""), bad.output
        assert json.loads(bad.stderr)["error"]["message"].startswith(message)
    assert ViewStore(db).list_views() == [("sales", "uni")]


def test_records_read_from_stdin_are_utf_8_whatever_the_encoding_of_its_text(tmp_path):
    """stdin's bytes are decoded as UTF-8, as hms export --json writes them, not by the text encoding
    Python gives stdin (planted, stdin read as text under a Latin-1 one stored Ã\x9c for Ü)."""
    db = str(tmp_path / "views.db")
    sql = "SELECT 'Übersicht der Verkäufe 売上' AS a"
    done = CliRunner(charset="latin-1").invoke(main, ["--db", db, "hms", "import", "-"],
                                               input=json.dumps(record("uni", sql), ensure_ascii=False).encode())
    assert done.exit_code == 0, done.output
    assert ViewStore(db).load_view("sales.uni").representations[0].sql == sql


def test_a_record_imported_again_says_how_to_import_it_under_another_name(run, tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(record("again")))
    run("hms", "import", str(one))
    assert run("hms", "import", str(one), code=1) == (
        "error: view already exists: sales.again (nothing was written; give IDENTIFIER to import the record under "
        "another name)\n")
    failure = CliRunner().invoke(main, ["--db", str(run.db), "hms", "import", str(one), "--json"])
    assert (failure.exit_code, failure.stdout) == (1, "")
    assert json.loads(failure.stderr)["error"]["type"] == "ViewAlreadyExistsError"
    run("hms", "import", str(one), "sales.again_2")
    with ViewStore(run.db) as store:
        assert store.list_views() == [("sales", "again"), ("sales", "again_2")]


def test_an_object_whose_hms_table_is_no_object_is_itself_the_record(run, tmp_path):
    """Only an object under hms_table is a record held there, as in the conformance files."""
    single = tmp_path / "one.json"
    single.write_text(json.dumps({**record("solo"), "hms_table": "a note"}))
    assert run("hms", "import", str(single)) == "imported sales.solo from a spark record (1 version, 1 event)\n"


def test_the_reports_count_an_iceberg_views_versions_not_its_events(run, tmp_path):
    """An Iceberg record brings the view's history: the JSON report of one record and the table of
    several count its versions, as the line of one record does, not the events that record them."""
    with ViewStore(tmp_path / "source.db", actor="carol") as source:
        for sql in ("SELECT 1 AS a", "SELECT 2 AS a"):
            source.replace_view("db.iv", columns=[Column("a", "int")], representations=[("spark", sql)],
                                default_namespace="db")
        source.rollback_view("db.iv", 1)  # one event more than versions
        path = source.export_iceberg("db.iv", str(tmp_path / "wh"))
    iceberg = {"dbName": "db", "tableName": "iv", "tableType": "VIRTUAL_VIEW",
               "parameters": {"table_type": "ICEBERG-VIEW", "metadata_location": str(path)}}
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    one.write_text(json.dumps(iceberg))
    many.write_text(json.dumps([{**iceberg, "tableName": "iv2"}, record("one")]))
    line = run("hms", "import", str(one))
    assert line == "imported db.iv from an iceberg record (2 versions, 3 events)\n"
    again = ["--db", str(tmp_path / "again.db")]  # a view is recorded once in a store
    (imported,) = json.loads(run(*again, "hms", "import", str(one), "--json"))["imported"]
    assert (imported["identifier"], imported["engine"], imported["versions"]) == ("db.iv", "iceberg", 2)
    table = run("--db", str(tmp_path / "many.db"), "hms", "import", str(many))
    assert re.search(r"^│ db\.iv2 +│ iceberg │ 2 +│$", table, re.M), table


def test_import_an_iceberg_view_with_a_local_metadata_copy(run, tmp_path):
    metadata = json.loads((ENGINE_VIEWS / "iceberg-view-spec-example.json").read_text())["metadata"]
    copy = tmp_path / "v.metadata.json"
    copy.write_text(json.dumps(metadata))
    conformance_file = ENGINE_VIEWS / "iceberg-view-in-hms.reconstructed.json"
    assert run("hms", "import", str(conformance_file), "db.v", code=1).startswith(
        "error: parameters.metadata_location: 's3://")
    assert "imported db.v from an iceberg record (1 version, 1 event)" in run("hms", "import", str(conformance_file),
                                                                              "db.v", "--metadata", str(copy))


def _import_iceberg_record(run, tmp_path):
    """The conformance Iceberg record imported as db.v with --metadata, a local copy of its file: the
    copy's path, and the metadata_location the record names."""
    metadata = json.loads((ENGINE_VIEWS / "iceberg-view-spec-example.json").read_text())["metadata"]
    copy = tmp_path / "v.metadata.json"
    copy.write_text(json.dumps(metadata))
    conformance_file = ENGINE_VIEWS / "iceberg-view-in-hms.reconstructed.json"
    named = json.loads(conformance_file.read_text())["hms_table"]["parameters"]["metadata_location"]
    run("hms", "import", str(conformance_file), "db.v", "--metadata", str(copy))
    return copy, named


def test_export_an_iceberg_record_pointing_at_the_current_metadata_file(run, tmp_path):
    _, imported_from = _import_iceberg_record(run, tmp_path)
    record = json.loads(run("hms", "export", "db.v", "--engine", "iceberg", "--json"))
    assert record["parameters"]["metadata_location"] == imported_from  # unchanged since the import

    with ViewStore(run.db) as store:
        view = store.load_view("db.v")
        store.replace_view("db.v", columns=view.columns, representations=[("spark", "SELECT 42")],
                           default_namespace=["default"])
    error = run("hms", "export", "db.v", "--engine", "iceberg", code=1)
    assert error.startswith("error: metadata_location: the view db.v changed (view.replaced)") and \
        error.count("\n") == 1
    written = run("export", "db.v", "--location", str(tmp_path / "wh")).strip()
    record = json.loads(run("hms", "export", "db.v", "--engine", "ICEBERG", "--metadata-location", written, "--json"))
    assert record["parameters"]["metadata_location"] == Path(written).as_uri()
    assert record["viewOriginalText"] == "SELECT 42"
    remote = "s3://wh/db/v/metadata/00002-x.metadata.json"
    record = json.loads(run("hms", "export", "db.v", "--engine", "iceberg", "--metadata-location", remote, "--json"))
    assert record["parameters"]["metadata_location"] == remote
    error = run("hms", "export", "db.v", "--engine", "spark", "--metadata-location", remote, code=2)
    assert "--metadata-location is for --engine iceberg only" in error  # the API would refuse it too:
    with ViewStore(run.db) as store, \
            pytest.raises(ValidationError, match="metadata_location: only Iceberg view records point at a metadata"):
        store.export_hms("db.v", "spark", metadata_location=remote)


def test_import_metadata_is_a_file_read_and_export_metadata_location_a_file_named(run, tmp_path):
    """hms import --metadata reads a local copy in place of the file the record names, which the view
    keeps as its source; hms export --metadata-location is only written into the record. Each help
    says which."""
    copy, named = _import_iceberg_record(run, tmp_path)
    (imported,) = json.loads(run("history", "db.v", "--json"))
    assert imported["payload"]["source_location"] == named != str(copy)
    missing = tmp_path / "no such folder" / "00009-x.metadata.json"
    record = json.loads(run("hms", "export", "db.v", "--engine", "iceberg", "--metadata-location", str(missing),
                            "--json"))
    assert record["parameters"]["metadata_location"] == missing.as_uri() and not missing.parent.exists()
    runner = CliRunner()
    import_help = " ".join(runner.invoke(main, ["hms", "import", "--help"]).output.split())
    assert "--metadata FILE For an Iceberg view's record: a local copy of the metadata file the record's " \
           "metadata_location names, read in its place (the view still records that location as its source;" \
           in import_help
    export_help = " ".join(runner.invoke(main, ["hms", "export", "--help"]).output.split())
    assert "--metadata-location URI For --engine iceberg: the metadata file the record names as its " \
           "metadata_location (written into the record, not read)" in export_help


def test_records_that_all_fail_start_no_store(run, tmp_path):
    bad = {**record("bad"), "viewOriginalText": "", "viewExpandedText": ""}
    one, many, mixed = tmp_path / "one.json", tmp_path / "many.json", tmp_path / "mixed.json"
    one.write_text(json.dumps(bad))
    many.write_text(json.dumps([bad, {**record("t"), "tableType": "MANAGED_TABLE"}, bad]))
    mixed.write_text(json.dumps([bad, record("good")]))
    assert "viewOriginalText" in run("hms", "import", str(one), code=1)
    assert not run.db.exists()  # a mistyped or broken record is not a new, empty catalog
    report = json.loads(run("hms", "import", str(many), "--json", code=1))
    assert (len(report["imported"]), len(report["skipped"]), len(report["failed"])) == (0, 1, 2)
    assert not run.db.exists()
    report = json.loads(run("hms", "import", str(mixed), "--json", code=1))
    assert [v["identifier"] for v in report["imported"]] == ["sales.good"] and len(report["failed"]) == 1
    with ViewStore(run.db) as store:
        assert store.list_views() == [("sales", "good")]


def test_the_dump_of_a_metastore_without_tables_is_an_empty_report_and_starts_no_store(run, tmp_path):
    """As 'viewstore spark import' of an empty database, an empty list of records is an empty
    report (exit code 0), where it was an error (exit code 1) that a script dumping an empty
    metastore had to tell from a real one."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert re.fullmatch(r"imported 0, skipped 0, failed 0 \(\d+\.\d\d s\)\n", run("hms", "import", str(empty)))
    report = json.loads(run("hms", "import", str(empty), "--json"))
    assert {k: v for k, v in report.items() if k != "seconds"} == {"imported": [], "skipped": [], "failed": []}
    assert not run.db.exists()
    assert run("hms", "import", str(empty), "s.v", code=1) == (
        f"error: {empty} holds 0 records; IDENTIFIER and --metadata apply to one record only\n")


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_in_an_import_of_many_records_says_how_far_it_got_and_that_those_stay(run, tmp_path, as_json):
    """Ctrl-C during an import of several records said only 'interrupted': whether the views done
    before stayed, and what a run again would do, were left to guess. It now says how many records
    were done, that the views imported stay, and that a run again skips them."""
    many = tmp_path / "many.json"
    many.write_text(json.dumps([record(f"v{i}") for i in range(5000)]))
    args = ["--db", str(run.db), "hms", "import", str(many), *(["--json"] if as_json else [])]
    code = ("from viewstore import signals\nfrom viewstore.cli import main\n"
            "def first(store, events):  # the signal comes a second after the first record is in\n"
            "    signals.committed.disconnect(first)\n    print('start', flush=True)\n"
            f"signals.committed.connect(first)\nmain({args!r})")
    result = interrupted(code)
    assert result.returncode == 130 and result.stdout == "", result.stderr
    said = json.loads(result.stderr)["error"]["message"] + "\n" if as_json else result.stderr
    found = re.fullmatch(r"interrupted after (\d+) of 5000 records: each record is its own transaction, so the "
                         r"views imported stay, and a run again skips them\n", said)
    assert found is not None, said
    with ViewStore(run.db) as store:
        done, imported = int(found[1]), len(store.list_views())
    assert done < 5000 and imported in (done, done + 1)  # the record under way was committed whole, or not at all
    if as_json:
        assert json.loads(result.stderr)["error"]["type"] == "KeyboardInterrupt"
        return
    report = json.loads(run("hms", "import", str(many), "--json"))
    assert (len(report["imported"]), len(report["skipped"])) == (5000 - imported, imported)


def test_ctrl_c_in_a_run_again_counts_the_records_skipped_as_done(tmp_path):
    """Ctrl-C in a run again of an import: the records it skipped as in the store already are done
    too (a run again skips them again), so they are counted with those imported."""
    db, many = tmp_path / "hms.db", tmp_path / "many.json"
    many.write_text(json.dumps([record(f"v{i}") for i in range(20)]))
    args = ["--db", str(db), "hms", "import", str(many)]
    assert CliRunner().invoke(main, args).exit_code == 0
    many.write_text(json.dumps([record(f"v{i}") for i in range(5000)]))
    code = ("from viewstore import signals\nfrom viewstore.cli import main\n"
            "def first(store, events):  # the signal comes a second after the first new record is in\n"
            "    signals.committed.disconnect(first)\n    print('start', flush=True)\n"
            f"signals.committed.connect(first)\nmain({args!r})")
    result = interrupted(code)
    assert result.returncode == 130, result.stderr
    found = re.fullmatch(r"interrupted after (\d+) of 5000 records: each record is its own transaction, so the "
                         r"views imported stay, and a run again skips them\n", result.stderr)
    assert found is not None, result.stderr
    with ViewStore(db) as store:
        done, stored = int(found[1]), len(store.list_views())
    assert 20 < stored < 5000 and stored in (done, done + 1)  # the 20 skipped are among those done


def test_a_store_that_cannot_be_opened_ends_a_many_record_import_with_its_error(tmp_path):
    many = tmp_path / "many.json"
    many.write_text(json.dumps([record("a"), record("b")]))
    (tmp_path / "folder.db").mkdir()
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "folder.db"), "hms", "import", str(many)])
    assert result.exit_code == 1 and result.output.startswith("error: cannot open") \
        and result.output.count("\n") == 1, result.output


def test_json_reports_escape_lone_surrogates_that_no_terminal_can_print(tmp_path):
    many = tmp_path / "many.json"
    many.write_text('[{"dbName": "db", "tableName": "iv", "tableType": "VIRTUAL_VIEW", "parameters": '
                    '{"table_type": "ICEBERG-VIEW", "metadata_location": "/no/lone\\ud800.json"}}, '
                    '{"dbName": "db", "tableName": "t", "tableType": "MANAGED_TABLE", "parameters": {}}]')
    script = ("import sys; from viewstore.cli import main; "
              f"sys.argv = ['viewstore', '--db', {str(tmp_path / 's.db')!r}, "
              f"'hms', 'import', {str(many)!r}, '--json']; "
              "main()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert result.returncode == 1 and b"Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert "/no/lone\ud800.json" in report["failed"][0]["message"]  # the very text, escaped in the JSON


def test_errors_are_one_line_and_write_nothing(run, tmp_path):
    ViewStore(run.db).close()  # a store, empty (a failed import into no store leaves none)
    many = tmp_path / "many.json"
    many.write_text(json.dumps([record("a"), record("b")]))
    not_json = tmp_path / "bad.json"
    not_json.write_text("{nope")
    scalar = tmp_path / "scalar.json"
    scalar.write_text("[1]")
    number = tmp_path / "number.json"
    number.write_text("7")
    table = tmp_path / "table.json"
    table.write_text(json.dumps({**record("t"), "tableType": "MANAGED_TABLE"}))
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"dbName": "café"}'.encode("latin-1"))
    deep = tmp_path / "deep.json"  # nested deeper than Python's JSON reader goes (it raised RecursionError)
    deep.write_text("[" * 100_000 + "]" * 100_000)
    cases = [
        (["hms", "import", str(tmp_path / "missing.json")], "cannot read"),
        (["hms", "import", str(latin1)], f"cannot read {latin1}: 'utf-8' codec can't decode byte 0xe9"),
        # a name no file can have (a lone surrogate: only a program calling main() can pass one)
        (["hms", "import", "x\ud800.json"], "cannot read x\\ud800.json: 'utf-8' codec can't encode character"),
        (["hms", "import", str(not_json)], "is not JSON"),
        (["hms", "import", str(deep)], "is not JSON: maximum recursion depth exceeded"),
        (["hms", "import", str(scalar)], "[0]: an HMS record must be a JSON object"),
        (["hms", "import", str(number)], f"error: {number}: an HMS record must be a JSON object, not int"),
        (["hms", "import", str(table)], "tableType: 'MANAGED_TABLE' is not a view"),
        (["hms", "import", str(TRINO_FILE)], "identifier: the record has no dbName and tableName"),
        (["hms", "import", str(many), "s.v"], "holds 2 records; IDENTIFIER and --metadata apply to one record only"),
        (["hms", "import", str(many), "--metadata", str(not_json)],
         "holds 2 records; IDENTIFIER and --metadata apply to one record only"),
        (["hms", "export", "sales.nope", "--engine", "trino"], "no such view"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(main, ["--db", str(run.db), *args], catch_exceptions=False)
        assert result.exit_code == 1, (args, result.output)
        assert result.output.startswith("error: ") and message in result.output, (args, result.output)
        assert result.output.count("\n") == 1 and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["--db", str(run.db), "hms", "import", str(deep), "--json"],
                                catch_exceptions=False)
    error = json.loads(result.stderr)["error"]
    assert (result.exit_code, result.stdout, error["type"], error["exit_code"]) == (1, "", "ValidationError", 1)
    assert error["message"].startswith(f"{deep} is not JSON")
    with ViewStore(run.db) as store:
        assert store.event_count() == 0
    run("hms", "import", str(SPARK_FILE))
    result = CliRunner().invoke(main, ["--db", str(run.db), "hms", "export", "sales.v_customers", "--engine",
                                       "trino"])
    assert result.output.strip() == (
        "error: dialect: writing a trino view needs trino SQL, but the view only has: spark (SQL is not translated "
        "between dialects: add the view's trino SQL first, with ViewChange.add_representation or "
        "'viewstore alter sales.v_customers --add-representation trino SQL')")
    result = CliRunner().invoke(main, ["--db", str(run.db), "hms", "export", "sales.v_customers", "--engine", "x"])
    assert result.exit_code == 2 and "trino" in result.output  # click names the choices
    result = CliRunner().invoke(main, ["--db", str(run.db), "hms", "import", str(SPARK_FILE), "--metadata", "m\ud800"])
    assert result.exit_code == 2 and "Invalid value for '--metadata': 'm\\ud800' is not a path this system can name" \
        in result.output


def test_a_metadata_location_for_another_engine_is_a_usage_error(run, tmp_path):
    """Options that exclude each other: exit code 2 before the store is opened, as for every command."""
    for db in (run.db, tmp_path / "typo.db"):
        result = CliRunner().invoke(main, ["--db", str(db), "hms", "export", "sales.v", "--engine", "spark",
                                           "--metadata-location", "s3://wh/x.metadata.json"])
        assert result.exit_code == 2, result.output
        assert result.output.splitlines()[-1] == "Error: --metadata-location is for --engine iceberg only, not spark"
    assert not (tmp_path / "typo.db").exists()


def test_every_hms_command_has_an_example():
    group = main.get_command(click.Context(main), "hms")
    assert isinstance(group, click.Group) and "Examples:" in group.help
    ctx = click.Context(group)
    commands = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    assert set(commands) == {"import", "export"}
    for name, command in commands.items():
        assert "Examples:" in command.help and f"viewstore hms {name}" in command.help, name


def test_sqlglots_warnings_about_the_views_sql_do_not_reach_the_terminal(tmp_path):
    """sqlglot logs a warning for a JSON path it cannot read (which Spark, Hive and Flink accept: the call
    returns NULL); with no logging set up Python printed it on stderr at every parse of the view's SQL."""
    db = tmp_path / "quiet.db"
    sql = "SELECT get_json_object(j, '$.a[') AS x FROM orders"
    with ViewStore(db, actor="carol") as store:
        store.create_view("sales.j", columns=[Column("x", "string")], default_namespace=["crm"],
                          representations=[("hive", sql), ("flink", sql)])

    def viewstore(*args):
        result = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(db), *args], capture_output=True,
                                text=True, timeout=60)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        return result.stdout

    expanded = "SELECT get_json_object(j, '$.a[') AS x FROM `crm`.orders"
    assert json.loads(viewstore("hms", "export", "sales.j", "--engine", "hive", "--json"))["viewExpandedText"] \
        == expanded
    flink = tmp_path / "flink.json"
    flink.write_text(viewstore("hms", "export", "sales.j", "--engine", "flink", "--json"))
    assert json.loads(flink.read_text())["viewExpandedText"] == expanded
    viewstore("hms", "import", str(flink), "sales.copy")  # reads the namespace back from the expanded text
    assert json.loads(viewstore("show", "sales.copy", "--json"))["default_namespace"] == ["crm"]


def test_export_json_is_plain_on_a_terminal_where_the_record_without_it_is_highlighted(run):
    """--json is for scripts: plain JSON on a terminal too (--help: 'instead of highlighted JSON')."""
    run("hms", "import", str(SPARK_FILE))
    args = ["--db", str(run.db), "hms", "export", "sales.v_customers", "--engine", "spark"]
    plain = CliRunner().invoke(main, [*args, "--json"], env={"FORCE_COLOR": "1"})  # rich's switch for a terminal
    highlighted = CliRunner().invoke(main, args, env={"FORCE_COLOR": "1"})
    assert plain.exit_code == highlighted.exit_code == 0, (plain.output, highlighted.output)
    assert "\x1b" not in plain.stdout and json.loads(plain.stdout)["tableName"] == "v_customers"
    assert "\x1b[" in highlighted.stdout


def test_the_skipped_table_keeps_a_records_long_name_whole_while_its_reason_folds(run, tmp_path, monkeypatch):
    """The README: the tables of the hms reports keep record names whole while other columns fold."""
    name = "orders_by_region_and_day_with_returns_and_more"
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([record("a"), {**record(name), "tableType": "MANAGED_TABLE"}]))
    monkeypatch.setenv("COLUMNS", "80")
    out = run("hms", "import", str(dump))
    assert any(line.startswith(f"│ sales.{name} │") for line in out.splitlines()), out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_run_again_counts_the_views_in_the_store_already_and_lists_what_says_something(run, tmp_path):
    """A second import of a dump listed one `exists` row for each view it had imported before
    (5,000 rows for 5,000 views), which hid the rows that mattered. The table lists the records
    that say something (imported, a table skipped, a failure) and counts those already in the
    store in one line; --json still lists every record, each by both name and identifier."""
    dump = tmp_path / "dump.json"
    table = {"dbName": "Sales", "tableName": "Orders", "tableType": "MANAGED_TABLE", "parameters": {}}
    dump.write_text(json.dumps([table, *(record(f"v{i}") for i in range(50))]))
    run("hms", "import", str(dump))
    broken = {**record("broken"), "parameters": {"spark.sql.create.version": "4.3.0",
                                                 "spark.sql.sources.schema": "{not json"}}
    dump.write_text(json.dumps([table, *(record(f"v{i}") for i in range(50)), record("new"), broken]))
    text = run("hms", "import", str(dump), code=1)
    lines = text.splitlines()
    assert [line for line in lines if "sales.v" in line] == [], text  # no row for a view in the store already
    assert any(line.startswith("│ sales.new │ spark  │") for line in lines), text
    assert any(line.startswith("│ Sales.Orders │ not-a-view │ a MANAGED_TABLE") for line in lines), text
    assert any(line.startswith("│ sales.broken │ ValidationError │") for line in lines), text
    assert lines[-2:] == ["skipped as in the store already: 50 views (--json lists them)", lines[-1]]
    assert re.fullmatch(r"imported 1, skipped 51, failed 1 \(\d+\.\d\d s\)", lines[-1]), text

    report = json.loads(run("hms", "import", str(dump), "--json", code=1))
    assert report["imported"] == []
    assert report["skipped"][0] == {"name": "Sales.Orders", "reason": "not-a-view", "detail": "a MANAGED_TABLE",
                                    "identifier": "sales.orders"}
    assert report["skipped"][1:] == [{"name": f"sales.{n}", "reason": "exists",
                                      "detail": f"view already exists: sales.{n}", "identifier": f"sales.{n}"}
                                     for n in [*(f"v{i}" for i in range(50)), "new"]]
    (failed,) = report["failed"]
    assert (failed["name"], failed["identifier"], failed["error"]) == ("sales.broken",
                                                                       "sales.broken", "ValidationError")

    dump.write_text(json.dumps([record("newer"), {**record("nameless"), "tableName": ""}]))
    report = json.loads(run("hms", "import", str(dump), "--json", code=1))
    assert report["imported"] == [{"identifier": "sales.newer", "engine": "spark",
                                   "versions": 1, "name": "sales.newer"}]
    (failed,) = report["failed"]
    assert (failed["name"], failed["identifier"]) == ("record 1", None)  # a record that names no view


def test_a_run_again_that_only_meets_views_in_the_store_prints_no_skipped_table(tmp_path):
    """Every record of the dump is in the store already: the skipped table would have no row (those
    are counted in a line of their own), so it is not printed."""
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([record(f"v{i}") for i in range(3)]))
    args = ["--db", str(tmp_path / "s.db"), "hms", "import", str(dump)]
    assert CliRunner().invoke(main, args).exit_code == 0
    again = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    lines = again.stdout.splitlines()
    assert lines[0] == "skipped as in the store already: 3 views (--json lists them)", again.stdout
    assert len(lines) == 2 and re.fullmatch(r"imported 0, skipped 3, failed 0 \(\d+\.\d\d s\)", lines[1]), again.stdout
