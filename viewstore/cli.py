"""The ``viewstore`` command line: a thin layer over :class:`~viewstore.catalog.ViewStore`.

Each command opens the store, calls one API method and prints the result: rich tables for
people, ``--json`` for scripts. A :class:`~viewstore.errors.ViewStoreError` (or a file the
system refuses) becomes a one-line message on stderr and exit code 1, never a traceback; a
command line that cannot be right whatever the store holds (a value not of its option's form,
options that exclude each other: see :func:`usage_error`) is click's usage error, exit code 2,
found before the store is opened. With ``--json`` either is one JSON object on stderr instead
(:func:`error_to_json`), and stdout stays empty.

Everything printed comes from user data (names, SQL, comments, properties, actors, paths), so
the consoles interpret no rich markup or emoji codes and table cells fold instead of cutting
text: what was stored is what is printed.

Commands that need optional parts (``spark``, ``demo``, ``hms``) live beside those parts and are
loaded only when called.
"""

from __future__ import annotations

import codecs
import datetime as dt
import difflib
import errno
import functools
import importlib
import importlib.metadata
import importlib.util
import io
import itertools
import json
import math
import os
import re
import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

import click
import orjson
from rich.console import Console, RenderableType
from rich.control import Control
from rich.segment import ControlType
from rich.text import Text

from . import signals
from .catalog import (_EPOCH, SUGGESTED_NAMES, SUGGESTION_CUTOFF, ViewChange, ViewStore, _either, _os_user,
                      _time_text, _until_ms, check_definition, to_epoch_ms)
from .errors import (INSTALL_SPARK, DamagedProjectionsError, NoSuchViewError, ValidationError, ViewStoreError,
                     _signal_as_itself)
from .events import EVENT_TYPES, Event
from .log import collector_paused, holds_nothing
from .model import (Column, SQLRepresentation, View, ViewDiff, ViewVersion, identifier_str, to_identifier,
                    to_namespace)
from .tables import TableColumn, TextTable, data_table, visible

__all__ = ["main", "CliContext", "json_text", "json_option", "error_to_json"]

#: commands defined in optional modules: name -> ("module:attribute", the package it needs, its short
#: help). ``viewstore --help`` lists them from here without importing them (and pyspark with them, a
#: third of a second); a test holds each short help to its command's own.
_LAZY_COMMANDS = {
    "spark": ("viewstore.spark.cli:spark", "pyspark", "Work with the store from Spark (needs pyspark)."),
    "demo": ("viewstore.spark.cli:demo", "pyspark", "Run the end-to-end demo on a local SparkSession."),
    "hms": ("viewstore.formats.cli:hms", None, "Import and export the engine-native views of a Hive metastore."),
}


class _Console(Console):
    """rich's Console, but a closed pipe raises BrokenPipeError (rich exits with code 1 itself), so
    every command ends alike when its reader goes away (see _Group.invoke)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


class _ClosedStdout(io.TextIOBase):
    """stdout of a process started with it closed (``viewstore list >&-``), where Python's is None
    and click and rich print nothing, so a command exited 0 having given nothing: a write fails as
    one to the closed descriptor does (EBADF), said as any stdout that refuses output is
    (``error: [Errno 9] Bad file descriptor``, exit code 1). A command that prints nothing runs."""

    encoding = "utf-8"  # what click asks before it writes
    errors = "strict"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


#: the console's width when the output is not a terminal and COLUMNS gives none: wider than any table
UNBOUNDED = 1_000_000


class CliContext:
    """What every command gets as ``ctx.obj``: where the store is and who is acting."""

    def __init__(self, db: str | None, actor: str | None, catalog: str | None) -> None:
        env = {name: os.environ[name] for name in ("VIEWSTORE_DB", "VIEWSTORE_ACTOR")
               if name in os.environ and os.environ[name].strip()}
        # set but empty (or blank) is a mistake, as --db '' is, said when a command opens the store
        # (so that --help still works); an audit trail should not silently name the OS user
        self._blank = [name for name, given in (("VIEWSTORE_DB", db), ("VIEWSTORE_ACTOR", actor))
                       if given is None and name in os.environ and name not in env]
        self.db_explicit = db is not None or "VIEWSTORE_DB" in env
        self.db = db or env.get("VIEWSTORE_DB") or "viewstore.db"
        self.actor = actor or env.get("VIEWSTORE_ACTOR") or _os_user()
        self.catalog = catalog
        # no markup, emoji codes or highlighting: view data such as "arr[i]" or ":x:" prints as it is
        self.console = _Console(markup=False, emoji=False, highlight=False)
        if not self.console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
            # output for a program (a pipe, a file): a row a line, nothing wrapped to a width nobody
            # sees (rich would take 80 columns, or the width of a terminal on stdin or stderr)
            self.console.width = UNBOUNDED
        self.err = _Console(stderr=True, markup=False, emoji=False, highlight=False)
        self._store: ViewStore | None = None
        #: set by a command that will exit with code 1 once its report is printed, so that a reader
        #: closing the pipe early does not turn that into success
        self.failing = False
        #: set by a command's --json (see json_option): its failure is printed as JSON too
        self.json = False
        #: while progress() draws a bar: what shows a line above it (see _lock_wait)
        self._bar_notice: Callable[[Text], None] | None = None
        #: the lock-wait notice on the terminal: when its wait began, and how many lines it took
        self._notice: tuple[float, int] | None = None

    def store(self, *, create: bool = False) -> ViewStore:
        """The store; only commands that can add a view (``create=True``) may start a new file, so a
        mistyped ``--db`` is an error rather than an empty catalog. An empty file (0 bytes: ``touch``,
        a shell's ``>``) or a SQLite database with no tables holds no store either: the store would
        be started in it (see :func:`~viewstore.log.holds_nothing`)."""
        if self._store is None:
            self.check_environment()
            nothing = None if create else holds_nothing(self.db)
            if nothing is not None:
                folder = os.path.dirname(os.path.abspath(self.db))
                if nothing == "there is no file" and not os.path.isdir(folder):
                    # create could not start one there either: SQLite makes no folder
                    raise ViewStoreError(f"no viewstore database at {self.db}: there is no folder {folder} "
                                         f"(--db or VIEWSTORE_DB names another; create makes no folder)")
                detail = "" if nothing == "there is no file" else f": {nothing}"
                raise ViewStoreError(f"no viewstore database at {self.db}{detail} "
                                     f"(create or import a view to start one there; --db or VIEWSTORE_DB names "
                                     f"another)")
            self._store = ViewStore(self.db, actor=self.actor, catalog=self.catalog)
            signals.lock_wait.connect(self._lock_wait, sender=self._store)
        return self._store

    def check_environment(self) -> None:
        """Raise click's usage error when VIEWSTORE_DB or VIEWSTORE_ACTOR is set but empty (said when
        a command first needs the store, so that --help still works)."""
        if self._blank:
            raise click.UsageError(f"{self._blank[0]} is set but empty: give it a value, or unset it")

    def close(self) -> None:
        if self._store is not None:
            signals.lock_wait.disconnect(self._lock_wait, sender=self._store)
            self._store.close()
            self._store = None

    def _lock_wait(self, store: ViewStore, *, waited: float, timeout: float) -> None:
        """The ``lock_wait`` receiver of the command's store: while a write waits for another
        process's write lock, a line on stderr says so, drawn again in place each second as the
        seconds count up; only when stderr is a terminal, as progress is, so never in a pipe, a file
        or --json's stdout. Once the wait is over the line stays, saying how long it lasted; above
        the bar that progress() draws, it goes at the bar's next update."""
        if not self.err.is_terminal:
            return
        line = Text(visible(f"waiting for another process to release the lock on {self.db} "
                            f"({int(waited)} s of {timeout:g} s)..."))
        if self._bar_notice is not None:
            self._bar_notice(line)
            return
        began = time.monotonic() - waited  # the same for each notice of one wait; a second apart at least for two
        if self._notice is not None and abs(began - self._notice[0]) < 0.5:  # this wait's line: draw it again
            began = self._notice[0]
            self.err.control(Control(*((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)) * self._notice[1]))
        self._notice = (began, len(self.err.render_lines(line, pad=False)))  # a long path folds onto more
        self.err.print(line)

    @contextmanager
    def progress(self, label: str, *, percent: bool = False) -> Iterator[Callable[..., None]]:
        """A progress bar on stderr while the block runs (``label``, the bar, done/total, the time
        so far), gone when it ends; only when stderr is a terminal, so never in a pipe, a file or a
        test's output (and never on stdout, where --json goes). Yields ``update(done, total,
        what="")``: the ``progress`` callback the long calls take, which also shows ``what`` (the
        item at work) beside the bar. A wait for another process's lock shows above the bar until
        the next update. With ``percent`` the share done shows instead of done/total (for a call
        whose steps are not things a user counts: an import's events made, then written)."""
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                                   TimeElapsedColumn)

        class Bar(Progress):
            notice: Text | None = None

            def get_renderables(self) -> Iterable[RenderableType]:
                if self.notice is not None:
                    yield self.notice
                yield from super().get_renderables()

        columns = (TextColumn(label, markup=False), BarColumn(),
                   TaskProgressColumn() if percent else MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}", markup=False))
        with Bar(*columns, console=self.err, transient=True, disable=not self.err.is_terminal) as bar:
            task = bar.add_task("", total=None)

            def update(done: int, total: int, what: str = "") -> None:
                bar.notice = None  # the work goes on: no wait any more
                bar.update(task, completed=done, total=total, description=visible(what))

            def notice(line: Text) -> None:
                bar.notice = line

            self._bar_notice = notice
            try:
                yield update
            finally:
                self._bar_notice = None



