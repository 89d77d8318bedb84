"""Iceberg view metadata (format-version 1): the spec's models, the exporter and the importer.

Export (:func:`write_metadata`) turns a :class:`~viewstore.model.View` into the metadata JSON the
Iceberg reference implementation writes — same key order, version retention by
``version.history.num-entries`` and version-log trimming — and writes it atomically as
``<location>/metadata/NNNNN-<uuid>.metadata.json`` (``.gz.metadata.json`` when gzipped), numbered
from 00000 and +1 per export that has something to commit (an export whose metadata equals the
latest file's writes nothing and returns that file), or in the folder the view's
``write.metadata.path`` names; ``version-hint.text`` beside them records the latest number. The
``<uuid>`` of a file the store exports names the state it holds (:func:`export_uuid`), so an
export of a view unchanged since it wrote the latest file knows so from the file's name, without
building the metadata (:func:`written_already`).

Import (:func:`read_metadata`) reads a plain or gzip file, checks it as the reference does, and
returns the versions, version log and properties for the store to turn into events.
"""

from __future__ import annotations

import gzip as gzip_module
import itertools
import json
import os
import re
import time
import urllib.parse
import uuid as uuidlib
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping

try:
    import fcntl
except ImportError:  # absent on Windows, where exports are not serialised
    fcntl = None  # type: ignore[assignment]

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError as PydanticValidationError

from .errors import IcebergMetadataError, ValidationError
from .model import (METADATA_COMPRESSION, RESERVED_PREFIX, VERSION_HISTORY_SIZE, Column, Int32, Int64,
                    SQLRepresentation, VersionLogEntry, View, ViewVersion, _InterruptibleDump, _RefusedAsOurs,
                    history_size, is_uuid_text, same_uuid, to_path)
from .types import StructField, StructType, from_iceberg_json, to_iceberg_json

__all__ = [
    "IcebergViewMetadata",
    "IcebergViewVersion",
    "IcebergSchema",
    "IcebergSQLRepresentation",
    "IcebergVersionLogEntry",
    "ImportedView",
    "build_metadata",
    "write_metadata",
    "export_uuid",
    "written_already",
    "read_metadata",
    "latest_metadata",
    "metadata_gzip",
    "VERSION_HISTORY_SIZE",
    "METADATA_COMPRESSION",
]

_DEFAULT_HISTORY = 10
_FILE = re.compile(r"^(\d{5,})-([0-9a-fA-F-]{36})(\.gz)?\.metadata\.json$")

# strict, as the reference reads: "2" is not an id, 1.0 not an int, "false" not a boolean
_CONFIG = ConfigDict(populate_by_name=True, serialize_by_alias=True, validate_by_name=True, extra="ignore",
                     strict=True)


class IcebergSQLRepresentation(BaseModel):
    """A representation of type ``sql``."""

    model_config = _CONFIG
    type: str = "sql"
    """The representation type; lower-cased on read."""
    sql: str
    """A SQL SELECT statement."""
    dialect: str
    """The dialect of ``sql``, e.g. ``spark`` or ``trino``."""


class IcebergViewVersion(BaseModel):
    """One version in ``versions``."""

    model_config = _CONFIG
    version_id: Int32 = Field(alias="version-id")
    """ID of the version."""
    timestamp_ms: Int64 = Field(alias="timestamp-ms")
    """When the version was created (ms from epoch)."""
    schema_id: Int32 = Field(alias="schema-id")
    """ID of the version's schema."""
    summary: dict[str, str]
    """Metadata about the version, e.g. engine-name and engine-version."""
    default_catalog: str | None = Field(default=None, alias="default-catalog")
    """Catalog for references without one; null means the view's own catalog."""
    default_namespace: list[str] = Field(alias="default-namespace")
    """Namespace for single-identifier references."""
    representations: list[dict[str, Any]]
    """The definitions; ``sql`` ones are :class:`IcebergSQLRepresentation`."""


class IcebergVersionLogEntry(BaseModel):
    """One entry of ``version-log``: the current version changed to ``version-id`` then."""

    model_config = _CONFIG
    timestamp_ms: Int64 = Field(alias="timestamp-ms")
    version_id: Int32 = Field(alias="version-id")


