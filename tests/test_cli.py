"""The CLI: a thin layer over the API, JSON for scripts, one-line errors with exit code 1, usage
errors (a command line that cannot be right) with click's exit code 2."""

import datetime as dt
import importlib.metadata
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from interrupted import RUNAWAY, interrupted, interrupted_once_printed
from rich.cells import cell_len

from viewstore import Column, ViewChange, ViewStore
from viewstore.errors import ValidationError
from viewstore.cli import main, view_to_json


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.delenv("VIEWSTORE_DB", raising=False)
    monkeypatch.delenv("VIEWSTORE_ACTOR", raising=False)
    db = tmp_path / "cli.db"
    runner = CliRunner()

    def invoke(*args, code=0):
        result = runner.invoke(main, ["--db", str(db), "--actor", "carol", *args], catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    invoke.db = db
    return invoke


def create(run, ident="s.v", *extra):
    return run("create", ident, "--sql", "SELECT 1 AS x", "--column", "x:int:the x", *extra)


def read(db, method, *args):
    """``store.method(*args)`` of a store opened on ``db`` for that one read (and closed again)."""
    with ViewStore(db) as store:
        return getattr(store, method)(*args)


def test_create_show_json(run):
    create(run, "s.v", "--comment", "hello", "--property", "k=v", "--summary", "engine-name=spark",
           "--default-catalog", "cat", "--security-mode", "invoker")
    data = json.loads(run("show", "s.v", "--json"))
    assert data["identifier"] == "s.v" and data["comment"] == "hello"
    assert data["columns"] == [{"name": "x", "type": "int", "comment": "the x", "nullable": True}]
    assert data["representations"] == [{"dialect": "spark", "sql": "SELECT 1 AS x"}]
    assert data["properties"] == {"k": "v", "comment": "hello"} and data["security_mode"] == "INVOKER"
    assert data["default_catalog"] == "cat" and data["default_namespace"] == ["s"]
    assert data["audit"]["creator"] == "carol"
    text = run("show", "s.v")
    assert "s.v" in text and "SELECT 1 AS x" in text


def test_replace_keeps_the_security_mode_unless_it_is_given(run):
    create(run, "s.v", "--security-mode", "invoker")
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")
    assert json.loads(run("show", "s.v", "--json"))["security_mode"] == "INVOKER"
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int", "--security-mode", "definer")
    assert json.loads(run("show", "s.v", "--json"))["security_mode"] == "DEFINER"
    create(run, "s.w")
    assert json.loads(run("show", "s.w", "--json"))["security_mode"] == "DEFINER"


def test_sql_file_nested_column_types_and_list(run, tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT named_struct('a', 1) AS s\n")
    run("create", "s.n", "--sql-file", str(sql), "--column", "s:struct<a: int, b: string>:nested one")
    data = json.loads(run("show", "s.n", "--json"))
    assert data["columns"][0]["type"] == "struct<a: int, b: string>" and data["columns"][0]["comment"] == "nested one"
    assert data["representations"][0]["sql"] == "SELECT named_struct('a', 1) AS s\n"
    create(run, "t.v")
    assert json.loads(run("list", "--json")) == ["s.n", "t.v"]
    assert run("list", "t").split() == ["t.v"]


def test_a_property_value_may_hold_an_equals_sign_the_key_is_all_before_the_first(run):
    create(run, "s.v", "--property", "filter=region = 'EU'", "--summary", "engine-name=spark=4")
    data = json.loads(run("show", "s.v", "--json"))
    assert data["properties"] == {"filter": "region = 'EU'"}
    assert data["versions"][-1]["summary"]["engine-name"] == "spark=4"


def test_create_keeps_every_representation_given(run):
    run("create", "s.v", "--sql", "SELECT 1 AS x", "--representation", "trino", "SELECT 2 AS x",
        "--representation", "hive", "SELECT 3 AS x", "--column", "x:int")
    data = json.loads(run("show", "s.v", "--json"))
    assert [(r["dialect"], r["sql"]) for r in data["representations"]] == [
        ("spark", "SELECT 1 AS x"), ("trino", "SELECT 2 AS x"), ("hive", "SELECT 3 AS x")]


def test_a_column_comment_may_hold_colons_it_is_all_after_the_type(run):
    run("create", "s.c", "--sql", "SELECT 1 AS x", "--column", "x:int:note: in EUR: net",
        "--column", "m:map<string, int>:a: b")
    columns = json.loads(run("show", "s.c", "--json"))["columns"]
    assert [(c["type"], c["comment"]) for c in columns] == [("int", "note: in EUR: net"), ("map<string, int>", "a: b")]


def test_alter_is_one_commit(run):
    create(run)
    run("alter", "s.v", "--add-representation", "trino", "SELECT 1 x", "--comment", "c", "--set", "a=1",
        "--set", "b=2", "--unset", "nothing")
    events = json.loads(run("history", "s.v", "--json"))
    assert len({e["commit_id"] for e in events[1:]}) == 1
    assert [e["type"] for e in events] == ["view.created", "view.comment_updated", "view.properties_set",
                                           "view.properties_set", "view.representation_added"]
    run("alter", "s.v", "--update-representation", "trino", "SELECT 2 x", "--remove-representation", "spark")
    data = json.loads(run("show", "s.v", "--json"))
    assert data["representations"] == [{"dialect": "trino", "sql": "SELECT 2 x"}]
    run("alter", "s.v", "--comment", "")
    assert json.loads(run("show", "s.v", "--json"))["comment"] is None


def test_history_and_audit_json_carry_each_events_own_numbers(run):
    create(run, "s.other")  # a second stream, so a view's positions and stream versions differ
    create(run, "s.v")
    run("alter", "s.v", "--set", "k=v")
    for events in (json.loads(run("history", "s.v", "--json")), json.loads(run("audit", "--view", "s.v", "--json"))):
        assert [(e["position"], e["stream_version"]) for e in events] == [(2, 1), (3, 2)]
        assert [e["view"] for e in events] == ["s.v", "s.v"] and events[1]["payload"] == {"updates": {"k": "v"}}


def test_errors_are_one_line_with_exit_code_1(run):
    create(run)
    for args in (["show", "s.nope"], ["create", "s.v", "--sql", "SELECT 1"], ["create", "bad", "--sql", "x"],
                 ["create", "s.w", "--sql", "x", "--column", "x:blob9"], ["rollback", "s.v", "7"],
                 ["alter", "s.v", "--remove-representation", "spark"],
                 ["import", "missing.json", "s.i"], ["drop", "s.nope"], ["history", "s.nope"],
                 ["audit", "--view", "s.nope"], ["show", "s.v", "--at-event", "99"],
                 ["alter", "s.v", "--comment", "x", "--expected-version", "9"]):
        out = run(*args, code=1)
        assert out.startswith("error: ") and out.count("\n") == 1 and "Traceback" not in out, (args, out)
    assert read(run.db, "event_count") == 1


@pytest.mark.parametrize("args", [["create", "s.w", "--sql", "SELECT 1", "--dialect", " spark"],
                                  ["replace", "s.w", "--sql", "SELECT 1", "--representation", " spark", "SELECT 1"],
                                  ["alter", "s.v", "--add-representation", " spark", "SELECT 1"]])
def test_a_bad_dialect_is_one_sentence_with_exit_code_1_as_a_bad_identifier_is(run, args):
    """A dialect is the view's data, as its identifier and column types are: the model refuses it,
    exit code 1, said once ('bad representation: dialect: bad dialect' said it three times)."""
    create(run)
    assert run(*args, code=1) == "error: bad dialect ' spark': it must not be empty, begin or end with whitespace\n"
    assert read(run.db, "event_count") == 1


def test_rollback_to_a_negative_version_id_says_what_it_says_of_any_version_the_view_lacks(run):
    """'rollback s.v -1' was click's 'No such option: -1'; a negative number is a version id the view
    lacks, as 0 and 7 are. A word that is no number stays an option (or a usage error)."""
    create(run)
    for version in ("0", "7", "-1", str(-(2**63))):
        assert run("rollback", "s.v", version, code=1) == f"error: view s.v has no version {version}; it has 1\n"
    for args in (["-1", "--json"], ["--json", "-1"], ["--expected-version", "1", "-1", "--json"],
                 ["--json", "--", "-1"]):
        error = json.loads(CliRunner().invoke(main, ["--db", str(run.db), "rollback", "s.v", *args]).stderr)["error"]
        assert error == {"type": "ValidationError", "message": "view s.v has no version -1; it has 1",
                         "exit_code": 1}, args
    assert usage_error(run("rollback", "s.v", "1", "--expected-version", "-1", code=2),
                       "--expected-version must be a whole number of 0 or more, not '-1'")
    assert usage_error(run("rollback", "s.v", "-x", code=2), "No such option '-x'")
    assert usage_error(run("rollback", "s.v", "-1", "2", code=2), "Got unexpected extra argument")
    assert read(run.db, "event_count") == 1


def usage_error(out, message):
    """click's usage error (exit code 2): the usage line, where to get help, and the error, as the
    values click checks itself print them."""
    lines = out.splitlines()
    assert re.match(r"Usage: (viewstore|main) ", lines[0]) and re.match(r"Try '(viewstore|main) ", lines[1]), out
    assert lines[-1].startswith("Error: ") and message in lines[-1] and "Traceback" not in out, out
    return True


@pytest.mark.parametrize("args, message", [
    # values not of their option's form: the CLI's own forms, as click's own types (a number, a choice)
    (["audit", "--since", "not a time"], "bad --since 'not a time': use ISO 8601"),
    (["audit", "--limit", "-1"], "--limit must be a whole number of 0 or more, not '-1'"),
    (["audit", "--type", "created"], "Invalid value for '--type': 'created' is not one of 'view.comment_updated',"),
    (["show", "s.v", "--as-of", "soon"], "bad --as-of 'soon'"),
    (["create", "s.w", "--sql", "SELECT 1", "--column", "novalue"], "bad --column 'novalue': use NAME:TYPE"),
    (["create", "s.w", "--sql", "SELECT 1", "--property", "novalue"], "bad --property 'novalue': use KEY=VALUE"),
    (["create", "s.w", "--sql", "SELECT 1", "--summary", "novalue"], "bad --summary 'novalue': use KEY=VALUE"),
    (["create", "s.w", "--sql", "SELECT 1", "--security-mode", "nobody"], "Invalid value for '--security-mode'"),
    (["alter", "s.v", "--set", "novalue"], "bad --set 'novalue': use KEY=VALUE"),
    (["create", "s.w", "--sql-file", "no-such-file.sql"], "Invalid value for '--sql-file'"),
    # a path no file can have (a lone surrogate: only a program calling main() can pass one)
    (["create", "s.w", "--sql-file", "x\ud800.sql"],
     "Invalid value for '--sql-file': 'x\\ud800.sql' is not a path this system can name (surrogates not allowed)"),
    (["import", "x\ud800.json", "s.w"], "Invalid value for 'PATH': 'x\\ud800.json' is not a path this system can name"),
    (["export", "s.v", "--location", "x\ud800"], "Invalid value for '--location': 'x\\ud800' is not a path this"),
    # options missing, or excluding each other
    (["create", "s.w"], "a view needs SQL: give --sql, --sql-file or --representation"),
    (["create", "s.w", "--sql", "SELECT 1", "--sql-file", "-"], "give --sql or --sql-file, not both"),
    (["create", "s.w", "--sql", "", "--sql-file", "-"], "give --sql or --sql-file, not both"),
    (["alter", "s.v"], "nothing to change: give at least one change option"),
    (["alter", "s.v", "--set", "k=1", "--unset", "k"], "--set and --unset of 'k' in one command"),
    (["alter", "s.v", "--update-representation", "spark", "SELECT 2", "--remove-representation", "spark"],
     "--update-representation and --remove-representation of 'spark' in one command"),
    (["show", "s.v", "--as-of", "0", "--at-event", "1"], "give --as-of or --at-event, not both"),
    (["show", "s.v", "--as-of", "now", "--at-event", "0"], "give --as-of or --at-event, not both"),
    (["diff", "s.v", "--from", "0", "--from-event", "1"], "give --from or --from-event, not both"),
    (["diff", "s.v"], "give --from or --from-event: the moment to compare from"),
    (["diff", "s.v", "--to", "0"], "give --from or --from-event: the moment to compare from"),
    (["diff", "s.v", "--from", "0", "--to", "0", "--to-event", "1"], "give --to or --to-event, not both"),
    (["diff", "s.v", "--from", "soon"], "bad --from 'soon'"),
    (["diff", "s.v", "--from-event", "1", "--to", "later"], "bad --to 'later'"),
    (["diff", "s.v", "--from-event", "-1"], "--from-event must be a whole number of 0 or more, not '-1'"),
    (["audit", "--since", "2026-11-26", "--until", "2026-11-20"],
     "--since 2026-11-26 is after --until 2026-11-20: no event can match (swapped?)"),
    (["audit", "--since-position", "5", "--until-position", "4"],
     "--since-position 5 is after --until-position 4: no event can match (swapped?)"),
    (["audit", "--since-position", "-1"], "--since-position must be a whole number of 0 or more, not '-1'"),
    (["history", "s.v", "--since-position", "5", "--until-position", "4"],
     "--since-position 5 is after --until-position 4: no event can match (swapped?)"),
    (["history", "s.v", "--until-position", "-1"], "--until-position must be a whole number of 0 or more, not '-1'"),
    (["show"], "Missing argument 'IDENTIFIER'"), (["nosuchcommand"], "No such command 'nosuchcommand'"),
])
def test_a_command_line_that_cannot_be_right_is_a_usage_error_with_exit_code_2(run, args, message):
    """Whatever the store holds: a value not of its option's form, or options that exclude each
    other, is click's usage error, as a number out of range is; what the store refuses exits 1."""
    create(run)
    assert usage_error(run(*args, code=2), message)
    assert read(run.db, "event_count") == 1


def test_a_usage_error_on_a_missing_db_is_still_a_usage_error_and_starts_no_file(run):
    """The command line is checked before the store is opened: the exit code does not depend on --db."""
    for args in (["alter", "s.v"], ["audit", "--since", "x"], ["create", "s.v", "--column", "x:int"],
                 ["show", "s.v", "--as-of", "x"], ["alter", "s.v", "--set", "k"], ["diff", "s.v"]):
        assert usage_error(run(*args, code=2), "")
    assert not run.db.exists()


def test_history_audit_as_of_rollback_rename_drop(run):
    create(run)
    first = json.loads(run("history", "s.v", "--json"))[0]
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")
    at_first = json.loads(run("show", "s.v", "--json", "--at-event", str(first["position"])))
    assert at_first["current_version_id"] == 1 and at_first["stream_version"] == 1
    last = json.loads(run("history", "s.v", "--json"))[-1]  # a time is to the millisecond: its last commit
    assert json.loads(run("show", "s.v", "--json", "--as-of", str(last["occurred_at_ms"])))["current_version_id"] == 2
    assert "SELECT 2 AS x" in run("show", "s.v", "--at-event", str(last["position"]))  # the table, too
    out = run("show", "s.v", "--at-event", "999", code=1)
    assert out.startswith("error: ") and out.count("\n") == 1, out
    assert usage_error(run("show", "s.v", "--at-event", str(last["position"]), "--as-of", "0", code=2), "not both")
    assert "is at version 1" in run("rollback", "s.v", "1")
    audit = json.loads(run("audit", "--actor", "carol", "--type", "view.rolled_back", "--json"))
    assert [e["type"] for e in audit] == ["view.rolled_back"] and audit[0]["payload"]["current_version_id"] == 1
    assert run("audit", "--actor", "nobody", "--json") == "[]\nnote: no event in the log is by actor 'nobody'\n"
    assert len(json.loads(run("audit", "--view", "s.v", "--since", first["occurred_at"], "--json"))) == 3
    assert "3 events" in run("audit")
    latest = json.loads(run("audit", "--newest-first", "--limit", "2", "--json"))
    assert [e["type"] for e in latest] == ["view.rolled_back", "view.replaced"]
    table = run("audit", "--newest-first")
    assert [int(pos) for pos in re.findall(r"^(?:│ )?(\d+) +(?:│ )?\d{4}-", table, re.M)] == [3, 2, 1]
    run("rename", "s.v", "s.w")
    run("drop", "s.w")
    assert "nothing dropped" in run("drop", "s.w", "--if-exists")
    assert [e["type"] for e in json.loads(run("history", "s.w", "--json"))][-2:] == ["view.renamed", "view.dropped"]


def test_history_of_a_name_other_views_had_too_says_so_on_stderr(run):
    """history shows one view's events: re-created under the name of one renamed away (or dropped),
    the name's earlier view was not in the answer, nor said to exist."""
    def invoke(*args):
        result = CliRunner().invoke(main, ["--db", str(run.db), "--actor", "carol", *args])
        assert result.exit_code == 0, result.output
        return result.stdout, result.stderr

    create(run, "fin.ledger")
    run("rename", "fin.ledger", "fin.ledger_old")
    run("rename", "fin.ledger_old", "archive.ledger")
    assert invoke("history", "fin.ledger")[1] == ""  # one view had it: nothing to say
    create(run, "fin.ledger")
    out, err = invoke("history", "fin.ledger", "--json")
    assert [e["type"] for e in json.loads(out)] == ["view.created"]  # the new view's, as before
    assert err == ("note: fin.ledger was also the name of 1 other view; 'viewstore audit --view fin.ledger' lists "
                   "the events of every view that had it\n")
    run("drop", "fin.ledger")
    create(run, "fin.ledger")
    assert "also the name of 2 other views;" in invoke("history", "fin.ledger")[1]
    assert len(json.loads(run("audit", "--view", "fin.ledger", "--json"))) == 6  # what the note points to
    for name in ("archive.ledger", "fin.ledger_old"):  # the first view's names, no other view's
        assert invoke("history", name)[1] == ""


def test_audit_of_a_view_name_that_never_existed_is_an_error_not_zero_events(run):
    create(run)
    run("rename", "s.v", "s.w")
    for args in (["audit", "--view", "s.nope"], ["audit", "--view", "s.nope", "--actor", "carol", "--limit", "1"]):
        out = run(*args, code=1)
        assert out == "error: no view was ever named s.nope\n", (args, out)
    assert json.loads(run("audit", "--view", "s.nope", "--json", code=1))["error"]["message"] == \
        "no view was ever named s.nope"
    assert len(json.loads(run("audit", "--view", "s.v", "--json"))) == 2  # the old name: its view's events
    assert json.loads(run("audit", "--view", "s.v", "--actor", "carol", "--type", "view.dropped", "--json")) == []
    assert run("audit", "--view", "s.v", "--actor", "carol", "--type", "view.dropped").startswith("0 events")


def test_audit_of_an_actor_with_no_event_in_the_log_says_so_on_stderr(run):
    """An actor's name mistyped read as an actor who changed nothing: "0 events", and nothing more."""
    create(run)
    run("--actor", "user03", "create", "s.w", "--sql", "SELECT 1 AS x", "--column", "x:int")

    def invoke(*args):
        result = CliRunner().invoke(main, ["--db", str(run.db), *args])
        assert result.exit_code == 0, result.output
        return result.stdout, result.stderr

    note = "note: no event in the log is by actor 'usr03' (did you mean 'user03'?)\n"
    assert invoke("audit", "--actor", "usr03", "--json") == ("[]\n", note)
    out, err = invoke("audit", "--actor", "usr03", "--view", "s.v", "--limit", "1")
    assert out.startswith("0 events") and err == note
    assert invoke("audit", "--actor", "zz-top")[1] == "note: no event in the log is by actor 'zz-top'\n"
    # an actor with events, none of them matching, is answered as before: no note
    assert invoke("audit", "--actor", "user03", "--type", "view.dropped", "--json") == ("[]\n", "")
    assert invoke("audit", "--actor", "user03", "--since", "9999-01-01")[1] == ""
    assert json.loads(invoke("audit", "--actor", "user03", "--json")[0])[0]["view"] == "s.w"


def test_export_follows_the_codec_property_unless_told(run, tmp_path):
    create(run)
    loc = str(tmp_path / "loc")
    assert not run("export", "s.v", "--location", loc).strip().endswith(".gz.metadata.json")
    run("alter", "s.v", "--set", "write.metadata.compression-codec=gzip")
    assert run("export", "s.v", "--location", loc).strip().endswith(".gz.metadata.json")
    plain = run("export", "s.v", "--location", loc, "--no-gzip").strip()
    assert plain.endswith(".metadata.json") and not plain.endswith(".gz.metadata.json")


def test_export_prints_the_absolute_path_under_the_location_the_file_records(run, tmp_path, monkeypatch):
    """A relative --location printed a relative path where the default printed an absolute one; the
    file records its location absolute, symbolic links resolved, and the path printed starts with it."""
    create(run)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for location, recorded in (("loc", tmp_path / "loc"), ("link/x", tmp_path / "real" / "x"),
                               (None, tmp_path / "warehouse" / "s" / "v")):
        args = ["export", "s.v"] + (["--location", location] if location else [])
        printed = Path(run(*args).rstrip("\n"))
        assert printed.is_absolute() and printed.parent == recorded / "metadata" and printed.is_file(), printed
        assert json.loads(printed.read_text())["location"] == str(recorded)
        assert json.loads(run(*args, "--json"))["path"] == str(printed)  # unchanged: the same file again


def test_a_path_a_program_gives_through_default_map_is_taken_as_its_text(run, tmp_path):
    """click's default_map (a program's defaults for the options and arguments) may give a location
    or a file as a path object: it is read as the same text on the command line is, where checking
    it for blanks raised AttributeError ('PosixPath' object has no attribute 'strip')."""
    create(run)
    result = CliRunner().invoke(main, ["--db", str(run.db), "export", "s.v"],
                                default_map={"export": {"location": tmp_path / "loc"}})
    assert result.exit_code == 0 and result.exception is None, result.output
    written = Path(result.output.rstrip("\n"))
    assert written.parent == (tmp_path / "loc" / "metadata").resolve() and written.is_file()
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "other.db"), "import", "--json"],
                                default_map={"import": {"path": written, "identifier": "s.w"}})
    assert result.exit_code == 0 and result.exception is None, result.output
    assert json.loads(result.output)["identifier"] == "s.w"


def test_export_import_rebuild(run, tmp_path, conformance):
    create(run)
    out = run("export", "s.v", "--location", str(tmp_path / "loc"), "--gzip").strip()
    assert out.endswith(".gz.metadata.json") and (tmp_path / "loc" / "metadata").is_dir()
    run("import", str(conformance / "iceberg-view" / "ValidViewMetadata.json"), "s.imported")
    assert json.loads(run("show", "s.imported", "--json"))["current_version_id"] == 2
    assert run("rebuild") == "rebuilt projections from 3 events: they matched the log\n"
    assert json.loads(run("rebuild", "--json")) == {"events": 3, "repaired": {
        "views": 0, "view_versions": 0, "view_version_log": 0, "view_snapshots": 0}}
    conn = sqlite3.connect(tmp_path / "cli.db")
    with conn:
        conn.execute("UPDATE views SET properties = '{}'")
    conn.close()
    # s.v had a property; s.imported has none
    assert run("rebuild") == "rebuilt projections from 3 events: repaired 1 row (views 1)\n"


_OPENS = """
import sys
from viewstore.cli import main
path = sys.argv[1]
opened = []
sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and str(args[0]) == path else None)
code = main(sys.argv[2:], standalone_mode=False)  # an exit code, or None
print(len(opened), file=sys.stderr)
sys.exit(code or 0)
"""


