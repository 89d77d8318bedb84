"""``viewstore hms ...``: engine-native view records of a Hive metastore in and out of the store.

Loaded by the main CLI only when called (see ``_LAZY_COMMANDS`` in :mod:`viewstore.cli`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from ..cli import CliContext, LocalPath, count, folded_views, json_option, json_text, pass_cli, usage_error
from ..errors import ValidationError, ViewAlreadyExistsError
from ..hms import HmsImportReport, ImportedRecord, prepare_import
from ..model import View, identifier_str
from ..tables import data_table, visible
from . import detect

__all__ = ["hms", "records_of", "print_import_report"]

#: The engines ``hms export`` writes.
EXPORT_ENGINES = ("trino", "spark", "hive", "flink", "iceberg")


@click.group(short_help="Import and export the engine-native views of a Hive metastore.")
def hms() -> None:
    """Engine-native views of a Hive metastore: import their records, export a view as one engine's record.

    Trino, Spark, Hive, Flink and Iceberg views are recognised; see viewstore.formats.

    Examples:

    \b
        viewstore hms import trino_views.json
        viewstore hms export sales.daily --engine spark --json
    """


def records_of(data: Any, source: str = "the file") -> list[dict[str, Any]]:
    """The HMS records in a loaded JSON document: one record, a list of records, or an object
    holding one under ``hms_table`` (as the conformance files do); list items may be either.

    Raises:
        ValidationError: the document or an item is not a JSON object.
    """
    items = data if isinstance(data, list) else [data]
    records = []
    for i, item in enumerate(items):
        where = f"{source}[{i}]" if isinstance(data, list) else source
        if isinstance(item, dict) and isinstance(item.get("hms_table"), dict):
            item = item["hms_table"]
        if not isinstance(item, dict):
            raise ValidationError(f"{where}: an HMS record must be a JSON object, not {type(item).__name__}")
        records.append(item)
    return records


def _source(path: str) -> str:
    """How messages name the FILE argument: ``<stdin>`` for ``-``."""
    return "<stdin>" if path == "-" else path


def _load(path: str) -> list[dict[str, Any]]:
    """The records of the file at ``path``, or of stdin for ``-`` (a pipe from ``hms export --json``)."""
    source = _source(path)
    try:
        if path == "-":
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeError) as e:  # UnicodeEncodeError: a name no file here can have
        raise ValidationError(f"cannot read {source}: {e}") from e
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than the reader goes
        raise ValidationError(f"{source} is not JSON: {e}") from e
    return records_of(data, source)


def _record_name(record: dict[str, Any], index: int) -> str:
    database, name = record.get("dbName"), record.get("tableName")
    if isinstance(database, str) and isinstance(name, str) and database and name:
        return f"{database}.{name}"
    return f"record {index}"


@hms.command("import", short_help="Record views from HMS table records in a JSON file.")
@click.argument("file", metavar="FILE.json")
@click.argument("identifier", required=False)
@click.option("--metadata", "metadata_file", type=LocalPath(dir_okay=False),
              help="For an Iceberg view's record: a local copy of the metadata file the record's "
                   "metadata_location names, read in its place (the view still records that location as "
                   "its source; one record only).")
@json_option("Print the import report as JSON.")
@pass_cli
@click.pass_context
def import_(ctx: click.Context, cli: CliContext, file: str, identifier: str | None, metadata_file: str | None,
            as_json: bool) -> None:
    """Record views from HMS table records in FILE.json (one record, a list, or an object with
    hms_table; '-' reads them from stdin).

    A view is recorded as IDENTIFIER, or by default as the record's dbName.tableName. Each record is
    its own transaction: with several records, the failed ones are reported (exit code 1) and
    the others are imported; tables, materialized views and views already in the store are
    skipped and reported as such (exit code 0 when nothing failed); an empty list, the dump of a
    metastore without tables, is an empty report, as 'viewstore spark import' of an empty database
    is. The report's tables list the records imported, skipped and failed, but the records whose
    view is in the store already (a run again) are folded into one count line; --json lists every
    record. A file of one record asks for that record: a table, or a view already in the store, is
    an error (exit code 1). A store file is started only when a record can be imported.

    Examples:

    \b
        viewstore hms import trino_view.json sales.orders_by_day
        viewstore hms import metastore_dump.json --json
        viewstore hms export sales.d --engine spark --json \\
            | viewstore --db copy.db hms import -
    """
    records = _load(file)
    if len(records) == 1:
        started = time.perf_counter()
        engine = detect(records[0])
        prepared = prepare_import(records[0], identifier, metadata_file=metadata_file)  # a bad one starts no store
        try:
            view = prepared.import_into(cli.store(create=True))
        except ViewAlreadyExistsError as e:  # a run again, or a name taken: say how to import it all the same
            raise ViewAlreadyExistsError(f"{e} (nothing was written; give IDENTIFIER to import the record "
                                         "under another name)") from e
        report = HmsImportReport(seconds=time.perf_counter() - started)
        report.imported.append(_imported(view, engine, _record_name(records[0], 0)))
        if as_json:
            click.echo(json_text(report.to_dict()))
        else:
            article = "an" if engine[0] in "aeiou" else "a"
            click.echo(visible(f"imported {identifier_str(view.identifier)} from {article} {engine} record "
                               f"({count(len(view.versions), 'version')}, {count(view.stream_version, 'event')})"))
        return
    if identifier is not None or metadata_file is not None:
        raise ValidationError(f"{_source(file)} holds {len(records)} records; "
                              "IDENTIFIER and --metadata apply to one record only")
    report = _import_many(cli, records)
    cli.failing = not report.ok
    if as_json:
        click.echo(json_text(report.to_dict()))
    else:
        print_import_report(cli, report)
    if not report.ok:
        ctx.exit(1)


def _imported(view: View, engine: str, name: str) -> ImportedRecord:
    return ImportedRecord(identifier_str(view.identifier), engine, len(view.versions), name)


def _import_many(cli: CliContext, records: list[dict[str, Any]]) -> HmsImportReport:
    report = HmsImportReport()
    started = time.perf_counter()
    with cli.progress("importing") as progress:
        try:
            for i, record in enumerate(records):
                name = _record_name(record, i)
                progress(i, len(records), name)
                report.import_one(lambda: cli.store(create=True), name, record)
                progress(i + 1, len(records))
        except KeyboardInterrupt as e:
            settled = len(report.imported) + len(report.skipped) + len(report.failed)
            raise import_interrupted(f"{settled} of {count(len(records), 'record')}", "record") from e
    report.seconds = time.perf_counter() - started
    return report


def import_interrupted(done: str, each: str) -> KeyboardInterrupt:
    """The Ctrl-C of an import of many records (``hms import``, ``viewstore spark import``), saying
    what stays, which a run again needs to know: ``done`` counts those reported done (the one under
    way may be in too), ``each`` names what is its own transaction."""
    return KeyboardInterrupt(f"after {done}: each {each} is its own transaction, so the views imported stay, "
                             "and a run again skips them")


def print_import_report(cli: CliContext, report: HmsImportReport) -> None:
    """The report of an import of several records as tables (imported, skipped with the reason,
    failed with the error) and its summary line; ``viewstore spark import`` prints it too. The
    records whose view was in the store already are counted in a line of their own, not listed
    (a run again would list every view it imported before): ``--json`` lists them."""
    if report.imported:
        table = data_table("view", "engine", "versions", title="imported", names=["view"])
        for item in report.imported:
            table.add_row(item.identifier, item.engine, str(item.versions))
        cli.console.print(table)
    stored = sum(skipped.reason == "exists" for skipped in report.skipped)
    if len(report.skipped) > stored:
        table = data_table("record", "reason", "detail", title="skipped", names=["record"])
        for skipped in report.skipped:
            if skipped.reason != "exists":
                table.add_row(skipped.name, skipped.reason, skipped.detail)
        cli.console.print(table)
    if report.failed:
        table = data_table("record", "error", "message", title="failed", names=["record"])
        for failed in report.failed:
            table.add_row(failed.name, failed.error, failed.message)
        cli.console.print(table)
    if stored:
        cli.console.print(folded_views("skipped as in the store already", stored))
    cli.console.print(str(report))


@hms.command("export", short_help="Print the HMS table record an engine would write for a view.")
@click.argument("identifier")
@click.option("--engine", required=True, type=click.Choice(EXPORT_ENGINES, case_sensitive=False),
              help="Whose record to write.")
@click.option("--metadata-location", metavar="URI",
              help="For --engine iceberg: the metadata file the record names as its metadata_location "
                   "(written into the record, not read): a URI as given, or a local path as its file: URI "
                   "(such as 'viewstore export' prints). Default: the file the view was imported from, "
                   "while the view is unchanged since.")
@json_option("Print plain JSON (for scripts) instead of highlighted JSON.")
@pass_cli
def export_(cli: CliContext, identifier: str, engine: str, metadata_location: str | None, as_json: bool) -> None:
    """Print the HMS table record ENGINE itself would write for the view IDENTIFIER, as JSON.

    The view needs SQL in the engine's dialect (an Iceberg record takes all of them from its
    metadata file); the record's owner is the view's owner property, else its creator.

    An Iceberg record points at a metadata file: give it with --metadata-location. Without it, the
    record points at the file the view was imported from, and the export fails if the view changed
    since (that file no longer describes it).

    Examples:

    \b
        viewstore hms export sales.orders_by_day --engine trino > record.json
        viewstore hms export sales.events --engine iceberg \\
            --metadata-location s3://wh/sales/events/metadata/00003-x.json
    """
    if metadata_location is not None and engine.lower() != "iceberg":
        raise usage_error(f"--metadata-location is for --engine iceberg only, not {engine.lower()}")
    record = cli.store().export_hms(identifier, engine.lower(), metadata_location=metadata_location)
    text = json_text(record)
    if as_json:
        click.echo(text)
    else:
        cli.console.print_json(text)