#: the exit code of a command interrupted by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130

#: where the main group keeps its command line (ctx.meta), to tell a usage error of a --json command
_ARGS = "viewstore.args"


def _json_word(args: Sequence[str]) -> bool:
    """Whether ``--json`` is a word of a command line before any ``--``, for a command whose options
    are not known (an unavailable one takes its whole line unread)."""
    tokens = list(args)
    return "--json" in tokens[:tokens.index("--") if "--" in tokens else len(tokens)]


def _asks_json(ctx: click.Context) -> bool:
    """Whether the command line of the main group's context, which click could not parse (or has not
    yet: --version), asks for --json: as click reads the line, ``--json`` in an option's place, not
    the value of an option that takes one (``create s.v --sql --json`` is SQL text, "--json"), nor
    an argument after ``--``. Past a word naming no command it is looked for as a word."""
    command: click.Command | None = ctx.find_root().command
    tokens = list(ctx.meta.get(_ARGS, ()))
    i = 0
    while command is not None and i < len(tokens):
        if isinstance(command, _Unavailable):
            return _json_word(tokens[i:])
        takes = {name: 0 if p.is_flag or p.count else p.nargs for p in command.get_params(ctx)
                 if isinstance(p, click.Option) for name in (*p.opts, *p.secondary_opts)}
        group = isinstance(command, click.Group)
        while i < len(tokens):
            token = tokens[i]
            if token == "--":  # a group's parser takes it out before the command's name; a command's ends there
                if not group:
                    return False
                i += 1
                break
            if token == "--json":
                return True
            if token.startswith("-") and token != "-":  # an option (its own value after '=' if it has one)
                i += 1 + takes.get(token, 0)
            elif group:
                break
            else:  # an argument of the command
                i += 1
        if not isinstance(command, click.Group) or i >= len(tokens):
            return False
        name, i = tokens[i], i + 1
        found = command.get_command(ctx, name)
        if found is None:
            return _json_word(tokens[i:])
        command = found
    return False


def error_to_json(error: BaseException, exit_code: int) -> dict[str, Any]:
    """The JSON form of a failure of a ``--json`` command, printed on stderr as one line:
    ``{"error": {"type": ..., "message": ..., "exit_code": ...}}``."""
    message = error.format_message() if isinstance(error, click.ClickException) else str(error)
    return {"error": {"type": type(error).__name__, "message": message, "exit_code": exit_code}}


class _JsonError(click.ClickException):
    """A failure of a ``--json`` command: click prints it (``show``) and exits with its code."""

    def __init__(self, error: BaseException, exit_code: int) -> None:
        super().__init__(str(error))
        self.error = error
        # click types exit_code as a ClassVar, but it reads self.exit_code: an instance's own works
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(json_text(error_to_json(self.error, self.exit_code), indent=None), err=True)


class _Group(click.Group):
    """The main group: lazy optional commands; a ViewStoreError or OSError as a one-line message
    (with --json: a JSON object, as a usage error is then too)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_ARGS] = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:  # the main options (--db ''): no CliContext yet
            if _asks_json(ctx):  # not args: click's parser takes the options out of it
                raise _JsonError(e, e.exit_code) from e
            raise
        except BrokenPipeError:  # --help to a reader that went away: click's own quiet end, as before
            raise
        except OSError as e:  # --help or --version, printed as the line is read, to a full disk or closed stdout
            if _asks_json(ctx):
                raise _JsonError(e, 1) from e
            click.echo(visible(f"error: {e}"), err=True)
            ctx.exit(1)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if sys.stdout is not None:
            return super().main(*args, **kwargs)
        sys.stdout = _ClosedStdout()  # stdout closed at the start: see _ClosedStdout
        try:
            return super().main(*args, **kwargs)
        finally:
            sys.stdout = None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *_LAZY_COMMANDS])

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if (ctx.params.get("as_json") and command is not None and not _takes_json(ctx, command)
                and "--help" not in rest):  # help is printed as asked, JSON or not
            raise usage_error(f"'viewstore {name}' prints no JSON: leave out --json")
        return name, command, rest

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in _LAZY_COMMANDS:
            target, _, _ = _LAZY_COMMANDS[name]
            module, _, attr = target.partition(":")
            try:
                command: click.Command = getattr(importlib.import_module(module), attr)
            except ImportError as e:
                return _unavailable(name, e)
            return command
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        for name in self.list_commands(ctx):
            _, needs, short_help = _LAZY_COMMANDS.get(name, (None, None, None))
            if short_help is not None and (needs is None or _installed(needs)):
                rows.append((name, short_help))
            else:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return _signal_as_itself(super().invoke)(ctx)  # Ctrl-C in a serializer (of --json): as itself
        except BrokenPipeError:  # the reader went away (`viewstore list | head -1`): it has what it wanted
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail again
            ctx.exit(1 if isinstance(ctx.obj, CliContext) and ctx.obj.failing else 0)
        except click.UsageError as e:  # the command's own parsing (--json not read yet), or its checks
            if _json_asked(ctx) or _asks_json(ctx):
                raise _JsonError(e, e.exit_code) from e
            raise
        except (ViewStoreError, OSError) as e:
            if _json_asked(ctx):
                raise _JsonError(e, 1) from e
            click.echo(visible(f"error: {e}"), err=True)
            if isinstance(e, DamagedProjectionsError):
                click.echo("hint: 'viewstore rebuild' repairs the projections from the log", err=True)
            ctx.exit(1)
        except KeyboardInterrupt as e:  # Ctrl-C: the shell's code for SIGINT, not click's "Aborted!" and 1
            said = " ".join(("interrupted", *(str(a) for a in e.args[:1])))  # a command may say what stays
            if _json_asked(ctx):
                raise _JsonError(KeyboardInterrupt(said), INTERRUPTED) from e
            click.echo(visible(said), err=True)
            ctx.exit(INTERRUPTED)


def _json_asked(ctx: click.Context) -> bool:
    return isinstance(ctx.obj, CliContext) and ctx.obj.json


def _remember_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    cli = ctx.find_object(CliContext)
    if cli is not None:
        if value:
            cli.json = True
        return cli.json  # `viewstore --json COMMAND` asks for it too
    return value


def json_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--json`` flag of every command that has one (as ``as_json``): it also makes a failure
    print as one JSON object on stderr (see :func:`error_to_json`) instead of ``error: ...``. The
    main group's ``--json``, before the command, sets it as well."""
    return click.option("--json", "as_json", is_flag=True, callback=_remember_json, help=help)


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
        return False


class _Unavailable(click.Command):
    """An optional command whose package is not installed: whatever its command line, it says so."""


def _takes_json(ctx: click.Context, command: click.Command) -> bool:
    """Whether a command has --json; a group, whether each of its commands has. An unavailable one
    is taken to have it: what it says is that its package is missing."""
    if isinstance(command, click.Group):
        return all(_takes_json(ctx, sub) for name in command.list_commands(ctx)
                   if (sub := command.get_command(ctx, name)) is not None)
    return isinstance(command, _Unavailable) or any(p.name == "as_json" for p in command.params)


def _unavailable(name: str, error: ImportError) -> click.Command:
    @click.command(name, cls=_Unavailable, help=f"(unavailable: {error})",
                   context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx: click.Context, args: Any) -> None:
        cli = ctx.find_object(CliContext)
        if cli is not None:  # the command line was not parsed: its --json asks for a JSON error all the same
            cli.json = cli.json or _asks_json(ctx.find_root())  # not args: click took out a "--" before them
        raise ViewStoreError(f"'viewstore {name}' needs an optional dependency: {error}; {INSTALL_SPARK}")

    return command


def _nameable(value: Any, param: click.Parameter | None, ctx: click.Context | None, kind: click.ParamType) -> None:
    """Refuse, as a usage error, a path no file here can have: a lone surrogate, which only a program
    calling main() can pass (a shell's undecodable bytes come as escapes that encode back), and which
    os.stat or open would raise as UnicodeEncodeError."""
    if isinstance(value, str):
        try:
            os.fsencode(value)
        except UnicodeEncodeError as e:
            shown = value.encode("utf-8", "backslashreplace").decode("utf-8")
            kind.fail(f"'{shown}' is not a path this system can name ({e.reason})", param, ctx)


class LocalPath(click.Path):
    """click's Path, for a name the file system can hold (see _nameable); a path object (which a
    program's ``default_map`` may give) is taken as its text, as the command line gives it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, os.PathLike):
            value = os.fsdecode(value)
        _nameable(value, param, ctx, self)
        return super().convert(value, param, ctx)


class _LocalFile(click.File):
    """click's File, for a name the file system can hold (see _nameable)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        _nameable(value, param, ctx, self)
        return super().convert(value, param, ctx)


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse '' (or blanks) for a path (it would mean the current folder), an actor (it would
    mean the OS user) or a catalog name (the store refuses it, once opened). A blank environment
    variable is left to CliContext, which says so when a command opens the store, so that
    ``--help`` still works."""
    if value is not None and not value.strip():
        if ctx.get_parameter_source(param.name or "") == click.core.ParameterSource.ENVIRONMENT:
            return None
        raise click.BadParameter("must not be empty", ctx, param)
    return value


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--version``: ``viewstore, version X``, or ``{"version": "X"}`` with --json, which it has to
    find on the command line itself: as --help, it acts while the line is read, before --json is."""
    if not value or ctx.resilient_parsing:
        return
    version = importlib.metadata.version("viewstore")
    if _asks_json(ctx):
        _print_json({"version": version})
    else:
        click.echo(f"{ctx.find_root().info_name}, version {version}")
    ctx.exit()