def test_import_reads_the_file_once_into_a_store_there_and_first_where_it_would_start_one(run, tmp_path, conformance):
    """Import reads the metadata file once (0.7 s of a 10,000-version history's 3.6, read twice
    where it started a store); where it would start one, it reads it before, so that a file that
    is not view metadata starts no store."""
    good = str(conformance / "iceberg-view" / "ValidViewMetadata.json")
    bad = tmp_path / "bad.metadata.json"
    bad.write_text("{}")
    fresh = tmp_path / "fresh.db"

    def opens(path, db, *args, code=0):
        result = subprocess.run([sys.executable, "-c", _OPENS, str(path), "--db", str(db), "import", str(path), *args],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == code, result.stderr
        return result

    assert opens(good, fresh, "s.a").stderr == "1\n"  # no store yet: read first, and imported from what was read
    create(run)
    assert opens(good, run.db, "s.b", "--json").stderr == "1\n"  # a store there: read as it imports
    refused = opens(bad, tmp_path / "none.db", "s.c", code=1)
    assert refused.stderr == f"error: {bad}: Cannot parse missing string: view-uuid\n1\n"
    assert not (tmp_path / "none.db").exists()
    assert run("--db", str(fresh), "import", str(bad), "s.c", code=1) == \
        f"error: {bad}: Cannot parse missing string: view-uuid\n"


_VERSIONS_AS_IT_WRITES = """
import gc, sys
from viewstore import ViewVersion, signals
from viewstore.cli import main
held = []



def writing(sender, events):
    held.append(sum(isinstance(o, ViewVersion) for o in gc.get_objects()))


signals.before_commit.connect(writing)
code = main(sys.argv[1:], standalone_mode=False)
print(held, file=sys.stderr)
sys.exit(code or 0)
"""


def test_import_into_a_new_store_lets_go_of_the_files_versions_before_it_writes(run, tmp_path, conformance):
    """The file read before a store is started is handed to import_iceberg, not kept: as the import
    writes, only its events' versions are alive (the file's 10,000 versions stayed, 28 MB more), as
    into a store there, where import_iceberg reads the file itself."""
    good = str(conformance / "iceberg-view" / "ValidViewMetadata.json")  # two versions
    create(run)
    for db, name in ((tmp_path / "fresh.db", "s.a"), (run.db, "s.b")):
        result = subprocess.run([sys.executable, "-c", _VERSIONS_AS_IT_WRITES, "--db", str(db), "import", good, name],
                                capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stderr) == (0, "[2]\n")


def test_import_of_a_file_named_not_in_utf8_is_refused_as_the_api_refuses_it_and_starts_no_store(run, tmp_path,
                                                                                                     conformance):
    """A name the store cannot record (a lone surrogate, from bytes that are not UTF-8) is refused before
    the file is read or a store started, as import_iceberg refuses it; into a new store the file was read
    and a store started first (or 'cannot read' said where no such file was)."""
    name = str(tmp_path / os.fsdecode(b"v\xff.metadata.json"))
    Path(name).write_bytes((conformance / "iceberg-view" / "ValidViewMetadata.json").read_bytes())
    where = name.index("\udcff")
    message = (f"error: a metadata path must be a path in UTF-8, not {name!r} ('utf-8' codec can't encode character "
               f"'\\udcff' in position {where}: surrogates not allowed)\n")
    assert run("import", name, "s.v", code=1) == message
    assert not run.db.exists()
    create(run)
    assert run("import", name, "s.w", code=1) == message


def test_import_takes_the_security_mode_the_file_cannot_say(run, tmp_path):
    create(run, "s.v", "--security-mode", "invoker")
    path = run("export", "s.v", "--location", str(tmp_path / "loc")).strip()

    def into(db, *args, code=0):  # another store: the file's UUID is taken in this one
        result = CliRunner().invoke(main, ["--db", str(tmp_path / db), "import", path, "s.v", *args])
        assert result.exit_code == code, result.output
        return result.output

    assert json.loads(into("plain.db", "--json"))["security_mode"] == "DEFINER"
    assert json.loads(into("invoker.db", "--security-mode", "INVOKER", "--json"))["security_mode"] == "INVOKER"
    assert "security: INVOKER" in CliRunner().invoke(main, ["--db", str(tmp_path / "invoker.db"), "show", "s.v"]).output
    assert into("bad.db", "--security-mode", "owner", code=2).splitlines()[-1] == \
        "Error: Invalid value for '--security-mode': 'owner' is not one of 'DEFINER', 'INVOKER' (in any case)."
    assert not (tmp_path / "bad.db").exists()


def test_import_takes_the_security_mode_in_any_case(run, tmp_path):
    create(run)
    path = run("export", "s.v", "--location", str(tmp_path / "loc")).strip()
    imported = json.loads(run("--db", str(tmp_path / "b.db"), "import", path, "s.v", "--security-mode", "invoker",
                              "--json"))
    assert imported["security_mode"] == "INVOKER"


@pytest.mark.parametrize("command", ["create", "replace", "import"])
def test_security_mode_choices_are_listed_as_stored(run, command):
    """--help and the message about a bad value name DEFINER and INVOKER as show and --json print
    them; click's case-insensitive choice listed 'definer' and 'invoker'. Any case is still taken."""
    text = " ".join(run(command, "--help").split())
    assert "--security-mode [DEFINER|INVOKER]" in text and "[definer|invoker]" not in text
    assert ("[default: DEFINER]" in text) == (command == "import")
    args = ["import", "x.json", "s.v"] if command == "import" else [command, "s.v", "--sql", "SELECT 1"]
    out = run(*args, "--security-mode", "owner", code=2)
    assert out.splitlines()[-1] == "Error: Invalid value for '--security-mode': 'owner' is not one of 'DEFINER', " \
                                   "'INVOKER' (in any case).", out
    if command != "import":
        assert json.loads(run(*args, "--security-mode", "InVoKeR", "--json"))["security_mode"] == "INVOKER"


def test_export_json_names_the_view_as_stored_whatever_case_it_was_given_in(run, tmp_path):
    create(run, "sales.daily")
    exported = json.loads(run("export", "Sales.DAILY", "--location", str(tmp_path / "loc"), "--json"))
    assert exported["identifier"] == "sales.daily" == json.loads(run("show", "Sales.Daily", "--json"))["identifier"]
    assert Path(exported["path"]).parent == tmp_path / "loc" / "metadata"


def test_rebuild_counts_every_row_it_repaired_in_each_table(run):
    create(run, "s.a", "--property", "k=1")
    create(run, "s.b", "--property", "k=2")
    create(run, "s.c")
    with sqlite3.connect(run.db) as conn:
        conn.execute("UPDATE views SET properties = '{}'")
    conn.close()
    assert run("rebuild") == "rebuilt projections from 3 events: repaired 2 rows (views 2)\n"
    assert run("rebuild") == "rebuilt projections from 3 events: they matched the log\n"


def test_show_of_a_view_whose_projection_is_behind_its_log_fails_until_rebuild(run):
    """`viewstore show` of a view whose views row was put back behind its log (with sqlite3) printed
    the earlier state the row holds; it fails with the CorruptLogError naming rebuild (and the
    command that runs it), exit code 1 (as JSON with --json), and shows the log's state after
    `viewstore rebuild`."""
    create(run)
    run("alter", "s.v", "--comment", "two")
    with sqlite3.connect(run.db) as conn:
        conn.execute("UPDATE views SET stream_version = 1, properties = '{}'")
        (view_id,) = conn.execute("SELECT view_id FROM views").fetchone()
    conn.close()
    message = (f"the projections are behind the log for view s.v ({view_id}): they hold it at stream version 1, "
               "its log goes on to stream version 2; rebuild() repairs them from the log")
    hint = "hint: 'viewstore rebuild' repairs the projections from the log\n"
    assert run("show", "s.v", code=1) == f"error: {message}\n{hint}"
    assert json.loads(run("show", "s.v", "--json", code=1)) == {
        "error": {"type": "DamagedProjectionsError", "message": message, "exit_code": 1}}
    assert run("rebuild") == "rebuilt projections from 2 events: repaired 1 row (views 1)\n"
    assert json.loads(run("show", "s.v", "--json"))["comment"] == "two"


def test_the_hint_to_run_rebuild_goes_to_stderr_with_the_error_and_stdout_stays_empty(run):
    """The line after a CorruptLogError naming rebuild() that says which command repairs it is part
    of the error: written to stderr after it, nothing on stdout (a pipe reading the answer would
    take the hint for one)."""
    create(run)
    run("alter", "s.v", "--comment", "two")
    with sqlite3.connect(run.db) as conn:
        conn.execute("UPDATE views SET stream_version = 1, properties = '{}'")
    conn.close()
    result = CliRunner().invoke(main, ["--db", str(run.db), "show", "s.v"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("error: the projections are behind the log for view s.v ")
    assert result.stderr.endswith("\nhint: 'viewstore rebuild' repairs the projections from the log\n")


def test_environment_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("VIEWSTORE_DB", str(tmp_path / "env.db"))
    monkeypatch.setenv("VIEWSTORE_ACTOR", "dave")
    result = CliRunner().invoke(main, ["create", "e.v", "--sql", "SELECT 1"])
    assert result.exit_code == 0, result.output
    assert read(tmp_path / "env.db", "load_view", "e.v").audit.creator == "dave"


def test_query_is_read_only(run):
    create(run)
    rows = json.loads(run("query", "SELECT actor, type FROM events", "--json"))
    assert rows == [{"actor": "carol", "type": "view.created"}]
    assert "view.created" in run("query", "SELECT type FROM events")
    assert run("query", "DELETE FROM views", code=1).startswith("error: query failed")
    assert run("query", "SELEC nonsense", code=1).startswith("error: query failed")


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_ends_a_query_that_would_run_for_ever_with_exit_code_130(run, as_json):
    run("create", "a.v", "--sql", "SELECT 1 AS x", "--column", "x:int")
    args = ["--db", str(run.db), "query", RUNAWAY, *(["--json"] if as_json else [])]
    result = interrupted(f"from viewstore.cli import main\nprint('start', flush=True)\nmain({args!r})")
    assert result.returncode == 130 and result.stdout == ""
    if as_json:
        assert json.loads(result.stderr) == {"error": {"type": "KeyboardInterrupt", "message": "interrupted",
                                                       "exit_code": 130}}
    else:
        assert result.stderr == "interrupted\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_while_a_query_reads_on_past_the_rows_it_printed_is_exit_code_130(run, as_json):
    """`viewstore query` prints its rows as they are read: a Ctrl-C that came once it had printed
    10,000 rows, while SQLite sought the next one (there is none: it would seek for ever), ends it
    as an interruption (exit code 130, 'interrupted'), not as a failed query, the rows printed
    before it kept."""
    run("create", "a.v", "--sql", "SELECT 1 AS x", "--column", "x:int")
    # 10,001 rows, then none for ever: sqlite3 steps a row ahead of the one it gives, so 10,000 are printed
    sql = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c WHERE n <= 10001 OR n < 0"
    args = ["--db", str(run.db), "query", sql, *(["--json"] if as_json else [])]
    result = interrupted_once_printed(f"from viewstore.cli import main\nmain({args!r})", "10000")
    assert result.returncode == 130
    if as_json:
        assert json.loads(result.stderr) == {"error": {"type": "KeyboardInterrupt", "message": "interrupted",
                                                       "exit_code": 130}}
        assert json.loads(result.stdout + "\n]") == [{"n": n} for n in range(1, 10001)]  # the list, unended
    else:
        assert result.stderr == "interrupted\n"
        assert [line.split()[1] for line in result.stdout.splitlines()[3:]] == [str(n) for n in range(1, 10001)]

@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_ends_a_write_waiting_for_another_process_write_lock_at_once(run, as_json):
    """`viewstore alter` behind another process's long transaction: Ctrl-C ends it within a moment
    (not when a 10 s wait in SQLite ends), with exit code 130, having written nothing."""
    run("create", "a.v", "--sql", "SELECT 1 AS x", "--column", "x:int")
    holder = sqlite3.connect(run.db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's store.transaction() block, held open
    try:
        args = ["--db", str(run.db), "alter", "a.v", "--comment", "waited", *(["--json"] if as_json else [])]
        result = interrupted(f"from viewstore.cli import main\nprint('start', flush=True)\nmain({args!r})")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 130 and result.stdout == ""
    assert result.ended - result.sent < 5  # within a slice (0.1 s) on a quiet machine; the wait itself is 30 s
    if as_json:
        assert json.loads(result.stderr) == {"error": {"type": "KeyboardInterrupt", "message": "interrupted",
                                                       "exit_code": 130}}
    else:
        assert result.stderr == "interrupted\n"
    assert [e["type"] for e in json.loads(run("history", "a.v", "--json"))] == ["view.created"]
    run("alter", "a.v", "--comment", "free")  # the lock let go, the store writes
    assert json.loads(run("show", "a.v", "--json"))["comment"] == "free"


def test_a_write_waiting_for_another_process_lock_counts_the_seconds_on_a_terminal(run, monkeypatch):
    """`viewstore alter --json` behind another process's long write: on a terminal, stderr shows a
    line that counts the seconds of the wait, drawn again in place each second (folded, when longer
    than the terminal is wide, and erased whole); stdout holds the one JSON document it holds without
    a wait. A pipe gets no notice; `rebuild` shows it above its progress bar."""
    from terminal import run_with_terminal_stderr
    from test_concurrency import another_process_writing

    from viewstore import signals

    monkeypatch.setenv("COLUMNS", "50")  # narrower than the notice: it folds onto three lines
    create(run, "a.v")
    with another_process_writing(run.db, 2.5):
        code, stdout, terminal = run_with_terminal_stderr(
            main, ["--db", str(run.db), "alter", "a.v", "--comment", "waited", "--json"])
    assert code == 0 and json.loads(stdout) == json.loads(run("show", "a.v", "--json"))
    assert json.loads(stdout)["comment"] == "waited"
    erase = re.escape("\x1b[1A\x1b[2K")  # a line up, erased
    drawn, erased = re.split(f"(?:{erase})+", terminal), re.findall(f"(?:{erase})+", terminal)
    notice = f"waiting for another process to release the lock on {run.db} ({{}} s of 30 s)..."
    assert len(drawn) >= 2 and all(d.count("\r\n") >= 3 for d in drawn), terminal  # folded lines, each ended
    assert ["".join(d.split()) for d in drawn] == ["".join(notice.format(i).split()) for i in range(1, len(drawn) + 1)]
    assert [e.count("\x1b[1A") for e in erased] == [d.count("\r\n") for d in drawn[:-1]], terminal

    seen = []

    def watch(sender, waited, timeout):
        seen.append(waited)

    signals.lock_wait.connect(watch)
    try:
        with another_process_writing(run.db, 1.6):
            piped = CliRunner().invoke(main, ["--db", str(run.db), "alter", "a.v", "--comment", "piped", "--json"],
                                       catch_exceptions=False)
    finally:
        signals.lock_wait.disconnect(watch)
    assert seen and piped.exit_code == 0 and piped.stderr == "" and json.loads(piped.stdout)["comment"] == "piped"

    with another_process_writing(run.db, 1.6):
        code, stdout, terminal = run_with_terminal_stderr(main, ["--db", str(run.db), "rebuild"])
    assert (code, stdout) == (0, "rebuilt projections from 3 events: they matched the log\n")
    assert "".join(notice.format(1).split()) in "".join(terminal.split()), terminal
    assert "replaying events" in terminal and "3/3" in terminal, terminal


def test_a_second_wait_of_one_command_draws_its_own_line_under_what_came_between(run, monkeypatch):
    """Two writes of one command that each wait: the second wait's line is a new one, under what
    the command printed in between, which stays (only a wait's own line is drawn again)."""
    from terminal import run_with_terminal_stderr
    from test_concurrency import another_process_writing

    from viewstore.cli import CliContext

    monkeypatch.setenv("COLUMNS", "500")  # one line each
    create(run, "a.v")

    @click.command()
    def two_writes():
        cli = CliContext(str(run.db), "carol", None)
        for comment in ("first", "second"):
            with another_process_writing(run.db, 1.6):
                cli.store().alter_view("a.v", ViewChange.update_comment(comment))
            cli.err.print(f"{comment} written")
        cli.close()

    code, _, terminal = run_with_terminal_stderr(two_writes, [])
    notice = f"waiting for another process to release the lock on {run.db} (1 s of 30 s)...\r\n"
    assert code == 0 and terminal == f"{notice}first written\r\n{notice}second written\r\n", terminal
    assert json.loads(run("show", "a.v", "--json"))["comment"] == "second"


def test_a_query_that_matches_no_row_still_names_its_columns(run):
    create(run)
    table = run("query", "SELECT position, actor AS who FROM events WHERE 0")
    assert re.search(r"position +┃ who +┃", table), table  # the header, and no row under it
    assert "(no rows)" not in table and "carol" not in table
    assert json.loads(run("query", "SELECT position, actor AS who FROM events WHERE 0", "--json")) == []
    # the API: still a list of dicts, which names its columns as the rows' keys would be
    with ViewStore(run.db) as store:
        empty = store.query("SELECT 1 AS a, 2 AS a, 3 AS b WHERE 0")
        full = store.query("SELECT 1 AS a, 2 AS a, 3 AS b")
    assert empty == [] and isinstance(empty, list) and empty.columns == ("a", "a_2", "b")
    assert full == [{"a": 1, "a_2": 2, "b": 3}] and full.columns == tuple(full[0])
    assert re.search(r"a +┃ a_2 +┃ b +┃", run("query", "SELECT 1 AS a, 2 AS a, 3 AS b WHERE 0"))


# -- user data is printed as it is -------------------------------------------------------------


def one_error_line(out):
    return out.startswith("error: ") and out.count("\n") == 1 and "Traceback" not in out


def test_markup_like_data_prints_as_it_is_in_every_command(run, tmp_path, monkeypatch):
    """Brackets and emoji codes in names, SQL, comments, properties, actors, paths and error messages
    are data: each command prints them unchanged, and a command that committed exits 0."""
    monkeypatch.setenv("COLUMNS", "250")  # wide enough that no table cell has to fold
    sql = "SELECT arr[i] AS x, m[key] AS y FROM t"
    sql2 = "SELECT arr[/i] AS x, m[bold]k[/bold] AS y FROM t"
    out = run("--actor", "[/who]", "create", "ns.[/b]", "--sql", sql, "--column", "x:int:[red]c[/red]",
              "--comment", "closing [/x] tag :smile:", "--property", "[k]=[/v]", "--default-catalog", "[cat]")
    assert out == "created ns.[/b] (version 1, stream version 1)\n"
    assert read(run.db, "load_view", "ns.[/b]").representations[0].sql == sql
    show = run("show", "ns.[/b]")
    for text in ("ns.[/b]", sql, "[red]c[/red]", "closing [/x] tag :smile:", "[k]", "[/v]", "by [/who] at",
                 "default catalog and namespace: [cat].ns"):
        assert text in show, text
    assert run("replace", "ns.[/b]", "--sql", sql2, "--column", "x:int") == \
        "replaced ns.[/b] (version 2, stream version 2)\n"
    assert sql2 in run("show", "ns.[/b]")
    assert run("alter", "ns.[/b]", "--comment", "[/c]", "--set", "[/p]=[i]") == \
        "altered ns.[/b] (version 2, stream version 4)\n"
    assert run("list") == "ns.[/b]\n" and run("list", "ns") == "ns.[/b]\n"
    history, audit = run("history", "ns.[/b]"), run("audit", "--view", "ns.[/b]")
    assert history.splitlines()[0] == "history of ns.[/b]" and audit.splitlines()[0] == "4 events"
    for out in (history, audit):  # each row but its time: position, actor, view, stream version, type, details
        rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line[:1] == "│"]
        assert [row[:1] + row[2:] for row in rows] == [
            ["1", "[/who]", "ns.[/b]", "1", "view.created", "version 1"],
            ["2", "carol", "ns.[/b]", "2", "view.replaced", "version 2"],
            ["3", "carol", "ns.[/b]", "3", "view.comment_updated", "comment: [/c]"],
            ["4", "carol", "ns.[/b]", "4", "view.properties_set", "[/p]=[i]"]], out
    assert "[/p]" in run("query", "SELECT properties FROM views")
    location = tmp_path / "[/loc] :x:"
    path = run("export", "ns.[/b]", "--location", str(location)).strip()
    assert path.startswith(str(location / "metadata")) and (location / "metadata").is_dir()
    assert run("--db", str(tmp_path / "other.db"), "import", path, "ns.[/imported]").startswith(
        "imported ns.[/imported] (2 versions,")
    assert run("rollback", "ns.[/b]", "1") == "ns.[/b] is at version 1\n"
    assert run("rename", "ns.[/b]", "ns.[bold]new") == "renamed ns.[/b] to ns.[bold]new\n"
    assert run("drop", "ns.[bold]new") == "dropped ns.[bold]new\n"
    assert run("drop", "ns.[bold]new", "--if-exists") == "no view ns.[bold]new; nothing dropped\n"
    for args in (["show", "ns.[/nope]"], ["drop", "ns.[/nope]"], ["create", "[/x]", "--sql", "1"],
                 ["import", str(tmp_path / "[/none].json"), "ns.[/i]"]):
        out = run(*args, code=1)
        assert one_error_line(out) and "[/" in out, (args, out)
    assert "[/" in run("alter", "ns.[/nope]", "--comment", "x", code=1)


def test_long_sql_folds_in_a_table_instead_of_being_cut(run):
    word = "y" * 150
    run("create", "s.long", "--sql", f"SELECT {word} FROM t")
    out = run("show", "s.long")
    assert word in "".join(ch for ch in out if ch not in "│ \n")
    assert "…" not in out


def test_query_json_gives_blobs_as_hex_and_infinities_as_strings(run):
    create(run)
    rows = json.loads(run("query", "SELECT x'00ff' AS b, x'' AS e, 1e999 AS inf, -1e999 AS ninf, NULL AS n, 1.5 AS r",
                          "--json"))
    assert rows == [{"b": "00FF", "e": "", "inf": "Infinity", "ninf": "-Infinity", "n": None, "r": 1.5}]
    assert rows[0]["b"] == read(run.db, "query", "SELECT hex(x'00ff') AS h")[0]["h"]
    table = run("query", "SELECT x'00ff' AS b")
    assert "00FF" in table and "\\x" not in table


def test_query_json_is_written_a_batch_of_rows_at_a_time(run, monkeypatch):
    """query --json goes out a batch of rows at a time, as the events' --json does: the first batch is
    written before the later rows are turned into JSON, and the text is json_text's of one list."""
    import contextlib

    from viewstore import cli

    create(run)
    made = []
    to_json = cli._row_to_json
    monkeypatch.setattr(cli, "_row_to_json", lambda row: made.append(row["n"]) or to_json(row))
    monkeypatch.setattr(cli, "JSON_BATCH", 2)

    class Seen(_TextOnly):
        def write(self, s):
            self.made_by_then = [*getattr(self, "made_by_then", []), len(made)]
            return super().write(s)

    sql = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
           "SELECT n, n / 2.0 AS half, x'0a' AS b, 'é' AS t FROM r")
    out = Seen()
    with contextlib.redirect_stdout(out):
        main(["--db", str(run.db), "query", sql, "--json"], standalone_mode=False)
    assert list(dict.fromkeys(out.made_by_then)) == [2, 4, 5] and made == [1, 2, 3, 4, 5]
    assert out.text == cli.json_text([{"n": n, "half": n / 2, "b": "0A", "t": "é"} for n in range(1, 6)]) + "\n"
    assert run("query", "SELECT 1 AS n WHERE 0", "--json") == "[]\n"


def test_query_prints_null_as_an_empty_cell_and_keeps_a_column_of_numbers_and_nulls_whole(run, monkeypatch):
    """A NULL is no text to show (--json has null); a column of numbers, floats too, with NULLs
    among them does not fold where the text beside it has to."""
    monkeypatch.setenv("COLUMNS", "40")
    create(run)
    sql = ("SELECT 12345678901234.5 AS amount, 'a long text value that has to fold somewhere' AS t, NULL AS n "
           "UNION ALL SELECT NULL, 'x', NULL")
    out = run("query", sql)
    assert "None" not in out and "null" not in out
    lines = out.splitlines()
    assert re.match(r"│ 12345678901234\.5 │ a long text +│ +│$", lines[3]), out
    assert re.match(r"│ +│ x +│ +│$", lines[-2]), out
    assert json.loads(run("query", sql, "--json"))[1] == {"amount": None, "t": "x", "n": None}


def test_query_judges_a_column_of_numbers_by_every_row_of_its_layout_not_its_first(run, monkeypatch):
    """A column whose first value is a number but a later one a long text folds as text does; had
    the first row decided, that column would be kept whole and the table wider than the terminal."""
    monkeypatch.setenv("COLUMNS", "30")
    create(run)
    sql = ("SELECT 1 AS v, 'x' AS t UNION ALL SELECT 'a long text value that has to fold somewhere', 'y' "
           "UNION ALL SELECT 2, 'z'")
    out = run("query", sql)
    assert max(len(line) for line in out.splitlines()) <= 30, out
    assert [word for word in "a long text value that has to fold somewhere".split() if word not in out] == [], out


def test_query_judges_a_column_of_numbers_by_the_last_row_of_its_layout_too(run, monkeypatch):
    """The rows a query's table is laid out on (TextTable.WINDOW) all judge its columns' kind: a
    column of numbers whose text comes in the last of them folds as text does (judged on one row
    fewer, it was kept whole and the table ran past the terminal)."""
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setattr("viewstore.cli.TextTable.WINDOW", 3)
    create(run)
    text = "a long text value that has to fold somewhere"
    lines = run("query", " UNION ALL ".join(f"SELECT {v} AS v" for v in ("1", "2", f"'{text}'", "3"))).splitlines()
    assert max(map(len, lines)) <= 30 and set(text.split()) <= set(" ".join(lines).split()), lines

def test_hms_import_prints_a_markup_like_name_as_it_is(run, conformance):
    record = conformance / "engine-views" / "spark-hms-view-3.5.reconstructed.json"
    out = run("hms", "import", str(record), "sales.[/h]")
    assert out == "imported sales.[/h] from a spark record (1 version, 1 event)\n"


# -- bad input is one clear line ---------------------------------------------------------------


#: every time option, with a command line that takes it
TIME_OPTIONS = {"--as-of": ["show", "s.v"], "--since": ["audit"], "--until": ["audit"],
                "--from": ["diff", "s.v"], "--to": ["diff", "s.v", "--from-event", "1"]}


def test_out_of_range_or_malformed_times_are_usage_errors(run):
    """Every time option says the same of the same bad value: its forms and their range. A year
    beyond 9999, a number of milliseconds beyond it or beyond 64 bits, and a string that is no time
    were told apart in three wordings, only one of which gave the range."""
    create(run)
    forms = "use ISO 8601 (2026-11-22T10:00:00Z) or epoch milliseconds, in the years 1 to 9999"
    assert sorted(TIME_OPTIONS) == sorted(p.opts[0] for c in ("show", "audit", "diff") for p in main.commands[c].params
                                          if p.metavar == "TIME")
    for option, command in TIME_OPTIONS.items():
        for value in ("99999999999999999999999", "-99999999999999999", "9223372036854775807", "-9223372036854775808",
                      "10000-01-01", "0001-01-01T00:00:00+01:00", "2026-13-01", "²", "", "1e3", "soon"):
            out = run(*command, option, value, code=2)
            assert usage_error(out, "") and out.splitlines()[-1] == f"Error: bad {option} {value!r}: {forms}", out
        out = run(*command, option, "20261301", code=2)
        assert out.splitlines()[-1] == f"Error: bad {option} '20261301': eight digits are a date (YYYYMMDD), and " \
                                       f"this is none; {forms}", out
        out = run(*command, option, "２０２６１１２６", code=2)  # digits, but not ASCII ones: read as no date
        assert out.splitlines()[-1] == f"Error: bad {option} '２０２６１１２６': {forms}", out
    assert json.loads(run("audit", "--since", "0001-01-01", "--until", "9999-12-31T23:59:59.999Z", "--json"))
    assert json.loads(run("diff", "s.v", "--from", "253402300799999", "--to", "9999-12-31T23:59:59.999Z", "--json"))
    for command in (["show", "--help"], ["audit", "--help"], ["diff", "--help"]):
        assert "in the years 1 to 9999" in " ".join(run(*command).split()), command


@pytest.mark.parametrize("args, message", [
    (["show", "s.v", "--at-event", "99999999999999999999999"],
     "--at-event must be a whole number of at most 9223372036854775807, not '99999999999999999999999'"),
    (["show", "s.v", "--at-event", "-1"], "--at-event must be a whole number of 0 or more, not '-1'"),
    (["rollback", "s.v", "99999999999999999999999"],
     "VERSION_ID must be a whole number of at most 9223372036854775807, not '99999999999999999999999'"),
    (["rollback", "s.v", "-99999999999999999999999"],
     "VERSION_ID must be a whole number of at least -9223372036854775808, not '-99999999999999999999999'"),
    (["alter", "s.v", "--comment", "c", "--expected-version", "99999999999999999999999"],
     "--expected-version must be a whole number of at most 9223372036854775807, not '99999999999999999999999'"),
    (["audit", "--limit", "99999999999999999999999"],
     "--limit must be a whole number of at most 9223372036854775807, not '99999999999999999999999'"),
    (["audit", "--limit", "-1"], "--limit must be a whole number of 0 or more, not '-1'"),
])
def test_out_of_range_numbers_are_usage_errors(run, args, message):
    create(run)
    out = run(*args, code=2)
    assert usage_error(out, "") and out.splitlines()[-1] == f"Error: {message}", out
    assert read(run.db, "event_count") == 1


def test_the_largest_whole_number_sqlite_holds_is_taken(run):
    create(run)
    top = str(2**63 - 1)
    assert len(json.loads(run("audit", "--limit", top, "--json"))) == 1
    assert run("rollback", "s.v", top, code=1) == f"error: view s.v has no version {top}; it has 1\n"


@pytest.mark.parametrize("args, message", [
    (["audit", "--limit", "x"], "--limit must be a whole number of 0 or more, not 'x'"),
    (["audit", "--limit", "1.5"], "--limit must be a whole number of 0 or more, not '1.5'"),
    (["show", "s.v", "--at-event", "one"], "--at-event must be a whole number of 0 or more, not 'one'"),
    (["diff", "s.v", "--from-event", "x"], "--from-event must be a whole number of 0 or more, not 'x'"),
    (["diff", "s.v", "--from-event", "1", "--to-event", ""], "--to-event must be a whole number of 0 or more, not ''"),
    (["alter", "s.v", "--comment", "c", "--expected-version", "v1"],
     "--expected-version must be a whole number of 0 or more, not 'v1'"),
    (["replace", "s.v", "--sql", "SELECT 1", "--expected-version", "x"],
     "--expected-version must be a whole number of 0 or more, not 'x'"),
    (["rename", "s.v", "s.w", "--expected-version", "x"],
     "--expected-version must be a whole number of 0 or more, not 'x'"),
    (["drop", "s.v", "--expected-version", "x"], "--expected-version must be a whole number of 0 or more, not 'x'"),
    (["rollback", "s.v", "one"], "VERSION_ID must be a whole number, not 'one'"),
])
def test_a_number_option_given_no_number_says_what_it_wants(run, args, message):
    """Every whole-number option and argument says what it takes; click's own said "'x' is not a
    valid integer range", naming neither the range nor the option."""
    create(run)
    out = run(*args, code=2)
    assert usage_error(out, "") and out.splitlines()[-1] == f"Error: {message}", out
    error = json.loads(CliRunner().invoke(main, ["--db", str(run.db), *args, "--json"]).stderr)["error"]
    assert error == {"type": "UsageError", "message": message, "exit_code": 2}
    assert read(run.db, "event_count") == 1


def test_bad_database_paths_are_one_line_errors(tmp_path):
    real = tmp_path / "real.db"
    with ViewStore(real) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(real.read_bytes()[:2000])
    (tmp_path / "garbage.db").write_text("not a database at all " * 100)
    (tmp_path / "folder.db").mkdir()
    runner = CliRunner()
    for db in (tmp_path / "missing" / "x.db", tmp_path / "folder.db", tmp_path / "garbage.db", truncated):
        for args in (["list"], ["show", "s.v"], ["create", "s.w", "--sql", "SELECT 1"]):
            result = runner.invoke(main, ["--db", str(db), *args], catch_exceptions=False)
            assert result.exit_code == 1 and one_error_line(result.output), (db, args, result.output)
            assert str(db) in result.output


def test_other_bad_input_is_one_clear_line(run, tmp_path):
    create(run)
    latin1 = tmp_path / "latin1.sql"
    latin1.write_bytes("SELECT 'caf\xe9' AS x".encode("latin-1"))
    assert usage_error(run("create", "s.w", "--sql-file", str(latin1), code=2), "is not UTF-8 text")
    for args in (["query", ""], ["query", "/* only a comment */"], ["query", "SELECT '\ud800'"]):
        out = run(*args, code=1)
        assert one_error_line(out), (args, out)
    for args, name in ((["--db", "", "list"], "'--db'"), (["--actor", "", "list"], "'--actor'"),
                       (["export", "s.v", "--location", ""], "'--location'"), (["import", "", "s.i"], "'PATH'"),
                       (["--catalog", "", "list"], "'--catalog'"),
                       (["--catalog", " ", "create", "s.w", "--sql", "1"], "'--catalog'")):
        out = run(*args, code=2)
        assert usage_error(out, "") and out.splitlines()[-1] == f"Error: Invalid value for {name}: must not be empty", \
            (args, out)
    assert not (tmp_path / "metadata").exists()
    assert read(run.db, "event_count") == 1


def test_a_real_process_prints_markup_like_data_and_errors_without_a_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIEWSTORE_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "viewstore", "--db", str(tmp_path / "p.db"), *args],
                              capture_output=True, text=True, env=env, timeout=60)

    created = cli("create", "ns.[/b]", "--sql", "SELECT arr[i] AS x FROM t", "--comment", "closing [/x] tag")
    assert (created.returncode, created.stderr) == (0, "")
    assert created.stdout == "created ns.[/b] (version 1, stream version 1)\n"
    shown = cli("show", "ns.[/b]")
    assert shown.returncode == 0 and "SELECT arr[i] AS x FROM t" in shown.stdout and "closing [/x] tag" in shown.stdout
    bad = cli("show", "ns.[/b]", "--at-event", "99")
    assert bad.returncode == 1 and bad.stdout == "" and one_error_line(bad.stderr), bad.stderr
    assert "in the history of ns.[/b]" in bad.stderr
    bad = cli("show", "ns.[/b]", "--as-of", "99999999999999999999999")
    assert bad.returncode == 2 and bad.stdout == "" and usage_error(bad.stderr, "bad --as-of"), bad.stderr