class IcebergSchema(BaseModel):
    """A schema in ``schemas`` (a struct with an id)."""

    model_config = _CONFIG
    type: Literal["struct"]
    schema_id: Int32 = Field(default=0, alias="schema-id")  # the reference parser's default
    identifier_field_ids: list[Int32] | None = Field(default=None, alias="identifier-field-ids")
    fields: list[dict[str, Any]]


class IcebergViewMetadata(BaseModel):
    """A whole view metadata file."""

    model_config = _CONFIG
    view_uuid: str = Field(alias="view-uuid")
    format_version: int = Field(alias="format-version")
    location: str
    properties: dict[str, str] = Field(default_factory=dict)  # optional, but not null
    schemas: list[IcebergSchema]
    current_version_id: Int32 = Field(alias="current-version-id")
    versions: list[IcebergViewVersion]
    version_log: list[IcebergVersionLogEntry] = Field(alias="version-log")


# ----------------------------------------------------------------------------------------------
# export


def metadata_gzip(properties: Mapping[str, str], gzip: bool | None = None) -> bool:
    """Whether an export writes gzip: ``gzip`` when given, else as the view's
    ``write.metadata.compression-codec`` says (``gzip`` or ``none``, any case), else not. (The Java
    library's default for views is gzip; plain JSON is this exporter's, so a file name does not
    change under scripts that read it. Set the property to ``gzip`` to write as Java does.)

    Raises:
        IcebergMetadataError: the property holds another codec (stored before the store refused them).
    """
    if gzip is not None:
        return gzip
    codec = properties.get(METADATA_COMPRESSION)
    if codec is None or codec.lower() == "none":
        return False
    if codec.lower() == "gzip":
        return True
    raise IcebergMetadataError(f"{METADATA_COMPRESSION} must be gzip or none, not {codec!r}")


def _history_size(properties: dict[str, str]) -> int:
    raw = properties.get(VERSION_HISTORY_SIZE, str(_DEFAULT_HISTORY))
    size = history_size(raw)
    if size is None:
        raise IcebergMetadataError(f"{VERSION_HISTORY_SIZE} must be a positive integer, not {raw!r}")
    return size


def retained_count(properties: Mapping[str, str], count: int) -> int:
    """How many of ``count`` versions an export keeps (:func:`retained_versions`): all of them when
    ``version.history.num-entries`` is not one it can follow (:func:`build_metadata` refuses it)."""
    size = history_size(properties.get(VERSION_HISTORY_SIZE, str(_DEFAULT_HISTORY)))
    return count if size is None else min(count, size)


def retained_versions(view: View) -> list[ViewVersion]:
    """Which versions an export keeps: the current one plus the highest ids, up to the limit."""
    size = _history_size(view.properties)
    if len(view.versions) <= size:
        return list(view.versions)
    keep = {view.current_version_id}
    for version in sorted(view.versions, key=lambda v: v.version_id, reverse=True):
        if len(keep) >= size:
            break
        keep.add(version.version_id)
    return [v for v in view.versions if v.version_id in keep]


def retained_log(log: list[VersionLogEntry], kept: set[int]) -> list[VersionLogEntry]:
    """The version log without every entry up to (and including) the last that names an expired version."""
    result: list[VersionLogEntry] = []
    for entry in log:
        if entry.version_id in kept:
            result.append(entry)
        else:
            result.clear()
    return result


def _schema_json(schema_id: int, columns: tuple[Column, ...]) -> dict[str, Any]:
    struct = StructType(tuple(StructField(c.name, c.type, not c.nullable, c.comment) for c in columns))
    body = to_iceberg_json(struct, itertools.count(1))
    return {"type": "struct", "schema-id": schema_id, "fields": body["fields"]}