@click.group(cls=_Group)
@click.option("--db", envvar="VIEWSTORE_DB", callback=not_empty,
              help="The store's SQLite file [env VIEWSTORE_DB; default ./viewstore.db].")
@click.option("--actor", envvar="VIEWSTORE_ACTOR", callback=not_empty,
              help="Who makes the changes [env VIEWSTORE_ACTOR; default: OS user].")
@click.option("--catalog", callback=not_empty, help="Catalog name used as default catalog of new views.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON, as the command's own --json does (every command but demo has one).")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit (as JSON with --json).")
@click.pass_context
def main(ctx: click.Context, db: str | None, actor: str | None, catalog: str | None, as_json: bool) -> None:
    """viewstore: an embedded, event-sourced catalog of multi-dialect SQL views.

    Exit codes: 0 done; 1 viewstore refused or failed ('error: ...' on stderr; spark check: drift);
    2 a usage error (an unknown option, a value not of its option's form, options that exclude
    each other); 130 interrupted (Ctrl-C). With --json a failure is one JSON object on stderr instead:
    {"error": {"type": ..., "message": ..., "exit_code": ...}}. --json goes before the command or
    after it: 'viewstore --json list' is 'viewstore list --json'.

    Example:

    \b
        viewstore --db views.db create sales.daily --sql "SELECT 1 AS x" \\
            --column x:int
    """
    obj = CliContext(db, actor, catalog)
    obj.json = as_json
    ctx.obj = obj
    ctx.call_on_close(obj.close)


pass_cli = click.make_pass_decorator(CliContext)


# -- option types ------------------------------------------------------------------------------

class _WholeNumber(click.ParamType):
    """A whole number from ``low`` to 2**63 - 1 (SQLite holds no integer above it): an event's
    position, a stream version, a version id, a limit. A value that is none, or one out of range,
    is a usage error that says what is wanted: ``--limit must be a whole number of 0 or more, not
    'x'`` (click's own said ``'x' is not a valid integer range``)."""

    name = "integer"

    def __init__(self, low: int) -> None:
        self.low, self.high = low, 2**63 - 1

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = None
        if number is not None and self.low <= number <= self.high:
            return number
        if number is not None and number > self.high:
            wanted = f" of at most {self.high}"
        elif self.low > -(2**63):
            wanted = f" of {self.low} or more"
        elif number is not None:
            wanted = f" of at least {self.low}"
        else:
            wanted = ""  # any whole number SQLite holds
        if isinstance(param, click.Option):
            name = param.opts[0]
        else:
            name = param.human_readable_name if param is not None else "value"
        raise usage_error(f"{name} must be a whole number{wanted}, not {str(value)!r}")


#: positions, stream versions and limits
INT64 = _WholeNumber(0)