# -- --json on every command that reports a result ---------------------------------------------


def test_every_core_command_has_json():
    for name, command in main.commands.items():
        assert "--json" in [opt for p in command.params for opt in p.opts], name


def test_json_of_rollback_rename_drop_export_import_is_the_api_result(run, tmp_path):
    create(run)
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")
    rolled = json.loads(run("rollback", "s.v", "1", "--json"))
    assert rolled == view_to_json(read(run.db, "load_view", "s.v")) and rolled["current_version_id"] == 1
    renamed = json.loads(run("rename", "s.v", "t.w", "--json"))
    assert renamed == view_to_json(read(run.db, "load_view", "t.w")) and renamed["identifier"] == "t.w"
    exported = json.loads(run("export", "t.w", "--location", str(tmp_path / "loc"), "--json"))
    assert exported["identifier"] == "t.w" and exported["path"].startswith(str(tmp_path / "loc" / "metadata"))
    assert json.loads(Path(exported["path"]).read_text())["view-uuid"] == renamed["uuid"]
    imported = json.loads(run("--db", str(tmp_path / "b.db"), "import", exported["path"], "u.x", "--json"))
    assert imported == view_to_json(read(tmp_path / "b.db", "load_view", "u.x"))
    assert imported["uuid"] == renamed["uuid"] and imported["current_version_id"] == 1
    assert json.loads(run("drop", "t.w", "--json")) == {"identifier": "t.w", "dropped": True}
    assert json.loads(run("drop", "t.w", "--if-exists", "--json")) == {"identifier": "t.w", "dropped": False}
    assert json.loads(run("drop", "t.w", "--json", code=1))["error"]["type"] == "NoSuchViewError"


def test_list_json_is_sorted_by_the_whole_identifier(run):
    create(run, "b.a")
    create(run, "a.z")
    assert json.loads(run("list", "--json")) == ["a.z", "b.a"]


