"""Views from Hive-metastore records: what :meth:`~viewstore.catalog.ViewStore.import_hms` records.

:mod:`viewstore.formats` decodes a record without any I/O; this module turns the decoded definition
into the arguments of :meth:`~viewstore.catalog.ViewStore.import_view`, and for an Iceberg view reads
the metadata file the record points at.

What an imported record becomes:

* one version (id 1, timestamped at the import): the SQL as a representation in the engine's
  dialect (``trino``, ``spark``, ``hive``, ``flink``), the columns with Iceberg types, the default
  catalog and namespace the engine recorded (a Hive view's is its database; a Flink view's is the
  database its expanded query qualified the original's table names with, if it is just that; none
  when it recorded none; the store's catalog is not filled in), and the summary (only Iceberg views
  have one);
* the properties: ``comment``, ``owner`` (the view's owner in the metastore, see
  :data:`~viewstore.formats.base.OWNER_PROPERTY`) and every other decoded property under its own
  name, including the ``hms.<engine>.*`` facts the codec needs to write the same record back (a
  parameter named ``owner`` is kept as ``hms.owner-parameter``);
* the security mode the engine recorded (Trino's ``runAsInvoker``), otherwise ``DEFINER``;
* one ``view.imported`` event with ``source="hms:<engine>"`` and, as ``source_location``, the
  record's ``database.table``.

An Iceberg view registered in the metastore (``table_type=ICEBERG-VIEW``) keeps its definition in
the metadata file its ``metadata_location`` names. That file (a local path or a ``file:`` URI, plain
or gzip) is read and validated as :meth:`~viewstore.catalog.ViewStore.import_iceberg` validates it,
and its whole history is imported under its view UUID; ``source_location`` is the metadata file.
Exported again (:meth:`~viewstore.catalog.ViewStore.export_hms`), the record points at that file only
while the view is unchanged since the import (:func:`imported_metadata_location`).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit
from urllib.request import url2pathname

from .errors import ConcurrencyError, CorruptLogError, ValidationError, ViewAlreadyExistsError, ViewStoreError
from .events import Event, ViewImported
from .formats import definition_from_table, detect, not_a_view
from .formats.base import (OWNER_PARAMETER_KEY, OWNER_PROPERTY, ViewDefinition, as_record, invalid, parameters_of,
                           text_of)
from .formats.iceberg import METADATA_LOCATION_KEY
from .iceberg import _load_json, parse_metadata
from .model import Identifier, IdentifierLike, VersionLogEntry, View, ViewVersion, identifier_str, to_identifier

__all__ = ["HmsImport", "prepare_import", "metadata_file_path", "record_identifier", "metadata_location_uri",
           "imported_metadata_location",
           "HmsImportReport", "ImportedRecord", "SkippedRecord", "FailedRecord"]

_ICEBERG = "iceberg"
_METADATA_LOCATION = "metadata_location"
_CONTROL = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class HmsImport:
    """Everything :meth:`~viewstore.catalog.ViewStore.import_view` needs to record one HMS view."""

    identifier: Identifier
    engine: str
    """The engine that wrote the record (see :func:`viewstore.formats.detect`)."""
    source: str
    """``hms:<engine>``, the ``source`` of the ``view.imported`` event."""
    source_location: str | None
    versions: tuple[ViewVersion, ...]
    version_log: tuple[VersionLogEntry, ...]
    current_version_id: int
    properties: dict[str, str]
    security_mode: str
    view_uuid: str | None = None

    def import_view_arguments(self) -> dict[str, Any]:
        """The keyword arguments of :meth:`~viewstore.catalog.ViewStore.import_view` (all but the identifier)."""
        return {"source": self.source, "source_location": self.source_location, "versions": self.versions,
                "version_log": self.version_log, "current_version_id": self.current_version_id,
                "properties": self.properties, "security_mode": self.security_mode, "view_uuid": self.view_uuid}

    def import_into(self, store: Any) -> View:
        """Record the view in ``store`` (a ViewStore) with one ``view.imported`` event; the View."""
        view: View = store.import_view(self.identifier, **self.import_view_arguments())
        return view


def record_identifier(table: Mapping[str, Any] | Any) -> Identifier:
    """The record's ``(dbName, tableName)`` as a store identifier.

    Raises:
        ValidationError: the record lacks either name, or a name is not a valid identifier part.
    """
    record = as_record(table)
    database, name = text_of(record, "dbName"), text_of(record, "tableName")
    if not database or not name:
        raise invalid("identifier", "the record has no dbName and tableName to name the view; give an identifier")
    return to_identifier((database, name))


def metadata_file_path(location: str) -> Path:
    """The local file behind a ``metadata_location``: a plain path or a ``file:`` URI.

    Raises:
        ValidationError: the location is on another file system (``s3://``, ``hdfs://``...) or on
            another host.
    """
    parts = urlsplit(location)
    if parts.scheme.lower() == "file":
        if parts.netloc not in ("", "localhost"):
            raise invalid(f"parameters.{_METADATA_LOCATION}", f"{location!r} is on another host; "
                                                            "viewstore reads local files only")
        return Path(url2pathname(parts.path))
    if len(parts.scheme) > 1:  # a one-letter scheme is a Windows drive
        raise invalid(f"parameters.{_METADATA_LOCATION}",
                      f"{location!r} is not a local file; viewstore reads local paths and file: URIs "
                      "(give a local copy of the metadata file: metadata_file=, --metadata)")
    return Path(location)


def prepare_import(table: Mapping[str, Any] | Any, identifier: IdentifierLike | None = None, *,
                   metadata_file: str | Path | None = None, now_ms: int | None = None) -> HmsImport:
    """Decode an HMS view record into what the store records for it (no writing).

    Args:
        table: an HMS table record (a dict shaped like the Thrift ``Table``, as the conformance
            ``hms_table`` objects and :func:`viewstore.spark.read_metastore_table` are).
        identifier: the store identifier; defaults to the record's ``dbName`` and ``tableName``.
        metadata_file: for an Iceberg view only, the metadata file to read instead of the one
            ``metadata_location`` names (a local copy of a remote file).
        now_ms: the version's timestamp for a non-Iceberg record (default: now).

    Raises:
        ValidationError: the record is not a logical view or is malformed (the message names the
            field), the identifier is missing or bad, or the metadata location is not a local file.
        IcebergMetadataError: the Iceberg metadata file is unreadable, invalid, or another view's.
    """
    record = as_record(table)
    engine = detect(record)
    ident = to_identifier(identifier) if identifier is not None else record_identifier(record)
    if engine == _ICEBERG:
        return _prepare_iceberg(record, ident, metadata_file)
    if metadata_file is not None:
        raise invalid("metadata_file", f"only Iceberg views have a metadata file; this is a {engine} view")
    _, definition = definition_from_table(record)
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    # a refusal here (a time the version cannot hold) is ViewVersion's own ValidationError, the one
    # error its constructor raises
    version = ViewVersion(
        version_id=1, timestamp_ms=now, schema_id=0, columns=definition.columns,
        representations=definition.representations, default_catalog=definition.default_catalog,
        default_namespace=definition.default_namespace, summary=definition.summary)
    database, name = text_of(record, "dbName"), text_of(record, "tableName")
    return HmsImport(
        identifier=ident, engine=engine, source=f"hms:{engine}",
        source_location=f"{database}.{name}" if database and name else None,
        versions=(version,), version_log=(VersionLogEntry(timestamp_ms=now, version_id=1),),
        current_version_id=1, properties=_properties(definition, from_parameters=True),
        security_mode=definition.security_mode or "DEFINER")


def _prepare_iceberg(record: Mapping[str, Any], ident: Identifier, metadata_file: str | Path | None) -> HmsImport:
    location = parameters_of(record).get(_METADATA_LOCATION)
    if not location:
        raise invalid(f"parameters.{_METADATA_LOCATION}", "an Iceberg view in HMS must name its metadata file")
    path = Path(metadata_file) if metadata_file is not None else metadata_file_path(location)
    document = _load_json(path)
    _, definition = definition_from_table(record, metadata=document)  # the record and the file agree
    metadata = parse_metadata(document, str(path))
    return HmsImport(
        identifier=ident, engine=_ICEBERG, source=f"hms:{_ICEBERG}", source_location=location,
        versions=metadata.versions, version_log=metadata.version_log,
        current_version_id=metadata.current_version_id,
        properties=_properties(definition, from_parameters=False),
        security_mode=definition.security_mode or "DEFINER", view_uuid=metadata.view_uuid)


def metadata_location_uri(location: str | Path) -> str:
    """How an HMS record names a metadata file: a URI (``s3://...``, ``file:/...``) as given, a local
    path (a ``Path``, or a string without a scheme) as its absolute ``file:`` URI.

    Raises:
        ValidationError: the location is empty, not a string or path, has blanks at its ends or a
            control character (no engine reads such text as the file meant: a blank before
            ``s3://`` makes it no URI), or holds a lone surrogate.
    """
    if isinstance(location, str) and location.strip():
        if location != location.strip() or _CONTROL.search(location):
            raise invalid("metadata_location", f"{location!r} has blanks at its ends or a control character; "
                                               "give the location alone")
        if len(urlsplit(location).scheme) > 1:  # a one-letter scheme is a Windows drive
            return location
        location = Path(location)
    if not isinstance(location, Path):
        raise invalid("metadata_location", f"must be a non-empty string or a path, not {location!r}")
    try:
        return location.absolute().as_uri()
    except UnicodeError as e:  # a lone surrogate, which a URI cannot hold
        raise invalid("metadata_location", f"{str(location)!r} cannot be a URI ({e})") from e


def imported_metadata_location(view: View, history: Sequence[Event]) -> str:
    """The metadata file an Iceberg view was imported from, as long as it still describes the view.

    That is the ``metadata_location`` of the HMS record :meth:`~viewstore.catalog.ViewStore.import_hms`
    read, provided nothing but renames happened to the view since (a rename leaves the metadata
    file alone; any other change makes the file describe an older state of the view).

    Args:
        view: the view as loaded.
        history: the view's events (:meth:`~viewstore.catalog.ViewStore.history`); events after
            ``view.stream_version`` are ignored.

    Raises:
        ValidationError: the view was not imported from an Iceberg view's HMS record, or it changed
            since; the message says to pass the location of a metadata file written for it now.
    """
    events = [e for e in history if e.view_id == view.uuid and e.stream_version <= view.stream_version]
    location = view.properties.get(METADATA_LOCATION_KEY)
    name = identifier_str(view.identifier)
    advice = ("write its metadata with export_iceberg (viewstore export) and pass that file's location as "
              "metadata_location (--metadata-location)")
    first = events[0] if events else None
    if not location or not isinstance(first, ViewImported) or first.source != "hms:iceberg":
        raise invalid("metadata_location", f"the view {name} was not imported from an Iceberg view's HMS "
                                           f"record, so no metadata file describes it; {advice}")
    changed = next((e for e in events if e.commit_id != first.commit_id and e.type != "view.renamed"), None)
    if changed is not None:
        raise invalid("metadata_location", f"the view {name} changed ({changed.type}) since it was imported "
                                           f"from {location!r}, which no longer describes it; {advice}")
    return location


def _properties(definition: ViewDefinition, *, from_parameters: bool) -> dict[str, str]:
    """The store properties of a decoded view: its properties, its comment and its owner.

    Args:
        from_parameters: the properties are the record's HMS parameters, so one named ``owner`` is
            a parameter, kept apart from the owner; otherwise they are an Iceberg metadata file's,
            whose ``owner`` (if any) is the view's owner rather than the metastore's.
    """
    properties = dict(definition.properties)
    if from_parameters and OWNER_PROPERTY in properties:
        properties[OWNER_PARAMETER_KEY] = properties.pop(OWNER_PROPERTY)
    if definition.comment is not None:
        properties["comment"] = definition.comment
    if definition.owner and (from_parameters or OWNER_PROPERTY not in properties):
        properties[OWNER_PROPERTY] = definition.owner  # an Iceberg metadata file's own owner wins: it is the truth
    return properties



# --------------------------------------------------------------------------------------------
# Importing many records


# Each of the three kinds of row has both ``name`` (the record as the import names it: its dbName.tableName
# as written, or ``record 3`` in a file) and ``identifier`` (the view in the store), so that a script
# reads every row by the same keys.


@dataclass(frozen=True)
class ImportedRecord:
    """A record recorded in the store."""

    identifier: str
    """The view in the store, ``db.view``."""
    engine: str
    versions: int
    name: str
    """The record as the import names it (see :class:`SkippedRecord`)."""


@dataclass(frozen=True)
class SkippedRecord:
    """A record left alone, and why."""

    name: str
    """The record as the import names it: its ``dbName.tableName`` as written, or ``record 3``
    (the fourth of a file) when it has none."""
    reason: str
    """``exists`` (a view with that identifier or UUID is in the store already) or ``not-a-view``
    (a table, a Hive or a Trino materialized view; ``detail`` says which, as ``a MANAGED_TABLE``)."""
    detail: str
    identifier: str | None = None
    """The view in the store the record names, ``db.view``; None when it names none that could be one."""


@dataclass(frozen=True)
class FailedRecord:
    """A record that could not be imported: the error's class and message."""

    name: str
    """As :attr:`SkippedRecord.name`."""
    error: str
    """The error class, e.g. ``ValidationError`` or ``IcebergMetadataError``."""
    message: str
    identifier: str | None = None
    """As :attr:`SkippedRecord.identifier`."""


def _identifier_of(table: Mapping[str, Any] | Any, identifier: IdentifierLike | None) -> str | None:
    """The identifier the record would be recorded under, or None where it has none."""
    try:
        return identifier_str(to_identifier(identifier) if identifier is not None else record_identifier(table))
    except ViewStoreError:
        return None


def _of_the_store(store: Any, error: ViewStoreError) -> bool:
    """Whether ``error`` is the store's own, not the record's: every record would meet it."""
    return (bool(getattr(store, "closed", False)) or isinstance(error, CorruptLogError)
            or (isinstance(error, ConcurrencyError) and error.busy))


@dataclass
class HmsImportReport:
    """What importing several HMS records did. Each record is its own transaction, so the views
    in ``imported`` are stored whatever happened to the others."""

    imported: list[ImportedRecord] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    failed: list[FailedRecord] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no record failed (skipped records are not failures)."""
        return not self.failed

    def import_one(self, store: Any, name: str, table: Mapping[str, Any] | Any,
                   identifier: IdentifierLike | None = None) -> None:
        """Import one record as :meth:`~viewstore.catalog.ViewStore.import_hms` does and note the outcome.

        A record of another kind of object (a table, a materialized view: see
        :func:`viewstore.formats.not_a_view`) is skipped as ``not-a-view``, and a view already in
        the store as ``exists``; neither is a failure. Any other
        :class:`~viewstore.errors.ViewStoreError` of the record is noted as a failure (nothing of
        that record is written). An error of the store itself is raised, as every record after this
        one would meet it (and wait for it): a closed store, a damaged one (``CorruptLogError``),
        one another process kept locked past the wait (``ConcurrencyError`` with ``busy``).

        Args:
            store: the ViewStore, or a function that returns it, called for each record known good
                (so that records that all fail start no store file); it should open the store once
                and return the same one after. A store that cannot be opened is not a failure of
                the record: its error is raised.
        """
        try:
            kind = not_a_view(table)
            if kind is not None:
                self.skipped.append(SkippedRecord(name, "not-a-view", kind, _identifier_of(table, identifier)))
                return
            engine = detect(table)
            prepared = prepare_import(table, identifier)
        except ViewStoreError as error:
            self.failed.append(FailedRecord(name, type(error).__name__, str(error), _identifier_of(table, identifier)))
            return
        if callable(store):
            store = store()
        try:
            view = prepared.import_into(store)
        except ViewAlreadyExistsError as error:
            self.skipped.append(SkippedRecord(name, "exists", str(error), identifier_str(prepared.identifier)))
        except ViewStoreError as error:
            if _of_the_store(store, error):
                raise
            self.failed.append(FailedRecord(name, type(error).__name__, str(error),
                                            identifier_str(prepared.identifier)))
        else:
            self.imported.append(ImportedRecord(identifier_str(view.identifier), engine, len(view.versions), name))

    def raise_for_failures(self) -> "HmsImportReport":
        """Return self, or raise ValidationError listing the failed records.

        Raises:
            ValidationError: at least one record failed.
        """
        if self.failed:
            lines = [f"{f.name}: {f.error}: {f.message.splitlines()[0] if f.message else ''}" for f in self.failed]
            raise ValidationError(f"{len(self.failed)} record(s) failed to import:\n" + "\n".join(lines))
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return (f"imported {len(self.imported)}, skipped {len(self.skipped)}, failed {len(self.failed)} "
                f"({self.seconds:.2f} s)")
