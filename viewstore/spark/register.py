"""register_views: the stored views made queryable in a SparkSession, as persistent views of its
session catalog under their own names.

Here: :func:`register_views` and its report (:class:`RegisterReport`, :class:`SkippedView`,
:class:`FailedView`); the order views are registered in, each after the stored views it reads
(:func:`table_references`, found with sqlglot's parser, and :func:`_dependency_order`); the
batch read of the copies the session already holds (:func:`_session_views`), so an unchanged copy
is left as it is; and the pruning of this store's stale copies (:func:`_prune`, :func:`_stamped`).
How a copy is made (its statement and fingerprint, the configs and namespace it runs under, the
session of its own it runs in) is :mod:`viewstore.spark.session`'s, whose docstring holds the
module notes :func:`register_views` refers to.
"""

from __future__ import annotations

import heapq
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import sqlglot
from pyspark.sql import SparkSession

from ..catalog import ViewStore, check_progress
from ..errors import EngineError, NoSuchViewError, ValidationError
from ..formats.references import parse as parse_sql, tables_read
from ..model import Identifier, NamespaceLike, View, identifier_str, to_namespace
from .failures import ENGINE_ERRORS as _ENGINE_ERRORS
from .failures import SPARK_ERRORS as _SPARK_ERRORS
from .failures import condition as _condition
from .failures import Progress, engine_calls, engine_error, raise_engine_failure, tagged
from .failures import explanation as _explanation
from .session import (FINGERPRINT, SESSION_CATALOG, STORE, _check_args, _check_flag, _Configs, _create_statement,
                      _CurrentNamespace, _default_target, _jsession, _jvm, _log, _one_ddl_at_a_time, _option,
                      _outside_transaction, _quote_name, _quote_string, _run_verbatim, _schema_mode, _session_name,
                      _sql_configs, _verbatim, _work_session)

__all__ = [
    "register_views",
    "RegisterReport",
    "SkippedView",
    "FailedView",
    "table_references",
]

#: Spark's error condition when CREATE OR REPLACE VIEW meets a table of that name (it never replaces one)
_TABLE_IN_THE_WAY = "EXPECT_VIEW_NOT_TABLE"


# -- table references, found with a parser ------------------------------------------------------


def _sqlglot_dialect(dialect: str) -> str:
    name = dialect.lower()
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        return "spark"
    return name


def table_references(query: str, dialect: str = "spark") -> set[tuple[str, ...]] | None:
    """The tables and views a query reads, as name parts as written (lower case), CTE names excluded.

    Parsed with sqlglot in ``dialect`` (Spark's when sqlglot does not know the dialect). Table
    functions such as ``range(10)`` are not references, nor is a CTE's name where the CTE is in
    scope (in its own query, and in the CTEs after it; in Hive's dialect, in every CTE of its
    ``WITH``): see :func:`viewstore.formats.references.tables_read`.

    Returns:
        The references, or None when the query cannot be parsed (its dependencies are unknown).

    Raises:
        ValidationError: ``query`` or ``dialect`` is not a string.
    """
    for value, what in ((query, "query"), (dialect, "dialect")):
        if not isinstance(value, str):
            raise ValidationError(f"table_references: the {what} must be a string, not {type(value).__name__}")
    read = _sqlglot_dialect(dialect)
    try:
        trees = parse_sql(query, read)
    except (sqlglot.errors.SqlglotError, RecursionError):  # nested too deeply for sqlglot: unknown too
        return None
    if not trees:
        return None
    return {tuple(part.name.lower() for part in table.parts) for tree in trees for table in tables_read(tree, read)}


def _resolve_reference(reference: tuple[str, ...], view: View, store_catalog: str | None) -> Identifier:
    """The store identifier a table reference in ``view``'s SQL would name.

    A bare name is in the view's default namespace, in lower case (the store's identifiers are, and
    the session catalog's database names are in any case); a leading session-catalog,
    default-catalog or store-catalog name is dropped. Anything else is taken as written (and matches
    no stored view if it names another catalog).
    """
    if len(reference) == 1:
        namespace = tuple(part.lower() for part in view.default_namespace) or view.namespace
        return (*namespace, reference[0])
    catalogs = {SESSION_CATALOG, (view.default_catalog or "").lower(), (store_catalog or "").lower()} - {""}
    if len(reference) >= 3 and reference[0] in catalogs:
        return reference[1:]
    return reference