def test_list_of_a_namespace_that_holds_no_view_says_so_on_stderr(run):
    """A namespace that holds no view (a typo, or one holding views only in namespaces under it)
    listed nothing at all, exit code 0, which left a person guessing; a line on stderr now says so
    and names the namespaces that hold views. Stdout stays empty and the exit code 0 (a script
    reading the list gets the same answer); --json prints [] alone."""
    create(run, "b.c.v")
    create(run, "a.v")
    for given, said in (("nosuch", "nosuch"), ("B", "b")):
        result = CliRunner().invoke(main, ["--db", str(run.db), "list", given])
        assert (result.exit_code, result.stdout) == (0, "")
        assert result.stderr == f"no live view directly in namespace {said} (the namespaces that hold views: a, b.c)\n"
    result = CliRunner().invoke(main, ["--db", str(run.db), "list", "nosuch", "--json"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "[]\n", "")
    result = CliRunner().invoke(main, ["--db", str(run.db), "list", "b.c"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "b.c.v\n", "")
    run("drop", "a.v")
    run("drop", "b.c.v")
    result = CliRunner().invoke(main, ["--db", str(run.db), "list", "a"])
    assert (result.stdout, result.stderr) == ("", "no live view directly in namespace a (no namespace holds a view)\n")
    result = CliRunner().invoke(main, ["--db", str(run.db), "list"])  # the whole store asked: nothing to add
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_eight_digits_that_are_no_date_are_said_to_be_so_with_blanks_around_them_too(run):
    """The API reads a time with blanks around it as the time: eight digits among blanks are a date
    too, and the message about one that is none says why."""
    create(run)
    forms = "use ISO 8601 (2026-11-22T10:00:00Z) or epoch milliseconds, in the years 1 to 9999"
    for value in (" 20261301", "20261301 "):
        out = run("audit", "--since", value, code=2)
        assert out.splitlines()[-1] == f"Error: bad --since {value!r}: eight digits are a date (YYYYMMDD), and " \
                                       f"this is none; {forms}", out
    assert run("audit", "--since", " 20261126 ", "--json") == run("audit", "--since", "20261126", "--json")


def test_audit_since_and_until_include_their_millisecond(run):
    create(run, "s.v")
    (event,) = json.loads(run("history", "s.v", "--json"))
    for option in ("--until", "--since"):
        out = json.loads(run("audit", option, str(event["occurred_at_ms"]), "--json"))
        assert [e["position"] for e in out] == [event["position"]]


def test_audit_since_and_until_the_same_millisecond_is_that_millisecond(run):
    """--since and --until of one moment keep the events of that millisecond: not a range 'swapped'."""
    create(run, "s.v")
    (event,) = json.loads(run("history", "s.v", "--json"))
    moment = str(event["occurred_at_ms"])
    out = json.loads(run("audit", "--since", moment, "--until", moment, "--json"))
    assert [e["position"] for e in out] == [event["position"]]


def test_audit_until_a_date_alone_takes_its_whole_day_also_after_a_since_within_it(run):
    """--until of a date alone is to the end of that day, for the check that --since is not after
    it too: a --since later in that day is no range 'swapped'."""
    create(run, "s.v")
    (event,) = json.loads(run("history", "s.v", "--json"))
    day = event["occurred_at"][:10]
    out = json.loads(run("audit", "--since", str(event["occurred_at_ms"]), "--until", day, "--json"))
    assert [e["position"] for e in out] == [event["position"]]


def test_events_json_carries_each_events_time_to_the_millisecond_as_the_api_reads_it(run):
    for ident in ("s.a", "s.b", "s.c"):
        create(run, ident)
    events = json.loads(run("audit", "--json"))
    with ViewStore(run.db) as store:
        assert [e["occurred_at_ms"] for e in events] == [e.occurred_at for e in store.events()]
    for e in events:
        shown = dt.datetime.fromisoformat(e["occurred_at"].replace("Z", "+00:00"))
        assert shown == dt.datetime.fromtimestamp(e["occurred_at_ms"] / 1000, dt.timezone.utc), e


def _five_events(run):
    """Events 1 to 5: s.a and s.b created, then comments on s.a (3, 5) and s.b (4)."""
    create(run, "s.a")  # 1
    create(run, "s.b")  # 2
    run("alter", "s.a", "--comment", "one")  # 3
    run("alter", "s.b", "--comment", "two")  # 4
    run("alter", "s.a", "--comment", "three")  # 5


def test_history_reads_a_range_of_log_positions(run):
    """history --since-position and --until-position keep the view's events in that range, both
    ends included, as audit's do."""
    _five_events(run)

    def positions(*args):
        return [e["position"] for e in json.loads(run("history", "s.a", *args, "--json"))]

    assert positions() == [1, 3, 5]
    assert positions("--since-position", "2") == [3, 5]
    assert positions("--until-position", "3") == [1, 3]
    assert positions("--since-position", "3", "--until-position", "3") == [3]
    assert positions("--since-position", "4", "--until-position", "4") == []
    assert positions("--since-position", "6") == []
    table = run("history", "s.a", "--since-position", "4")
    assert "three" in table and "one" not in table
    assert run("history", "s.nope", "--since-position", "1", code=1) == "error: no view was ever named s.nope\n"


def test_audit_reads_a_range_of_log_positions(run):
    """--since-position and --until-position keep the events in that range, both ends included, with
    the other filters: a script that read up to an event asks for what came after it."""
    _five_events(run)

    def positions(*args):
        return [e["position"] for e in json.loads(run("audit", *args, "--json"))]

    assert positions("--since-position", "3") == [3, 4, 5]
    assert positions("--until-position", "2") == [1, 2]
    assert positions("--since-position", "2", "--until-position", "4") == [2, 3, 4]
    assert positions("--since-position", "4", "--until-position", "4") == [4]
    assert positions("--since-position", "2", "--view", "s.a") == [3, 5]
    assert positions("--since-position", "2", "--newest-first", "--limit", "2") == [5, 4]
    assert positions("--since-position", "6") == []
    table = run("audit", "--since-position", "5", "--until-position", "5")
    assert "three" in table and "one" not in table and "two" not in table


def test_show_at_event_takes_a_log_position(run):
    create(run, "s.other")  # position 1
    create(run, "s.v")  # position 2, stream version 1
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")  # position 3, stream version 2
    assert json.loads(run("show", "s.v", "--at-event", "2", "--json"))["current_version_id"] == 1
    assert run("show", "s.v", "--at-event", "1", code=1) == f"error: {_no_event(1, 's.v')}\n"
    # the identifier as the store spells it, in the message and the command it names, however it was typed
    assert run("show", "S.V", "--at-event", "1", code=1) == f"error: {_no_event(1, 's.v')}\n"
    # the command the message names lists the positions --at-event takes
    assert [e["position"] for e in json.loads(run("audit", "--view", "s.v", "--json"))] == [2, 3]


def _at_event(run, ident, position, code=0):
    return run("show", ident, "--at-event", str(position), "--json", code=code)


def _no_event(position, ident):
    """The message of show --at-event and diff --from-event/--to-event for a position not in the
    history of ``ident``: it names the command that lists the positions there are."""
    return (f"no event at position {position} in the history of {ident} ('viewstore audit --view {ident}' lists "
            f"its events' positions)")


def test_show_at_event_takes_an_event_of_any_view_that_carried_the_name(run):
    """--at-event takes what load_view(as_of=event) takes: an event that `audit --view` lists, of a
    view dropped and re-created under the name or renamed away from it too, not only `history`'s."""
    create(run, "s.v")  # 1: the first s.v
    run("drop", "s.v")  # 2
    run("create", "s.v", "--sql", "SELECT 2 AS x")  # 3: a new view of that name
    create(run, "s.a")  # 4
    run("rename", "s.a", "s.b")  # 5: s.a renamed away
    create(run, "s.other")  # 6
    assert [e["position"] for e in json.loads(run("audit", "--view", "s.v", "--json"))] == [1, 2, 3]
    first = json.loads(_at_event(run, "s.v", 1))
    assert first["representations"] == [{"dialect": "spark", "sql": "SELECT 1 AS x"}]
    assert first["identifier"] == "s.v" and first["stream_version"] == 1
    assert run("show", "s.v", "--at-event", "2", code=1) == "error: view s.v was dropped by that event\n"
    assert json.loads(_at_event(run, "s.v", 3))["representations"][0]["sql"] == "SELECT 2 AS x"
    assert json.loads(_at_event(run, "s.a", 4))["identifier"] == "s.a"  # as it was, under its old name
    assert json.loads(_at_event(run, "s.a", 5))["identifier"] == "s.b"  # the event that renamed it away
    assert json.loads(_at_event(run, "s.b", 4))["identifier"] == "s.a"  # the same view, by its new name
    with ViewStore(run.db) as store:  # the same views as the API's
        for ident, position in (("s.v", 1), ("s.v", 3), ("s.a", 4), ("s.a", 5), ("s.b", 4)):
            event = next(e for e in store.events(view=ident) if e.position == position)
            assert json.loads(_at_event(run, ident, position)) == view_to_json(store.load_view(ident, as_of=event))


@pytest.mark.parametrize("ident, position", [("s.v", 2), ("s.v", 6), ("s.v", 7), ("s.a", 4), ("s.b", 3)])
def test_show_at_event_refuses_an_event_of_no_view_of_that_name_as_the_api_does(run, ident, position):
    for name in ("s.v", "s.a", "s.other"):
        create(run, name)  # 1, 2, 3
    run("drop", "s.v")  # 4: s.v has 1 and 4
    run("rename", "s.a", "s.b")  # 5: s.a and s.b have 2 and 5
    create(run, "s.w")  # 6; 7 is no event at all
    with ViewStore(run.db) as store:
        event = next((e for e in store.events() if e.position == position), None)
        if event is not None:  # the API refuses it with a ValidationError too
            with pytest.raises(ValidationError, match=f"is not of the history of {ident}$"):
                store.load_view(ident, as_of=event)
    message = _no_event(position, ident)
    assert run("show", ident, "--at-event", str(position), code=1) == f"error: {message}\n"
    error = json.loads(_at_event(run, ident, position, code=1))["error"]
    assert (error["type"], error["message"]) == ("ValidationError", message)


def test_show_at_event_and_diff_from_event_answer_as_the_whole_history_does_at_every_kind_of_position(run):
    """show --at-event and diff --from-event/--to-event read only the event at each position, and
    answer as load_view and diff_view do with that event found in the whole history of the name:
    at its first, a middle and its last event, past the end of the log, before the view existed,
    and at an event of another view between two of its own."""
    create(run, "s.before")  # 1: before s.v existed
    create(run, "s.v")  # 2
    with ViewStore(run.db, actor="dave") as store:
        for i in range(3, 40):  # s.v's events, with s.w's between them
            if i % 5 == 0:
                store.create_view(f"s.w{i}", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                                  default_namespace="s")
            elif i % 2:
                store.alter_view("s.v", ViewChange.update_comment(f"c{i}"))
            else:
                store.replace_view("s.v", columns=[Column("x", "int")],
                                   representations=[("spark", f"SELECT {i} AS x")], default_namespace="s")
        history = {e.position: e for e in store.events(view="s.v")}
        last = max(history)
        assert min(history) == 2 and last == 39 and 15 not in history and len(history) == 31
        middle = sorted(history)[15]
        for position in (2, middle, last):
            event = history[position]
            assert json.loads(_at_event(run, "s.v", position)) == view_to_json(store.load_view("s.v", as_of=event))
            for other in (2, middle, last):
                diff = store.diff_view("s.v", before=event, after=history[other]).model_dump(mode="json")
                for side in ("before", "after"):
                    diff[side]["identifier"] = "s.v"
                out = run("diff", "s.v", "--from-event", str(position), "--to-event", str(other), "--json")
                assert json.loads(out) == diff
            now = store.diff_view("s.v", before=event).model_dump(mode="json")
            for side in ("before", "after"):
                now[side]["identifier"] = "s.v"
            assert json.loads(run("diff", "s.v", "--from-event", str(position), "--json")) == now
    for position in (0, 1, 15, last + 1, 2**63 - 1):  # none of s.v's: before it, another view's, past the end
        message = f"error: {_no_event(position, 's.v')}\n"
        assert run("show", "s.v", "--at-event", str(position), code=1) == message
        assert run("diff", "s.v", "--from-event", str(position), code=1) == message
        assert run("diff", "s.v", "--from-event", "2", "--to-event", str(position), code=1) == message


def _changed_view(run):
    """s.v at positions 1 (created), 2 and 3 (one alter: a property, a trino representation) and 4 (a
    replace: a new spark SQL, a wider column); s.other at 5."""
    create(run, "s.v", "--comment", "one")
    run("alter", "s.v", "--set", "owner=bi", "--add-representation", "trino", "SELECT 1 AS x")
    run("replace", "s.v", "--sql", "SELECT 2 AS x\nFROM t", "--representation", "trino", "SELECT 1 AS x",
        "--column", "x:bigint:the x")
    create(run, "s.other")


def test_diff_prints_a_line_per_side_then_only_what_changed(run):
    _changed_view(run)
    lines = run("diff", "s.v", "--from-event", "1").splitlines()
    assert re.fullmatch(r"before: s\.v  version 1  last changed by carol at \d{4}-[-\d :.]+ UTC", lines[0]), lines
    assert re.fullmatch(r"after:  s\.v  version 3  last changed by carol at \d{4}-[-\d :.]+ UTC", lines[1]), lines
    text = "\n".join(lines)
    assert re.search(r"^│ changed │ x +│ int → long │ yes +│ the x +│$", text, re.M), text
    assert re.search(r"^│ added +│ owner +│ +│ bi +│$", text, re.M), text
    assert lines[lines.index("representation trino: added"):][:5] == [
        "representation trino: added", "--- before", "+++ after", "@@ -0,0 +1 @@", "+SELECT 1 AS x"]
    assert lines[lines.index("representation spark: changed"):] == [
        "representation spark: changed", "--- before", "+++ after", "@@ -1 +1,2 @@", "-SELECT 1 AS x",
        "+SELECT 2 AS x", "+FROM t"]
    assert not [line for line in lines if line.startswith(("comment:", "security mode:", "default "))]
    assert "\x1b" not in text  # not a terminal: no colour


def test_diff_of_an_unchanged_view_says_no_changes_with_exit_code_0(run):
    _changed_view(run)
    lines = run("diff", "s.v", "--from-event", "4").splitlines()
    assert len(lines) == 3 and lines[2] == "no changes" and "version 3" in lines[0] and "version 3" in lines[1]
    assert run("diff", "s.v", "--from-event", "2", "--to-event", "3").endswith("\nno changes\n")  # one commit
    assert "no changes" not in run("diff", "s.v", "--from-event", "3", "--to-event", "1")


def test_diff_shows_a_rename_and_a_rollback(run):
    _changed_view(run)
    run("rollback", "s.v", "1")
    rolled_back = run("diff", "s.v", "--from-event", "1")  # back at version 1: only the property stayed
    assert "version 1" in rolled_back.splitlines()[1] and "representation" not in rolled_back
    assert re.search(r"^│ added +│ owner +│ +│ bi +│$", rolled_back, re.M), rolled_back
    run("rename", "s.v", "t.v")
    out = run("diff", "t.v", "--from-event", "4")
    assert out.splitlines()[0].startswith("before: s.v  version 3")
    assert out.splitlines()[1].startswith("after:  t.v  version 1")
    assert "renamed: s.v → t.v" in out and "-SELECT 2 AS x" in out and "+SELECT 1 AS x" in out


def test_diff_colours_the_sql_diff_on_a_terminal(run):
    _changed_view(run)
    result = CliRunner().invoke(main, ["--db", str(run.db), "diff", "s.v", "--from-event", "1"],
                                env={"FORCE_COLOR": "1"})  # rich's switch for a terminal
    assert result.exit_code == 0, result.output
    assert "\x1b[31m-SELECT 1 AS x\x1b[0m" in result.output and "\x1b[32m+FROM t\x1b[0m" in result.output


def test_diff_prints_the_sql_diffs_file_lines_bold_not_as_a_line_removed_or_added(run):
    """On a terminal a unified diff's '--- before' and '+++ after' lines name the sides: bold, not
    red and green as a line removed or added."""
    _changed_view(run)
    result = CliRunner().invoke(main, ["--db", str(run.db), "diff", "s.v", "--from-event", "1"],
                                env={"FORCE_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "\x1b[1m--- before\x1b[0m" in result.output and "\x1b[1m+++ after\x1b[0m" in result.output


def test_diff_json_is_the_apis_view_diff_with_dotted_identifiers(run):
    _changed_view(run)
    data = json.loads(run("diff", "s.v", "--from-event", "1", "--to-event", "3", "--json"))
    with ViewStore(run.db) as store:
        first, _, third = store.history("s.v")[:3]
        expected = store.diff_view("s.v", before=first, after=third).model_dump(mode="json")
    expected["before"]["identifier"] = expected["after"]["identifier"] = "s.v"
    assert data == expected
    assert list(data) == ["before", "after", "columns_added", "columns_removed", "columns_changed", "column_order",
                          "representations_added", "representations_removed", "representations_changed", "comment",
                          "properties_added", "properties_changed", "properties_removed", "security_mode",
                          "default_catalog", "default_namespace", "changed"]
    assert data["changed"] is True and data["properties_added"] == {"owner": "bi"}
    assert data["representations_added"] == [{"dialect": "trino", "sql": "SELECT 1 AS x"}]
    assert (data["before"]["current_version_id"], data["after"]["current_version_id"]) == (1, 2)
    now = json.loads(run("diff", "s.v", "--from", str(data["after"]["last_modified_time_ms"]), "--json"))
    assert now["columns_changed"] == [{"before": {"name": "x", "type": "int", "comment": "the x", "nullable": True},
                                       "after": {"name": "x", "type": "long", "comment": "the x", "nullable": True}}]
    assert json.loads(run("diff", "s.v", "--from-event", "4", "--json"))["changed"] is False


def test_diff_to_a_time_compares_with_the_view_as_it_was_then(run):
    create(run, "s.v", "--comment", "one")
    for comment in ("two", "three"):
        time.sleep(0.003)  # each commit in a millisecond of its own
        run("alter", "s.v", "--comment", comment)
    events = json.loads(run("history", "s.v", "--json"))
    out = run("diff", "s.v", "--from-event", "1", "--to", events[1]["occurred_at"])
    assert "comment: one → two" in out.splitlines(), out
    assert out == run("diff", "s.v", "--from-event", "1", "--to-event", "2")
    assert out == run("diff", "s.v", "--from", str(events[0]["occurred_at_ms"]),
                      "--to", str(events[1]["occurred_at_ms"]))
    assert "comment: one → three" in run("diff", "s.v", "--from-event", "1").splitlines()  # no --to: now


def test_diff_of_a_dialect_spelt_anew_with_the_same_sql_says_so(run):
    create(run, "s.v", "--representation", "Trino", "SELECT 1 AS x")
    run("replace", "s.v", "--sql", "SELECT 1 AS x", "--representation", "trino",
        "SELECT 1 AS x", "--column", "x:int:the x")
    lines = run("diff", "s.v", "--from-event", "1").splitlines()
    assert lines[2:] == ["representation Trino → trino: changed", "(the same SQL)"]  # not a heading over nothing


@pytest.mark.parametrize("before, after, shown", [
    ("SELECT 1 AS x", "SELECT 1 AS x\n", ["@@ -1 +1,2 @@", " SELECT 1 AS x", "+"]),
    ("SELECT 1 AS x\nFROM t", "SELECT 1 AS x\r\nFROM t", ["@@ -1,2 +1,2 @@", "-SELECT 1 AS x", "+SELECT 1 AS x\\x0d",
                                                       " FROM t"]),
])
def test_diff_of_sql_whose_line_breaks_alone_changed_shows_them(run, before, after, shown):
    """SQL is kept byte for byte, so a new line break alone is a change: its diff shows it (split at
    the line breaks str.splitlines knows, the two sides had the same lines and no line showed)."""
    run("create", "s.v", "--sql", before, "--column", "x:int:the x")
    run("replace", "s.v", "--sql", after, "--column", "x:int:the x")
    lines = run("diff", "s.v", "--from-event", "1").splitlines()
    assert lines[2:] == ["representation spark: changed", "--- before", "+++ after", *shown]


def test_diff_prints_no_section_of_what_did_not_change(run):
    create(run, "s.v", "--comment", "one", "--property", "k=v")
    run("alter", "s.v", "--comment", "two")
    assert run("diff", "s.v", "--from-event", "1").splitlines()[2:] == ["comment: one → two"]
    run("rename", "s.v", "t.v")
    assert run("diff", "t.v", "--from-event", "2").splitlines()[2:] == ["renamed: s.v → t.v"]


def test_diff_json_of_a_rename_has_each_sides_dotted_identifier(run):
    create(run, "s.v")
    run("rename", "s.v", "t.v")
    data = json.loads(run("diff", "t.v", "--from-event", "1", "--json"))
    assert (data["before"]["identifier"], data["after"]["identifier"]) == ("s.v", "t.v") and data["changed"] is True


def test_diff_across_a_name_taken_again_says_it_is_another_view_and_lists_each_column(run):
    create(run, "s.v")
    run("drop", "s.v")
    run("create", "s.v", "--sql", "SELECT 1 AS y", "--column", "y:bigint")
    first, _, second = (e["view_id"] for e in json.loads(run("audit", "--view", "s.v", "--json")))
    out = run("diff", "s.v", "--from-event", "1")
    assert f"another view: uuid {first}, then {second} (the name changed hands)" in out.splitlines(), out
    assert re.search(r"^│ removed │ x +│ int +│ yes +│ the x +│$", out, re.M), out
    assert re.search(r"^│ added +│ y +│ long +│ yes +│ +│$", out, re.M), out
    assert "renamed" not in out


def test_diff_from_a_view_renamed_onto_a_name_taken_again_says_another_view_not_renamed(run):
    """Two views whose sides differ in name too (the first renamed onto the name, then dropped, and
    the name taken again) are another view, not a rename: the line says the name changed hands."""
    create(run, "s.a")  # 1: the first view, as s.a
    run("rename", "s.a", "s.v")  # 2
    run("drop", "s.v")  # 3
    create(run, "s.v")  # 4: another view of that name
    out = run("diff", "s.v", "--from-event", "1")
    assert out.splitlines()[0].startswith("before: s.a  version 1"), out
    assert any(line.startswith("another view: uuid ") for line in out.splitlines()), out
    assert "renamed" not in out


def test_diff_shows_what_was_removed_and_each_sides_value_of_a_changed_property(run):
    _changed_view(run)
    run("alter", "s.v", "--set", "owner=finance")
    back = run("diff", "s.v", "--from-event", "3", "--to-event", "1")  # version 2 with owner=bi, then version 1
    assert re.search(r"^│ removed +│ owner +│ bi +│ +│$", back, re.M), back
    lines = back.splitlines()
    assert lines[lines.index("representation trino: removed"):][:5] == [
        "representation trino: removed", "--- before", "+++ after", "@@ -1 +0,0 @@", "-SELECT 1 AS x"]
    changed = run("diff", "s.v", "--from-event", "3")
    assert re.search(r"^│ changed +│ owner +│ bi +│ finance +│$", changed, re.M), changed


def test_diff_prints_each_kind_of_change_with_both_sides(run):
    """Every line of a diff of a view changed in each way the CLI prints (made through the API: a
    column that is not nullable), the SQL's unchanged lines as a unified diff's context."""
    with ViewStore(run.db, actor="dave") as store:
        store.create_view("s.v", columns=[Column("a", "int", None, False), Column("b", "int")],
                          representations=[("spark", "SELECT 1 AS a, 2 AS b\nFROM t\nWHERE x > 1\nAND y > 2")],
                          default_namespace="s", comment="one")
        time.sleep(0.003)  # each commit in a millisecond of its own: each side's time shows
        store.alter_view("s.v", ViewChange.update_comment(None))
        store.replace_view("s.v", columns=[Column("b", "int"), Column("a", "bigint", None, False)],
                           representations=[("spark", "SELECT 2 AS b, 1 AS a\nFROM t\nWHERE x > 1\nAND y > 2"),
                                            ("trino", "SELECT 2 AS b, 1 AS a"), ("presto", "SELECT 2 AS b, 1 AS a")],
                           default_namespace=(), default_catalog="prod", security_mode="INVOKER")
        created, _, replaced = (e.occurred_at for e in store.history("s.v"))

    def when(ms):
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    lines = run("diff", "s.v", "--from-event", "1").splitlines()
    (row,) = [line for line in lines if line.startswith("│")]  # the table's one row
    assert re.fullmatch(r"│ changed │ a +│ int → long +│ no +│ +│", row), lines
    assert [line for line in lines if line[:1] not in "┏┃┡│└"] == [
        f"before: s.v  version 1  last changed by dave at {when(created)} UTC",
        f"after:  s.v  version 2  last changed by dave at {when(replaced)} UTC",
        "comment: one → (none)", "security mode: DEFINER → INVOKER", "default catalog: (none) → prod",
        "default namespace: s → (none)",
        "columns",
        "column order: a, b → b, a",
        "representation trino: added", "--- before", "+++ after", "@@ -0,0 +1 @@", "+SELECT 2 AS b, 1 AS a",
        "representation presto: added", "--- before", "+++ after", "@@ -0,0 +1 @@", "+SELECT 2 AS b, 1 AS a",
        "representation spark: changed", "--- before", "+++ after", "@@ -1,4 +1,4 @@", "-SELECT 1 AS a, 2 AS b",
        "+SELECT 2 AS b, 1 AS a", " FROM t", " WHERE x > 1", " AND y > 2"]
    back = run("diff", "s.v", "--from-event", "3", "--to-event", "1").splitlines()
    assert back[2:6] == ["comment: (none) → one", "security mode: INVOKER → DEFINER", "default catalog: prod → (none)",
                         "default namespace: (none) → s"]


def test_diff_prints_a_default_namespace_of_two_parts_dotted_on_either_side(run):
    with ViewStore(run.db, actor="dave") as store:
        store.create_view("s.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace=["sales", "eu"])
        store.replace_view("s.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                           default_namespace=["sales", "us"])
    assert "default namespace: sales.eu → sales.us" in run("diff", "s.v", "--from-event", "1").splitlines()
    assert "default namespace: sales.us → sales.eu" in run("diff", "s.v", "--from-event", "2",
                                                           "--to-event", "1").splitlines()


def test_diff_of_a_column_comment_removed_shows_it_blank_after_the_arrow(run):
    """A column comment removed reads as a column without one reads in the same table, a blank cell
    ("(none)" only where an empty comment and none would read alike)."""
    create(run)
    run("replace", "s.v", "--sql", "SELECT 1 AS x", "--column", "x:int")
    (row,) = [line for line in run("diff", "s.v", "--from-event", "1").splitlines() if line.startswith("│")]
    assert re.fullmatch(r"│ changed │ x +│ int +│ yes +│ the x → +│", row), row


def test_diff_of_a_column_comment_from_empty_to_none_shows_which_is_which(run):
    """An empty comment and none are two comments (the diff calls the column changed): its row shows
    the change, not the same blank cell on both sides."""
    with ViewStore(run.db, actor="dave") as store:
        store.create_view("s.v", columns=[Column("x", "int", "")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s")
        store.replace_view("s.v", columns=[Column("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                           default_namespace="s")
    lines = run("diff", "s.v", "--from-event", "1").splitlines()
    (row,) = [line for line in lines if line.startswith("│")]
    assert re.fullmatch(r"│ changed │ x +│ int +│ yes +│ +→ \(none\) +│", row), lines
    back = [line for line in run("diff", "s.v", "--from-event", "2", "--to-event", "1").splitlines()
            if line.startswith("│")]
    assert re.fullmatch(r"│ changed │ x +│ int +│ yes +│ \(none\) → +│", back[0]), back


def test_diff_refuses_an_event_of_another_view_as_show_at_event_does(run):
    _changed_view(run)
    for args in (["--from-event", "5"], ["--from-event", "1", "--to-event", "5"], ["--from-event", "6"]):
        out = run("diff", "s.v", *args, code=1)
        position = args[-1]
        assert out == f"error: {_no_event(position, 's.v')}\n"
        assert out == run("show", "s.v", "--at-event", position, code=1)
        error = json.loads(run("diff", "s.v", *args, "--json", code=1))["error"]
        assert (error["type"], error["message"]) == ("ValidationError", out[len("error: "):-1])


def test_diff_from_before_the_view_existed_is_an_error(run):
    _changed_view(run)
    out = run("diff", "s.v", "--from", "2000-01-01", code=1)
    begins = json.loads(run("history", "s.v", "--json"))[0]["occurred_at"]
    assert out == (f"error: before: no view s.v existed at 2000-01-01T00:00:00.000+00:00 (its history begins at "
                   f"{begins})\n")  # as --json writes times
    run("drop", "s.v")
    dropped = json.loads(run("history", "s.v", "--json"))[-1]
    assert run("diff", "s.v", "--from-event", "1", code=1) == (  # now it is gone: the side is named
        f"error: after (now): no such view: s.v (dropped at {_second(dropped)} UTC by carol; its history remains)\n")
    assert run("diff", "s.v", "--from-event", "6", "--to-event", "1", code=1) == \
        "error: before: view s.v was dropped by that event\n"


def test_show_of_a_mistyped_name_offers_the_close_live_names(run):
    create(run, "sales.orders")
    assert run("show", "sales.ordrs", code=1) == "error: no such view: sales.ordrs (did you mean sales.orders?)\n"
    error = json.loads(run("show", "sales.ordrs", "--json", code=1))["error"]
    assert (error["type"], error["message"]) == ("NoSuchViewError",
                                                 "no such view: sales.ordrs (did you mean sales.orders?)")


def test_a_dialect_no_engine_and_not_sqlglot_has_is_stored_with_a_note_on_stderr(run):
    def invoke(*args):
        result = CliRunner().invoke(main, ["--db", str(run.db), "--actor", "carol", *args])
        assert result.exit_code == 0, result.output
        return result.stdout, result.stderr

    note = "note: dialect 'sprk' is not one sqlglot knows; stored as given\n"
    assert invoke("create", "s.v", "--dialect", "sprk", "--sql", "SELECT 1 AS x") == (
        "created s.v (version 1, stream version 1)\n", note)
    out, err = invoke("replace", "s.v", "--dialect", "sprk", "--sql", "SELECT 2 AS x", "--representation", "SPRK2",
                      "SELECT 2 AS x", "--json")
    assert json.loads(out)["representations"][0]["dialect"] == "sprk"  # stored as given, --json untouched
    assert err == note + "note: dialect 'SPRK2' is not one sqlglot knows; stored as given\n"
    # the engines' dialects, in any case, and those sqlglot knows, get none (Flink is one sqlglot lacks)
    for dialect in ("spark", "Trino", "hive", "flink", "presto", "snowflake", "spark2"):
        assert invoke("create", f"s.{dialect}", "--dialect", dialect, "--sql", "SELECT 1 AS x")[1] == ""
    assert invoke("alter", "s.spark", "--add-representation", "duckdb", "SELECT 1 AS x",
                  "--add-representation", "trinno", "SELECT 1 AS x") == (
        "altered s.spark (version 2, stream version 3)\n",
        "note: dialect 'trinno' is not one sqlglot knows; stored as given\n")


def test_sql_is_stored_as_written_unparsed_and_only_a_blank_one_is_refused(run):
    """As the README says: viewstore does not parse a representation's SQL (an engine reads it), so
    SQL no engine would take is stored as given, with nothing on stderr; blank SQL is refused, exit 1."""
    result = CliRunner().invoke(main, ["--db", str(run.db), "create", "s.v", "--sql", "SELEC 1 FROM",
                                       "--column", "x:int"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(run("show", "s.v", "--json"))["representations"] == [{"dialect": "spark", "sql": "SELEC 1 FROM"}]
    assert run("alter", "s.v", "--add-representation", "trino", " \n ", code=1) == (
        "error: the SQL of a representation must not be empty\n")
    assert read(run.db, "event_count") == 1


def test_a_dialect_is_known_to_an_engine_or_to_sqlglot_in_any_case(run):
    """A dialect is compared as lower case, with the engines' and with sqlglot's (whose names are
    lower case): FLINK, which sqlglot lacks, and DuckDB, which it has, are given no note."""
    def invoke(*args):
        result = CliRunner().invoke(main, ["--db", str(run.db), "--actor", "carol", *args])
        assert result.exit_code == 0, result.output
        return result.stderr

    assert invoke("create", "s.v", "--dialect", "FLINK", "--sql", "SELECT 1 AS x") == ""
    assert invoke("alter", "s.v", "--add-representation", "DuckDB", "SELECT 1 AS x") == ""
    assert invoke("alter", "s.v", "--add-representation", "DuckDBX", "SELECT 1 AS x") == (
        "note: dialect 'DuckDBX' is not one sqlglot knows; stored as given\n")


def test_create_with_json_still_notes_an_unknown_dialect_on_stderr(run):
    """--json leaves the note on stderr, as replace's: stdout holds the view's JSON alone."""
    result = CliRunner().invoke(main, ["--db", str(run.db), "--actor", "carol", "create", "s.v", "--dialect", "sprk",
                                       "--sql", "SELECT 1 AS x", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["representations"][0]["dialect"] == "sprk"
    assert result.stderr == "note: dialect 'sprk' is not one sqlglot knows; stored as given\n"

def _second(event_json):
    """An event's time as a no-such-view message gives it: to the second."""
    return dt.datetime.fromisoformat(event_json["occurred_at"]).strftime("%Y-%m-%d %H:%M:%S")


def test_every_command_on_a_name_renamed_away_says_where_the_view_went(run, tmp_path):
    create(run, "a.b")
    run("rename", "a.b", "a.c")
    renamed = json.loads(run("history", "a.c", "--json"))[-1]
    message = f"no such view: a.b (renamed to a.c (live) at {_second(renamed)} UTC by carol; its history remains)"
    for args in (["show", "a.b"], ["alter", "a.b", "--comment", "x"], ["drop", "a.b"], ["rename", "a.b", "a.d"],
                 ["rollback", "a.b", "1"], ["export", "a.b", "--location", str(tmp_path / "out")],
                 ["hms", "export", "a.b", "--engine", "trino"]):
        assert run(*args, code=1) == f"error: {message}\n", args
    assert run("diff", "a.b", "--from-event", "1", code=1) == f"error: after (now): {message}\n"
    error = json.loads(run("show", "a.b", "--json", code=1))["error"]
    assert (error["type"], error["message"]) == ("NoSuchViewError", message)
    assert run("drop", "a.b", "--if-exists") == "no view a.b; nothing dropped\n"
    run("drop", "a.c")
    dropped = json.loads(run("history", "a.c", "--json"))[-1]
    assert run("show", "a.c", code=1) == (
        f"error: no such view: a.c (dropped at {_second(dropped)} UTC by carol; its history remains)\n")
    assert run("drop", "a.b", code=1) == (
        f"error: no such view: a.b (renamed to a.c at {_second(renamed)} UTC by carol, since dropped; "
        "its history remains)\n")
    assert run("drop", "a.never", code=1) == "error: no such view: a.never\n"


def test_a_mistyped_db_is_an_error_not_an_empty_catalog(run, tmp_path):
    for args in (["list"], ["audit", "--since", "0"], ["show", "s.v"], ["history", "s.v"], ["rebuild"],
                 ["query", "SELECT 1 AS one"], ["alter", "s.v", "--comment", "x"], ["drop", "s.v"]):
        assert run(*args, code=1) == (f"error: no viewstore database at {run.db} (create or import a view to start "
                                      "one there; --db or VIEWSTORE_DB names another)\n")  # the reason is no file
        assert not run.db.exists()
    create(run)  # adding a view starts the file
    assert run("list") == "s.v\n"
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as raw:
        raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    raw.close()
    result = CliRunner().invoke(main, ["--db", str(app), "create", "s.v", "--sql", "SELECT 1 AS x"])
    assert result.exit_code == 1
    assert "is not a viewstore database: it holds other tables or views (customers)" in result.output


def test_a_missing_db_named_relative_to_the_working_folder_is_no_missing_folder(tmp_path, monkeypatch):
    """A --db of a bare file name is in the working folder, which exists: the message sends the user
    to create a view there, not to a folder of an empty name."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VIEWSTORE_DB", raising=False)
    result = CliRunner().invoke(main, ["--db", "views.db", "list"])
    assert (result.exit_code, result.output) == (1, "error: no viewstore database at views.db (create or import a "
                                                    "view to start one there; --db or VIEWSTORE_DB names another)\n")


def test_a_db_in_a_missing_folder_says_so_rather_than_to_create_a_view_there(tmp_path):
    """`create` cannot start a store in a folder that does not exist, so the message must not send
    the user there: it names the missing folder."""
    missing = tmp_path / "nowhere"
    db = missing / "views.db"
    for args in (["list"], ["show", "s.v"]):
        result = CliRunner().invoke(main, ["--db", str(db), *args])
        assert (result.exit_code, result.output) == (1, f"error: no viewstore database at {db}: there is no folder "
                                                        f"{missing} (--db or VIEWSTORE_DB names another; create "
                                                        f"makes no folder)\n")
    result = CliRunner().invoke(main, ["--db", str(db), "create", "s.v", "--sql", "SELECT 1 AS x"])
    assert result.exit_code == 1 and f"there is no folder {missing}" in result.output
    assert not missing.exists()


#: every command that reads a store or changes a view it holds: none starts a store
NEEDS_A_STORE = [
    ["list"], ["show", "s.v"], ["history", "s.v"], ["audit"], ["audit", "--since", "0"], ["export", "s.v"],
    ["query", "SELECT 1 AS one"], ["rebuild"], ["alter", "s.v", "--comment", "x"], ["rename", "s.v", "s.w"],
    ["rollback", "s.v", "1"], ["drop", "s.v", "--if-exists"], ["hms", "export", "s.v", "--engine", "spark"],
    ["spark", "check"], ["spark", "register"],
]


@pytest.mark.parametrize("args", NEEDS_A_STORE)
def test_an_empty_file_is_no_store_and_a_read_only_command_leaves_it_empty(run, args):
    """A 0-byte --db (touch, a shell's >) is not a store: SQLite would take it for a new database and
    the command would start a store in it. Only the commands that add a view start one there."""
    run.db.write_bytes(b"")
    out = run(*args, code=1)
    assert out == (f"error: no viewstore database at {run.db}: the file is empty (create or import a view to "
                   f"start one there; --db or VIEWSTORE_DB names another)\n"), out
    assert run.db.stat().st_size == 0
    assert sorted(p.name for p in run.db.parent.iterdir()) == [run.db.name]  # no -wal, -shm or warehouse


def test_a_command_that_adds_a_view_starts_the_store_in_an_empty_file(run):
    run.db.write_bytes(b"")
    create(run)
    assert run("list") == "s.v\n"


def _tableless(path, how):
    """A SQLite file with a valid header and no tables: made by VACUUM, in WAL mode, or with its
    only table dropped."""
    conn = sqlite3.connect(path, isolation_level=None)
    if how == "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    elif how == "dropped":
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("DROP TABLE t")
    conn.execute("VACUUM" if how == "vacuum" else "PRAGMA user_version = 0")
    conn.close()
    assert path.read_bytes().startswith(b"SQLite format 3\x00")


@pytest.mark.parametrize("how", ["vacuum", "wal", "dropped"])
@pytest.mark.parametrize("args", NEEDS_A_STORE)
def test_a_sqlite_file_with_no_tables_is_no_store_and_a_read_only_command_leaves_it_as_it_was(run, args, how):
    """A SQLite database with nothing in it is refused as an empty file is, byte for byte untouched."""
    _tableless(run.db, how)
    before = run.db.read_bytes()
    out = run(*args, code=1)
    assert out == (f"error: no viewstore database at {run.db}: the file is a SQLite database with no tables "
                   f"(create or import a view to start one there; --db or VIEWSTORE_DB names another)\n"), out
    assert run.db.read_bytes() == before
    assert sorted(p.name for p in run.db.parent.iterdir()) == [run.db.name]  # no -wal, -shm or warehouse


@pytest.mark.parametrize("how", ["vacuum", "wal", "dropped"])
def test_a_command_that_adds_a_view_starts_the_store_in_a_sqlite_file_with_no_tables(run, how):
    _tableless(run.db, how)
    create(run)
    assert run("list") == "s.v\n"


def test_a_sqlite_file_with_only_a_user_version_is_still_another_programs(run):
    """A mark with no tables is not nothing: the store refuses it as before, and leaves it as it was."""
    with sqlite3.connect(run.db) as raw:
        raw.execute("PRAGMA user_version = 7")
    raw.close()
    before = run.db.read_bytes()
    assert "is not a viewstore database: it holds another program's user_version" in run("list", code=1)
    assert run.db.read_bytes() == before


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    """`viewstore list | head -1`: the closed pipe ends the command quietly, with exit code 0."""
    db = tmp_path / "many.db"
    with ViewStore(db) as store:
        for i in range(2000):
            store.create_view(f"s.v{i}", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
    reader = subprocess.Popen([sys.executable, "-m", "viewstore", "--db", str(db), "list"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout.readline() == b"s.v0\n"
    reader.stdout.close()  # as head does after its line
    assert reader.wait(timeout=60) == 0
    assert reader.stderr.read() == b""
    reader.stderr.close()


@pytest.mark.parametrize("as_json", [False, True])
def test_output_the_system_refuses_is_one_error_line_not_a_traceback(tmp_path, as_json):
    """A full disk refuses what a command prints (stdout is /dev/full): the OSError is said as the
    store's errors are, one line with exit code 1, and as JSON with --json."""
    db = tmp_path / "p.db"
    with ViewStore(db) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
    with open("/dev/full", "w") as full:
        process = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(db), "list", *["--json"] * as_json],
                                 stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert process.returncode == 1
    message = "[Errno 28] No space left on device"
    assert process.stderr == (json.dumps({"error": {"type": "OSError", "message": message, "exit_code": 1}}) + "\n"
                              if as_json else f"error: {message}\n")



@pytest.mark.parametrize("as_json", [False, True])
def test_a_stdout_closed_at_the_start_is_said_as_a_stdout_that_refuses_output(tmp_path, as_json):
    """Started with stdout closed (`viewstore list >&-`), Python's sys.stdout is None, and click and
    rich printed nothing: the command exited 0 having given nothing. It fails as a full disk does
    (exit code 1, one line, as JSON with --json); a command that prints nothing still runs."""
    db = tmp_path / "p.db"
    with ViewStore(db) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
    closed = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(db), "list", *["--json"] * as_json],
                            preexec_fn=lambda: os.close(1), stderr=subprocess.PIPE, text=True, timeout=60)
    assert closed.returncode == 1
    message = "[Errno 9] Bad file descriptor"
    assert closed.stderr == (json.dumps({"error": {"type": "OSError", "message": message, "exit_code": 1}}) + "\n"
                             if as_json else f"error: {message}\n")
    # a program calling main() finds its sys.stdout as it was
    program = "import sys; from viewstore.cli import main; main(sys.argv[1:], standalone_mode=False); " \
              "assert sys.stdout is None"
    quiet = subprocess.run([sys.executable, "-c", program, "--db", str(db), "list", "t"],
                           preexec_fn=lambda: os.close(1), stderr=subprocess.PIPE, text=True, timeout=60)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == "no live view directly in namespace t (the namespaces that hold views: s)\n"


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["--json", "--help"], ["--version", "--json"],
                                  ["--json", "--version"]])
@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_help_and_version_to_a_stdout_that_refuses_them_end_as_a_command_does(args, stdout):
    """--help and --version print while the command line is read, before a command runs and its
    errors are said: to a full disk or a stdout closed at the start they ended in a traceback. They
    end as a command does there: one line (a JSON object with --json), exit code 1."""
    command = [sys.executable, "-m", "viewstore", *args]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            process = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
        message = "[Errno 28] No space left on device"
    else:
        process = subprocess.run(command, preexec_fn=lambda: os.close(1), stderr=subprocess.PIPE, text=True,
                                 timeout=60)
        message = "[Errno 9] Bad file descriptor"
    assert process.returncode == 1, process.stderr
    assert process.stderr == (json.dumps({"error": {"type": "OSError", "message": message, "exit_code": 1}}) + "\n"
                              if "--json" in args else f"error: {message}\n")


@pytest.mark.parametrize("args", [["--help"], ["--json", "--help"], ["--version"], ["--version", "--json"]])
def test_help_and_version_to_a_reader_that_went_away_end_quietly(args):
    """A closed pipe (viewstore --help | true, the reader gone before it is written to) is click's
    quiet end, as for a command: exit code 1 and nothing said, not an error line (planted, the
    BrokenPipeError taken as any OSError said error: [Errno 32] Broken pipe, or its JSON object)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        process = subprocess.run([sys.executable, "-m", "viewstore", *args], stdout=write_end,
                                 stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert (process.returncode, process.stderr) == (1, "")


def test_event_tables_read_as_text(run, monkeypatch):
    """Times whole and compact; properties as key=value, removals as -key, each change on its line."""
    monkeypatch.setenv("COLUMNS", "200")
    create(run)
    run("alter", "s.v", "--set", "owner=finance", "--set", "team=x", "--comment", "Big orders, in EUR")
    run("alter", "s.v", "--unset", "team")
    run("rename", "s.v", "s.w")
    out = run("history", "s.w")
    when = json.loads(run("history", "s.w", "--json"))[0]["occurred_at"]  # 2026-11-25T18:49:59.121+00:00
    assert f"│ {when[:10]} {when[11:23]} │" in out
    for cell in ("│ version 1 ", "│ comment: Big orders, in EUR ", "│ owner=finance ", "│ team=x ", "│ -team ",
                 "│ from s.v "):
        assert cell in out, cell


def test_an_events_details_keep_a_property_keys_leading_blank(run, monkeypatch):
    """' k' is another key than 'k': its details cell shows the blank."""
    monkeypatch.setenv("COLUMNS", "200")
    create(run)
    with ViewStore(run.db, actor="dave") as store:
        store.alter_view("s.v", ViewChange.set_property(" k", "v"))
    out = run("history", "s.v")
    assert re.search(r"│ view\.properties_set │  k=v +│$", out, re.M), out


def _rich_table(title, headers, rows, width):
    """What rich's own Table prints for these cells (data_table), each line without trailing blanks."""
    from rich.console import Console

    from viewstore.tables import data_table

    table = data_table(*headers, title=title)
    for row in rows:
        table.add_row(*row)
    console = Console(width=width, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    console.print(table)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def test_event_and_query_tables_look_as_rich_draws_them_when_they_fit(run, monkeypatch):
    """The tables are laid out by viewstore, not by rich's Table (linear in their cells), but a table
    that fits is drawn cell for cell as rich draws it: box, header, a change a line, wide characters."""
    monkeypatch.setenv("COLUMNS", "200")
    create(run, "s.v", "--comment", "näive 日本語 comment")
    run("alter", "s.v", "--set", "owner=finance", "--set", "k=\x1b[1mv", "--add-representation", "trino", "SELECT 1 x")
    events = json.loads(run("history", "s.v", "--json"))
    from viewstore.cli import _details, _table_time
    from viewstore import ViewStore as Store

    with Store(run.db) as store:
        rows = [(str(e.position), _table_time(e.occurred_at), e.actor, e.view, str(e.stream_version), e.type,
                 _details(e)) for e in store.history("s.v")]
    assert len(rows) == len(events) == 4
    expected = _rich_table("history of s.v", ["pos", "time (UTC)", "actor", "view", "v", "type", "details"], rows, 200)
    assert run("history", "s.v").splitlines() == expected
    assert "│ trino" in run("history", "s.v") and "k=\\x1b[1mv" in run("history", "s.v")  # escaped, as before
    sql = "SELECT position, actor, type, identifier FROM events ORDER BY position"
    with Store(run.db) as store:
        cells = [[str(v) for v in row.values()] for row in store.query(sql)]
    assert run("query", sql).splitlines() == _rich_table(None, ["position", "actor", "type", "identifier"], cells, 200)
    # text wider than its column wraps at spaces (a longer word folds): every character is there
    table = run("query", "SELECT position, payload FROM events ORDER BY position")
    assert all(cell_len(line) == 200 for line in table.splitlines())
    payloads = [r["payload"] for r in json.loads(run("query", "SELECT payload FROM events", "--json"))]
    column = "".join(line.split("│")[2] for line in table.splitlines()[3:-1])
    assert "".join(column.split()) == "".join("".join(p.split()) for p in payloads)


def _event_blocks(out):
    """An unboxed event table's rows: for each, the text of each column, its lines joined (by the
    header's column starts), and the lines themselves."""
    lines = out.splitlines()
    header = lines[1]
    starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
    names = header.split()
    names = ["pos", "time (UTC)", "actor", "view", "v", "type", "details"]
    assert len(starts) == len(names), header
    rows = []
    for line in lines[3:]:
        if line[:1].strip():  # a new row starts with its position
            rows.append([])
        rows[-1].append([line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])])
    return [({name: [r[i] for r in row if r[i]] for i, name in enumerate(names)}) for row in rows]


def test_an_event_table_reads_at_80_columns(run, monkeypatch):
    """Seven columns do not fit 80 with rich's box: the table drops its vertical rules, the details
    and actor wrap, the time breaks between date and time of day, an event type after a '.' or '_'
    and a view's identifier after a dot only (never inside a name), no number is cut, and no line
    is wider than the console."""
    monkeypatch.setenv("COLUMNS", "80")
    create(run, "sales.orders_by_region_and_day")
    run("alter", "sales.orders_by_region_and_day", "--add-representation", "trino", "SELECT 1 AS x",
        "--comment", "Orders per region and day, in EUR, refreshed every night")
    run("alter", "sales.orders_by_region_and_day", "--set", "owner=finance")
    events = json.loads(run("audit", "--json"))
    for out in (run("audit"), run("history", "sales.orders_by_region_and_day")):
        lines = out.splitlines()
        assert all(cell_len(line) <= 80 for line in lines), out
        assert "│" not in out and "┃" not in out  # no vertical rules
        assert re.match(r"pos +time \(UTC\) +actor +view +v +type +details$", lines[1]), lines[1]
        blocks = _event_blocks(out)
        assert len(blocks) == len(events)
        for e, block in zip(events, blocks):
            assert block["pos"] == [str(e["position"])] and block["v"] == [str(e["stream_version"])]
            assert block["time (UTC)"] == [e["occurred_at"][:10], e["occurred_at"][11:23]]
            assert "".join(block["view"]) == e["view"] and all(p.endswith(".") for p in block["view"][:-1])
            assert block["view"][-1] == "orders_by_region_and_day"  # the name whole, on a line of its own
            assert "".join(block["type"]) == e["type"] and all(p[-1] in "._" for p in block["type"][:-1])
        details = "".join("".join(b["details"]) for b in blocks).replace(" ", "")  # every character, in order
        assert details == "version1comment:Ordersperregionandday,inEUR,refreshedeverynighttrinoversion2owner=finance"
    monkeypatch.setenv("COLUMNS", "100")  # room enough: the identifier whole, on one line
    for block in _event_blocks(run("audit")):
        assert block["view"] == ["sales.orders_by_region_and_day"]
    monkeypatch.setenv("COLUMNS", "200")
    wide = run("audit")  # where it fits, rich's box again, an event a line (and one a line per change)
    assert wide.count("\n") == 1 + 3 + 5 + 1  # title; top, header, rule; 4 events, one of 2 changes; bottom
    assert "│ view.representation_added │" in wide


def test_a_view_name_is_never_cut_inside_a_name_however_narrow_the_console(run, monkeypatch):
    """Where nothing else gives, the table runs over the console rather than cut a name part: what
    is printed can be searched for (grep) and copied."""
    name = "warehouse.sales.orders_by_region_and_day_with_returns"
    create(run, name)
    for width in ("60", "80", "120"):
        monkeypatch.setenv("COLUMNS", width)
        for out in (run("audit"), run("history", name)):
            assert "orders_by_region_and_day_with_returns" in out, (width, out)
            assert "warehouse." in out and "sales." in out


def test_piped_tables_are_not_wrapped_to_any_width_unless_columns_says_so(run, monkeypatch, tmp_path):
    """Output for a program (a pipe, a file) keeps each row on one line, whatever the width of a
    terminal the command may also be attached to: nothing is wrapped for a reader that is not there."""
    monkeypatch.delenv("COLUMNS", raising=False)
    name = "sales.orders_by_region_and_day"
    comment = "Orders per region and day, in EUR, refreshed every night at two in the morning, UTC"
    sql = "SELECT region, day, count(*) AS orders, sum(amount) AS amount FROM sales.orders GROUP BY region, day"
    create(run, name)
    run("alter", name, "--comment", comment)
    run("replace", name, "--sql", sql, "--column", "x:int")
    for out in (run("audit"), run("history", name), run("query", "SELECT identifier, payload FROM events")):
        rows = [line for line in out.splitlines() if line.startswith("│ ")]
        assert len(rows) == 3 and all(f"│ {name} │" in line and line.endswith(" │") for line in rows), out
    assert f"comment: {comment} " in run("audit")
    shown = run("show", name)
    assert f"│ spark   │ {sql} │" in shown and f"comment: {comment}\n" in shown
    process = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(run.db), "audit"], capture_output=True,
                             text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert f"comment: {comment} " in process.stdout and f"│ {name} │" in process.stdout
    monkeypatch.setenv("COLUMNS", "wide")  # no number, no width (rich would take 80 columns)
    assert f"comment: {comment} " in run("audit")
    monkeypatch.setenv("COLUMNS", "80")  # asked for: that width
    assert all(cell_len(line) <= 80 for line in run("audit").splitlines())


@pytest.mark.parametrize("columns", [None, "80"])
def test_show_prints_no_trailing_blanks_after_a_table_title(run, monkeypatch, columns):
    """rich pads a table's title to the table's width: after a long SQL text, piped, that was
    hundreds of blanks on the title's line. Titles are lines of their own, as TextTable prints them."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    run("create", "s.v", "--sql", "SELECT " + ", ".join(f"c{i}" for i in range(60)) + " FROM t", "--column", "c0:int")
    out = run("show", "s.v")
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
    assert "\ncolumns\n" in out and "\nrepresentations\n" in out and "\nversions\n" in out


def test_show_lists_the_versions_and_the_version_log(run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    create(run)
    run("alter", "s.v", "--add-representation", "trino", "SELECT 1 AS x")
    run("rollback", "s.v", "1")
    out = run("show", "s.v")
    assert re.search(r"│ 1 \(current\) +│ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} │ 0 +│ spark +│ x +│", out), out
    assert re.search(r"│ 2 +│ [-\d: .]+│ 0 +│ spark, trino +│ x +│", out), out
    assert "version log: 1 → 2 → 1" in out
    for i in range(12):
        run("replace", "s.v", "--sql", f"SELECT {i} AS x", "--column", "x:int")
    out = run("show", "s.v")
    assert "versions (the latest 10; --json has all)" in out and "│ 14 (current) " in out and "│ 4 " not in out
    assert "version log (the latest 10 of 15): 5 → 6 → " in out


def test_alter_representation_options_in_any_order_and_changes_that_change_nothing(run):
    create(run)  # spark only
    run("alter", "s.v", "--remove-representation", "spark", "--add-representation", "trino", "SELECT 2 AS x")
    view = json.loads(run("show", "s.v", "--json"))
    assert [r["dialect"] for r in view["representations"]] == ["trino"]  # added before the last one went
    run("alter", "s.v", "--remove-representation", "TRINO", "--add-representation", "trino", "SELECT 3 AS x")
    assert json.loads(run("history", "s.v", "--json"))[-1]["type"] == "view.representation_updated"
    assert json.loads(run("show", "s.v", "--json"))["representations"] == [{"dialect": "trino", "sql": "SELECT 3 AS x"}]
    events = len(json.loads(run("audit", "--json")))
    assert run("alter", "s.v", "--unset", "no_such_key").startswith("nothing to change in s.v ")
    assert run("rename", "s.v", "S.V") == "s.v already has that name; nothing renamed\n"
    assert len(json.loads(run("audit", "--json"))) == events


def test_alter_readding_a_removed_dialect_once_in_any_case_updates_it_and_twice_is_an_error(run):
    create(run, "s.v", "--representation", "trino", "SELECT 1 AS x")
    out = run("alter", "s.v", "--remove-representation", "trino", "--add-representation", "trino", "SELECT 2 AS x",
              "--add-representation", "trino", "SELECT 3 AS x", code=1)
    assert out.startswith("error: ") and "Cannot add multiple queries for dialect trino" in out
    assert len(json.loads(run("history", "s.v", "--json"))) == 1  # nothing written
    run("alter", "s.v", "--remove-representation", "trino", "--add-representation", "TRINO", "SELECT 4 AS x")
    assert [e["type"] for e in json.loads(run("history", "s.v", "--json"))][1:] == ["view.representation_updated"]
    sql = {r["dialect"].lower(): r["sql"] for r in json.loads(run("show", "s.v", "--json"))["representations"]}
    assert sql == {"spark": "SELECT 1 AS x", "trino": "SELECT 4 AS x"}


def test_names_given_in_capitals_are_printed_and_used_as_stored(run):
    create(run, "Sales.Orders")
    assert json.loads(run("show", "sales.orders", "--json"))["default_namespace"] == ["sales"]
    assert run("rename", "Sales.Orders", "Sales.Orders2") == "renamed sales.orders to sales.orders2\n"
    assert run("alter", "Sales.Orders2", "--remove-representation", "trino", code=1) == \
        "error: view sales.orders2 has no 'trino' representation to remove\n"


def test_counts_read_as_english_and_progress_stays_off_a_pipe(run):
    create(run)
    assert run("audit").split("\n", 1)[0].rstrip() == "1 event"
    result = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(run.db), "rebuild"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert (result.stdout, result.stderr) == ("rebuilt projections from 1 event: they matched the log\n", "")


def test_rebuild_draws_its_progress_on_a_terminal_and_prints_the_same(run):
    from terminal import run_with_terminal_stderr

    for i in range(3):
        create(run, f"s.v{i}")
    piped = run("rebuild")
    code, stdout, terminal = run_with_terminal_stderr(main, ["--db", str(run.db), "rebuild"])
    assert (code, stdout) == (0, piped) == (0, "rebuilt projections from 3 events: they matched the log\n")
    assert "replaying events" in terminal and "3/3" in terminal, terminal
    assert "\x1b[" in terminal  # drawn, then taken away (transient): cursor moves and erasures


def test_export_and_import_draw_their_progress_on_a_terminal_and_print_the_same(run, tmp_path):
    """export and import draw a bar (the share done: versions read then put in the file; events
    made then written) on a terminal's stderr only; stdout is what a pipe gets, --json too."""
    from terminal import run_with_terminal_stderr

    create(run, "s.v")
    for i in range(2, 6):
        run("replace", "s.v", "--sql", f"SELECT {i} AS x", "--column", "x:int")
    location = str(tmp_path / "loc")
    for extra in ([], ["--json"]):  # written, then unchanged: the same path
        piped = run("export", "s.v", "--location", location, *extra)
        code, stdout, terminal = run_with_terminal_stderr(main, ["--db", str(run.db), "export", "s.v", "--location",
                                                                 location, *extra])
        assert (code, stdout) == (0, piped), terminal
        assert "exporting versions" in terminal and "100%" in terminal and "\x1b[" in terminal, terminal
    (path,) = (tmp_path / "loc" / "metadata").glob("*.metadata.json")
    for extra in ([], ["--json"]):
        piped = run("--db", str(tmp_path / f"piped{len(extra)}.db"), "import", str(path), "s.copy", *extra)
        code, stdout, terminal = run_with_terminal_stderr(main, ["--db", str(tmp_path / f"drawn{len(extra)}.db"),
                                                                 "--actor", "carol", "import", str(path), "s.copy",
                                                                 *extra])
        assert (code, stdout) == (0, piped), terminal
        assert "importing history" in terminal and "100%" in terminal and "\x1b[" in terminal, terminal
        assert (piped == "imported s.copy (5 versions, 5 events)\n" if not extra
                else json.loads(piped)["stream_version"] == 5)


def test_export_and_import_draw_nothing_on_a_pipe(run, tmp_path):
    create(run, "s.v")
    command = [sys.executable, "-m", "viewstore", "--db", str(run.db)]
    exported = subprocess.run([*command, "export", "s.v", "--location", str(tmp_path / "loc")],
                              capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0 and exported.stderr == "" and exported.stdout.endswith(".metadata.json\n")
    imported = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(tmp_path / "b.db"), "import",
                               exported.stdout.strip(), "s.w", "--json"], capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0 and imported.stderr == "" and json.loads(imported.stdout)["identifier"] == "s.w"


def test_errors_speak_of_the_command_line(run):
    create(run, "s.v", "--comment", "")
    assert json.loads(run("show", "s.v", "--json"))["comment"] is None  # as alter --comment '' removes it
    out = run("create", "s.w", "--sql", "SELECT 1", "--default-namespace", "", code=1)  # given: not the view's
    assert out == "error: bad default namespace ''\n", out
    out = run("create", "s.w", "--sql", "SELECT 1 AS x", "--column", "x:decimal(40,2)", code=1)
    assert out == "error: bad type 'decimal(40,2)': decimal precision must be 1-38 and scale 0-precision, " \
                  "got (40,2)\n", out
    out = run("query", "", code=1)
    assert out == "error: a query must be a statement that returns rows, such as a SELECT; this one returns none: " \
                  "''\n", out
    out = run("audit", "--type", "created", code=2)
    assert usage_error(out, "Error: Invalid value for '--type': 'created' is not one of 'view.comment_updated', "
                            "'view.created', 'view.dropped', 'view.imported', 'view.properties_removed', "
                            "'view.properties_set', 'view.renamed', 'view.replaced', 'view.representation_added', "
                            "'view.representation_removed', 'view.representation_updated', 'view.rolled_back'.")
    out = run("--actor", "  ", "create", "s.x", "--sql", "SELECT 1", code=2)
    assert usage_error(out, "") and out.splitlines()[-1] == "Error: Invalid value for '--actor': must not be empty"


def test_an_empty_viewstore_db_is_a_usage_error_as_an_empty_db_option_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["list"], env={"VIEWSTORE_DB": ""})
    assert result.exit_code == 2 and "VIEWSTORE_DB is set but empty" in result.output
    assert not (tmp_path / "viewstore.db").exists()
    for blank in ("", "  "):
        result = CliRunner().invoke(main, ["create", "s.v", "--sql", "SELECT 1"], env={"VIEWSTORE_ACTOR": blank})
        assert result.exit_code == 2 and "VIEWSTORE_ACTOR is set but empty" in result.output  # not the OS user
        assert CliRunner().invoke(main, ["show", "--help"], env={"VIEWSTORE_ACTOR": blank}).exit_code == 0


def test_an_empty_db_or_actor_a_program_gives_through_default_map_is_a_usage_error(tmp_path, monkeypatch):
    """Only a blank environment variable is left to the command (which names it); '' from a
    program's default_map is refused as on the command line (planted, every value not from the
    command line let through as no value opened ./viewstore.db and took the OS user)."""
    monkeypatch.chdir(tmp_path)
    for defaults, option in [({"db": ""}, "--db"), ({"db": str(tmp_path / "v.db"), "actor": "  "}, "--actor")]:
        result = CliRunner().invoke(main, ["create", "s.v", "--sql", "SELECT 1"], default_map=defaults)
        assert result.exit_code == 2, result.output
        assert result.output.splitlines()[-1] == f"Error: Invalid value for '{option}': must not be empty"
    assert list(tmp_path.iterdir()) == []


def test_bad_input_starts_no_file(run):
    """create, replace and import check their input before a store is opened (nothing is deleted
    afterwards: another process may have opened a new file in the meantime)."""
    for args in (["create", "s.v", "--sql", "SELECT 1 AS x", "--column", "x:notatype"],
                 ["replace", "s.v", "--representation", "spark", "SELECT 1", "--representation", "SPARK", "SELECT 2"],
                 ["create", "s.v", "--sql", "SELECT 1", "--property", "=empty key"],
                 ["create", "a..b", "--sql", "SELECT 1"],
                 ["import", str(run.db.parent / "missing.metadata.json"), "s.v"]):
        run(*args, code=1)
        assert not run.db.exists(), args
    run("list", code=1)  # still no catalog there
    create(run)
    run("create", "s.v", "--sql", "SELECT 1 AS x", code=1)  # fails on the store: the store stays
    assert run("list") == "s.v\n"


def test_every_table_command_ends_quietly_when_its_reader_goes(tmp_path):
    """rich prints the tables; a closed pipe there ends the command as it does for click's echo."""
    db = tmp_path / "many.db"
    with ViewStore(db) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
        for i in range(1500):
            store.alter_view("s.v", ViewChange.update_comment(f"c{i}"))
    for args in (["audit"], ["history", "s.v"], ["query", "SELECT * FROM events"]):
        reader = subprocess.Popen([sys.executable, "-m", "viewstore", "--db", str(db), *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        reader.stdout.close()  # gone before the first line, as `| true` is
        assert reader.wait(timeout=120) == 0, args
        assert reader.stderr.read() == b"", args
        reader.stderr.close()


def test_a_table_command_stops_at_the_write_its_reader_refused(tmp_path, monkeypatch):
    """The console's closed pipe ends the command there (it does not go on formatting and writing
    to nobody): in this process, stdout a real pipe whose reader has gone; the first write fails,
    and no other reaches the pipe."""
    db = tmp_path / "many.db"
    with ViewStore(db) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1")], default_namespace="s")
        for i in range(1500):
            store.alter_view("s.v", ViewChange.update_comment(f"c{i}"))
    reader, writer = os.pipe()
    os.close(reader)

    class Counted(io.FileIO):
        writes = 0

        def write(self, data):
            Counted.writes += 1
            return super().write(data)

    stdout = io.TextIOWrapper(io.BufferedWriter(Counted(writer, "w"), buffer_size=1 << 20), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stdout)
    code = main(["--db", str(db), "audit"], standalone_mode=False)
    monkeypatch.undo()
    tried = Counted.writes
    stdout.close()  # its descriptor is devnull's now: what the buffer kept goes nowhere
    assert code == 0 and tried == 1


def test_alter_refuses_property_options_that_contradict_one_another(run):
    create(run)
    before = json.loads(run("history", "s.v", "--json"))
    for args, message in (
            (["--set", "k=1", "--unset", "k"], "--set and --unset of 'k' in one command"),
            (["--unset", "k", "--set", "k=1"], "--set and --unset of 'k' in one command"),
            (["--set", "k=1", "--set", "k=2"], "--set of 'k' to different values"),
            (["--comment", "a", "--set", "comment=b"], "--comment and --set/--unset comment"),
            (["--comment", "", "--unset", "comment"], "--comment and --set/--unset comment")):
        out = run("alter", "s.v", *args, code=2)
        assert usage_error(out, message), args
    assert json.loads(run("history", "s.v", "--json")) == before  # nothing written
    run("alter", "s.v", "--set", "k=1", "--set", "k=1", "--set", "j=2", "--unset", "gone")  # no contradiction
    assert json.loads(run("show", "s.v", "--json"))["properties"] == {"k": "1", "j": "2"}


def test_alter_keeps_the_combinations_that_worked_before(run):
    create(run)  # spark only
    run("alter", "s.v", "--add-representation", "trino", "SELECT 1 AS x", "--update-representation", "trino",
        "SELECT 2 AS x")  # a new dialect, then its SQL changed: one commit
    reps = json.loads(run("show", "s.v", "--json"))["representations"]
    assert reps == [{"dialect": "spark", "sql": "SELECT 1 AS x"}, {"dialect": "trino", "sql": "SELECT 2 AS x"}]
    out = run("alter", "s.v", "--add-representation", "hive", "SELECT 1 AS x", "--remove-representation", "hive",
              code=1)
    assert out == "error: view s.v has no 'hive' representation to remove\n"  # as the API says for [remove, add]
    out = run("alter", "s.v", "--update-representation", "spark", "SELECT 3", "--remove-representation", "spark",
              "--add-representation", "spark", "SELECT 4", code=2)
    assert usage_error(out, "") and out.splitlines()[-1] == \
        "Error: --update-representation and --remove-representation of 'spark' in one command: give one of them"
    out = run("alter", "s.v", "--remove-representation", "spark", "--add-representation", "spark", "SELECT a",
              "--add-representation", "spark", "SELECT b", code=1)
    assert out == "error: Invalid view version: Cannot add multiple queries for dialect spark (view s.v; to " \
                  "change its SQL: ViewChange.update_representation, --update-representation)\n"  # still refused


def test_show_always_lists_the_current_version_and_survives_any_stored_time(run, conformance, tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    create(run)
    for i in range(11):
        run("replace", "s.v", "--sql", f"SELECT {i} AS x", "--column", "x:int")
    run("rollback", "s.v", "1")
    out = run("show", "s.v")
    assert "│ 1 (current) " in out and "│ 12 " in out and "│ 3 " not in out
    assert "versions (the current one and the latest 9; --json has all)" in out
    meta = json.loads((conformance / "iceberg-view" / "ValidViewMetadata.json").read_text())
    meta["versions"][0]["timestamp-ms"] = 2**62  # an imported file may carry any 64-bit time
    path = tmp_path / "00000-x.metadata.json"
    path.write_text(json.dumps(meta))
    meta["version-log"][0]["timestamp-ms"] = 2**62  # its events keep the times of its log
    meta["version-log"][1]["timestamp-ms"] = 2**62
    path.write_text(json.dumps(meta))
    run("import", str(path), "s.far")
    out = run("show", "s.far")
    assert f"│ {2**62} ms " in out and f"at {2**62} ms\n" in out


def test_times_print_to_the_exact_millisecond_in_every_year(run):
    """In integers: through a float, 9999-12-31T23:59:59.999 printed as .998 (one time in three)."""
    from viewstore.cli import _ms, _table_time

    last = 253402300799999  # 9999-12-31T23:59:59.999Z
    assert _ms(last) == "9999-12-31T23:59:59.999+00:00" and _table_time(last) == "9999-12-31 23:59:59.999"
    assert _table_time(-62135596800000) == "0001-01-01 00:00:00.000"
    assert _ms(8605696779185) == "2242-09-14T23:19:39.185+00:00"  # the float way gave .184
    assert _ms(2**62) == f"{2**62} ms" and _table_time(-(2**63)) == f"{-(2**63)} ms"
    create(run)
    assert json.loads(run("audit", "--since", "-1234567", "--json"))  # negative ms, any number of digits
    day = json.loads(run("audit", "--json"))[0]["occurred_at"][:10]
    for until in (day, day.replace("-", "")):  # a date alone: to the end of that day
        assert len(json.loads(run("audit", "--since", day, "--until", until, "--json"))) == 1
        assert len(json.loads(run("audit", "--since", f"{day}T23:59:59.999Z", "--until", until, "--json"))) == 0
    out = run("audit", "--since", "20261301", code=2)
    assert "eight digits are a date (YYYYMMDD), and this is none; use ISO 8601" in out  # the reason, then the forms


def test_times_remembered_by_the_second_print_as_a_datetime_prints_them():
    """_ms and _table_time write each second once and add the milliseconds: the text is what the
    datetime of each millisecond gives, at the ends of the years 1 to 9999, before and after 1970,
    and past them (epoch milliseconds)."""
    import datetime as dt
    import random

    from viewstore.cli import _ms, _table_time

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

    def as_datetimes(ms):
        try:
            at = epoch + dt.timedelta(milliseconds=ms)
        except OverflowError:
            return f"{ms} ms", f"{ms} ms"
        return (at.isoformat(timespec="milliseconds"),
                f"{at.year:04d}-{at:%m-%d %H:%M:%S}.{at.microsecond // 1000:03d}")

    first, last = -62135596800000, 253402300799999
    rng = random.Random(3)
    times = [0, -1, 1, 999, -999, -1000, 1000, first, first - 1, first + 1, last, last + 1, 2**63 - 1, -(2**63), 10**30]
    times += [rng.randrange(first - 5000, last + 5000) for _ in range(20_000)]
    times += [1_795_685_865_801 + rng.randrange(-3000, 3000) for _ in range(2000)]  # many in the same seconds
    for ms in times:
        assert (_ms(ms), _table_time(ms)) == as_datetimes(ms), ms


def test_the_json_of_events_and_views_is_the_text_json_dumps_writes(run, tmp_path):
    """The events' --json and the commands' other JSON answers (a view, a diff, a list) go through
    orjson; the text is json_text's, also with text that JSON escapes, wide characters and big
    numbers; a lone surrogate falls back to json_text itself."""
    from viewstore.cli import _json_utf8, json_text

    create(run)
    run("alter", "s.v", "--comment", 'tab\there "quoted" \\ \x1b[31m ünï 😀 \u2028 end')
    run("alter", "s.v", "--set", "k=\x7f\x00")
    for args in (["audit", "--json"], ["history", "s.v", "--json"], ["show", "s.v", "--json"], ["list", "--json"],
                 ["diff", "s.v", "--from-event", "1", "--json"]):
        out = run(*args)
        assert out == json_text(json.loads(out)) + "\n"
    samples = [[], [{}], [{"a": [], "b": {}, "c": [1, -(2**63), 2**64 - 1, True, None, "x\u0001\n\t\"\\\x7f\u2029é"]}],
               [{"s": "\ud800"}], [{"n": 2**70}]]
    for data in samples:
        assert _json_utf8(data) == json_text(data).encode()


def test_audit_and_history_json_is_written_a_batch_of_events_at_a_time(run, monkeypatch):
    """The events' --json goes out a batch at a time: the first batch is written before the later
    events are turned into JSON (the JSON of 200,000 events is never held whole), and the text is that
    of one list."""
    import contextlib

    from viewstore import cli

    create(run)
    for i in range(4):
        run("alter", "s.v", "--set", f"k={i}")
    made = []
    to_json = cli.event_to_json
    monkeypatch.setattr(cli, "event_to_json", lambda event: made.append(event.position) or to_json(event))
    monkeypatch.setattr(cli, "JSON_BATCH", 2)

    class Seen(_TextOnly):
        def write(self, s):
            self.made_by_then = [*getattr(self, "made_by_then", []), len(made)]
            return super().write(s)

    for args in (["audit", "--json"], ["history", "s.v", "--json"]):
        made.clear()
        out = Seen()
        with contextlib.redirect_stdout(out):
            main(["--db", str(run.db), *args], standalone_mode=False)
        # how many events had been turned into JSON at each write
        assert list(dict.fromkeys(out.made_by_then)) == [2, 4, 5] and made == [1, 2, 3, 4, 5]
        assert out.text == cli.json_text(json.loads(out.text)) + "\n"
        assert [(e["position"], e["type"]) for e in json.loads(out.text)] == [
            (1, "view.created"), *[(p, "view.properties_set") for p in range(2, 6)]]
    assert run("audit", "--json", "--type", "view.dropped") == "[]\n"


def test_a_closed_pipe_keeps_a_failing_reports_exit_code(tmp_path):
    good = {"tableName": "ok_view", "dbName": "sales", "tableType": "VIRTUAL_VIEW", "owner": "o",
            "viewOriginalText": "SELECT 1 AS x", "viewExpandedText": "SELECT 1 AS x",
            "sd": {"cols": [{"name": "x", "type": "int"}]}, "parameters": {}}
    bad = {**good, "tableName": "bad_view", "viewOriginalText": None, "viewExpandedText": None}
    records = tmp_path / "records.json"
    records.write_text(json.dumps([good, bad]))
    db = tmp_path / "h.db"
    reader = subprocess.Popen([sys.executable, "-m", "viewstore", "--db", str(db), "hms", "import", str(records)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()
    assert reader.wait(timeout=120) == 1  # a record failed, whether or not anybody read the report
    reader.stderr.close()
    assert [".".join(i) for i in read(db, "list_views")] == ["sales.ok_view"]


@pytest.mark.parametrize("name", ["a#b.db", "q?x.db", "50%41.db", "sp ace.db"])
def test_query_reads_the_file_every_other_command_opens(tmp_path, name):
    db = tmp_path / name
    runner = CliRunner()
    assert runner.invoke(main, ["--db", str(db), "create", "s.v", "--sql", "SELECT 1 AS x"]).exit_code == 0
    result = runner.invoke(main, ["--db", str(db), "query", "SELECT count(*) AS n FROM events", "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == [{"n": 1}], result.output
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(name)) == []  # no stray file


def test_control_characters_in_stored_text_reach_the_terminal_escaped(run):
    sql = "SELECT 1 AS x -- \x1b[2J\x1b[31mred\r\x07"
    create(run, "s.v", "--comment", "c \x1b]0;pwned\x07 \u202eevil")
    run("replace", "s.v", "--sql", sql, "--column", "x:int", "--property", "k=\x1b[1mv")
    for out in (run("show", "s.v"), run("history", "s.v"), run("query", "SELECT payload FROM events")):
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
    show = run("show", "s.v")
    assert "\\x1b[2J\\x1b[31mred\\x0d\\x07" in show and "\\x1b]0;pwned\\x07 \\u202eevil" in show
    assert json.loads(run("show", "s.v", "--json"))["representations"][0]["sql"] == sql  # --json: exact


def test_a_querys_column_names_reach_the_terminal_escaped(run):
    create(run)
    for sql in ('SELECT 1 AS "\x1b]0;pwned\x07", 2 AS "\u202eb"',
                'SELECT 1 AS "\x1b]0;pwned\x07", 2 AS "\u202eb" WHERE 0'):
        out = run("query", sql)
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, out
        assert "\\x1b]0;pwned\\x07" in out and "\\u202eb" in out, out
    assert json.loads(run("query", 'SELECT 1 AS "\x1b"', "--json")) == [{"\x1b": 1}]  # --json: exact


def test_a_replace_that_makes_version_1_current_again_says_replaced(run):
    """Whether a replace created the view is told by its stream version, not by its version id: going
    back to the first definition reuses version 1."""
    create(run)
    assert run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int") == \
        "replaced s.v (version 2, stream version 2)\n"
    assert run("replace", "s.v", "--sql", "SELECT 1 AS x", "--column", "x:int:the x") == \
        "replaced s.v (version 1, stream version 3)\n"
    assert run("replace", "s.new", "--sql", "SELECT 1 AS x") == "created s.new (version 1, stream version 1)\n"


def test_replace_merges_properties_unless_told_to_replace_them(run):
    create(run, "s.v", "--comment", "keep me", "--property", "owner=ops")
    assert run("replace", "s.v", "--sql", "SELECT 1 AS x", "--column", "x:int:the x").startswith(
        "nothing to change in s.v")  # the same definition: no version, no event
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int", "--property", "team=a")
    view = json.loads(run("show", "s.v", "--json"))
    assert view["comment"] == "keep me" and view["properties"]["owner"] == "ops" and view["properties"]["team"] == "a"
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int", "--property", "team=b",
        "--replace-properties")
    view = json.loads(run("show", "s.v", "--json"))
    assert view["comment"] is None and view["properties"] == {"team": "b"}


def test_every_write_to_a_view_takes_expected_version(run):
    create(run)
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")  # stream version 2
    events = len(json.loads(run("audit", "--json")))
    for args in (["replace", "s.v", "--sql", "SELECT 3 AS x"], ["rename", "s.v", "s.w"], ["rollback", "s.v", "1"],
                 ["drop", "s.v"], ["alter", "s.v", "--comment", "x"]):
        out = run(*args, "--expected-version", "1", code=1)
        assert out.startswith("error: ") and "expected" in out.lower(), (args, out)
    assert len(json.loads(run("audit", "--json"))) == events
    assert "is at version 1" in run("rollback", "s.v", "1", "--expected-version", "2")
    run("rename", "s.v", "s.w", "--expected-version", "3")
    run("replace", "s.w", "--sql", "SELECT 3 AS x", "--expected-version", "4")
    assert run("drop", "s.w", "--expected-version", "5") == "dropped s.w\n"


def test_names_with_control_characters_print_escaped_in_every_message(run):
    name = "s.evil\u202etxt\x9b2j"  # identifiers refuse C0 controls; C1 and bidi ones must not reach a terminal
    create(run, name)
    outputs = [run("list"), run("rollback", name, "1"), run("rename", name, name + "x"),
               run("drop", name + "x"), run("drop", name + "x", "--if-exists"), run("show", name + "x", code=1)]
    for out in outputs:
        assert "\u202e" not in out and "\x9b" not in out, out
        assert "\\u202e" in out and "\\x9b" in out, out


def test_import_export_and_hms_messages_print_such_names_escaped_too(run, tmp_path, conformance, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "s.evil\u202etxt\x9b2j"
    create(run, name)
    path = run("export", name)  # warehouse/<namespace>/<name>/metadata/...: the name is in the path
    record = conformance / "engine-views" / "spark-hms-view-3.5.reconstructed.json"
    outputs = [path, run("--db", str(tmp_path / "b.db"), "import", json.loads(run("export", name, "--json"))["path"],
                         name), run("hms", "import", str(record), name + "h")]
    for out in outputs:
        assert "\u202e" not in out and "\x9b" not in out, out
        assert "\\u202e" in out and "\\x9b" in out, out
    assert outputs[1].startswith("imported s.evil") and outputs[2].startswith("imported s.evil")


def test_spark_checks_skipped_views_print_escaped():
    from types import SimpleNamespace

    pytest.importorskip("pyspark")
    from viewstore.cli import CliContext, _Console
    from viewstore.spark.cli import _print_drift

    cli = CliContext(db="unused.db", actor="carol", catalog=None)
    cli.console = _Console(file=io.StringIO(), width=200, markup=False, emoji=False, highlight=False)
    _print_drift(cli, SimpleNamespace(views=[], skipped=["s.evil\u202etxt"]))
    out = cli.console.file.getvalue()
    assert "not checked (no spark representation): s.evil\\u202etxt" in out and "\u202e" not in out


def test_messages_say_what_happened(run):
    """A replace that finds no view says it created one; a rollback to the current version says
    nothing was rolled back (as alter, replace and rename say when they change nothing); the
    history title and errors name the view as stored."""
    assert run("replace", "s.new", "--sql", "SELECT 1 AS x") == "created s.new (version 1, stream version 1)\n"
    assert run("replace", "s.new", "--sql", "SELECT 2 AS x").startswith("replaced s.new (version 2,")
    assert run("replace", "s.new", "--sql", "SELECT 2 AS x").startswith("nothing to change in s.new")
    run("drop", "s.new")
    assert run("replace", "s.new", "--sql", "SELECT 3 AS x").startswith("created s.new (version 1,")  # a new view
    assert json.loads(run("replace", "s.newer", "--sql", "SELECT 1 AS x", "--json"))["identifier"] == "s.newer"
    events = len(json.loads(run("audit", "--json")))
    assert run("rollback", "s.new", "1") == "s.new is already at version 1; nothing rolled back\n"
    assert len(json.loads(run("audit", "--json"))) == events  # indeed nothing was written
    run("replace", "s.new", "--sql", "SELECT 4 AS x")
    assert run("rollback", "s.new", "1") == "s.new is at version 1\n"
    assert run("history", "S.New").splitlines()[0] == "history of s.new"
    assert "SELECT 1 AS x" in run("show", "S.New", "--at-event", "1")  # the s.new dropped since
    newer = json.loads(run("audit", "--view", "s.newer", "--json"))[0]["position"]
    assert f"{newer} in the history of s.new" in run("show", "S.New", "--at-event", str(newer), code=1)


def test_a_muted_signal_does_not_hide_that_a_write_happened(run):
    from viewstore import signals

    create(run)
    with signals.committed.muted():  # a program that embeds the CLI may mute it
        out = run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")
        same = run("replace", "s.v", "--sql", "SELECT 2 AS x", "--column", "x:int")  # nor invent one that did not
        unset = run("alter", "s.v", "--unset", "no_such_key")
    assert out.startswith("replaced s.v")
    assert same.startswith("nothing to change in s.v") and unset.startswith("nothing to change in s.v")


def test_a_time_without_an_offset_is_utc_as_the_help_says():
    from viewstore.cli import _time

    ten_utc = 1795687200000  # 2026-11-26T10:00:00Z
    assert _time("2026-11-26T10:00", "--since") == _time("2026-11-26T10:00Z", "--since") == ten_utc
    assert _time("2026-11-26T10:00+01:00", "--since") == ten_utc - 3600_000
    since = next(p for p in main.commands["audit"].params if p.name == "since")
    assert "UTC unless it gives its offset" in since.help


#: a failing command line for every command that has --json, on a store holding s.v ("store"), on
#: a path with no file ("missing") or on a file that is not SQLite ("text"); the type of the error
#: it fails with
FAILING_JSON_COMMANDS = {
    "create": ("store", ["create", "s.v", "--sql", "SELECT 1 AS x"], "ViewAlreadyExistsError"),
    "replace": ("store", ["replace", "s.v", "--sql", "SELECT 1 AS x", "--column", "x:int", "--expected-version", "9"],
                "ConcurrencyError"),
    "show": ("store", ["show", "s.nope"], "NoSuchViewError"),
    "diff": ("store", ["diff", "s.v", "--from", "0"], "NoSuchViewError"),
    "list": ("missing", ["list"], "ViewStoreError"),
    "alter": ("store", ["alter", "s.nope", "--set", "k=v"], "NoSuchViewError"),
    "rename": ("store", ["rename", "s.nope", "s.w"], "NoSuchViewError"),
    "drop": ("store", ["drop", "s.nope"], "NoSuchViewError"),
    "rollback": ("store", ["rollback", "s.v", "7"], None),
    "history": ("store", ["history", "s.nope"], "NoSuchViewError"),
    "audit": ("store", ["audit", "--view", "s.nope"], "NoSuchViewError"),
    "query": ("store", ["query", "DELETE FROM events"], None),
    "export": ("store", ["export", "s.nope"], "NoSuchViewError"),
    "import": ("store", ["import", "missing.json", "s.i"], None),
    "rebuild": ("missing", ["rebuild"], "ViewStoreError"),
    "hms import": ("store", ["hms", "import", "missing.json"], "ValidationError"),
    "hms export": ("store", ["hms", "export", "s.v", "--engine", "trino"], "ValidationError"),
    "spark check": ("missing", ["spark", "check"], "ViewStoreError"),
    "spark register": ("missing", ["spark", "register"], "ViewStoreError"),
    "spark import": ("text", ["spark", "import", "sales"], "ViewStoreError"),  # said before Spark starts
    "spark metastore-write": ("store", ["spark", "metastore-write", "s.v", "--engine", "trino"], "ValidationError"),
}


def _json_commands(group, prefix=()):
    """The names of every command that has --json, found from the CLI itself."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _json_commands(command, (*prefix, name))
        elif any("--json" in p.opts for p in command.params):
            yield " ".join((*prefix, name))


def test_the_json_failure_table_holds_every_command_with_json():
    assert sorted(_json_commands(main)) == sorted(FAILING_JSON_COMMANDS)


def _all_commands():
    """Every command of the CLI (not the groups) with its full name, optional ones (hms, spark) too."""
    from test_docs import _commands

    return [(" ".join(path), command) for path, command in _commands(main) if not isinstance(command, click.Group)]


@pytest.mark.parametrize("command, folded, listed", [
    (["hms", "import"], "the records whose view is in the store already (a run again) are folded into one count line",
     "--json lists every record"),
    (["spark", "import"], "the views already in the store are folded into one count line", "--json lists every view"),
    (["spark", "check"], "the views that match are folded into one count line below it", "--json lists every view"),
    (["spark", "register"], "The copies left unchanged are folded into one count line below the table",
     "--json lists every view")], ids=" ".join)
def test_the_help_of_a_report_that_counts_rows_says_so_and_that_json_lists_them(command, folded, listed):
    """The reports that fold their unchanged rows into a count line say so in their help, and that
    --json lists every row, which a script reading the report needs to know."""
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert folded in text and listed in text, text


def test_every_command_names_a_views_identifier_alike():
    """A view's identifier is IDENTIFIER in every command's usage and help; hms export, hms import
    and spark metastore-write called it IDENT."""
    named = {}
    for name, command in _all_commands():
        ctx = click.Context(command, info_name=name)
        for param in command.params:
            if isinstance(param, click.Argument) and param.name == "identifier":
                named[name] = param.make_metavar(ctx)
        assert not re.search(r"\bIDENT\b", command.get_help(ctx)), name
    assert named.pop("hms import") == "[IDENTIFIER]"
    assert set(named.values()) == {"IDENTIFIER"}
    assert {"hms export", "spark metastore-write", "show", "rollback"} <= set(named)


def _invoke(tmp_path, where, args):
    db = tmp_path / "cli.db"
    if where == "store" and not db.exists():
        with ViewStore(db) as store:
            store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1 AS x")],
                              default_namespace="s")
    if where == "text":
        db.write_text("not a database\n")
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def _json_error(result, code):
    """The one JSON object a failing --json command prints on stderr, with nothing on stdout."""
    assert result.exit_code == code and result.stdout == "", (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    error = json.loads(result.stderr)["error"]
    assert set(error) == {"type", "message", "exit_code"} and error["exit_code"] == code, error
    return error


@pytest.mark.parametrize("command", sorted(FAILING_JSON_COMMANDS))
def test_a_failing_json_command_prints_its_error_as_one_json_object_on_stderr(tmp_path, command, monkeypatch):
    monkeypatch.chdir(tmp_path)
    where, args, kind = FAILING_JSON_COMMANDS[command]
    plain = _invoke(tmp_path, where, args)  # without --json: one line 'error: ...', as before
    assert plain.exit_code == 1 and plain.stdout == "" and plain.stderr.startswith("error: "), plain.output
    assert plain.stderr.count("\n") == 1
    error = _json_error(_invoke(tmp_path, where, [*args, "--json"]), 1)
    assert error["message"] == plain.stderr[len("error: "):-1]
    assert kind is None or error["type"] == kind, error


@pytest.mark.parametrize("command", sorted(FAILING_JSON_COMMANDS))
def test_json_before_the_command_is_the_commands_own_json(tmp_path, command, monkeypatch):
    """'viewstore --json COMMAND' was click's "No such option '--json'" while 'viewstore COMMAND
    --json' worked: each command with --json takes it before its name too, for failures and usage
    errors as for results."""
    monkeypatch.chdir(tmp_path)
    where, args, kind = FAILING_JSON_COMMANDS[command]
    after = _json_error(_invoke(tmp_path, where, [*args, "--json"]), 1)
    assert _json_error(_invoke(tmp_path, where, ["--json", *args]), 1) == after
    usage = _json_error(_invoke(tmp_path, where, ["--json", *command.split(), "--no-such-option"]), 2)
    assert usage["type"] == "NoSuchOption" and usage["message"].startswith("No such option '--no-such-option'.")


def test_json_text_of_data_holding_a_lone_surrogate_is_indented_as_any_other():
    """A report holding a lone surrogate (a path given in bytes no encoding names) is written with
    the escape, indented as every other --json answer; a failure's object alone is one line."""
    from viewstore.cli import json_text

    data = {"failed": [{"name": "db.iv", "message": "no file /no/lone\ud800.json"}], "ok": False}
    assert json_text(data) == json.dumps(data, indent=2) and json_text(data).count("\n") == 8
    assert json_text(data, indent=None) == json.dumps(data)


def test_a_json_failure_whose_message_holds_a_lone_surrogate_is_still_one_line(tmp_path):
    """No encoding prints a lone surrogate (a JSON file's "\\ud800" may put one in a message): the failure
    is escaped JSON, on one line as every other."""
    record = tmp_path / "iceberg.json"
    record.write_text('{"dbName": "db", "tableName": "iv", "tableType": "VIRTUAL_VIEW", "parameters": '
                      '{"table_type": "ICEBERG-VIEW", "metadata_location": "/no/lone\\ud800.json"}}')
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "s.db"), "hms", "import", str(record), "--json"])
    assert "/no/lone\ud800.json" in _json_error(result, 1)["message"] and "\\ud800" in result.stderr


@pytest.mark.parametrize("args", [["list"], ["show", "s.v"], ["history", "s.v"], ["audit", "--limit", "1"],
                                  ["query", "SELECT count(*) AS n FROM events"], ["diff", "s.v", "--from-event", "1"],
                                  ["rebuild"], ["drop", "s.nope", "--if-exists"]])
def test_json_before_the_command_prints_what_json_after_it_prints(run, args):
    create(run)
    after = run(*args, "--json")
    assert run("--json", *args) == after and json.loads(after) is not None


def test_json_before_a_command_without_json_says_where_it_does_not_go(run):
    for args in (["--json", "demo"], ["--json", "demo", "--namespace", "x"]):  # a failure as --json asks
        error = _json_error(CliRunner().invoke(main, ["--db", str(run.db), *args]), 2)
        assert error == {"type": "UsageError", "message": "'viewstore demo' prints no JSON: leave out --json",
                         "exit_code": 2}
    assert not run.db.exists()
    assert run("--json", "demo", "--help") == run("demo", "--help")  # help asked for is help
    text = " ".join(run("--help").split())
    assert "--json goes before the command or after it: 'viewstore --json list' is 'viewstore list --json'." in text


@pytest.mark.parametrize("args", [["list"], ["query", "SELECT count(*) FROM events"], ["audit"], ["history", "s.v"]],
                         ids=["list", "query", "audit", "history"])
def test_a_read_kept_out_by_another_connection_fails_as_a_busy_concurrency_error(tmp_path, monkeypatch, args):
    from test_log import _keeping_readers_out

    import viewstore.log as log_module

    monkeypatch.setattr(log_module, "BUSY_TIMEOUT_MS", 100)
    _invoke(tmp_path, "store", ["list"])
    holder = _keeping_readers_out(tmp_path / "cli.db")
    try:
        error = _json_error(_invoke(tmp_path, "store", [*args, "--json"]), 1)
    finally:
        holder.close()
    assert error["type"] == "ConcurrencyError" and "another connection kept it locked" in error["message"], error
    assert _invoke(tmp_path, "store", [*args, "--json"]).exit_code == 0


@pytest.mark.parametrize("command", sorted(FAILING_JSON_COMMANDS))
def test_a_usage_error_of_a_json_command_is_a_json_object_with_exit_code_2(tmp_path, command):
    args = command.split() + ["--json", "--no-such-option"]
    error = _json_error(_invoke(tmp_path, "missing", args), 2)
    assert error["type"] == "NoSuchOption" and error["message"].startswith("No such option '--no-such-option'.")
    plain = _invoke(tmp_path, "missing", command.split() + ["--no-such-option"])
    assert plain.exit_code == 2 and usage_error(plain.stderr, "No such option '--no-such-option'.")
    assert not (tmp_path / "cli.db").exists()


@pytest.mark.parametrize("args, kind, message", [
    (["--db", "", "list", "--json"], "BadParameter", "Invalid value for '--db': must not be empty"),
    (["--json", "--db", "", "list"], "BadParameter", "Invalid value for '--db': must not be empty"),
    (["--json", "--no-such-option", "list"], "NoSuchOption", "No such option '--no-such-option'."),
    (["show", "--json"], "MissingParameter", "Missing argument 'IDENTIFIER'."),
    (["show", "s.v", "--as-of", "0", "--at-event", "1", "--json"], "UsageError",
     "give --as-of or --at-event, not both"),
    (["diff", "s.v", "--from", "0", "--from-event", "1", "--json"], "UsageError",
     "give --from or --from-event, not both"),
    (["audit", "--limit", "-1", "--json"], "UsageError", "--limit must be a whole number of 0 or more, not '-1'"),
    (["alter", "s.v", "--json"], "UsageError", "nothing to change: give at least one change option"),
    (["spark", "check", "--conf", "novalue", "--json"], "UsageError", "bad --conf 'novalue': use KEY=VALUE"),
    (["hms", "export", "s.v", "--engine", "nope", "--json"], "BadParameter", "Invalid value for '--engine'"),
])
def test_usage_errors_with_json_are_json_whether_click_or_the_command_finds_them(tmp_path, args, kind, message):
    error = _json_error(CliRunner().invoke(main, args if "--db" in args else
                                           ["--db", str(tmp_path / "x.db"), *args]), 2)
    assert error["type"] == kind and error["message"].startswith(message), error
    assert list(tmp_path.iterdir()) == []



@pytest.mark.parametrize("command", ["replace", "alter", "rename", "drop", "rollback"])
def test_expected_version_help_says_what_0_means_only_where_it_can_succeed(command):
    """replace may create the view, so --expected-version 0 ('does not exist yet') can succeed there;
    on the commands that change an existing view it never can, and their help said it could."""
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--expected-version" in text
    assert ("0: does not exist yet" in text) == (command == "replace")


def test_create_and_replace_help_say_what_each_does_with_the_comment_and_the_security_mode(run):
    """The two commands share their definition options, but not what they do with --comment and
    --security-mode left out or empty: each help says its own rule, and the rule holds."""
    def option_help(command, option, following):
        text = " ".join(CliRunner().invoke(main, [command, "--help"], terminal_width=200).output.split())
        return text.split(f" {option} ", 1)[1].split(f" {following} ", 1)[0]

    comment, mode = ("--comment TEXT", "--property"), ("--security-mode [DEFINER|INVOKER]", "--summary")
    assert option_help("create", *comment) == "The view comment ('' for none)."
    assert option_help("create", *mode) == "How the view runs (DEFINER when left out)."
    assert option_help("replace", *comment) == (
        "The view comment (left out or '': the view's is kept; see --replace-properties).")
    assert option_help("replace", *mode) == "How the view runs (left out: the view's own is kept)."
    view = json.loads(run("create", "s.v", "--sql", "SELECT 1 AS x", "--comment", "", "--json"))
    assert view["comment"] is None and view["security_mode"] == "DEFINER"
    run("replace", "s.v", "--sql", "SELECT 2 AS x", "--comment", "kept", "--security-mode", "invoker")
    for kept in (["--comment", ""], []):
        view = json.loads(run("replace", "s.v", "--sql", "SELECT 3 AS x", *kept, "--json"))
        assert view["comment"] == "kept" and view["security_mode"] == "INVOKER"


def test_an_events_details_say_what_each_type_of_event_changed(tmp_path):
    """The details cell of each event type (read from the event's fields, not from its JSON): a
    property set a line each, sorted, a removal '-name', a dialect, a comment, a rename's old
    identifier, an import's source, and the current version wherever an event moved it."""
    from test_events import every_event_type

    from viewstore.cli import _details

    with ViewStore(tmp_path / "d.db", actor="a") as store:
        every_event_type(store)
        store.create_view("b.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="b")
        same = {"columns": [("x", "int")], "representations": [("spark", "SELECT 1 AS x")], "default_namespace": "b"}
        store.replace_view("b.v", **same, properties={"z": "last", "a": "first = 1"})  # one event of both
        store.alter_view("b.v", ViewChange.set_property("y", "v"))
        store.replace_view("b.v", **same, properties={"y": "v"}, replace_properties=True)
        store.rename_view("b.v", "c.d.v")
        details = [(e.type, _details(e)) for e in store.events()]
    assert details == [
        ("view.created", "version 1"), ("view.replaced", "version 2"), ("view.replaced", "version 3"),
        ("view.replaced", "version 4"), ("view.comment_updated", "comment: c"), ("view.comment_updated", "-comment"),
        ("view.properties_set", "k=v"), ("view.properties_removed", "-k"), ("view.representation_added", "trino"),
        ("view.representation_updated", "trino\nversion 5"), ("view.representation_removed", "trino\nversion 4"),
        ("view.rolled_back", "version 1"), ("view.renamed", "from a.v"), ("view.dropped", ""),
        ("view.imported", "from test\nversion 1"), ("view.replaced", "version 2"), ("view.replaced", "version 3"),
        ("view.replaced", "version 4"), ("view.replaced", "version 5"), ("view.rolled_back", "version 4"),
        ("view.rolled_back", "version 1"),
        ("view.created", "version 1"), ("view.properties_set", "a=first = 1\nz=last"), ("view.properties_set", "y=v"),
        ("view.properties_removed", "-a\n-z"), ("view.renamed", "from b.v")]


def test_an_events_details_tell_a_comment_set_empty_from_one_removed(tmp_path):
    """The API keeps a comment set to '' (the CLI's --comment '' removes it): its event's details say
    'comment: ' with nothing after it, where a removal's say '-comment', as a property's removal reads
    (they said nothing at all, an empty cell that did not tell the removal from no change)."""
    from viewstore.cli import _details

    with ViewStore(tmp_path / "d.db", actor="a") as store:
        store.create_view("b.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="b", comment="c")
        store.alter_view("b.v", ViewChange.update_comment(""))
        store.alter_view("b.v", ViewChange.update_comment(None))
        details = [_details(e) for e in store.events() if e.type == "view.comment_updated"]
    assert details == ["comment: ", "-comment"]


def test_history_and_audit_say_a_comment_was_removed(run):
    """`alter --comment ''` removes the comment: the details cell of its event in history and audit
    says '-comment' (it was empty, as for no change at all); --json gives the payload as it was,
    a null comment."""
    create(run, "s.v", "--comment", "daily")
    run("alter", "s.v", "--comment", "")
    for out in (run("history", "s.v"), run("audit", "--view", "s.v")):
        rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line[:1] == "│"]
        assert [row[5:] for row in rows] == [["view.created", "version 1"], ["view.comment_updated", "-comment"]], out
    for events in (json.loads(run("history", "s.v", "--json")), json.loads(run("audit", "--view", "s.v", "--json"))):
        assert events[-1]["type"] == "view.comment_updated" and events[-1]["payload"] == {"comment": None}


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_events_json_reaches_a_real_pipe_in_its_encoding(tmp_path, encoding):
    """The events' --json goes out as orjson's bytes where standard output is UTF-8, and as text in the
    output's own encoding where it is not (latin-1: 'é' is one byte): the same text either way."""
    with ViewStore(tmp_path / "p.db", actor="ünï") as store:
        store.create_view("s.v", columns=[("x", "int")], representations=[("spark", "SELECT 1 AS x")],
                          default_namespace="s", comment="café")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIEWSTORE_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1]), PYTHONIOENCODING=encoding)
    for args in (["audit", "--json"], ["history", "s.v", "--json"]):
        out = subprocess.run([sys.executable, "-m", "viewstore", "--db", str(tmp_path / "p.db"), *args],
                             capture_output=True, env=env, timeout=60)
        assert (out.returncode, out.stderr) == (0, b"")
        text = out.stdout.decode(encoding)
        assert out.stdout == text.encode(encoding) and text == json.dumps(json.loads(text), indent=2,
                                                                          ensure_ascii=False) + "\n"
        assert (json.loads(text)[0]["actor"] == "ünï"
                and json.loads(text)[0]["payload"]["properties"] == {"comment": "café"})


class _TextOnly(io.TextIOBase):
    """A text stream of UTF-8 that takes text alone and has no binary buffer (as a notebook's has)."""
    encoding = "utf-8"

    def __init__(self):
        self.text = ""

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.text += s
        return len(s)


def test_events_json_reaches_a_utf8_text_stream_without_a_binary_buffer(run):
    """Standard output replaced by a text stream of UTF-8 that takes text alone and has no binary
    buffer (as a notebook's has): the events' --json reaches it as text, not as bytes it refuses."""
    import contextlib

    create(run, "s.v")
    out = _TextOnly()
    with contextlib.redirect_stdout(out):
        main(["--db", str(run.db), "history", "s.v", "--json"], standalone_mode=False)
    assert [e["type"] for e in json.loads(out.text)] == ["view.created"]


def test_events_json_reaches_a_stream_naming_an_encoding_python_does_not_know(run):
    """A stream whose encoding names no codec Python has (a binary buffer beside it): the events'
    --json goes out as text, as click writes text, not as a LookupError from looking the name up."""
    import contextlib

    class Bogus(_TextOnly):
        encoding = "no-such-codec"
        buffer = io.BytesIO()

    create(run, "s.v")
    out = Bogus()
    with contextlib.redirect_stdout(out):
        main(["--db", str(run.db), "history", "s.v", "--json"], standalone_mode=False)
    assert [e["type"] for e in json.loads(out.text)] == ["view.created"] and out.buffer.getvalue() == b""


def test_events_json_reaches_a_stream_that_names_no_encoding(run):
    """A stream whose encoding is None (a binary buffer beside it): the events' --json goes out as
    click writes text there (UTF-8, to the buffer), not as a TypeError from looking None up as the
    name of a codec."""
    import contextlib

    class Unnamed(_TextOnly):
        encoding = None
        buffer = io.BytesIO()

    run("create", "s.v", "--sql", "SELECT 1 AS x", "--comment", "café")
    out = Unnamed()
    with contextlib.redirect_stdout(out):
        main(["--db", str(run.db), "history", "s.v", "--json"], standalone_mode=False)
    events = json.loads(out.buffer.getvalue().decode("utf-8"))
    assert [(e["type"], e["payload"]["properties"]) for e in events] == [("view.created", {"comment": "café"})]
    assert out.text == ""


def test_an_events_details_name_a_current_version_0(run, tmp_path, monkeypatch):
    """Iceberg's version ids are any 32-bit number: an imported view whose current version is 0 says
    'version 0' in its event's details as it says any other (a check for an empty value left it out)."""
    monkeypatch.delenv("COLUMNS", raising=False)  # (a row a line but for its cells' own lines)
    create(run)
    path = Path(run("export", "s.v", "--location", str(tmp_path / "loc"), "--no-gzip").strip())
    metadata = json.loads(path.read_text())
    metadata["view-uuid"] = "2c9e7ff0-3f4b-4a57-9d0c-0d1e8a5b1f00"
    metadata["current-version-id"] = metadata["versions"][0]["version-id"] = 0
    metadata["version-log"][0]["version-id"] = 0
    path.write_text(json.dumps(metadata))
    run("import", str(path), "s.zero")
    lines = run("history", "s.zero").splitlines()
    assert [line.split("│")[-2].strip() for line in lines[4:6]] == ["from iceberg", "version 0"]


def test_times_before_the_year_1000_print_with_four_digits_everywhere(run, monkeypatch):
    """Tables, show, diff, --json and the messages print a year before 1000 with its zeros, the one
    way: a C library's strftime("%Y") writes the year 68 as "68"."""
    import viewstore.catalog

    early = -60_000_000_000_000  # 0068-09-03T13:20:00Z
    monkeypatch.setattr(viewstore.catalog.time, "time_ns", lambda: early * 1_000_000)
    create(run)
    run("alter", "s.v", "--comment", "later")
    assert "│ 0068-09-03 13:20:00.000 │" in run("history", "s.v")
    assert "at 0068-09-03 13:20:00.000 UTC" in run("show", "s.v")
    assert json.loads(run("history", "s.v", "--json"))[0]["occurred_at"] == "0068-09-03T13:20:00.000+00:00"
    assert "last changed by carol at 0068-09-03 13:20:00.000 UTC" in run("diff", "s.v", "--from-event", "1")
    assert run("diff", "s.v", "--from", "0068-09-03T13:19:59.999Z", code=1) == \
        "error: before: no view s.v existed at 0068-09-03T13:19:59.999+00:00 (its history begins at " \
        "0068-09-03T13:20:00.000+00:00)\n"
    run("drop", "s.v")
    assert run("show", "s.v", code=1) == \
        "error: no such view: s.v (dropped at 0068-09-03 13:20:00 UTC by carol; its history remains)\n"


def test_now_is_a_time_where_leaving_the_option_out_means_now(run):
    """diff --to, show --as-of and audit --until take "now" (any case, blanks around it) as the moment
    they mean without it; --since and --from, which mean no moment when left out, refuse it."""
    _changed_view(run)
    for now in ("now", "NOW", " Now "):
        assert run("diff", "s.v", "--from-event", "1", "--to", now) == run("diff", "s.v", "--from-event", "1")
        assert run("diff", "s.v", "--from-event", "1", "--to", now, "--json") == \
            run("diff", "s.v", "--from-event", "1", "--json")
        assert run("show", "s.v", "--as-of", now, "--json") == run("show", "s.v", "--json")
        assert run("audit", "--until", now, "--json") == run("audit", "--json")
        assert run("audit", "--since", "1", "--until", now, "--json") == run("audit", "--json")
    run("drop", "s.v")
    assert run("diff", "s.v", "--from-event", "1", "--to", "now", code=1).startswith(
        "error: after (now): no such view: s.v (dropped at ")  # the side named as without --to
    assert "give --to or --to-event, not both" in run("diff", "s.v", "--from-event", "1", "--to", "now",
                                                      "--to-event", "2", code=2)
    for args in (["audit", "--since", "now"], ["diff", "s.other", "--from", " NOW"]):
        # said as what it is, where it was told the forms of a time as if now were no word the CLI knew
        assert run(*args, code=2).splitlines()[-1] == \
            f"Error: bad {args[-2]} {args[-1]!r}: now is taken only by the options that mean now when left out " \
            "(--as-of, --until, --to); use ISO 8601 (2026-11-22T10:00:00Z) or epoch milliseconds, in the years " \
            "1 to 9999", args
    assert "now, as without it" in " ".join(run("show", "--help").split())
    assert "or now: the default" in " ".join(run("diff", "--help").split())


def test_without_db_or_viewstore_db_the_store_is_viewstore_db_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VIEWSTORE_DB", raising=False)
    result = CliRunner().invoke(main, ["--actor", "carol", "create", "s.v", "--sql", "SELECT 1"])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("viewstore.db-")] == ["viewstore.db"]
    assert read(tmp_path / "viewstore.db", "load_view", "s.v").audit.creator == "carol"
    assert CliRunner().invoke(main, ["list"]).output == "s.v\n"


def test_json_option_gives_a_programs_own_command_its_flag_outside_the_main_group():
    """json_option is public: a command of a program's own that has it, run on its own (no
    CliContext above it), gets --json as given."""
    from viewstore.cli import json_option

    @click.command()
    @json_option("Print JSON.")
    def report(as_json):
        click.echo(f"json={as_json}")

    assert CliRunner().invoke(report, ["--json"]).output == "json=True\n"
    assert CliRunner().invoke(report, []).output == "json=False\n"


def test_a_hidden_command_a_program_adds_to_the_main_group_is_not_listed_in_its_help():
    @main.command("secret", hidden=True)
    def secret():
        click.echo("done")

    try:
        result = CliRunner().invoke(main, ["--help"], terminal_width=200)
        assert result.exit_code == 0 and "\n  list " in result.output
        assert "secret" not in result.output
        assert CliRunner().invoke(main, ["secret"]).output == "done\n"
    finally:
        del main.commands["secret"]


def test_a_json_after_double_dash_is_an_argument_not_the_option(tmp_path):
    """After '--' every word is an argument: '--json' there asks for nothing, so the usage error of
    such a command line is click's usage text, not a JSON object."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "list", "--", "--json", "extra"])
    assert result.exit_code == 2 and result.stdout == ""
    assert usage_error(result.stderr, "Got unexpected extra argument (extra)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, json_error", [
    (["nosuchcommand", "--json"], True), (["nosuchcommand", "--", "--json"], False),
    (["-", "--json"], True), (["-", "--", "list", "--json"], False),
])
def test_a_json_past_a_word_naming_no_command_is_looked_for_as_a_word_before_double_dash(tmp_path, args, json_error):
    """Past a word that names no command ('-' is no option, but a command's name) the command line's
    options are not known: '--json' asks for a JSON error where it is a word before any '--', and
    not after one (the group takes no '--' after the word that names no command)."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), *args])
    message = f"No such command '{args[0]}'."
    if json_error:
        error = _json_error(result, 2)
        assert error["type"] == "NoSuchCommand" and error["message"] == message, error
    else:
        assert result.exit_code == 2 and result.stdout == "" and usage_error(result.stderr, message)
    assert list(tmp_path.iterdir()) == []


def test_a_command_missing_its_dependency_asks_for_json_by_the_word_before_double_dash(tmp_path):
    """A command whose dependency is missing takes its whole line unread: its '--json' (a word before
    any '--') asks for a JSON error, its own and a usage error of the main options alike."""
    from viewstore.cli import _unavailable

    main.add_command(_unavailable("nopkg", ImportError("No module named 'nopkg'")))
    try:
        error = _json_error(CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "nopkg", "x", "--json"]), 1)
        assert error["message"].startswith("'viewstore nopkg' needs an optional dependency: No module named"), error
        error = _json_error(CliRunner().invoke(main, ["--db", "", "nopkg", "x", "--json"]), 2)
        assert error["type"] == "BadParameter" and "'--db': must not be empty" in error["message"], error
        plain = CliRunner().invoke(main, ["--db", "", "nopkg", "--", "--json"])
        assert plain.exit_code == 2 and plain.stdout == "" and usage_error(plain.stderr, "must not be empty")
        # its own error too: click hands it its words without the '--', after which '--json' asks for nothing
        plain = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "nopkg", "--", "--json"])
        assert plain.exit_code == 1 and plain.stderr.startswith("error: 'viewstore nopkg' needs"), plain.stderr
    finally:
        del main.commands["nopkg"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["create", "s.w", "--sql", "--json", "--bogus"], "No such option '--bogus'"),
    (["create", "s.w", "--comment", "--json", "--column"], "Option '--column' requires an argument"),
    (["create", "s.w", "--representation", "spark", "--json", "--bogus"], "No such option '--bogus'"),
    (["--actor", "--json", "list", "--bogus"], "No such option '--bogus'"),
    (["hms", "export", "s.v", "--engine", "--json"], "Invalid value for '--engine': '--json' is not one of"),
])
def test_a_json_that_is_an_option_s_value_asks_for_no_json_error(tmp_path, args, message):
    """'--json' as the value of an option that takes one (the SQL text of --sql, the second word of
    --representation) is not the option: the usage error of such a command line is click's usage
    text, as it is without it, not a JSON object."""
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), *args])
    assert result.exit_code == 2 and result.stdout == "" and not result.stderr.startswith("{"), result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"Error: {message}"), result.stderr  # click's own
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["create", "s.w", "--sql", "x", "--bogus", "--json"],
                                  ["create", "s.w", "--representation", "spark", "x", "--json", "--bogus"],
                                  ["--actor", "me", "--json", "list", "--bogus"], ["--", "list", "--json", "--bogus"]])
def test_a_json_in_an_option_s_place_asks_for_a_json_error(tmp_path, args):
    """Where click reads '--json' as the option (after an option's value, or after a '--' the main
    group takes out before the command's name), a usage error is a JSON object."""
    error = _json_error(CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), *args]), 2)
    assert error["type"] == "NoSuchOption" and error["message"].startswith("No such option '--bogus'."), error