def build_metadata(view: View, location: str, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The metadata JSON object for ``view``, in the reference implementation's key order.

    ``progress``, if given, is called with how many of the versions the file keeps are in it so
    far: about every hundredth of them, and after the last.

    Raises:
        IcebergMetadataError: ``version.history.num-entries`` is not a positive integer.
    """
    versions = retained_versions(view)
    kept = {v.version_id for v in versions}
    schemas: dict[int, dict[str, Any]] = {}
    for v in versions:
        schemas.setdefault(v.schema_id, _schema_json(v.schema_id, v.columns))
    data: dict[str, Any] = {"view-uuid": view.uuid, "format-version": 1, "location": location}
    properties = {k: v for k, v in view.properties.items() if not k.startswith(RESERVED_PREFIX)}
    if properties:
        data["properties"] = properties
    data["schemas"] = [schemas[k] for k in sorted(schemas)]
    data["current-version-id"] = view.current_version_id
    if progress is None:
        data["versions"] = [_version_json(v) for v in versions]
    else:
        every = max(1, -(-len(versions) // 100))  # at most a hundred calls
        data["versions"] = []
        for done, v in enumerate(versions, 1):
            data["versions"].append(_version_json(v))
            if done % every == 0 or done == len(versions):
                progress(done)
    data["version-log"] = [{"timestamp-ms": e.timestamp_ms, "version-id": e.version_id}
                           for e in retained_log(list(view.version_log), kept)]
    return data


def _version_json(v: ViewVersion) -> dict[str, Any]:
    out: dict[str, Any] = {"version-id": v.version_id, "timestamp-ms": v.timestamp_ms, "schema-id": v.schema_id,
                           "summary": dict(v.summary)}
    if v.default_catalog is not None:
        out["default-catalog"] = v.default_catalog
    out["default-namespace"] = list(v.default_namespace)
    out["representations"] = [{"type": "sql", "sql": r.sql, "dialect": r.dialect} for r in v.representations]
    return out


#: a view property naming the folder its metadata files go to, instead of ``<location>/metadata``
WRITE_METADATA_PATH = "write.metadata.path"


def metadata_folder(location: str | Path, properties: Mapping[str, str]) -> Path:
    """Where a view's metadata files go: the folder its ``write.metadata.path`` names when that is a
    local one (a path, relative ones under ``location``, or a ``file:`` URI of this machine), else
    ``<location>/metadata``. A folder of another system (``s3://...``, a view imported from one)
    is not written to: the files go to the location the export was given.
    """
    default = Path(location) / "metadata"
    raw = properties.get(WRITE_METADATA_PATH)
    if raw is None or not raw.strip():
        return default
    path = raw
    if raw[:5].lower() == "file:":  # schemes and hosts ignore case
        parts = urllib.parse.urlsplit(raw)
        if parts.netloc.lower() not in ("", "localhost"):
            return default
        path = urllib.parse.unquote(parts.path)
    elif re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", raw):  # s3:, hdfs:, ... (one letter would be a drive)
        return default
    if os.name != "nt" and re.match(r"[A-Za-z]:[\\/]|\\\\", path):  # C:\wh or \\server: Windows's
        return default
    return Path(location) / path  # an absolute path stays as it is


def latest_metadata(location: Path, folder: Path | None = None) -> tuple[int, Path] | None:
    """The highest-numbered metadata file in ``folder`` (default ``<location>/metadata``), if any."""
    folder = folder if folder is not None else location / "metadata"
    if not folder.is_dir():
        return None
    best: tuple[int, Path] | None = None
    for path in folder.iterdir():
        m = _FILE.match(path.name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), path)
    return best


def _location_uri(location: Path) -> str:
    return str(location.resolve())


#: how long an export waits for another export to the same location to finish
EXPORT_LOCK_TIMEOUT_S = 30.0


@contextmanager
def exclusive(location: str | Path, folder: Path | None = None) -> Iterator[None]:
    """Hold the export lock of a location: an advisory lock (flock) on its metadata ``folder``
    (default ``<location>/metadata``; see :func:`metadata_folder`).

    Exports through viewstore, from threads or processes, then take turns: each one picks the next
    number after the files the previous one wrote, so no two write one number, and the numbers
    follow the order in which they took the lock. Creates the folder.

    Raises:
        IcebergMetadataError: the folder cannot be made or opened, or another export held the lock
            for :data:`EXPORT_LOCK_TIMEOUT_S` seconds.
    """
    folder = folder if folder is not None else Path(location) / "metadata"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY) if fcntl is not None else None
    except OSError as e:
        raise IcebergMetadataError(f"cannot write metadata under {location}: {e}") from e
    if fd is None:  # no flock (Windows, where a folder cannot be opened either): exports are not serialised
        yield
        return
    try:
        deadline = time.monotonic() + EXPORT_LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise IcebergMetadataError(f"another export to {location} held its lock for "
                                               f"{EXPORT_LOCK_TIMEOUT_S:.0f} s") from None
                time.sleep(0.005)
            except OSError:  # a file system without locks: go on unserialised
                break
        _remove_leftovers(folder)
        yield
    finally:
        os.close(fd)  # releases the lock


#: the temporary files of :func:`_atomic_write` in a metadata folder
_LEFTOVER = re.compile(r"\.(\d+-[^/]*\.metadata\.json(\.gz)?|version-hint\.text)\.[0-9a-f]{32}\.tmp")


def _remove_leftovers(folder: Path) -> None:
    """Delete the temporary files of exports killed before their rename. Only the holder of the
    location's lock writes them, so under the lock every one found is a leftover."""
    for path in folder.iterdir():
        if _LEFTOVER.fullmatch(path.name):
            try:
                path.unlink()
            except OSError:
                pass  # gone already, or not ours to remove: it was only clutter


#: what an export writes for a view's state: a change to the exporter that changes the metadata of
#: one state changes this too, so that the names of the files it wrote before (:func:`export_uuid`)
#: are not taken for its own (those files are compared with the metadata instead)
EXPORT_FORMAT = 1

_EXPORT_NAMESPACE = uuidlib.UUID("5f0e6b8a-3c1d-5e57-9a8e-7a1b0c2d4e6f")


def export_uuid(view_uuid: str, stream_version: int, commit_id: str, location: str | Path, gzip: bool) -> str:
    """The UUID an export names its file with (``NNNNN-<uuid>.metadata.json``): a name-based UUID
    (version 5) of what the file's bytes follow from, namely the view's state, by its stream version
    and the commit that made it (the store's random id of that write, so a copy of the store that
    went on apart gives other names), the location the file records, the codec and
    :data:`EXPORT_FORMAT`. The latest file of a folder named with the UUID of the state an export is
    asked for holds that state's metadata already: :func:`written_already`."""
    key = f"{EXPORT_FORMAT}\n{view_uuid}\n{stream_version}\n{commit_id}\n{_location_uri(Path(location))}\n{int(gzip)}"
    return str(uuidlib.uuid5(_EXPORT_NAMESPACE, key))


def written_already(location: str | Path, folder: Path, file_uuid: str, gzip: bool) -> Path | None:
    """The latest metadata file in ``folder`` if an export named it ``file_uuid`` (see
    :func:`export_uuid`) in that codec, pointing the version hint at it; else None. Only a listing
    of the folder: the file is not read (metadata files are never changed once written)."""
    latest = latest_metadata(Path(location), folder)
    if latest is None:
        return None
    found = _FILE.match(latest[1].name)
    assert found is not None  # latest_metadata keeps only the names it matches
    if found.group(2).lower() != file_uuid or bool(found.group(3)) != gzip:
        return None
    _write_hint(folder, Path(location), latest[0])  # nothing to commit; a hint left behind is set right
    return latest[1]


def write_metadata(view: View, location: str | Path, *, gzip: bool | None = None,
                   progress: Callable[[int], None] | None = None, file_uuid: str | None = None) -> Path:
    """Write the next metadata file for ``view`` under ``location`` (in its :func:`metadata_folder`)
    and return its path: gzipped as :func:`metadata_gzip` decides, named with ``file_uuid`` (see
    :func:`export_uuid`; a random UUID without it). When the latest file there already holds exactly
    this metadata, in that codec, nothing is committed: its path is returned (and the version hint
    pointed at it). ``progress`` is :func:`build_metadata`'s.

    Writers that may run at once hold :func:`exclusive` around this (``ViewStore.export_iceberg``
    does, around loading the view too).

    Raises:
        IcebergMetadataError: the latest metadata file there belongs to another view (the spec's
            UUID check), cannot be read, or the file or its version hint cannot be written (the new file
            is then removed).
    """
    base = Path(location)
    folder = metadata_folder(base, view.properties)
    latest = latest_metadata(base, folder)
    gzip = metadata_gzip(view.properties, gzip)
    data = build_metadata(view, _location_uri(base), progress)
    number = 0
    if latest is not None:
        try:
            existing = _load_json(latest[1])
        except IcebergMetadataError as e:
            raise IcebergMetadataError(f"cannot check the view UUID at {base}: {e}") from e
        if not same_uuid(existing.get("view-uuid"), view.uuid):
            raise IcebergMetadataError(
                f"{base} holds metadata of view {existing.get('view-uuid')}, not of "
                f"{'.'.join(view.identifier)} ({view.uuid}); refusing to write over another view")
        if existing == data and latest[1].name.endswith(".gz.metadata.json") == gzip:
            _write_hint(folder, base, latest[0])  # nothing to commit; a hint left behind is set right
            return latest[1]
        number = latest[0] + 1
    text = _metadata_text(data)
    name = f"{number:05d}-{file_uuid or uuidlib.uuid4()}{'.gz' if gzip else ''}.metadata.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        _atomic_write(target, gzip_module.compress(text, mtime=0) if gzip else text)
    except OSError as e:
        raise IcebergMetadataError(f"cannot write metadata under {base}: {e}") from e
    try:
        _write_hint(folder, base, number)
    except IcebergMetadataError:
        try:  # whole or not at all: the new file goes with the hint that failed (readers find files by listing)
            target.unlink()
        except OSError:
            pass
        raise
    return target


def _metadata_text(data: dict[str, Any]) -> bytes:
    """A metadata file's text in UTF-8: the very text ``json.dumps(data, indent=2, ensure_ascii=False)``
    writes of the values metadata holds (text, integers, booleans, null, lists, objects), written by
    orjson at a tenth of the cost (a second of an export of 10,000 versions); what orjson refuses (an
    integer beyond 64 bits) goes through ``json``."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(data, indent=2, ensure_ascii=False).encode()


def _write_hint(folder: Path, base: Path, number: int) -> None:
    """Point ``version-hint.text`` at metadata file ``number`` (left as it is when it does already)."""
    hint = folder / "version-hint.text"
    text = f"{number}\n".encode()
    try:
        if not (hint.is_file() and hint.read_bytes() == text):
            _atomic_write(hint, text)
    except OSError as e:
        raise IcebergMetadataError(f"cannot write metadata under {base}: {e}") from e


def _atomic_write(target: Path, data: bytes) -> None:
    # created like any file (mode 0666 less the umask), so engines running as another user can read
    # it; tempfile.mkstemp would make it readable by its owner only
    tmp = target.parent / f".{target.name}.{uuidlib.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    # and the rename itself survives a power loss once the folder's entry is on disk
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


# ----------------------------------------------------------------------------------------------
# import


class ImportedView(_InterruptibleDump, _RefusedAsOurs):
    """What an imported metadata file contributes to the store: what :func:`read_metadata` returns,
    which :meth:`~viewstore.catalog.ViewStore.import_iceberg` takes as it takes a path (reading
    nothing), recording ``path`` as the view's source location."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    _what = "imported view"
    #: the path :func:`read_metadata` was given, as given (a file or a folder); None from :func:`parse_metadata`
    path: str | None = None
    view_uuid: str
    location: str
    properties: dict[str, str]
    versions: tuple[ViewVersion, ...]
    version_log: tuple[VersionLogEntry, ...]
    current_version_id: Int32  # strict, as the file's: "1" or True is refused, not taken for 1


def _load_json(path: Path) -> dict[str, Any]:
    try:
        raw = Path(path).read_bytes()
    except (OSError, UnicodeError) as e:  # UnicodeError: a path the file system cannot name (a lone surrogate)
        raise IcebergMetadataError(f"cannot read {path}: {e}") from e
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip_module.decompress(raw)
        data = json.loads(raw)
    # zlib.error: a corrupt deflate stream; RecursionError: JSON nested thousands of levels deep
    except (OSError, EOFError, ValueError, zlib.error, RecursionError) as e:
        raise IcebergMetadataError(f"{path} is not view metadata JSON: {e}") from e
    if not isinstance(data, dict):
        raise IcebergMetadataError(f"{path} is not view metadata: the top level is not an object")
    return data


_REQUIRED = (("view-uuid", str, "string"), ("format-version", int, "int"), ("location", str, "string"),
             ("schemas", list, "array"), ("current-version-id", int, "int"), ("versions", list, "array"),
             ("version-log", list, "array"))


def parse_metadata(data: dict[str, Any], source: str = "metadata", *, path: str | None = None) -> ImportedView:
    """Validate metadata JSON as the reference implementation does and convert it (``path``: the
    result's, see :class:`ImportedView`).

    Raises:
        IcebergMetadataError: naming the first problem found.
    """
    for key, kind, name in _REQUIRED:
        if key not in data or data[key] is None:
            raise IcebergMetadataError(f"{source}: Cannot parse missing {name}: {key}")
        if not isinstance(data[key], kind) or (kind is int and isinstance(data[key], bool)):
            raise IcebergMetadataError(f"{source}: Cannot parse {key} to a {name}: {data[key]!r}")
    if data["format-version"] != 1:
        raise IcebergMetadataError(f"{source}: Unsupported format version: {data['format-version']}")
    try:
        meta = IcebergViewMetadata.model_validate(data)
    except PydanticValidationError as e:
        problems = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())
        raise IcebergMetadataError(f"{source}: invalid view metadata: {problems}") from e
    if not is_uuid_text(meta.view_uuid):  # kept as written, so written back as every reader reads it
        raise IcebergMetadataError(f"{source}: view-uuid {meta.view_uuid!r} is not a UUID written as the spec "
                                   "writes one (8-4-4-4-12 hex digits)")
    schemas: dict[int, tuple[Column, ...]] = {}
    for schema in meta.schemas:
        if schema.schema_id in schemas:
            raise IcebergMetadataError(f"{source}: duplicate schema id {schema.schema_id}")
        try:
            struct = from_iceberg_json({"type": "struct", "fields": schema.fields})
            assert isinstance(struct, StructType)
            schemas[schema.schema_id] = tuple(Column(f.name, f.type, f.comment, not f.required)
                                              for f in struct.fields)
        except ValidationError as e:
            raise IcebergMetadataError(f"{source}: schema {schema.schema_id} has a bad field: {e}") from e
        problem = _field_id_problem(schema)
        if problem:
            raise IcebergMetadataError(f"{source}: schema {schema.schema_id}: {problem}")
    versions: dict[int, ViewVersion] = {}
    for v in meta.versions:
        if v.version_id in versions:
            raise IcebergMetadataError(f"{source}: duplicate version id {v.version_id}")
        versions[v.version_id] = _import_version(v, schemas, meta.current_version_id, source)
    if meta.current_version_id not in versions:
        raise IcebergMetadataError(f"{source}: Cannot find current version {meta.current_version_id} "
                                   f"in view versions: {sorted(versions)}")
    log = tuple(VersionLogEntry(timestamp_ms=e.timestamp_ms, version_id=e.version_id) for e in meta.version_log)
    return ImportedView(path=path, view_uuid=meta.view_uuid, location=meta.location, properties=dict(meta.properties),
                        versions=tuple(versions[k] for k in sorted(versions)), version_log=log,
                        current_version_id=meta.current_version_id)


def _field_ids(fields: list[dict[str, Any]], plain: bool) -> Iterator[tuple[int, Any, bool, bool]]:
    """(id, type, required, plain) of every field of a schema JSON already read by
    :func:`from_iceberg_json`, nested ones too: list elements, map keys and values. ``plain``: every
    field around it is a required struct field (no list, map or optional struct)."""
    for f in fields:
        yield f["id"], f["type"], f["required"], plain
        yield from _nested_ids(f["type"], plain and f["required"])


def _nested_ids(t: Any, plain: bool) -> Iterator[tuple[int, Any, bool, bool]]:
    if not isinstance(t, dict):
        return
    if t["type"] == "struct":
        yield from _field_ids(t["fields"], plain)
    elif t["type"] == "list":
        yield t["element-id"], t["element"], t["element-required"], False
        yield from _nested_ids(t["element"], False)
    else:  # map
        yield t["key-id"], t["key"], True, False
        yield from _nested_ids(t["key"], False)
        yield t["value-id"], t["value"], t["value-required"], False
        yield from _nested_ids(t["value"], False)


def _field_id_problem(schema: IcebergSchema) -> str | None:
    """What the reference implementation refuses in a schema's identifier fields, or None: ids that
    are missing, not primitive, optional, floating point, or nested in a list, a map or an optional
    struct. (An id used twice :func:`from_iceberg_json` refused already.)"""
    index = {field_id: (kind, required, plain) for field_id, kind, required, plain in _field_ids(schema.fields, True)}
    for field_id in schema.identifier_field_ids or ():
        if field_id not in index:
            return f"identifier field {field_id} does not exist"
        kind, required, plain = index[field_id]
        why = ("is not a primitive type field" if not isinstance(kind, str) else
               "is not a required field" if not required else
               "must not be a float or double field" if kind in ("float", "double") else
               "must not be nested in a list, a map or an optional field" if not plain else None)
        if why:
            return f"identifier field {field_id} {why}"
    return None


def _import_version(v: IcebergViewVersion, schemas: dict[int, tuple[Column, ...]], current: int,
                    source: str) -> ViewVersion:
    if v.schema_id not in schemas:
        which = "current schema" if v.version_id == current else f"schema of version {v.version_id}"
        raise IcebergMetadataError(f"{source}: Cannot find {which} with id {v.schema_id} in schemas: {sorted(schemas)}")
    reps: list[SQLRepresentation] = []
    seen: set[str] = set()
    for raw in v.representations:
        kind = str(raw.get("type", "")).lower()
        if kind != "sql":
            raise IcebergMetadataError(f"{source}: version {v.version_id} has a representation of type {kind!r}; "
                                       f"only 'sql' representations can be stored")
        try:
            rep = IcebergSQLRepresentation.model_validate(raw)
            sql_rep = SQLRepresentation(rep.dialect, rep.sql)
        except (PydanticValidationError, ValidationError) as e:
            raise IcebergMetadataError(f"{source}: version {v.version_id} has a bad representation: {e}") from e
        if rep.dialect.lower() in seen:
            raise IcebergMetadataError(f"{source}: Invalid view version {v.version_id}: Cannot add multiple "
                                       f"queries for dialect {rep.dialect.lower()}")
        seen.add(rep.dialect.lower())
        reps.append(sql_rep)
    if not reps:
        raise IcebergMetadataError(f"{source}: version {v.version_id} has no representation")
    return ViewVersion(version_id=v.version_id, timestamp_ms=v.timestamp_ms, schema_id=v.schema_id,
                       columns=schemas[v.schema_id], representations=tuple(reps),
                       default_catalog=v.default_catalog, default_namespace=tuple(v.default_namespace),
                       summary=dict(v.summary))


def read_metadata(path: str | Path) -> ImportedView:
    """Read and validate a metadata file (plain or gzip), or the latest one of a view location.

    Args:
        path: a ``*.metadata.json`` file, a view's location folder (holding ``metadata/``), or a
            folder of metadata files (as ``write.metadata.path`` names one), whose
            highest-numbered metadata file is read. The result keeps it (``path``), as
            :meth:`~viewstore.catalog.ViewStore.import_iceberg` records it.

    Raises:
        ValidationError: ``path`` is no path the store can record (not text or os.PathLike, or not
            UTF-8), checked before anything is read.
        IcebergMetadataError: the file is unreadable, not JSON, or invalid (naming the problem).
    """
    to_path(path, "metadata path")
    given, path = str(path), Path(path)
    if path.is_dir():
        nested, own = latest_metadata(path), latest_metadata(path, path)
        if nested and own:
            raise IcebergMetadataError(f"{path} holds metadata files both in metadata/ and itself; give the file "
                                       f"to read (metadata/{nested[1].name} or {own[1].name})")
        latest = nested or own
        if latest is None:
            raise IcebergMetadataError(f"{path} holds no metadata file (NNNNN-<uuid>.metadata.json), in metadata/ "
                                       "or itself")
        path = latest[1]
    return parse_metadata(_load_json(path), str(path), path=given)