# -- register_views --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedView:
    """A view :func:`register_views` left alone, and why."""

    identifier: str
    reason: str
    """``no-representation`` (nothing in the dialect), ``table-exists`` (a table has the name) or
    ``view-with-location`` (a view whose record names a folder has the name: replacing it would
    delete the folder)."""
    detail: str


@dataclass(frozen=True)
class FailedView:
    """A view Spark refused to register (or a stale copy it would not drop), with Spark's error
    condition and explanation."""

    identifier: str
    condition: str
    """Spark's error condition, e.g. ``TABLE_OR_VIEW_NOT_FOUND``."""
    message: str
    action: str = "register"
    """``register`` (the view's copy could not be made) or ``prune`` (a stale copy could not be
    dropped, or a database could not be searched for them: then ``identifier`` is the database)."""


@dataclass
class RegisterReport:
    """What :func:`register_views` did: registered views in order, skipped ones, failed ones, and
    (with ``prune=True``) the stale copies it dropped."""

    registered: list[str] = field(default_factory=list)
    """Identifiers now queryable in the session, in the order they were registered."""
    unchanged: list[str] = field(default_factory=list)
    """Those of ``registered`` whose session copy already had this exact definition (not re-created)."""
    skipped: list[SkippedView] = field(default_factory=list)
    failed: list[FailedView] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    """The session copies this store had made that were dropped (``prune=True``), sorted: the store
    no longer holds those views, or they have no representation in the dialect."""
    databases_created: list[str] = field(default_factory=list)
    seconds: float = 0.0
    other_dialects: list[str] = field(default_factory=list)
    """When no view read had SQL in the dialect asked for (each one skipped as
    ``no-representation``, a mistyped dialect say): the dialects they do have, sorted; else empty."""

    @property
    def ok(self) -> bool:
        """True when nothing failed (skipped views are not failures; a copy that could not be pruned is)."""
        return not self.failed

    def raise_for_failures(self) -> "RegisterReport":
        """Return self, or raise ValidationError listing the failures (for pipelines).

        Raises:
            ValidationError: at least one view failed to register, or a stale copy could not be pruned.
        """
        if self.failed:
            registering = sum(f.action == "register" for f in self.failed)
            what = [f"{registering} view(s) failed to register"] if registering else []
            if len(self.failed) > registering:
                what.append(f"{len(self.failed) - registering} stale copy(ies) could not be pruned")
            lines = [f"{f.identifier}: {'(prune) ' if f.action == 'prune' else ''}"
                     f"{tagged(f.condition, f.message.splitlines()[0] if f.message else '')}" for f in self.failed]
            raise ValidationError(", ".join(what) + ":\n" + "\n".join(lines))
        return self

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``): every field, and ``ok``."""
        return {"ok": self.ok, **asdict(self)}

    def __str__(self) -> str:
        """``registered 2, already registered 3, skipped 0, ...``: the copies made, then those left
        as they were (both are in ``registered``)."""
        return (f"registered {len(self.registered) - len(self.unchanged)}, already registered {len(self.unchanged)}, "
                f"skipped {len(self.skipped)}, failed {len(self.failed)}, pruned {len(self.pruned)} "
                f"({self.seconds:.2f} s)")


def _database_names(spark: SparkSession) -> set[str]:
    """The databases of the session catalog, lower case.

    Raises:
        EngineError: they cannot be listed (a stopped session, a metastore that does not answer).
    """
    try:
        rows = spark.sql(f"SHOW NAMESPACES IN {SESSION_CATALOG}").collect()
    except _ENGINE_ERRORS as e:
        raise engine_error(spark, e, "list the databases of the session catalog") from e
    return {r[0].lower() for r in rows}


def _ensure_databases(spark: SparkSession, names: Iterable[tuple[str, ...]], known: set[str],
                      report: RegisterReport) -> dict[tuple[str, ...], BaseException]:
    """Create missing session databases; returns the ones Spark refused to create, with the error.

    A name is taken in lower case, as Spark names the session catalog's databases (``known`` is in
    lower case): a default namespace stored as ``Sales`` is the database ``sales``.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
    """
    errors: dict[tuple[str, ...], BaseException] = {}
    for namespace in sorted({tuple(part.lower() for part in name) for name in names}):
        key = ".".join(namespace)
        if key in known:
            continue
        try:
            _jsession(spark).sql(f"CREATE NAMESPACE IF NOT EXISTS {SESSION_CATALOG}."
                                 + ".".join(_quote_name(p) for p in namespace))
        except _SPARK_ERRORS as e:
            raise_engine_failure(spark, e, f"create the database {key}")
            errors[namespace] = e
            continue
        known.add(key)
        report.databases_created.append(key)
    return errors


#: a run of word characters: what a view name written in SQL is, when its name is one
_WORD = re.compile(r"\w+")


def _dependency_order(store: ViewStore, views: list[tuple[View, str]], dialect: str,
                      targets: dict[Identifier, tuple[str, tuple[str, ...]]]
                      ) -> tuple[list[tuple[View, str]], list[tuple[View, str]]]:
    """Order views so each comes after the stored views it reads; returns (ordered, in a cycle).

    Only SQL in which some stored view's name occurs is parsed: a name of word characters as one of
    the text's words (one set lookup a word, so the test grows with the texts, not with texts times
    names), another name as a substring; neither test can miss a reference. Views whose SQL the
    parser cannot read go after the others, so they may read any of them; a view that reads one of
    them comes after it all the same (and so do the views that read that one). Among views that are
    ready at the same time, those sharing a default namespace go together (fewer switches of the
    session's current namespace).
    """
    by_id = {v.identifier: (v, text) for v, text in views}
    names = {v.name for v, _ in views}
    words = {name for name in names if _WORD.fullmatch(name)}
    others = names - words  # a name with a space, a dash, ... (written in backquotes)
    deps: dict[Identifier, set[Identifier]] = {}
    unparsed: list[Identifier] = []
    for view, text in views:
        lowered = text.lower()
        if words.isdisjoint(_WORD.findall(lowered)) and not any(name in lowered for name in others):
            deps[view.identifier] = set()  # no stored view's name occurs in the text: nothing to parse
            continue
        refs = table_references(text, dialect)
        if refs is None:
            unparsed.append(view.identifier)
            continue
        resolved = {_resolve_reference(r, view, store.catalog) for r in refs}
        deps[view.identifier] = {r for r in resolved if r in by_id and r != view.identifier}
    dependents: dict[Identifier, list[Identifier]] = {i: [] for i in by_id}
    waiting = {i: 0 for i in deps}
    for ident, needs in deps.items():
        for need in needs:
            dependents[need].append(ident)
            waiting[ident] += 1

    def key(ident: Identifier) -> tuple[Any, ...]:
        return (*targets[ident], ident)

    ready = [key(i) for i, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    ordered: list[Identifier] = []

    def place(ident: Identifier) -> None:
        ordered.append(ident)
        for dependent in dependents[ident]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, key(dependent))

    def place_ready() -> None:
        while ready:
            place(heapq.heappop(ready)[-1])

    place_ready()
    for ident in sorted(unparsed, key=key):  # then the views that read them, each after those it reads
        place(ident)
    place_ready()
    placed = set(ordered)
    cyclic = sorted(i for i in deps if i not in placed)
    return [by_id[i] for i in ordered], [by_id[i] for i in cyclic]


class _Copy(NamedTuple):
    """What register_views reads of a view of the session catalog."""

    fingerprint: str | None
    text: str | None
    """The view text Spark keeps (the query of the statement that made the view)."""
    store: str | None
    """The id of the store that made it (None: not made by a store, or by a release before store ids)."""
    location: str | None
    """The folder its record names (None for a view Spark made): the metastore deletes it with the view."""


def _session_views(spark: SparkSession, database: str, names: Sequence[str] | None = None, *,
                   located_only: bool = False) -> dict[str, _Copy]:
    """The views among ``names`` (None: every view) of one database of the session catalog; with
    ``located_only``, only those whose record names a folder, and only that is read of them (a
    refresh replaces every other copy, so it reads nothing else: a third of the round trips).

    One catalog call reads them (plus one that lists the database's views, for None); tables and
    missing names are left out. So is a view whose record Spark cannot read (a damaged metastore
    record): when the batch fails, each name is read alone, so such a record hides only itself. A
    database dropped since it was listed has no views.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).
        Spark's error: the database's views cannot be listed, although it exists and the engine works.
    """
    converters = _jvm(spark).scala.jdk.javaapi.CollectionConverters  # looked up once
    external = _jsession(spark).sharedState().externalCatalog()

    def read(some: Sequence[str]) -> dict[str, _Copy]:
        found = {}
        # each Java call is a round trip (about 0.1 ms): the properties are read as a Java map (one call
        # a key), and a view's text only when it carries a fingerprint to compare it with
        for table in converters.asJava(external.getTablesByName(database, converters.asScala(list(some)).toSeq())):
            if str(table.tableType().name()) != "VIEW":
                continue
            if located_only:
                location = _option(table.storage().locationUri())
                if location is not None:
                    found[str(table.identifier().table())] = _Copy(None, None, None, str(location))
                continue
            properties = converters.asJava(table.properties())
            fingerprint, store = properties.get(FINGERPRINT), properties.get(STORE)
            text = _option(table.viewOriginalText()) if fingerprint is not None else None
            location = _option(table.storage().locationUri())
            found[str(table.identifier().table())] = _Copy(None if fingerprint is None else str(fingerprint),
                                                           None if text is None else str(text),
                                                           None if store is None else str(store),
                                                           None if location is None else str(location))
        return found

    try:
        if names is None:
            names = [str(n) for n in converters.asJava(external.listViews(database, "*"))]
        return read(names) if names else {}
    except _ENGINE_ERRORS as e:
        raise_engine_failure(spark, e, f"read the views of database {database}")
        if not external.databaseExists(database):
            return {}  # dropped since the listing
        if names is None:
            raise
        failed = e
    found = {}
    for name in names:
        try:
            found.update(read([name]))
        except _SPARK_ERRORS as e:
            raise_engine_failure(spark, e, f"read the view {database}.{name}")
            _log.warning("Spark cannot read the session catalog's view %s.%s: %s", database, name, _explanation(e))
    _log.debug("the views of %s were read one by one: %s", database, _explanation(failed))
    return found


def _stamped(spark: SparkSession, identifier: Identifier, store_id: str) -> bool:
    """Give a session copy this store's id; False if Spark refuses (the caller then makes it again).

    ``ALTER VIEW ... SET TBLPROPERTIES``: nothing else of the copy changes, and its query is not
    analyzed again (so it succeeds even where the tables the copy reads are gone for now).
    """
    try:
        _jsession(spark).sql(f"ALTER VIEW {_session_name(identifier)} SET TBLPROPERTIES "
                             f"({_quote_string(STORE)} = {_quote_string(store_id)})")
    except _SPARK_ERRORS as e:
        _log.info("could not add the store id to the session copy of %s (it is made again): %s",
                  identifier_str(identifier), _explanation(e))
        return False
    return True


def _prune(spark: SparkSession, store_id: str, databases: Iterable[str], keep: set[Identifier],
           report: RegisterReport) -> dict[str, dict[str, _Copy]]:
    """Drop the views of ``databases`` that carry this store's id and whose names are not in ``keep``.

    Each is read again just before its DROP, so a copy another store (or a person) made under that
    name since the listing is left alone, and so is one whose record Spark cannot read. A view
    whose record names a folder is never dropped (the metastore would delete the folder with it). A refusal is
    reported, not raised; a database dropped since the listing has nothing to prune.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`).

    Returns:
        The views read in each database searched (for the copies of ``keep``: not read twice).
    """
    read: dict[str, dict[str, _Copy]] = {}
    for database in sorted(databases):
        try:
            views = read[database] = _session_views(spark, database)
        except _SPARK_ERRORS as e:
            report.failed.append(FailedView(database, _condition(e), _explanation(e), "prune"))
            continue
        for name in sorted(n for n, copy in views.items() if copy.store == store_id and (database, n) not in keep):
            identifier = (database, name)
            try:
                again = _session_views(spark, database, [name]).get(name)
                if again is None or again.store != store_id or again.location is not None:
                    continue
                _jsession(spark).sql(f"DROP VIEW IF EXISTS {_session_name(identifier)}")
            except _SPARK_ERRORS as e:
                raise_engine_failure(spark, e, f"drop the stale copy {identifier_str(identifier)}")
                report.failed.append(FailedView(identifier_str(identifier), _condition(e), _explanation(e), "prune"))
            else:
                report.pruned.append(identifier_str(identifier))
    report.pruned.sort()
    return read


def _recorded_text(spark: SparkSession, statement: str) -> str | None:
    """The view text Spark records for a CREATE VIEW statement (the query as its parser cuts it out)."""
    with _verbatim(spark):
        plan = _jsession(spark).sessionState().sqlParser().parsePlan(statement)
    text = _option(plan.originalText())
    return None if text is None else str(text)


def _register(spark: SparkSession, store: ViewStore, candidates: list[tuple[View, str]], report: RegisterReport, *,
              scope: tuple[str, ...] | None, dialect: str, refresh: bool, prune: bool, progress: Progress) -> None:
    """register_views' work in ``spark`` (its own session, see :func:`_work_session`): prune, then
    create the copies of ``candidates`` (view, SQL in the dialect) that need it, into ``report``;
    ``progress`` advances as each candidate's outcome is settled.

    Raises:
        EngineError: the engine failed (see :mod:`viewstore.spark.failures`); ``report`` holds
            what was done before.
    """
    known = _database_names(spark)
    existing = set(known)
    # pruning needs the id (a file made before ids makes it now, after the catalog answered); copies
    # made without pruning carry it if the file has one, so registering from a file that cannot be
    # written still works
    pruning_id = store.store_id if prune else None
    store_id = pruning_id if pruning_id is not None else store.existing_store_id()
    read: dict[str, dict[str, _Copy]] = {}  # the views pruning read, by database
    if pruning_id is not None:
        if scope is None:
            searched = existing
        else:  # a namespace of more than one part is no database of the session catalog
            searched = {scope[0]} & existing if len(scope) == 1 else set()
        with _verbatim(spark):
            read = _prune(spark, pruning_id, searched, {v.identifier for v, _ in candidates}, report)
    if not candidates:
        return

    catalogs: dict[str, bool] = {}
    targets = {v.identifier: _default_target(spark, v, catalogs) for v, _ in candidates}
    wanted = {v.namespace for v, _ in candidates}
    wanted |= {namespace for catalog, namespace in targets.values() if catalog == SESSION_CATALOG}
    bad_databases = _ensure_databases(spark, wanted, known, report)
    copies: dict[Identifier, _Copy] = {}  # with refresh too: a view with a location is never replaced
    by_database: dict[tuple[str, ...], list[str]] = {}
    for view, _ in candidates:
        if ".".join(view.namespace) in existing and len(view.namespace) == 1:
            by_database.setdefault(view.namespace, []).append(view.name)
    for database, names in by_database.items():
        found = read.get(database[0])
        if found is None:
            found = _session_views(spark, database[0], names, located_only=refresh)
        for name, held in found.items():
            copies[(*database, name)] = held

    ready: list[tuple[View, str]] = []
    for view, query in candidates:
        error = bad_databases.get(view.namespace)
        if error is not None:
            report.failed.append(FailedView(identifier_str(view.identifier), _condition(error), _explanation(error)))
        else:
            ready.append((view, query))

    ordered, cyclic = _dependency_order(store, ready, dialect, targets)
    for view, _ in cyclic:
        report.failed.append(FailedView(identifier_str(view.identifier), "RECURSIVE_VIEW",
                                        "the view reads itself through other stored views"))
    progress.advance(len(candidates) - len(ordered))  # those failed already
    with _CurrentNamespace(spark) as current, _verbatim(spark), _Configs(spark) as settings:
        for view, query in ordered:
            name = identifier_str(view.identifier)
            target = targets[view.identifier]
            configs = _sql_configs(view)
            statement, fingerprint = _create_statement(view.identifier, query, view.columns, view.comment,
                                                       view.properties, target, _schema_mode(view), configs, store_id)
            copy = copies.get(view.identifier)
            if copy is not None and copy.location is not None:
                report.skipped.append(SkippedView(name, "view-with-location", (
                    f"a view of the session catalog has this name and names the folder {copy.location}, which "
                    "the metastore would delete in replacing it")))
                progress.advance()
                continue
            try:
                # the copy's text is the query as Spark's parser cut it out of the statement: most often
                # the query itself (no parse needed), else what a parse of the statement records
                if not refresh and copy is not None and copy.fingerprint == fingerprint and (
                        copy.text == query or copy.text == _recorded_text(spark, statement)) and (
                        copy.store == store_id or pruning_id is None or _stamped(spark, view.identifier, pruning_id)):
                    report.unchanged.append(name)
                else:
                    current.use(*target)
                    settings.use(configs)
                    _run_verbatim(spark, statement)
            except _SPARK_ERRORS as e:
                raise_engine_failure(spark, e, f"register view {name}")
                condition = _condition(e)
                if condition.startswith(_TABLE_IN_THE_WAY):  # Spark's own guard: a table keeps its name
                    report.skipped.append(SkippedView(name, "table-exists",
                                                      "a table of the session catalog has this name"))
                else:
                    report.failed.append(FailedView(name, condition, _explanation(e)))
            else:
                report.registered.append(name)
            progress.advance()


def _register_from(spark: SparkSession, store: ViewStore, scope: tuple[str, ...] | None, dialect: str,
                   report: RegisterReport, *, refresh: bool, prune: bool,
                   callback: Callable[[int, int], None] | None) -> None:
    """register_views' work once it has its turn: read the store's views, then register them."""
    identifiers = store.list_views(scope)
    progress = Progress(callback, len(identifiers))
    candidates: list[tuple[View, str]] = []
    held: set[str] = set()  # the dialects of the views without SQL in this one
    for ident in identifiers:
        try:
            view = store.load_view(ident)
        except NoSuchViewError:  # dropped or renamed by another process since the listing: not the store's now
            continue
        query = view.sql_for(dialect)
        if query is None:
            report.skipped.append(SkippedView(identifier_str(ident), "no-representation",
                                              f"no {dialect!r} representation (it has {', '.join(view.dialects)})"))
            held.update(view.dialects)
        else:
            candidates.append((view, query))
    if report.skipped and not candidates:  # not one view has SQL in it: say which dialects they have
        report.other_dialects = sorted(held)
    progress.advance(len(identifiers) - len(candidates))  # those passed over, and those without SQL in the dialect
    if candidates or prune:
        try:
            with _work_session(spark) as work:  # its statements run there: the caller's session stays as it is
                _register(work, store, candidates, report, scope=scope, dialect=dialect, refresh=refresh, prune=prune,
                          progress=progress)
        except EngineError as e:
            done = [f"{len(report.registered)} view(s) registered"] if report.registered else []
            done += [f"{len(report.pruned)} stale copy(ies) pruned"] if report.pruned else []
            if not done:
                raise
            raise EngineError(f"{e} (before that: {', '.join(done)}; registering again finishes the work)") from e


@engine_calls("register views")
def register_views(spark: SparkSession, store: ViewStore, namespace: NamespaceLike | None = None, *,
                   dialect: str = "spark", refresh: bool = False, prune: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> RegisterReport:
    """Make the stored views queryable in the session under their own names.

    Each view with a representation in ``dialect`` (matched case-insensitively) becomes a
    persistent view in the session catalog: ``spark.sql("SELECT * FROM sales.daily_orders")``
    works afterwards. Missing databases are created. Unqualified names in a view's SQL resolve in
    its default namespace (see the module notes). Views that read other stored views are
    registered after them; the references are found with sqlglot's parser. An existing view of
    the same name is replaced; a table never is: Spark's own guard refuses, and the view is
    reported as skipped. Nor is a view whose record names a folder (``sd.location``, as Iceberg's
    Hive catalog writes its views), which the metastore would delete in replacing it: the view is
    skipped as ``view-with-location``, with or without ``refresh``. A copy made earlier from the
    very same definition (the property ``viewstore.fingerprint`` tells, and the copy's view text
    is still the stored SQL, so an ``ALTER VIEW ... AS`` run directly in Spark is noticed) is left
    as it is, which makes registering again cheap in a persistent metastore. The catalog lookups are one listing of the
    session's databases and one batch read of the existing copies per database. A view another
    process drops (or renames away) while the views are listed is passed over.

    Its statements run in a session of its own, cloned from ``spark`` (see the module notes): the
    copies land in ``spark``'s session catalog, made under each view's configs and namespace, and
    ``spark`` itself is not changed meanwhile, so other threads may keep using it. Threads of the
    driver take turns: a call waits for another thread's ``register_views`` or view DDL on a store
    through :func:`sql` (one turn per call, for all its views), 120 s at most (:data:`DDL_TURN_WAIT_S`).

    Every copy made carries this store's id (:attr:`ViewStore.store_id`) as the property
    ``viewstore.store``. A copy left as it is may lack it (made by a release before store ids: its
    fingerprint still matches) or carry another store's (made from an identical definition);
    without ``prune`` it is left exactly as it is, as before store ids. With ``prune=True`` it
    gets this store's id with ``ALTER VIEW ... SET TBLPROPERTIES``, which neither makes the copy
    again nor analyzes its query, and still counts as unchanged: from then on it is this store's
    copy, to be pruned when the store lets go of the view.

    With ``prune=True``, the views of the session catalog that carry this store's id and are not
    named after one of the store's views with a representation in ``dialect`` (the store dropped
    the view or renamed it away, or its SQL in the dialect was removed) are dropped first, before
    any copy is made, so the session reads only what the store holds: every database of the
    session catalog is searched, or only ``namespace``'s. Nothing else is ever dropped: tables,
    views without the id (made by hand, or by a release before store ids), views carrying
    another store's id and views whose record names a folder (which the metastore would delete
    with them: a copy another engine's catalog took over and gave a location) are left alone,
    and so is the copy of a stored view that then fails to register. Databases stay, even when pruning empties them.

    The store is only read, but for one write: with ``prune``, a file made by a release before store
    ids gets its id, once the session's catalog has answered.

    Args:
        spark: the session.
        store: the store to read.
        namespace: only the views directly in this namespace (default: every view).
        dialect: the representation to register.
        refresh: create every copy again, even those that match (e.g. to capture changed tables).
        prune: drop this store's copies of views it no longer holds (see above).
        progress: called as ``progress(done, total)`` as the views' outcomes are settled: ``total``
            is the number of views listed (every view, or ``namespace``'s), ``done`` how many of them
            are registered, left unchanged, skipped, failed or passed over; it grows with each
            call, and the last call has ``done == total`` (no call when there is no view; pruning
            is not counted). It runs in the calling thread, in the middle of the call; an
            exception it raises stops the registration there and reaches the caller unchanged (the
            copies made before stay, as after an EngineError).

    Returns:
        A :class:`RegisterReport`: registered (in order), skipped (no representation in the
        dialect; the name belongs to a table), failed views (with Spark's error condition; a
        stale copy that could not be dropped has ``action="prune"``) and pruned copies. A dialect
        is any name, so one no view has SQL in is no error: every view is skipped, and the
        report's ``other_dialects`` names the dialects the views read do have.

    Raises:
        ValidationError: a bad session, store, namespace, dialect, ``refresh``, ``prune`` or
            ``progress`` (not callable).
        EngineError: the engine failed: the session is stopped, its JVM is gone, or its metastore does
            not answer (see :mod:`viewstore.spark.failures`). The message says where it stopped:
            the copies made and dropped before stay (each is a whole copy of a stored view, or was a
            stale one), so registering again finishes the work.
        ConcurrencyError: ``busy``: another thread of the driver held the turn (``register_views``,
            view DDL through :func:`sql`) for 120 s (:data:`DDL_TURN_WAIT_S`; while this thread holds
            a store, in its ``transaction()`` or a receiver, the catalog's ``TRANSACTION_WAIT_S``);
            nothing was done.
        ViewStoreError: the store is closed; this thread is inside ``store.transaction()`` (the
            copies would outlive a rollback); or, with ``prune``, it has no id yet (a file made by a
            release before store ids) and cannot make one now (see :attr:`ViewStore.store_id`);
            nothing is changed.
    """
    _check_args(spark, store)
    _outside_transaction(store, "register_views")
    if not isinstance(dialect, str) or not dialect.strip():
        raise ValidationError(f"bad dialect {dialect!r}")
    _check_flag(refresh, "refresh")
    _check_flag(prune, "prune")
    check_progress(progress)
    started = time.perf_counter()
    report = RegisterReport()
    scope = to_namespace(namespace) if namespace is not None else None
    # one turn for the whole call (not one per view), taken before the store is read: a view DDL
    # statement through sql() in another thread then has stored its definition, or not begun
    with _one_ddl_at_a_time("register_views"):
        _register_from(spark, store, scope, dialect, report, refresh=refresh, prune=prune, callback=progress)
    report.seconds = time.perf_counter() - started
    return report