def test_version_after_an_option_whose_value_is_json_is_its_text_line():
    version = importlib.metadata.version("viewstore")
    result = CliRunner().invoke(main, ["--actor", "--json", "--version"], prog_name="viewstore")
    assert result.exit_code == 0 and result.stdout == f"viewstore, version {version}\n", result.output


@pytest.mark.parametrize("args", [["--version", "--json"], ["--json", "--version"],
                                  ["--db", "x.db", "--json", "--version"]])
def test_version_with_json_is_a_json_object(args):
    """--version acts while the command line is read, before --json is: it printed its text line
    with --json as without, where a script reading JSON gets JSON from every other command."""
    version = importlib.metadata.version("viewstore")
    result = CliRunner().invoke(main, args, prog_name="viewstore")
    assert result.exit_code == 0 and json.loads(result.stdout) == {"version": version}, result.output
    assert result.stderr == ""
    plain = CliRunner().invoke(main, ["--version"], prog_name="viewstore")
    assert plain.exit_code == 0 and plain.stdout == f"viewstore, version {version}\n"
    # after '--' it is an argument, as every '--json' there is
    assert CliRunner().invoke(main, ["--version", "--", "--json"], prog_name="viewstore").stdout == plain.stdout


def test_version_during_shell_completion_is_not_printed(monkeypatch):
    """Shell completion reads the command line without acting on it: a --version already typed
    neither prints nor ends it, and the completion of the next word is given (planted, --version
    acting as the line was read printed the version in place of the command names)."""
    monkeypatch.setenv("COMP_WORDS", "viewstore --version ")
    monkeypatch.setenv("COMP_CWORD", "2")
    result = CliRunner().invoke(main, [], prog_name="viewstore", env={"_VIEWSTORE_COMPLETE": "bash_complete"})
    assert result.exit_code == 0, result.output
    assert "version" not in result.output and "plain,list" in result.output.splitlines()