class _StoredCase(click.Choice):
    """A choice taken in any case, and listed (in --help and in the message about a bad value) as
    the store keeps it: ``[DEFINER|INVOKER]``, where click's case-insensitive choice listed
    ``[definer|invoker]``, values the store never shows."""

    def __init__(self, choices: Sequence[str]) -> None:
        super().__init__(choices, case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return f"[{'|'.join(self.choices)}]"

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        return f"{value!r} is not one of {', '.join(map(repr, self.choices))} (in any case)."


#: a view's security mode, as the store keeps it
SECURITY_MODES = _StoredCase(["DEFINER", "INVOKER"])


def usage_error(message: str) -> click.UsageError:
    """A command line that cannot be right whatever the store holds (a value not of its option's
    form, options that exclude each other): click's usage error, exit code 2, as for the values
    click checks itself. What the store refuses is a ViewStoreError, exit code 1."""
    return click.UsageError(visible(message))


#: what every time option takes, said by the message about any bad one
TIME_FORMS = "use ISO 8601 (2026-11-22T10:00:00Z) or epoch milliseconds, in the years 1 to 9999"


def _time(value: str | None, option: str, *, now: bool = False) -> int | None:
    """Epoch ms from an option's ISO 8601 time or epoch ms, as the API reads it, in the years 1 to 9999.
    With ``now``, for an option whose absence means now (``--as-of``, ``--to``, ``--until``), the word
    ``now`` (in any case) is taken too and means that: None, as if the option were left out.

    A bad value is a usage error that says the same of it whatever the option: ``bad --since '...':``
    and :data:`TIME_FORMS` (after the reason, for eight digits that are no date: as epoch ms they would
    be a time of 1970's first two days, so the API reads eight digits as a date alone, YYYYMMDD; and
    after the options that take ``now``, for ``now`` given to one that does not). The word is the
    CLI's alone: the API's None is its now, and its times are the times it reads."""
    if value is None or (now and _is_now(value)):
        return None
    if _is_now(value):  # --since, --from: left out, they mean no moment, so now is no spelling of that
        raise usage_error(f"bad {option} {value!r}: now is taken only by the options that mean now when left "
                          f"out (--as-of, --until, --to); {TIME_FORMS}")
    try:
        ms = to_epoch_ms(value, option)
        _EPOCH + dt.timedelta(milliseconds=ms)  # refuses a time out of range
    except (ValidationError, OverflowError) as e:
        text = value.strip()
        why = "eight digits are a date (YYYYMMDD), and this is none; " if \
            len(text) == 8 and text.isascii() and text.isdigit() else ""
        raise usage_error(f"bad {option} {value!r}: {why}{TIME_FORMS}") from e
    return ms


def _is_now(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "now"


# -- output helpers ----------------------------------------------------------------------------


def _ms(ms: int | None) -> str:
    """An ISO time (UTC, to the millisecond); epoch milliseconds where a datetime cannot hold it."""
    return "" if ms is None else _time_text(ms, "iso")


@_signal_as_itself
def view_to_json(view: View) -> dict[str, Any]:
    """The JSON form of a view printed by ``show --json``: pydantic's JSON dump of the View, its
    versions' columns and representations each dumped once (the versions of a View the store built
    share equal ones: 10,000 versions of the same columns hold a few columns, not 60,000)."""
    dumped: dict[int, dict[str, Any]] = {}

    def once(model: Column | SQLRepresentation) -> dict[str, Any]:
        found = dumped.get(id(model))  # (the view holds every model alive: an id is not reused)
        if found is None:
            found = dumped[id(model)] = model.model_dump(mode="json")
        return found

    versions = []
    for version in view.versions:
        item = version.model_dump(mode="json", exclude=_VERSION_MODELS)
        item["columns"] = [once(c) for c in version.columns]
        item["representations"] = [once(r) for r in version.representations]
        versions.append({name: item[name] for name in _VERSION_FIELDS})
    rest = view.model_dump(mode="json", exclude={"versions"})
    data = {name: versions if name == "versions" else rest[name] for name in View.model_fields}
    data["identifier"] = identifier_str(view.identifier)
    data["comment"] = view.comment
    data["columns"] = [c.model_dump(mode="json") for c in view.columns]
    data["representations"] = [r.model_dump(mode="json") for r in view.representations]
    data["default_catalog"] = view.default_catalog
    data["default_namespace"] = list(view.default_namespace)
    return data


#: the fields of a version's JSON, in order, and those of them :func:`view_to_json` dumps once for all versions
_VERSION_FIELDS = tuple(ViewVersion.model_fields)
_VERSION_MODELS = {"columns", "representations"}


def event_to_json(event: Event) -> dict[str, Any]:
    return {"position": event.position, "commit_id": event.commit_id, "view": event.view,
            "view_id": event.view_id, "stream_version": event.stream_version, "type": event.type,
            "actor": event.actor, "occurred_at": _ms(event.occurred_at), "occurred_at_ms": event.occurred_at,
            "payload": event.payload()}


def sql_value_to_json(value: Any) -> Any:
    """A value of a ``query`` row as JSON: a BLOB becomes its bytes in hex (upper case, as SQLite's
    ``hex()`` writes them), an infinite REAL the string ``"Infinity"`` or ``"-Infinity"``."""
    if isinstance(value, bytes):
        return value.hex().upper()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity")
    return value


def count(n: int, noun: str) -> str:
    """``1 event``, ``2 events``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def folded_views(what: str, n: int) -> str:
    """The line of a report that counts the ``n`` views it does not list, saying ``what`` they are
    (each report's ``--json`` lists them): ``skipped as in the store already: 3 views (...)``."""
    return f"{what}: {count(n, 'view')} (--json lists them)"


def json_text(data: Any, indent: int | None = 2) -> str:
    """``--json`` output: JSON with text as it is, but ``\\uXXXX`` escapes when the data holds a
    lone surrogate (no encoding can print one; the escaped JSON still means the very same text)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, indent=indent)
    return text


def _print_json(data: Any) -> None:
    _echo_utf8(_json_utf8(data))  # json_text's text (a view of 10,000 versions: 14 MB) at a tenth of its cost


#: how many versions (and version-log entries) ``show`` lists; ``--json`` has every one
SHOWN_VERSIONS = 10


def _print_line(console: Console, *parts: str | tuple[str, str]) -> None:
    """One line of text as stored (control characters escaped), not wrapped; a part may be ``(text,
    style)``, styled only on a terminal."""
    console.print(Text.assemble(*(visible(p) if isinstance(p, str) else (visible(p[0]), p[1]) for p in parts)),
                  soft_wrap=True)


def _print_view(cli: CliContext, view: View) -> None:
    c = cli.console
    line = functools.partial(_print_line, c)
    line((identifier_str(view.identifier), "bold"), f"  uuid {view.uuid}")
    if view.comment:
        line(f"comment: {view.comment}")
    ids = view.version_ids  # the versions are built only for the few listed below
    line(f"current version: {view.current_version_id} of {len(ids)}   "
         f"stream version: {view.stream_version}   security: {view.security_mode}")
    line(f"default catalog and namespace: {view.default_catalog or '-'}.{'.'.join(view.default_namespace) or '-'}")
    line(f"created by {view.audit.creator} at {_utc(view.audit.create_time_ms)}")
    line(f"last changed by {view.audit.last_modifier} at {_utc(view.audit.last_modified_time_ms)}")
    cols = data_table("column", "type", "nullable", "comment", title="columns", names=["column"])
    for col in view.columns:
        cols.add_row(col.name, str(col.type), "yes" if col.nullable else "no", col.comment or "")
    c.print(cols)
    reps = data_table("dialect", "sql", title="representations")
    for rep in view.representations:
        reps.add_row(rep.dialect, rep.sql)
    c.print(reps)
    props = {k: v for k, v in view.properties.items() if k != "comment"}
    if props:
        table = data_table("property", "value", title="properties", names=["property"])
        for key, value in sorted(props.items()):
            table.add_row(key, value)
        c.print(table)
    shown = ids[-SHOWN_VERSIONS:]
    which = f"the latest {len(shown)}"
    if view.current_version_id not in shown:  # rolled back to an old one
        shown = (view.current_version_id, *shown[1:])
        which = f"the current one and the latest {len(shown) - 1}"
    earlier = len(ids) - len(shown)
    versions = data_table("version", "created (UTC)", "schema", "dialects", "columns",
                          title=f"versions{f' ({which}; --json has all)' if earlier else ''}")
    for v in map(view.version, shown):
        mark = " (current)" if v.version_id == view.current_version_id else ""
        versions.add_row(f"{v.version_id}{mark}", _table_time(v.timestamp_ms), str(v.schema_id),
                         ", ".join(r.dialect for r in v.representations), ", ".join(col.name for col in v.columns))
    c.print(versions)
    log = view.version_log[-SHOWN_VERSIONS:]
    cut = f" (the latest {len(log)} of {len(view.version_log)})" if len(log) < len(view.version_log) else ""
    line(f"version log{cut}: " + " → ".join(str(e.version_id) for e in log))


#: an event table's columns: numbers stay whole; when the console is narrow the details wrap first,
#: then the actor, then the time breaks between its date and its time of day, then the type after a
#: '.' or '_', and last the view's identifier after a dot (never inside a name)
_EVENT_COLUMNS = (TableColumn("pos", None), TableColumn("time (UTC)", 12, rank=2, snap=True),
                  TableColumn("actor", 8, rank=1), TableColumn("view", 0, rank=4, breaks="."), TableColumn("v", None),
                  TableColumn("type", 0, rank=3, breaks="._"), TableColumn("details", 16, rank=0))


def _show_events(cli: CliContext, events: Iterable[Event], as_json: bool, title: str | Callable[[], str]) -> None:
    """Events as JSON or as a table, as they are read (a stream: see ``ViewStore.stream_events``),
    with the garbage collector paused (``log.collector_paused``): the events make no reference
    cycles, and with the collector running a table of 100,000 events took twice as long."""
    with collector_paused():
        if as_json:
            _echo_json_list(events, event_to_json, _json_utf8)
        else:
            _print_events(cli, events, title)


#: how many items (events, query rows) ``--json`` turns into JSON and writes at a time
JSON_BATCH = 1000


def _echo_json_list(items: Iterable[Any], to_json: Callable[[Any], Any], encode: Callable[[list[Any]], bytes]) -> None:
    """A ``--json`` list of many items (events, query rows), read and written a batch of
    :data:`JSON_BATCH` at a time: the text ``encode`` (an indented writer: :func:`_json_utf8`,
    :func:`json_text`) gives the list of every item's ``to_json``, but neither that text, nor the
    JSON data of every item, nor the items themselves (a stream) are ever held whole, and a reader
    that goes away (``| head``) stops the work at the next batch. An item its source fails to give
    (a damaged event's CorruptLogError) ends the list after the items before it, unclosed, and
    the error is raised."""
    items = iter(items)
    first = True

    def write(batch: list[Any]) -> None:
        nonlocal first
        text = encode([to_json(item) for item in batch])
        # a batch's list is "[\n" + its items, each indented, + "\n]": joined with ",\n" as one list's items
        _echo_utf8((b"[\n" if first else b",\n") + text[2:-2], nl=False)
        first = False

    while True:
        batch: list[Any] = []
        try:
            batch.extend(itertools.islice(items, JSON_BATCH))  # (extend keeps what came before an error)
        except Exception:
            if batch:  # the items read before the one that failed
                write(batch)
            raise
        if not batch:
            break
        write(batch)
    _echo_utf8(encode([]) if first else b"\n]")


def _json_utf8(data: Any) -> bytes:
    """The ``--json`` text of events, views and the commands' other answers in UTF-8, written by
    orjson: for the values their JSON holds (text, 64-bit integers, booleans, null, lists, objects
    with text keys; no floats: query's rows, which may hold some, go through :func:`json_text`) the
    very text :func:`json_text` writes (``tests/test_json_codec.py`` checks that), at a tenth of the
    cost. What orjson refuses (a lone surrogate, an integer beyond 64 bits) goes through
    :func:`json_text`."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError
        return json_text(data).encode()


def _echo_utf8(text: bytes, nl: bool = True) -> None:
    """Text in UTF-8 and a newline (unless ``nl`` is False) to standard output: as its bytes where the
    output is written in UTF-8 (not decoded to be encoded again: tens of megabytes for a long log) to its binary buffer,
    else as text, as ``click.echo`` writes it (to the stream it finds: a text stream without a
    buffer, as a notebook's, takes text alone; and one naming an encoding Python does not know)."""
    if _utf8(getattr(sys.stdout, "encoding", None)) and getattr(sys.stdout, "buffer", None) is not None:
        click.echo(text, nl=nl)
    else:
        click.echo(text.decode(), nl=nl)


def _utf8(encoding: object) -> bool:
    """Whether a stream's encoding is UTF-8 (by any of its names); False for a name no codec has."""
    if not isinstance(encoding, str):
        return False
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def _print_events(cli: CliContext, events: Iterable[Event], title: str | Callable[[], str]) -> None:
    rows = ((str(e.position), _table_time(e.occurred_at), e.actor, e.view, str(e.stream_version), e.type, _details(e))
            for e in events)
    TextTable(*_EVENT_COLUMNS, title=title).print(cli.console, rows)


def _table_time(ms: int) -> str:
    """A time for a table cell: ``2026-11-25 18:43:50.232`` (UTC, said in the header)."""
    return _time_text(ms, "table")


def _utc(ms: int) -> str:
    return _time_text(ms, "utc")


#: how each payload field reads in a table's details cell (``--json`` has the payload itself)
_DETAILS = {"source": "from {}", "from_identifier": "from {}", "dialect": "{}", "comment": "comment: {}",
            "current_version_id": "version {}"}
_DETAILS_ORDER = ("source", "from_identifier", "dialect", "comment", "updates", "removals", "current_version_id")
#: the fields of each event type that its details show, in that order
_DETAIL_FIELDS = {cls: tuple(key for key in _DETAILS_ORDER if key in cls.model_fields) for cls in EVENT_TYPES.values()}


def _details(event: Event) -> str:
    """What an event changed, a line each: ``owner=finance`` for a property set, ``-team`` for one
    removed, ``comment: Daily`` for a comment set and ``-comment`` for it removed, ``version 2`` for a
    new current version, ``from sales.old`` for a rename."""
    fields = event.__dict__  # the payload's fields as they are, not their JSON (payload()): 2 µs an event less
    lines: list[str] = []
    for key in _DETAIL_FIELDS.get(type(event), _DETAILS_ORDER):
        value = fields.get(key)
        if value is None:
            if key == "comment" and event.type == "view.comment_updated":  # None is its removal
                lines.append("-comment")  # as a property's removal reads ('' set reads 'comment: ')
            continue
        if key == "updates":
            lines.extend(f"{k}={v}" for k, v in sorted(value.items()))
        elif key == "removals":
            lines.extend(f"-{k}" for k in sorted(value))
        else:
            lines.append(_DETAILS[key].format(".".join(value) if key == "from_identifier" else value))
    return "\n".join(lines)


# -- definition options shared by create and replace --------------------------------------------


def _parse_column(text: str) -> Column:
    name, sep, rest = text.partition(":")
    if not sep:
        raise usage_error(f"bad --column {text!r}: use NAME:TYPE[:COMMENT]")
    # the type may itself contain ':' (struct<a: int>), so the comment is whatever follows the
    # first ':' outside angle brackets (a comment may hold colons of its own)
    depth, split = 0, -1
    for i, ch in enumerate(rest):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == ":" and depth == 0:
            split = i
            break
    if split >= 0:
        return Column(name, rest[:split], rest[split + 1:])
    return Column(name, rest)


def _parse_kv(text: str, option: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise usage_error(f"bad {option} {text!r}: use KEY=VALUE")
    return key, value


def _definition_options(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options that define a view, for ``create`` or ``replace``: each help says what its
    command does with the option (they differ for the comment and the security mode)."""
    creating = command == "create"
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option("--dialect", default="spark", show_default=True, help="Dialect of --sql / --sql-file."),
        click.option("--sql", help="The view's SQL in --dialect."),
        click.option("--sql-file", type=_LocalFile("r"), help="Read the SQL from a file ('-' for stdin)."),
        click.option("--representation", "extra_reps", nargs=2, multiple=True, metavar="DIALECT SQL",
                     help="A further representation (repeatable)."),
        click.option("--column", "columns", multiple=True, metavar="NAME:TYPE[:COMMENT]",
                     help="A column, in order, e.g. id:bigint or 'amount:decimal(18,2):in EUR' (repeatable)."),
        click.option("--default-namespace",
                     help="Namespace for unqualified names in the SQL (default: the view's own namespace)."),
        click.option("--default-catalog", help="Catalog for unqualified names (default: the store's catalog)."),
        click.option("--comment", help="The view comment ('' for none)." if creating else
                     "The view comment (left out or '': the view's is kept; see --replace-properties)."),
        click.option("--property", "properties", multiple=True, metavar="KEY=VALUE",
                     help="A view property (repeatable)."),
        click.option("--security-mode", type=SECURITY_MODES,
                     help="How the view runs (DEFINER when left out)." if creating else
                     "How the view runs (left out: the view's own is kept)."),
        click.option("--summary", "summary", multiple=True, metavar="KEY=VALUE",
                     help="Version summary entries, e.g. engine-name=spark (repeatable)."),
        json_option("Print the view as JSON."),
    ]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorate


def _definition(identifier: str, dialect: str, sql: str | None, sql_file: Any, extra_reps: tuple[Any, ...],
                columns: tuple[str, ...], default_namespace: str | None, default_catalog: str | None,
                comment: str | None, properties: tuple[str, ...], security_mode: str | None,
                summary: tuple[str, ...]) -> dict[str, Any]:
    if sql is not None and sql_file is not None:
        raise usage_error("give --sql or --sql-file, not both")
    text = sql
    if sql_file is not None:
        try:
            text = sql_file.read()
        except UnicodeDecodeError as e:
            raise usage_error(f"--sql-file {sql_file.name} is not UTF-8 text: {e}") from e
    reps = [SQLRepresentation(dialect, text)] if text is not None else []
    reps += [SQLRepresentation(d, s) for d, s in extra_reps]
    if not reps:
        raise usage_error("a view needs SQL: give --sql, --sql-file or --representation")
    namespace = default_namespace if default_namespace is not None else ".".join(to_identifier(identifier)[:-1])
    return {"columns": [_parse_column(c) for c in columns], "representations": reps,
            "default_namespace": namespace, "default_catalog": default_catalog, "comment": comment or None,
            "properties": dict(_parse_kv(p, "--property") for p in properties),
            "security_mode": security_mode.upper() if security_mode is not None else None,
            "summary": dict(_parse_kv(s, "--summary") for s in summary)}


#: optimistic concurrency, on every command that writes to an existing view
_EXPECTED = click.option("--expected-version", type=INT64,
                         help="Fail unless the view is at this stream version (show prints it).")
#: replace may create the view, so 0 means something there
_EXPECTED_OR_NEW = click.option("--expected-version", type=INT64,
                                help="Fail unless the view is at this stream version (0: does not exist yet).")


def _checked(identifier: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of create or replace as the API takes them, checked before a store is opened, so
    that bad input given with a mistyped --db starts no file."""
    to_identifier(identifier)
    definition = _definition(identifier, **options)
    check_definition(**definition)
    return definition


#: the dialects of the engines viewstore reads and writes views of (viewstore.formats), which need no
#: check, so that a command in one of them does not import sqlglot (about 0.4 s) for a note: Flink is
#: one sqlglot lacks
_ENGINE_DIALECTS = frozenset({"spark", "trino", "hive", "flink", "presto"})


def _note_dialects(dialects: Iterable[str]) -> None:
    """A note on stderr for each dialect that is neither an engine's nor one sqlglot knows (a typo
    such as 'sprk', most likely): the Iceberg view spec allows any dialect, so it is stored as given,
    and the note leaves stdout, --json output and the exit code alone."""
    unknown = {d.lower(): d for d in reversed(list(dialects)) if d.lower() not in _ENGINE_DIALECTS}
    if not unknown:
        return
    from sqlglot.dialects.dialect import Dialect  # only here: most commands never need sqlglot

    for name, given in sorted(unknown.items()):
        if Dialect.get(name) is None:
            click.echo(f"note: dialect {visible(repr(given))} is not one sqlglot knows; stored as given", err=True)


def _show_result(cli: CliContext, view: View, as_json: bool, verb: str) -> None:
    if as_json:
        _print_json(view_to_json(view))
    else:
        click.echo(f"{verb} {visible(identifier_str(view.identifier))} (version {view.current_version_id}, "
                   f"stream version {view.stream_version})")


@main.command()
@click.argument("identifier")
@_definition_options("create")
@pass_cli
def create(cli: CliContext, /, identifier: str, as_json: bool, **options: Any) -> None:
    """Create a view.

    Example:

    \b
        viewstore create sales.daily --comment "Daily orders" \\
            --sql "SELECT day, count(*) AS n FROM orders GROUP BY day" \\
            --column day:date --column "n:bigint:orders that day"
    """
    definition = _checked(identifier, options)
    definition["security_mode"] = definition["security_mode"] or "DEFINER"
    view = cli.store(create=True).create_view(identifier, **definition)
    _show_result(cli, view, as_json, "created")
    _note_dialects(r.dialect for r in definition["representations"])


@main.command(short_help="Create or replace a view (a new version, or a reused one).")
@click.argument("identifier")
@_definition_options("replace")
@click.option("--replace-properties", is_flag=True,
              help="The given --property and --comment become the whole property map (others go).")
@_EXPECTED_OR_NEW
@pass_cli
def replace(cli: CliContext, /, identifier: str, as_json: bool, replace_properties: bool, expected_version: int | None,
            **options: Any) -> None:
    """Create or replace a view (a new version, or a reused identical one).

    The query's definition is given whole: every column and representation again (no --column
    means no columns; leaving out a dialect the view has is refused unless its
    replace.drop-dialect.allowed property is true), and --default-namespace goes back to its
    default when left out. --security-mode left out keeps the view's mode. --comment and --property
    are merged into the view's (Iceberg's rule; '' keeps the comment); with --replace-properties
    they become its whole property map, and a comment left out is removed.

    Example:

    \b
        viewstore replace sales.daily --sql "SELECT ..." \\
            --column day:date --column n:bigint
    """
    definition = _checked(identifier, options)
    store = cli.store(create=True)
    view, wrote = _committing(store, lambda: store.replace_view(identifier, **definition,
                                                                 replace_properties=replace_properties,
                                                                 expected_version=expected_version))
    # a replace that found no view created one
    _show_result(cli, view, as_json, "nothing to change in" if not wrote else
                 "created" if view.stream_version == 1 else "replaced")
    _note_dialects(r.dialect for r in definition["representations"])


def _moments(store: ViewStore, identifier: str, *options: tuple[int | None, int | None]) -> list[int | Event | None]:
    """What ``as_of`` takes for each pair of a time option (epoch ms, or None) and an event option (a
    log position, or None): the time, or the event at that position among those
    ``load_view(as_of=event)`` takes, those of every view that carried the name (only the event at
    each position is read, not the views' whole histories); a position not there is a
    ValidationError."""
    positions = {position for _, position in options if position is not None}
    found = {e.position: e for position in sorted(positions)
             for e in store.events(view=identifier, since_position=position, until_position=position)}
    moments: list[int | Event | None] = []
    for ms, position in options:
        if position is not None and position not in found:
            name = identifier_str(to_identifier(identifier))
            raise ValidationError(f"no event at position {position} in the history of {name} "
                                  f"('viewstore audit --view {name}' lists its events' positions)")
        moments.append(ms if position is None else found[position])
    return moments


@main.command(short_help="Show a view (now, or as it was): columns, SQL, versions.")
@click.argument("identifier")
@click.option("--as-of", metavar="TIME",
              help="Show the view as it was then (ISO 8601, UTC unless it gives its offset, or epoch ms, in the "
                   "years 1 to 9999; to the millisecond; now, as without it).")
@click.option("--at-event", type=INT64, metavar="POSITION",
              help="Show the view right after the commit of this event (the pos column of `viewstore audit "
                   "--view IDENTIFIER`: an event of any view that carried the name, also one dropped or renamed "
                   "away since; `viewstore history` lists the current one's).")
@json_option("Print JSON.")
@pass_cli
def show(cli: CliContext, identifier: str, as_of: str | None, at_event: int | None, as_json: bool) -> None:
    """Show a view: columns, representations, properties, versions and version log.

    Examples:

    \b
        viewstore show sales.daily --as-of 2026-11-01T00:00:00Z

    \b
        viewstore show sales.daily --at-event 42
    """
    if at_event is not None and as_of is not None:
        raise usage_error("give --as-of or --at-event, not both")
    as_of_ms = _time(as_of, "--as-of", now=True)
    store = cli.store()
    (moment,) = _moments(store, identifier, (as_of_ms, at_event))
    view = store.load_view(identifier, as_of=moment)
    if as_json:
        _print_json(view_to_json(view))
    else:
        _print_view(cli, view)


@main.command(short_help="Show what changed in a view between two moments.")
@click.argument("identifier")
@click.option("--from", "from_", metavar="TIME",
              help="Compare the view as it was then (ISO 8601, UTC unless it gives its offset, or epoch ms, in "
                   "the years 1 to 9999).")
@click.option("--from-event", type=INT64, metavar="POSITION",
              help="Compare the view right after the commit of this event (a position, as show --at-event "
                   "takes it).")
@click.option("--to", metavar="TIME", help="With the view as it was then (as --from takes it, or now: the default).")
@click.option("--to-event", type=INT64, metavar="POSITION",
              help="With the view right after the commit of this event (default: as it is now).")
@json_option("Print the differences as JSON.")
@pass_cli
def diff(cli: CliContext, identifier: str, from_: str | None, from_event: int | None, to: str | None,
         to_event: int | None, as_json: bool) -> None:
    """Show what changed in a view between two moments: --from or --from-event (one of them), and
    --to or --to-event (or now). Each side is the view as show --as-of or --at-event shows it; a
    line per side names it (a rename shows), its version and its last change, then come only the
    columns, SQL (a unified diff per dialect), comment, properties and defaults that differ, or
    "no changes". Exit code 0 whether or not anything changed.

    Examples:

    \b
        viewstore diff sales.daily --from 2026-11-01T00:00:00Z

    \b
        viewstore diff sales.daily --from-event 42 --to-event 57 --json
    """
    if from_ is not None and from_event is not None:
        raise usage_error("give --from or --from-event, not both")
    if from_ is None and from_event is None:
        raise usage_error("give --from or --from-event: the moment to compare from")
    if to is not None and to_event is not None:
        raise usage_error("give --to or --to-event, not both")
    from_ms, to_ms = _time(from_, "--from"), _time(to, "--to", now=True)
    store = cli.store()
    before, after = _moments(store, identifier, (from_ms, from_event), (to_ms, to_event))
    assert before is not None  # one of --from and --from-event was given
    result = store.diff_view(identifier, before=before, after=after)
    if as_json:
        data = result.model_dump(mode="json")  # (a Ctrl-C in it goes on as itself: see model._InterruptibleDump)
        for side in ("before", "after"):
            data[side]["identifier"] = identifier_str(getattr(result, side).identifier)
        _print_json(data)
    else:
        _print_diff(cli, result)


def _print_diff(cli: CliContext, diff: ViewDiff) -> None:
    c = cli.console
    line = functools.partial(_print_line, c)
    for label, side in (("before:", diff.before), ("after: ", diff.after)):
        line(f"{label} ", (identifier_str(side.identifier), "bold"), f"  version {side.current_version_id}",
             f"  last changed by {side.last_modifier} at {_utc(side.last_modified_time_ms)}")
    if not diff.changed:
        line("no changes")
        return
    if diff.before.uuid != diff.after.uuid:
        line(f"another view: uuid {diff.before.uuid}, then {diff.after.uuid} (the name changed hands)")
    elif diff.before.identifier != diff.after.identifier:
        line(f"renamed: {identifier_str(diff.before.identifier)} → {identifier_str(diff.after.identifier)}")

    def text(value: str | None) -> str:
        return "(none)" if value is None else value

    for what, change in (("comment", diff.comment), ("security mode", diff.security_mode),
                         ("default catalog", diff.default_catalog)):
        if change is not None:
            line(f"{what}: {text(change.before)} → {text(change.after)}")
    if diff.default_namespace is not None:
        line(f"default namespace: {'.'.join(diff.default_namespace.before) or '(none)'} → "
             f"{'.'.join(diff.default_namespace.after) or '(none)'}")
    if diff.columns_added or diff.columns_removed or diff.columns_changed:
        cols = data_table("change", "column", "type", "nullable", "comment", title="columns", names=["column"])

        def cells(col: Column) -> list[str]:
            return [col.name, str(col.type), "yes" if col.nullable else "no", col.comment or ""]

        for col in diff.columns_removed:
            cols.add_row("removed", *cells(col))
        for col in diff.columns_added:
            cols.add_row("added", *cells(col))
        for column in diff.columns_changed:
            before, after = cells(column.before), cells(column.after)
            if before[3] == after[3] and column.before.comment != column.after.comment:  # '' and None
                before[3], after[3] = text(column.before.comment), text(column.after.comment)
            cols.add_row("changed", *(old if old == new else f"{old} → {new}" for old, new in zip(before, after)))
        c.print(cols)
    if diff.column_order is not None:
        line(f"column order: {', '.join(diff.column_order.before)} → {', '.join(diff.column_order.after)}")
    if diff.properties_added or diff.properties_changed or diff.properties_removed:
        props = data_table("change", "property", "before", "after", title="properties", names=["property"])
        for key, value in sorted(diff.properties_removed.items()):
            props.add_row("removed", key, value, "")
        for key, value in sorted(diff.properties_added.items()):
            props.add_row("added", key, "", value)
        for key, values in sorted(diff.properties_changed.items()):
            props.add_row("changed", key, values.before, values.after)
        c.print(props)
    for rep in diff.representations_removed:
        _print_sql_diff(c, "removed", rep.dialect, rep.sql, "")
    for rep in diff.representations_added:
        _print_sql_diff(c, "added", rep.dialect, "", rep.sql)
    for reps in diff.representations_changed:
        dialect = reps.after.dialect if reps.before.dialect == reps.after.dialect else \
            f"{reps.before.dialect} → {reps.after.dialect}"
        _print_sql_diff(c, "changed", dialect, reps.before.sql, reps.after.sql)


#: the styles of a unified diff's lines, by their first character (on a terminal only)
_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def _print_sql_diff(console: Console, change: str, dialect: str, before: str, after: str) -> None:
    """A representation's SQL of two sides as a unified diff (difflib): of an added one, every line
    added; of a removed one, every line removed; of one whose dialect alone is spelt anew, a word
    that the SQL is the same (difflib gives no line); of one whose line breaks alone changed, its
    lines split at newlines only, so the change shows."""
    _print_line(console, (f"representation {dialect}: {change}", "bold"))
    if before == after:
        _print_line(console, "(the same SQL)")
        return
    old, new = before.splitlines(), after.splitlines()
    if old == new:  # the line breaks alone differ (a trailing one, \r\n for \n): split at \n, \r shows escaped
        old, new = before.split("\n"), after.split("\n")
    lines = difflib.unified_diff(old, new, "before", "after", lineterm="")
    for text in lines:
        style = "bold" if text.startswith(("--- ", "+++ ")) else _DIFF_STYLES.get(text[:1], "")
        _print_line(console, (text, style))


@main.command("list", short_help="List live views, all or those directly in a namespace.")
@click.argument("namespace", required=False)
@json_option("Print JSON.")
@pass_cli
def list_(cli: CliContext, namespace: str | None, as_json: bool) -> None:
    """List live views, all or those directly in NAMESPACE (not in namespaces under it), one a line.

    A NAMESPACE that holds no view lists nothing (exit code 0; without --json a line on stderr
    says so and names the namespaces that hold views).

    Example:

    \b
        viewstore list sales --json
    """
    store = cli.store()
    names = [identifier_str(i) for i in store.list_views(namespace)]
    if as_json:
        _print_json(names)
        return
    for name in names:
        click.echo(visible(name))
    if not names and namespace is not None:  # a typo lists nothing: say so, on stderr (stdout stays the answer)
        held = ", ".join(identifier_str(n) for n in store.list_namespaces())
        click.echo(visible(f"no live view directly in namespace {identifier_str(to_namespace(namespace))} "
                           f"({f'the namespaces that hold views: {held}' if held else 'no namespace holds a view'})"),
                   err=True)


@main.command()
@click.argument("identifier")
@click.option("--add-representation", "adds", nargs=2, multiple=True, metavar="DIALECT SQL",
              help="Add SQL in a dialect the view lacks (a new version; repeatable).")
@click.option("--update-representation", "updates", nargs=2, multiple=True, metavar="DIALECT SQL",
              help="Change the SQL of a dialect the view has (a new version; repeatable).")
@click.option("--remove-representation", "removes", multiple=True, metavar="DIALECT",
              help="Remove the SQL of a dialect (a new version; repeatable).")
@click.option("--comment", help="Set the comment ('' removes it).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set a property (repeatable).")
@click.option("--unset", "unsets", multiple=True, metavar="KEY", help="Remove a property (repeatable).")
@_EXPECTED
@json_option("Print the view as JSON.")
@pass_cli
def alter(cli: CliContext, identifier: str, adds: Any, updates: Any, removes: Any, comment: str | None,
          sets: Any, unsets: Any, expected_version: int | None, as_json: bool) -> None:
    """Change a view: all the changes given are one commit, or none.

    Representation changes apply as additions, then updates, then removals, whatever their order
    on the command line; removing a dialect the view has and adding it again (once) updates its
    SQL. A dialect both updated and removed, or removed without being there, is an error, as is a
    property both set and unset, or set to two values. Changes that leave the view as it is write
    nothing.

    Example:

    \b
        viewstore alter sales.daily --set owner=finance \\
            --add-representation trino "SELECT ..."
    """
    props = [_parse_kv(s, "--set") for s in sets]
    _check_property_options(props, unsets, comment)
    if not (adds or updates or removes or sets or unsets) and comment is None:
        raise usage_error("nothing to change: give at least one change option (see --help)")
    added, removed = [d.lower() for d, _ in adds], {d.lower() for d in removes}
    both = sorted(removed & {d.lower() for d, _ in updates})
    if both:
        raise usage_error(f"--update-representation and --remove-representation of {', '.join(map(repr, both))} "
                          f"in one command: give one of them")
    store = cli.store()
    view = store.load_view(identifier)
    has = {r.dialect.lower() for r in view.representations}
    missing = sorted(removed - has)
    if missing:  # the view named as stored, as every message names it
        raise ValidationError(f"view {identifier_str(view.identifier)} has no {', '.join(map(repr, missing))} "
                              f"representation to remove")
    readded = {d for d in has & removed if added.count(d) == 1}
    changes = [ViewChange.add_representation(SQLRepresentation(d, s)) for d, s in adds if d.lower() not in readded]
    changes += [ViewChange.update_representation(d, s) for d, s in adds if d.lower() in readded]
    changes += [ViewChange.update_representation(d, s) for d, s in updates]
    changes += [ViewChange.remove_representation(d) for d in removes if d.lower() not in readded]
    if comment is not None:
        changes.append(ViewChange.update_comment(comment or None))
    changes += [ViewChange.set_property(k, v) for k, v in props]
    changes += [ViewChange.remove_property(k) for k in unsets]
    view, wrote = _committing(store, lambda: store.alter_view(identifier, *changes, expected_version=expected_version))
    _show_result(cli, view, as_json, "altered" if wrote else "nothing to change in")
    _note_dialects(d for d, _ in adds)


def _check_property_options(props: list[tuple[str, str]], unsets: Sequence[str], comment: str | None) -> None:
    """Refuse property options that contradict one another (the order of options on a command line
    says nothing, so no one of them can win): a key both set and unset, set twice to different
    values, or the comment given by --comment and by --set/--unset comment too."""
    values: dict[str, set[str]] = {}
    for key, value in props:
        values.setdefault(key, set()).add(value)
    twice = sorted(k for k, v in values.items() if len(v) > 1)
    if twice:
        raise usage_error(f"--set of {', '.join(map(repr, twice))} to different values in one command: "
                          f"give one value")
    both = sorted(set(values) & set(unsets))
    if both:
        raise usage_error(f"--set and --unset of {', '.join(map(repr, both))} in one command: give one of them")
    if comment is not None and "comment" in {*values, *unsets}:
        raise usage_error("--comment and --set/--unset comment in one command: give one of them")


def _committing(store: ViewStore, write: Callable[[], View]) -> tuple[View, bool]:
    """The view a write returns, and whether this write committed events (a no-op commits none;
    another process's commits do not count)."""
    if signals.committed.is_muted:  # a program embedding the CLI muted the signal: ask the view instead
        before = store.event_count()
        view = write()
        return view, store.event_count() != before
    wrote: list[Any] = []

    def seen(sender: Any, events: list[Any]) -> None:
        wrote.extend(events)

    with signals.committed.connected_to(seen, sender=store):
        view = write()
    return view, bool(wrote)


@main.command()
@click.argument("identifier")
@click.argument("new_identifier")
@json_option("Print the renamed view as JSON.")
@_EXPECTED
@pass_cli
def rename(cli: CliContext, identifier: str, new_identifier: str, as_json: bool, expected_version: int | None) -> None:
    """Rename a view (to any namespace).

    Example:

    \b
        viewstore rename sales.daily sales.daily_orders
    """
    store = cli.store()
    view, wrote = _committing(store, lambda: store.rename_view(identifier, new_identifier,
                                                                expected_version=expected_version))
    if as_json:
        _print_json(view_to_json(view))
    elif not wrote:
        click.echo(visible(f"{identifier_str(view.identifier)} already has that name; nothing renamed"))
    else:
        click.echo(visible(f"renamed {identifier_str(to_identifier(identifier))} to {identifier_str(view.identifier)}"))


@main.command()
@click.argument("identifier")
@click.option("--if-exists", is_flag=True, help="Succeed when there is no such view.")
@json_option('Print {"identifier": ..., "dropped": true or false} (false only with --if-exists).')
@_EXPECTED
@pass_cli
def drop(cli: CliContext, identifier: str, if_exists: bool, as_json: bool, expected_version: int | None) -> None:
    """Drop a view (its history stays).

    Example:

    \b
        viewstore drop sales.daily --if-exists --json
    """
    dropped = cli.store().drop_view(identifier, expected_version=expected_version)
    if not dropped and not if_exists:
        cli.store().load_view(identifier)  # its NoSuchViewError says what became of a view of that name
        raise NoSuchViewError(f"no such view: {identifier_str(to_identifier(identifier))}")  # (made since)
    if as_json:
        _print_json({"identifier": identifier_str(to_identifier(identifier)), "dropped": dropped})
    elif dropped:
        click.echo(visible(f"dropped {identifier_str(to_identifier(identifier))}"))
    else:
        click.echo(visible(f"no view {identifier_str(to_identifier(identifier))}; nothing dropped"))


class _NumberLast(click.Command):
    """A command whose last argument is a number that may be negative: click reads a word starting
    with '-' as an option ('No such option: -1'), so such a number, where it is no option's value,
    is moved behind a '--', where click reads arguments alone, and reaches the command as 0 or 7 do."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        valued = {opt for p in self.params if isinstance(p, click.Option) and not p.is_flag for opt in p.opts}
        numbers = [i for i in range(end) if re.fullmatch(r"-[0-9]+", args[i]) and (i == 0 or args[i - 1] not in valued)]
        if numbers:
            args = [a for i, a in enumerate(args[:end]) if i not in numbers] + ["--"] + \
                [args[i] for i in numbers] + args[end + 1:]
        return super().parse_args(ctx, args)


@main.command(cls=_NumberLast)
@click.argument("identifier")
@click.argument("version_id", type=_WholeNumber(-(2**63)))
@json_option("Print the view as JSON.")
@_EXPECTED
@pass_cli
def rollback(cli: CliContext, identifier: str, version_id: int, as_json: bool, expected_version: int | None) -> None:
    """Make an earlier version current again.

    VERSION_ID is one of the view's version ids (the version column of `viewstore show`), not a
    stream version; the rollback is an event, so it is in the history and can itself be undone.

    Example:

    \b
        viewstore rollback sales.daily 1
    """
    store = cli.store()
    view, wrote = _committing(store, lambda: store.rollback_view(identifier, version_id,
                                                                  expected_version=expected_version))
    if as_json:
        _print_json(view_to_json(view))
    elif not wrote:
        click.echo(visible(f"{identifier_str(view.identifier)} is already at version {view.current_version_id}; "
                           "nothing rolled back"))
    else:
        click.echo(visible(f"{identifier_str(view.identifier)} is at version {view.current_version_id}"))


def _since_position_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """The --since-position and --until-position options of history and audit."""
    command = click.option("--until-position", type=INT64, metavar="POSITION",
                           help="Up to this log position (inclusive).")(command)
    return click.option("--since-position", type=INT64, metavar="POSITION",
                        help="From this log position (inclusive; the pos column, an event's position in "
                             "--json).")(command)


def _check_position_range(since_position: int | None, until_position: int | None) -> None:
    if since_position is not None and until_position is not None and since_position > until_position:
        raise usage_error(f"--since-position {since_position} is after --until-position {until_position}: no "
                          "event can match (swapped?)")


@main.command(short_help="Every event of a view, oldest first (also for a dropped view).")
@click.argument("identifier")
@_since_position_option
@json_option("Print JSON.")
@pass_cli
def history(cli: CliContext, identifier: str, since_position: int | None, until_position: int | None,
            as_json: bool) -> None:
    """Every event of a view, oldest first (also for a dropped view); --since-position and
    --until-position keep those in a range of log positions.

    Examples:

    \b
        viewstore history sales.daily --json

    \b
        viewstore history sales.daily --since-position 1042
    """
    _check_position_range(since_position, until_position)
    with cli.store().stream_history(identifier, since_position=since_position, until_position=until_position,
                                    batch=JSON_BATCH) as events:
        _show_events(cli, events, as_json, f"history of {identifier_str(to_identifier(identifier))}")
    _note_other_holders(cli.store(), identifier_str(to_identifier(identifier)))


def _note_other_holders(store: ViewStore, name: str) -> None:
    """A note on stderr when views other than the one ``history`` shows had the name (a view
    re-created under the name of one dropped or renamed away): their events are not in the answer,
    and ``audit --view`` lists them; stdout, --json output and the exit code are left alone."""
    holders = {e.view_id for e in store.events(view=name, types=["view.created", "view.imported", "view.renamed"])}
    if len(holders) > 1:
        others = count(len(holders) - 1, "other view")
        click.echo(f"note: {visible(name)} was also the name of {others}; 'viewstore audit --view {visible(name)}' "
                   "lists the events of every view that had it", err=True)


@main.command()
@click.option("--actor", "who", help="Only this actor's events.")
@click.option("--view", help="Only events of views that had this identifier (across renames; an error if no "
                              "view ever had it).")
@click.option("--type", "types", multiple=True, type=click.Choice(sorted(EVENT_TYPES), case_sensitive=False),
              metavar="TYPE",
              help=f"Only events of this type (repeatable; any case): {', '.join(sorted(EVENT_TYPES))}.")
@click.option("--since", metavar="TIME",
              help="From this time (ISO 8601, UTC unless it gives its offset, or epoch ms, in the years 1 to "
                   "9999; inclusive).")
@click.option("--until", metavar="TIME",
              help="Up to this time (as --since, inclusive; a date alone: to its end; now, as without it).")
@_since_position_option
@click.option("--limit", type=INT64, help="At most this many events (the oldest; the latest with --newest-first).")
@click.option("--newest-first", is_flag=True, help="Latest events first.")
@json_option("Print JSON.")
@pass_cli
def audit(cli: CliContext, who: str | None, view: str | None, types: tuple[str, ...], since: str | None,
          until: str | None, since_position: int | None, until_position: int | None, limit: int | None,
          newest_first: bool, as_json: bool) -> None:
    """Query the event log: who changed what, when (oldest first).

    Examples:

    \b
        viewstore audit --actor alice --since 2026-11-01 --type view.replaced

    \b
        viewstore audit --newest-first --limit 20

    \b
        viewstore audit --since-position 1042 --json
    """
    if _is_now(until):
        until = None  # as without --until
    _time(until, "--until")  # checked as the other times are; the store reads a date alone as its whole day
    since_ms = _time(since, "--since")
    if since_ms is not None and until is not None and since_ms > _until_ms(until):
        raise usage_error(f"--since {since} is after --until {until}: no event can match (swapped?)")
    _check_position_range(since_position, until_position)
    with cli.store().stream_events(view=view, actor=who, since=since_ms, until=until, types=types or None,
                                   limit=limit, newest_first=newest_first, since_position=since_position,
                                   until_position=until_position, batch=JSON_BATCH) as events:
        # the count heads the table: known once its first rows are read (a query of its own past them)
        _show_events(cli, events, as_json, lambda: count(events.count(), "event"))
        found = events.count()  # (read to its end by now: no query of its own)
    if who is not None and not found:
        _note_actor(cli.store(), who)


def _note_actor(store: ViewStore, actor: str) -> None:
    """A note on stderr when no event in the log is by ``actor`` (a typo, most likely, which would
    otherwise read as an actor who changed nothing), naming the actors close to it; stdout, --json
    output and the exit code are those of an answer that holds no event."""
    actors = store.actors()
    if actor in actors:
        return
    close = difflib.get_close_matches(actor, actors, SUGGESTED_NAMES, SUGGESTION_CUTOFF)  # as a view's name's hint
    hint = f" (did you mean {_either([visible(repr(a)) for a in close])}?)" if close else ""
    click.echo(f"note: no event in the log is by actor {visible(repr(actor))}{hint}", err=True)


@main.command("query", short_help="Ask an audit question in read-only SQL.")
@click.argument("sql")
@json_option("Print JSON.")
@pass_cli
def query_(cli: CliContext, sql: str, as_json: bool) -> None:
    """Ask an audit question in SQL (read-only) over the events and projection tables.

    Tables: events (position, commit_id, view_id, stream_version, type, identifier, actor,
    occurred_at in epoch ms, payload as JSON), views, view_versions, view_version_log.

    Example:

    \b
        viewstore query "SELECT actor, count(*) AS n FROM events GROUP BY 1"
    """
    with cli.store().stream_query(sql) as result, collector_paused():  # (see _show_events)
        if as_json:
            _echo_json_list(result, _row_to_json, lambda rows: json_text(rows).encode())
            return
        rows = map(_row_to_json, result)
        # the kind of each column (numbers or text) from the rows the table is laid out on
        first = list(itertools.islice(rows, TextTable.WINDOW))
        table = TextTable(*(_query_column(name, [row[name] for row in first]) for name in result.columns))
        table.print(cli.console, (["" if v is None else str(v) for v in row.values()]
                                  for row in itertools.chain(first, rows)))


def _row_to_json(row: dict[str, Any]) -> dict[str, Any]:
    return {k: sql_value_to_json(v) for k, v in row.items()}


def _query_column(name: str, values: list[Any]) -> TableColumn:
    """A column of ``query``'s table: text wraps; a column of numbers (or NULLs) stays whole."""
    return TableColumn(name, None if all(isinstance(v, (int, float)) or v is None for v in values) else 10)


@main.command("export", short_help="Write the view's Iceberg metadata file and print its path.")
@click.argument("identifier")
@click.option("--location", type=LocalPath(file_okay=False), callback=not_empty,
              help="The view's base location (a folder; default: warehouse/<namespace>/<name> beside the store).")
@click.option("--gzip/--no-gzip", default=None,
              help="Write NNNNN-<uuid>.gz.metadata.json, or plain JSON [default: as the view's "
                   "write.metadata.compression-codec says, else plain].")
@json_option('Print {"identifier": ..., "path": ...}.')
@pass_cli
def export_(cli: CliContext, identifier: str, location: str | None, gzip: bool | None, as_json: bool) -> None:
    """Write the view's Iceberg metadata file and print its path (a view unchanged since the
    latest file there writes none: that file's path is printed). The path is absolute, from the
    location as the file records it (a relative --location is read from the current folder,
    symbolic links resolved).

    Example:

    \b
        viewstore export sales.daily --location /data/warehouse/sales/daily
    """
    # the location in the file is resolved (iceberg._location_uri): the path printed starts with it
    store = cli.store()
    with cli.progress("exporting versions", percent=True) as progress:
        path = store.export_iceberg(identifier, location, gzip=gzip, progress=progress).resolve()
    if as_json:
        _print_json({"identifier": identifier_str(to_identifier(identifier)), "path": str(path)})
    else:
        click.echo(visible(str(path)))  # the folder is named after the view: escaped as the name is


@main.command("import", short_help="Record a view from an Iceberg metadata file, with its history.")
@click.argument("path", type=LocalPath(), callback=not_empty)
@click.argument("identifier")
@click.option("--security-mode", type=SECURITY_MODES,
              default="DEFINER", show_default=True,
              help="How the view runs (an Iceberg file does not say; export leaves it out).")
@json_option("Print the imported view as JSON.")
@pass_cli
def import_(cli: CliContext, path: str, identifier: str, security_mode: str, as_json: bool) -> None:
    """Record a view from an Iceberg metadata file (or a view location's latest one), with its history.

    Example:

    \b
        viewstore import wh/sales/daily/metadata/00003-x.metadata.json sales.daily
    """
    from .iceberg import ImportedView, read_metadata

    to_identifier(identifier)
    # Into a store there, import_iceberg reads the file; where none is yet, it is read first, so
    # that a file that is not view metadata starts none, and import_iceberg takes what was read,
    # handed over (popped, not kept here), so that it lets go of the file's versions before it writes.
    store = None if cli._blank or holds_nothing(cli.db) is not None else cli.store(create=True)
    # the file's versions, and the View's with --json, stay alive until imported or printed (see _show_events)
    with collector_paused():
        metadata: list[str | ImportedView] = [path if store is not None else read_metadata(path)]
        if store is None:
            store = cli.store(create=True)
        with cli.progress("importing history", percent=True) as progress:
            view = store.import_iceberg(metadata.pop(), identifier, security_mode=security_mode, progress=progress)
        if as_json:
            _print_json(view_to_json(view))
            return
    # the count without building the versions (a second of a 10,000-version history)
    click.echo(visible(f"imported {identifier_str(view.identifier)} ({count(len(view.version_ids), 'version')}, "
                       f"{count(view.stream_version, 'event')})"))


@main.command(short_help="Replay the event log and repair the projections.")
@json_option("Print the rows repaired per table as JSON.")
@pass_cli
def rebuild(cli: CliContext, as_json: bool) -> None:
    """Replay the whole event log and repair the projections that differ from it.

    Example:

    \b
        viewstore rebuild
    """
    store = cli.store()
    with cli.progress("replaying events") as progress:
        repaired = store.rebuild(progress=progress)
    events = store.event_count()
    if as_json:
        _print_json({"events": events, "repaired": repaired})
    elif not any(repaired.values()):
        click.echo(f"rebuilt projections from {count(events, 'event')}: they matched the log")
    else:
        fixed = ", ".join(f"{table} {n}" for table, n in repaired.items() if n)
        total = sum(repaired.values())
        click.echo(f"rebuilt projections from {count(events, 'event')}: repaired {count(total, 'row')} ({fixed})")


def run() -> None:  # pragma: no cover - the console script
    main(prog_name="viewstore")