def test_show_says_whether_each_column_is_nullable(run):
    with ViewStore(run.db) as store:
        store.create_view("s.v", columns=[Column("id", "bigint", nullable=False), Column("x", "int", "the x")],
                          representations=[("spark", "SELECT 1 AS id, 1 AS x")], default_namespace="s")
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in run("show", "s.v").splitlines()
            if line.startswith("│ id ") or line.startswith("│ x ")]
    assert rows == [["id", "long", "no", ""], ["x", "int", "yes", "the x"]]


def test_show_prints_a_dash_for_a_default_catalog_or_namespace_the_view_has_none_of(run):
    with ViewStore(run.db) as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1 AS x")], default_namespace=[])
    assert "\ndefault catalog and namespace: -.-\n" in run("show", "s.v")


def test_show_prints_a_line_longer_than_the_console_is_wide_whole(run, monkeypatch):
    """Lines such as the comment's are printed as stored, not wrapped; only table cells fold."""
    comment = "Orders per region and day, in EUR, refreshed every night"
    create(run, "s.v", "--comment", comment)
    monkeypatch.setenv("COLUMNS", "40")
    assert f"\ncomment: {comment}\n" in run("show", "s.v")


def test_show_prints_the_comment_once_not_again_among_the_properties(run):
    create(run, "s.v", "--comment", "hello", "--property", "k=v")
    out = run("show", "s.v")
    assert "comment: hello" in out.splitlines() and out.count("hello") == 1
    assert [line.split("│")[1].strip()
            for line in out.split("\nproperties\n", 1)[1].split("\nversions", 1)[0].splitlines()[3:-1]] == ["k"]


def test_show_prints_no_properties_table_for_a_view_whose_only_property_is_its_comment(run):
    create(run, "s.v", "--comment", "hello")
    create(run, "s.w")
    for ident in ("s.v", "s.w"):
        out = run("show", ident)
        assert "properties" not in out.splitlines() and "property" not in out, out


def test_show_names_the_last_modifier_and_the_creator_each_on_its_line(run):
    create(run, "s.v")  # by carol
    with ViewStore(run.db, actor="dave") as store:
        store.alter_view("s.v", ViewChange.set_property("owner", "bi"))
    lines = run("show", "s.v").splitlines()
    assert [line.split(" at ")[0] for line in lines if " by " in line] == ["created by carol", "last changed by dave"]


def test_show_prints_no_comment_line_for_an_empty_comment(run):
    """A comment the API stored empty ('') prints no 'comment:' line, as none does (--json tells them
    apart)."""
    with ViewStore(run.db, actor="dave") as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1 AS x")], comment="",
                          default_namespace="s")
    assert [line for line in run("show", "s.v").splitlines() if line.startswith("comment")] == []
    assert json.loads(run("show", "s.v", "--json"))["comment"] == ""


def test_show_keeps_a_long_column_name_whole_while_its_comment_folds(run, monkeypatch):
    """The README: the tables of show keep names whole while their other columns can fold."""
    name = "order_total_amount_in_euros_after_returns"
    comment = "the amount of the order in euros once every return of the order has been booked " * 2
    run("create", "s.v", "--sql", f"SELECT 1 AS {name}", "--column", f"{name}:decimal(18,2):{comment.strip()}")
    monkeypatch.setenv("COLUMNS", "80")
    out = run("show", "s.v")
    assert any(line.startswith(f"│ {name} │") for line in out.splitlines()), out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_key_value_option_splits_at_its_first_equals_sign(run):
    """KEY=VALUE: a value may hold '=' (a JDBC URL, a base64 padding); a key never does."""
    create(run, "s.v", "--property", "jdbc=url?a=1&b=2", "--summary", "padding=YQ==")
    run("alter", "s.v", "--set", "expr=x = 1")
    data = json.loads(run("show", "s.v", "--json"))
    assert data["properties"] == {"jdbc": "url?a=1&b=2", "expr": "x = 1"}
    assert data["versions"][0]["summary"]["padding"] == "YQ=="


def test_the_title_of_a_views_history_names_it_as_stored_whatever_case_it_was_given_in(run):
    create(run)
    assert run("history", "S.V").splitlines()[0] == "history of s.v"


def test_the_title_of_a_views_history_prints_its_name_escaped(run):
    name = "s.evil\u202etxt\x9b2j"
    create(run, name)
    title = run("history", name).splitlines()[0]
    assert title == "history of s.evil\\u202etxt\\x9b2j", title


def test_audit_takes_every_type_given(run):
    create(run, "s.v")
    run("alter", "s.v", "--set", "k=v")
    run("drop", "s.v")
    events = json.loads(run("audit", "--type", "view.created", "--type", "view.dropped", "--json"))
    assert [e["type"] for e in events] == ["view.created", "view.dropped"]


def test_audit_takes_a_type_in_any_case_as_every_enumerated_option_does(run):
    """audit --type VIEW.CREATED was refused while --engine TRINO and --security-mode INVOKER were
    taken: every option of a fixed set of values takes them in any case."""
    create(run, "s.v")
    run("alter", "s.v", "--set", "k=v")
    for spelling in ("VIEW.PROPERTIES_SET", "View.Properties_Set"):
        assert run("audit", "--type", spelling, "--json") == run("audit", "--type", "view.properties_set", "--json")
    assert [e["type"] for e in json.loads(run("audit", "--type", "VIEW.CREATED", "--json"))] == ["view.created"]
    choices = [(name, param) for name, command in _all_commands() for param in command.params
               if isinstance(param.type, click.Choice)]
    assert {"audit", "create", "replace", "import", "hms export", "spark metastore-write"} <= {n for n, _ in choices}
    assert not [(name, param.name) for name, param in choices if param.type.case_sensitive]



# -- long answers: read, formatted and written as they go --------------------------------------


def _log_of(db, events):
    """A store whose one view s.v has ``events`` events (a create, then properties set 1,000 a call)."""
    with ViewStore(db, actor="carol") as store:
        store.create_view("s.v", columns=[], representations=[("spark", "SELECT 1 AS x")], default_namespace="s")
        done = 1
        while done < events:
            step = min(1000, events - done)
            store.alter_view("s.v", *[ViewChange.set_property(f"k{i % 50}", f"{done}-{i}") for i in range(step)])
            done += step


@pytest.fixture(scope="module")
def long_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("long")
    for events in (4_000, 12_000, 36_000):
        _log_of(folder / f"{events}.db", events)
    return folder


def _peak_memory(db, args):
    """The peak of the memory Python allocates while the command runs, its output going to /dev/null
    (not kept, as a CliRunner would keep it)."""
    import tracemalloc

    with open(os.devnull, "w", encoding="utf-8") as sink:
        saved = sys.stdout
        sys.stdout = sink
        tracemalloc.start()
        try:
            code = main.main(["--db", str(db), *args], prog_name="viewstore", standalone_mode=False)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            sys.stdout = saved
    assert not code
    return peak


@pytest.mark.parametrize("args", [["audit"], ["audit", "--json"], ["history", "s.v"], ["history", "s.v", "--json"],
                                  ["query", "SELECT * FROM events"], ["query", "SELECT * FROM events", "--json"]],
                         ids=" ".join)
def test_a_long_answer_is_printed_in_bounded_memory(long_logs, monkeypatch, args):
    """`viewstore audit --json > all.json` of a long log: the events (rows) are read, turned into
    text and written a batch at a time, and a table is laid out on its first 10,000 rows, so three
    times the events take no more memory, where every event was held until the last was printed
    (200,000 events: 676 MB for a table, 550 MB with --json)."""
    from viewstore.cli import JSON_BATCH
    from viewstore.tables import TextTable

    monkeypatch.delenv("COLUMNS", raising=False)
    # a table's smaller log is longer than the rows it is laid out on (TextTable.WINDOW); --json writes
    # 1,000 items at a time (cli.JSON_BATCH), so four batches against twelve say as much, in a third of the time
    events = (4_000, 12_000) if "--json" in args else (12_000, 36_000)
    assert events[0] > (JSON_BATCH if "--json" in args else TextTable.WINDOW)
    small, large = (_peak_memory(long_logs / f"{n}.db", args) for n in events)
    assert large < 1.3 * small, (small, large)


def test_the_count_above_a_long_audit_table_counts_what_the_filters_match(run, monkeypatch):
    """The count heads the table before its rows are all read: past the rows it is laid out on it
    comes from a count of the same filters in the same read, exact with a limit or a filter."""
    monkeypatch.setenv("COLUMNS", "200")
    _log_of(run.db, 10_500)
    with ViewStore(run.db, actor="dave") as store:
        store.alter_view("s.v", ViewChange.update_comment("dave's"))
    assert run("audit").splitlines()[0] == "10501 events"
    assert run("audit", "--limit", "10200", "--newest-first").splitlines()[0] == "10200 events"
    assert run("audit", "--actor", "carol").splitlines()[0] == "10500 events"
    assert run("audit", "--actor", "dave").splitlines()[0] == "1 event"
    lines = run("audit", "--since-position", "2").splitlines()
    assert lines[0] == "10500 events" and len([line for line in lines if line.startswith("│ ")]) == 10500


def _log_with_a_damaged_event_last(db, events):
    """:func:`_log_of` ``events`` events, then one more of s.v whose payload is not JSON."""
    _log_of(db, events)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO events (commit_id, view_id, stream_version, type, identifier, actor, occurred_at, "
                     "payload) SELECT 'k', view_id, ?, 'view.comment_updated', 's.v', 'me', 1, 'not json' "
                     "FROM events WHERE position = 1", (events + 1,))
    conn.close()


def test_a_damaged_event_past_the_first_batch_ends_a_long_answer_with_the_error_naming_it(tmp_path):
    """A long answer is written as it is read: a damaged event found past the first batch ends it
    there, with the CorruptLogError naming the event, exit code 1 (with --json the error as JSON on
    stderr; stdout holds every event before it, not a whole document: the 500 read in the batch the
    damaged one ended were lost before)."""
    db = tmp_path / "cli.db"
    _log_with_a_damaged_event_last(db, 1500)
    message = "event at position 1501 has a payload that is not JSON"
    for args in (["audit", "--json"], ["history", "s.v", "--json"]):
        result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
        assert result.exit_code == 1 and json.loads(result.stderr) == {
            "error": {"type": "CorruptLogError", "message": message, "exit_code": 1}}
        assert result.stdout.startswith("[\n  {") and result.stdout.count('"position"') == 1500
        assert json.loads(result.stdout + "\n]")[-1]["position"] == 1500
    result = CliRunner().invoke(main, ["--db", str(db), "audit"], catch_exceptions=False)
    assert result.exit_code == 1 and result.stderr == f"error: {message}\n" and result.stdout == ""


def test_a_damaged_event_first_in_a_batch_ends_a_json_answer_after_the_batches_before_it(tmp_path):
    """With --json, a damaged event that is the first of its batch (the first event of all, or the one
    after a whole batch) ends the answer after the batches before it, as they were written: nothing
    on stdout when no event came before it (--since-position at the damaged one), else every event
    before it with no separator after the last (the list, closed, is the events before the damaged
    one)."""
    db = tmp_path / "cli.db"
    _log_with_a_damaged_event_last(db, 1000)
    for args in (["audit", "--json"], ["history", "s.v", "--json"]):
        result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
        assert result.exit_code == 1 and json.loads(result.stderr)["error"]["type"] == "CorruptLogError"
        assert [e["position"] for e in json.loads(result.stdout + "\n]")] == list(range(1, 1001))
    first = tmp_path / "first.db"
    _log_with_a_damaged_event_last(first, 1)
    for args in (["audit", "--json"], ["history", "s.v", "--json"]):
        result = CliRunner().invoke(main, ["--db", str(first), *args, "--since-position", "2"], catch_exceptions=False)
        assert result.exit_code == 1 and json.loads(result.stderr) == {"error": {
            "type": "CorruptLogError", "message": "event at position 2 has a payload that is not JSON", "exit_code": 1}}
        assert result.stdout == ""


def test_a_damaged_event_past_the_rows_a_table_is_laid_out_on_ends_it_after_the_rows_printed(tmp_path):
    """A table is printed once its first 10,000 rows are laid out: a damaged event read after them
    ends it there, with the CorruptLogError naming the event on stderr and exit code 1; stdout holds
    the table's count or title, its head and the row of every event before it (those of its own
    batch of 1,000 were lost with it, and the lines formatted since the last 200 printed)."""
    db = tmp_path / "cli.db"
    _log_with_a_damaged_event_last(db, 10_500)
    for args, title in ((["audit"], "10501 events"), (["history", "s.v"], "history of s.v")):
        result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False, env={"COLUMNS": "200"})
        assert result.exit_code == 1
        assert result.stderr == "error: event at position 10501 has a payload that is not JSON\n"
        lines = result.stdout.splitlines()
        assert lines[0] == title and len(lines) == 1 + 3 + 10_500
        assert [line.split("│")[1].strip() for line in lines[4:]] == [str(p) for p in range(1, 10_501)]


def test_an_error_sql_raises_at_a_later_row_ends_a_query_with_the_error(run):
    """A query whose statement fails at a row past the first ones (malformed JSON at the 1,501st
    row) ends with the same typed error as one failing at its first row, exit code 1 (with --json
    after the rows given before it)."""
    _log_of(run.db, 1600)
    sql = "SELECT position, json_extract(CASE WHEN position > 1500 THEN 'nope' ELSE '{}' END, '$.a') AS a FROM events"
    result = CliRunner().invoke(main, ["--db", str(run.db), "query", sql, "--json"], catch_exceptions=False)
    assert result.exit_code == 1 and json.loads(result.stderr) == {
        "error": {"type": "ValidationError", "message": "query failed: malformed JSON", "exit_code": 1}}
    # (the 1,500th is lost: Python's sqlite3 steps to the next row, which fails, before it hands one over)
    assert [row["position"] for row in json.loads(result.stdout + "\n]")] == list(range(1, 1500))
    assert run("query", sql, code=1).endswith("error: query failed: malformed JSON\n")


@pytest.mark.parametrize("args", [["audit"], ["audit", "--json"], ["history", "s.v"],
                                  ["query", "SELECT * FROM events"]], ids=" ".join)
def test_a_reader_that_stops_early_ends_a_long_answer_quietly(long_logs, args):
    """`viewstore audit | head -1` of a long log: the closed pipe ends the streamed answer with
    exit code 0 and nothing on stderr, its snapshot and connection let go."""
    db = long_logs / "36000.db"  # (read only: the module's long log, not one built for each case)
    reader = subprocess.Popen([sys.executable, "-m", "viewstore", "--db", str(db), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout.readline()
    reader.stdout.close()  # as head does after its line
    assert reader.wait(timeout=60) == 0
    assert reader.stderr.read() == b""
    reader.stderr.close()


def test_ctrl_c_while_show_json_dumps_a_column_type_is_exit_code_130(run):
    """pydantic-core reports what a Python function it calls raised as its own error, Ctrl-C's
    KeyboardInterrupt too: a Ctrl-C that came while `show --json` dumped a column's type ended in
    that error's traceback (exit code 1). It is an interruption now, as anywhere else (130)."""
    import os
    import signal
    import sys

    import viewstore.types

    create(run)

    def hook(frame, event, arg):  # a real SIGINT when pydantic-core asks a column type's text
        if (event == "call" and frame.f_code.co_name == "__str__"
                and frame.f_code.co_filename == viewstore.types.__file__
                and frame.f_back is not None and frame.f_back.f_code.co_name == "_type_text"  # (a column type's dump)
                and frame.f_back.f_back is not None and frame.f_back.f_back.f_code.co_name == "model_dump"):
            sys.setprofile(None)
            os.kill(os.getpid(), signal.SIGINT)

    # Python's own Ctrl-C (a SparkContext started earlier in this process puts in one of its own)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.setprofile(hook)
    try:
        out = run("show", "s.v", "--json", code=130)
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGINT, previous)
    assert json.loads(out) == {"error": {"type": "KeyboardInterrupt", "message": "interrupted", "exit_code": 130}}


#: run in a fresh process: show and list --json of a store, then which event models were built
_BUILDS = """
import sys
from viewstore.cli import main
import viewstore.events as events
for args in (["show", "s.v"], ["--json", "list"]):
    try:
        main(["--db", sys.argv[1], *args])
    except SystemExit as e:
        assert e.code == 0, e.code
built = [cls.__name__ for cls in (events.Event, *events.EVENT_TYPES.values()) if cls.__pydantic_complete__]
print(built, events.payload_readers.cache_info().currsize, events._classes.cache_info().currsize, file=sys.stderr)
"""


def test_show_and_list_build_no_event_model(run):
    """Every command pays for what it imports at start: the event models' validators (and the
    payload readers) are built at their first use, so commands that read views and write nothing
    do not build them (they were a tenth of the start-up of viewstore show)."""
    create(run)
    result = subprocess.run([sys.executable, "-c", _BUILDS, str(run.db)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "s.v" in result.stdout
    assert result.stderr.strip() == "[] 0 0"


def test_audit_of_an_unknown_actor_names_up_to_three_close_actors_and_no_far_one(run):
    """The note on an actor with no event names the close actors, the closest first, three at most,
    as every "did you mean" names them ('a, b or c'); a name only as alike as usr03 is to user01 is not named."""
    for actor in ("user01", "user02", "user03", "user04"):
        run("--actor", actor, "create", f"s.{actor}", "--sql", "SELECT 1 AS x", "--column", "x:int")

    def note(actor):
        result = CliRunner().invoke(main, ["--db", str(run.db), "audit", "--actor", actor, "--json"])
        assert result.exit_code == 0 and result.stdout == "[]\n", result.output
        return result.stderr

    # planted, one match asked for, another joining of the names, or a cutoff of 0.6 passed the tests before
    assert note("user0") == ("note: no event in the log is by actor 'user0' "
                             "(did you mean 'user04', 'user03' or 'user02'?)\n")
    assert note("usr03") == "note: no event in the log is by actor 'usr03' (did you mean 'user03'?)\n"


def test_history_note_counts_a_view_imported_under_the_name_and_names_it_as_stored(run, tmp_path):
    """A view imported under a name another view had (its one event view.imported, no view.created)
    is another holder; a name given in other case is named as stored (planted, view.imported left
    out of the event types read said nothing, and the name as given said FIN.Ledger)."""
    create(run, "fin.ledger")
    run("rename", "fin.ledger", "fin.old")
    other = CliRunner().invoke(main, ["--db", str(tmp_path / "other.db"), "--actor", "carol", "create", "fin.src",
                                      "--sql", "SELECT 1 AS x", "--column", "x:int"])
    assert other.exit_code == 0, other.output
    exported = CliRunner().invoke(main, ["--db", str(tmp_path / "other.db"), "export", "fin.src",
                                         "--location", str(tmp_path / "exported"), "--json"])
    assert exported.exit_code == 0, exported.output
    run("import", json.loads(exported.stdout)["path"], "fin.ledger")
    result = CliRunner().invoke(main, ["--db", str(run.db), "history", "FIN.Ledger", "--json"])
    assert result.exit_code == 0, result.output
    assert [e["type"] for e in json.loads(result.stdout)] == ["view.imported"]
    assert result.stderr == ("note: fin.ledger was also the name of 1 other view; 'viewstore audit --view fin.ledger' "
                             "lists the events of every view that had it\n")
