"""The examples of the README and docs/spark-catalog.md run as written, every CLI command is documented,
and what the docs say of the code (layers, module lists, names, options, figures, errors, the tests'
layout) is checked against it."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from viewstore.cli import main
from viewstore.errors import INSTALL_SPARK

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


@pytest.mark.spark
def test_readme_spark_examples_run(spark, tmp_path, monkeypatch):
    """The ```python spark blocks run in order in one driver, on the test suite's session."""
    monkeypatch.chdir(tmp_path)
    examples = blocks("python spark")
    assert len(examples) == 2
    for code in examples:
        exec(compile(code, "README.md", "exec"), {"spark": spark})


@pytest.mark.spark
def test_spark_catalog_md_example_runs(spark, tmp_path, monkeypatch):
    """docs/spark-catalog.md's example runs as written, on the test suite's session (its getOrCreate
    answers with it); its catalog is detached and its database dropped afterwards."""
    from viewstore.spark import detach

    monkeypatch.chdir(tmp_path)
    (example,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "spark-catalog.md").read_text(), re.S)
    try:
        exec(compile(example, "spark-catalog.md", "exec"), {})
    finally:
        detach(spark, "vs")
        spark.sql("DROP DATABASE IF EXISTS shop CASCADE")


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_examples_run(tmp_path, monkeypatch, index):
    monkeypatch.chdir(tmp_path)
    code = blocks("python")[index]
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _shell_env():
    """The environment of a new user's shell: no VIEWSTORE_ variable or COLUMNS, the console script
    on the PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIEWSTORE_") and k != "COLUMNS"}
    exe = shutil.which("viewstore", path=str(Path(sys.executable).parent))
    assert exe, "the viewstore console script must be installed beside the interpreter"
    env["PATH"] = f"{Path(exe).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _check_show_json(out, cwd):
    view = json.loads(out)
    assert view["identifier"] == "sales.big_orders" and view["current_version_id"] == 2  # rolled back to 2
    assert [r["dialect"] for r in view["representations"]] == ["spark", "trino"]
    assert view["properties"] == {"comment": "Big orders", "owner": "finance"}
    assert [c["type"] for c in view["columns"]] == ["long", "decimal(18,2)"]
    assert view["columns"][1]["comment"] == "in EUR"


def _check_history(out, cwd):
    lines = out.splitlines()
    assert lines[0] == "history of sales.big_orders"
    row = r"│ \d+ +│ [-\d :.]+ │ bob +│ sales\.big_orders │ \d │ (view\.\w+) +│"  # a row a line, names whole
    types = [m[1] for m in re.finditer(row, out)]
    assert types == ["view.created", "view.properties_set", "view.representation_added", "view.replaced",
                     "view.rolled_back"], out


def _check_at_event(out, cwd):
    view = json.loads(out)
    assert view["current_version_id"] == 1 and view["stream_version"] == 1 and len(view["representations"]) == 1


def _check_diff(out, cwd):
    lines = out.splitlines()
    assert lines[0].startswith("before: sales.big_orders  version 1  last changed by bob at "), out
    assert lines[1].startswith("after:  sales.big_orders  version 2  last changed by bob at "), out
    assert re.search(r"^│ added +│ owner +│ +│ finance +│$", out, re.M), out  # the property, apart from the comment
    assert lines[lines.index("representation trino: added"):][-1] == \
        "+SELECT id, amount FROM orders WHERE amount > 100"
    assert "spark" not in out and "comment" not in out  # the same SQL and comment as then


def _check_audit(out, cwd):
    (event,) = json.loads(out)
    assert event["type"] == "view.rolled_back" and event["actor"] == "bob" and event["view"] == "sales.big_orders"
    assert event["payload"]["current_version_id"] == 2


def _check_export(out, cwd):
    (path,) = out.splitlines()
    assert re.fullmatch(r".*exported/big_orders/metadata/00000-[0-9a-f-]{36}\.metadata\.json", path), path
    assert json.loads((cwd / path).read_text())["current-version-id"] == 2


#: what each command of the README's session prints that the README does not show
SESSION_CHECKS = {
    "viewstore show sales.big_orders --json": _check_show_json,
    "viewstore history sales.big_orders": _check_history,
    "viewstore show sales.big_orders --at-event 1 --json": _check_at_event,
    "viewstore diff sales.big_orders --from-event 1": _check_diff,
    "viewstore audit --actor bob --type view.rolled_back --json": _check_audit,
    "viewstore export sales.big_orders --location exported/big_orders": _check_export,
}


def test_readme_cli_session_runs_as_written(tmp_path):
    """Each command of the session, run in a new user's shell, prints what the README shows; one
    whose output the README leaves out is checked here (SESSION_CHECKS), so none goes unchecked."""
    (session,) = blocks("console")
    env = _shell_env()
    lines = session.strip().splitlines()
    script, expected = [], []
    for line in lines:
        if line.startswith("$ "):
            script.append(line[2:])
            expected.append([])
        else:
            expected[-1].append(line)
    exports = []
    checked = set()
    for command, wanted in zip(script, expected):
        if command.startswith("export "):
            exports.append(command)
            continue
        full = "; ".join(exports + [command])
        result = subprocess.run(["bash", "-c", full], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0 and result.stderr == "", f"{command}\n{result.stderr}"
        if wanted:
            assert result.stdout.strip().splitlines() == wanted, f"{command}\n{result.stdout}"
        else:
            assert command in SESSION_CHECKS, f"the README shows no output for {command!r}: check it here"
            SESSION_CHECKS[command](result.stdout, tmp_path)
            checked.add(command)
    assert checked == set(SESSION_CHECKS)  # no check is left for a command the README no longer has


def test_readme_json_errors_are_as_written(tmp_path):
    """The --json failures the README shows: stdout empty, the line shown on stderr, its exit code."""
    (block,) = blocks("console json-errors")
    lines = block.strip().splitlines()
    env = _shell_env()
    subprocess.run(["viewstore", "create", "sales.v", "--sql", "SELECT 1 AS x"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    assert len(lines) == 4
    for command, shown in zip(lines[::2], lines[1::2]):
        result = subprocess.run(["bash", "-c", command[2:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.stdout == "" and result.stderr == shown + "\n", command
        assert result.returncode == json.loads(shown)["error"]["exit_code"]


def test_readme_hms_commands_run_as_written(tmp_path):
    """The hms block's commands, on files made as the README describes them: a metastore dump of
    several records (a table among them), and a file of one record."""
    from viewstore import formats
    from viewstore.formats import ViewDefinition
    from viewstore.model import Column

    (block,) = [b for b in blocks("bash") if "viewstore hms import" in b]

    def record(name, sql, engine):
        return formats.encode(ViewDefinition(dialect=engine, sql=sql, columns=(Column("n", "bigint"),),
                                             owner="tess", database="sales", name=name), engine)

    table = {"dbName": "sales", "tableName": "orders", "tableType": "MANAGED_TABLE", "parameters": {}}
    (tmp_path / "metastore_views.json").write_text(json.dumps(
        [table, record("events", "SELECT count(*) AS n FROM sales.orders", "spark")]))
    (tmp_path / "orders_by_day.json").write_text(json.dumps(
        record("orders_by_day", "SELECT count(*) AS n FROM sales.orders GROUP BY day", "spark")))
    env = {**_shell_env(), "VIEWSTORE_DB": "hms-cli.db", "VIEWSTORE_ACTOR": "tess"}
    result = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "imported 1, skipped 1, failed 0" in result.stdout, result.stdout
    assert "imported sales.orders_by_day from a spark record (1 version, 1 event)" in result.stdout
    spark_record = json.loads((tmp_path / "orders_by_day.spark.json").read_text())
    assert spark_record["tableName"] == "orders_by_day" and spark_record["owner"] == "tess"
    iceberg_record = json.loads(result.stdout[result.stdout.rindex("\n{") + 1:])
    location = iceberg_record["parameters"]["metadata_location"]
    assert location.startswith("file:") and location.endswith(".metadata.json")



def test_the_readme_gives_the_bounds_of_a_missing_names_hint_as_the_library_has_them():
    """The README's numbers of the hint of a name no view had are the constants that bound it: the
    names compared around the typed one, and the letters sought a position and in all."""
    from viewstore import catalog

    text = " ".join(README.split())
    assert f"the {2 * catalog.SUGGESTION_WINDOW:,} names around the typed one" in text
    assert f"(up to {catalog.SUGGESTION_LETTERS} a position, {catalog.SUGGESTION_SEEKS} in all)" in text

def test_readme_has_the_ci_command():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in README
def _commands(group, prefix=()):
    import click

    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


def test_every_command_has_help_with_an_example():
    names = []
    for path, command in _commands(main):
        names.append(" ".join(path))
        assert command.help, f"viewstore {' '.join(path)} has no help"
        assert "Example" in command.help, f"viewstore {' '.join(path)} has no example in its help"
    for core in ["create", "replace", "show", "list", "alter", "rename", "drop", "rollback", "history", "audit",
                 "export", "import", "rebuild"]:
        assert core in names


def test_every_help_fits_80_columns_with_its_examples_as_written():
    """Examples are printed line for line (click's \\b), not re-wrapped into the middle of their SQL."""
    from click.testing import CliRunner

    runner = CliRunner()
    for path, command in _commands(main):
        out = runner.invoke(main, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80).output
        assert all(len(line) <= 80 for line in out.splitlines()), (path, max(out.splitlines(), key=len))
        examples = out.split("Example", 1)[1].split("Options:", 1)[0]
        for line in examples.splitlines():
            if line.strip().startswith("viewstore"):
                assert line.startswith("      viewstore"), (path, line)
        assert "\\\n" not in examples or all(
            nxt.startswith("          ") for prev, nxt in zip(examples.splitlines(), examples.splitlines()[1:])
            if prev.endswith("\\")), path


def test_every_help_says_example_or_examples_as_it_has_one_or_several():
    """show, history, diff and audit said "Examples:" over several; hms, spark and their commands
    said "Example:" over two or four."""
    from click.testing import CliRunner

    for path, command in _commands(main):
        out = CliRunner().invoke(main, [*path, "--help"], terminal_width=80).output
        heading, rest = re.search(r"^  (Examples?):\n(.*?)\nOptions:", out, re.S | re.M).groups()
        count = sum(line.startswith("      viewstore") for line in rest.splitlines())
        assert heading == ("Example" if count == 1 else "Examples"), (path, heading, count)


def test_every_group_lists_its_commands_whole_at_80_columns():
    """`viewstore --help` listed export as 'Write the view's Iceberg metadata file and print its path (a...':
    its first sentence ran on, and click cuts a listed help at the width left."""
    import click
    from click.testing import CliRunner

    for path, command in [((), main), *((p, c) for p, c in _commands(main) if isinstance(c, click.Group))]:
        out = CliRunner().invoke(main, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80).output
        listed = out.split("\nCommands:\n", 1)[1].splitlines()
        assert listed and not [line for line in listed if line.endswith("...")], (path, listed)


def test_the_main_help_lists_optional_commands_as_they_describe_themselves_without_importing_them():
    """`viewstore --help` names spark, demo and hms from a table in cli.py (importing them would
    import pyspark); each entry must say what the command itself says."""
    from viewstore.cli import _LAZY_COMMANDS

    script = ("import sys; from click.testing import CliRunner; from viewstore.cli import main; "
              "out = CliRunner().invoke(main, ['--help'], terminal_width=200).output; "
              "print(out); print('pyspark' in sys.modules, 'viewstore.formats.cli' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.rstrip().endswith("False False")
    listed = dict(re.findall(r"^  (\w+) +(.+)$", out.split("\nCommands:\n", 1)[1], re.M))
    for name, (_, _, short_help) in _LAZY_COMMANDS.items():
        command = main.get_command(None, name)
        assert command.short_help == short_help, name
        assert listed[name] == short_help
    assert sorted(listed) == sorted(main.list_commands(None))  # every command, none twice


def test_without_pyspark_the_main_help_and_the_spark_commands_say_it_is_missing():
    hide = ("import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'pyspark': raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, Hide())\n"
            "from click.testing import CliRunner; from viewstore.cli import main\n"
            "print(CliRunner().invoke(main, ['--help'], terminal_width=200).output)\n"
            "result = CliRunner().invoke(main, ['spark', 'check'])\n"
            "print(result.exit_code, result.output)\n"
            "result = CliRunner().invoke(main, ['spark', 'check', '--json'])\n"
            "print('json', result.exit_code, repr(result.stdout), result.stderr)\n"
            "for args in (['--json', 'spark', 'check'], ['--json', 'demo']):\n"
            "    result = CliRunner().invoke(main, args)\n"
            "    print('before', result.exit_code, repr(result.stdout), result.stderr)\n")
    out = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, check=True).stdout
    # with --json, as every command: one JSON object on stderr, nothing on stdout
    error = json.loads(out.split("json 1 '' ", 1)[1].splitlines()[0])["error"]
    assert error["exit_code"] == 1 and error["message"].startswith("'viewstore spark' needs an optional dependency")
    assert error["message"].endswith(f"dependency: pyspark; {INSTALL_SPARK}")
    # --json before the command asks for it too; demo, which prints no JSON, says first what it lacks
    before = [json.loads(line.split("before 1 '' ", 1)[1])["error"] for line in out.splitlines()
              if line.startswith("before ")]
    assert [e["message"].split(":")[0] for e in before] == ["'viewstore spark' needs an optional dependency",
                                                           "'viewstore demo' needs an optional dependency"], out
    assert re.search(r"^  spark +\(unavailable: .*pyspark", out, re.M), out
    assert re.search(r"^  demo +\(unavailable: .*pyspark", out, re.M), out
    assert re.search(r"^  hms +Import and export", out, re.M), out
    assert "1 error: 'viewstore spark' needs an optional dependency" in out


def test_the_spark_install_hint_gives_the_readme_install_and_the_package_index_one():
    """Every message that says to install the spark extra says it with INSTALL_SPARK: the README installs
    from a checkout, and a package index may not have viewstore."""
    readme_install = re.search(r"^pip install (-e '\.\[spark\]')", README, re.M)
    assert readme_install is not None and f"pip install {readme_install.group(1)} in a checkout" in INSTALL_SPARK
    assert "pip install 'viewstore[spark]'" in INSTALL_SPARK
    # no message spells the hint on its own (a copy that would drift from the README)
    for path in sorted((ROOT / "viewstore").rglob("*.py")):
        assert "pip install" not in path.read_text() or path.name == "errors.py", path


def test_viewstore_spark_imports_without_pyspark_and_each_name_says_what_it_needs():
    """As viewstore/spark/__init__.py says: a missing pyspark is a NotInstalledError (an ImportError too)
    naming the call, on first use; a missing package the library itself needs stays Python's own error."""
    script = ("import sys\n"
              "class Hide:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name.split('.')[0] in sys.argv[1:]:\n"
              "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
              "sys.meta_path.insert(0, Hide())\n"
              "import viewstore.spark\n"
              "for name in ('register_views', 'attach', 'run_demo', 'no_such_name'):\n"
              "    try:\n"
              "        getattr(viewstore.spark, name)\n"
              "        print(name, 'ok')\n"
              "    except Exception as e:\n"
              "        print(name, type(e).__name__, isinstance(e, ImportError), e)\n")

    def run(*hidden):
        return subprocess.run([sys.executable, "-c", script, *hidden], capture_output=True, text=True,
                              check=True).stdout.splitlines()

    needs = f"needs pyspark and pyarrow (No module named 'pyspark'); {INSTALL_SPARK}"
    unknown = "no_such_name AttributeError False module 'viewstore.spark' has no attribute 'no_such_name'"
    assert run("pyspark") == [f"{name} NotInstalledError True viewstore.spark.{name} {needs}"
                              for name in ("register_views", "attach", "run_demo")] + [unknown]
    assert run("rich") == ["register_views ok", "attach ok",
                           "run_demo ModuleNotFoundError True No module named 'rich'", unknown]


def test_every_option_says_what_it_does():
    """`--help` of every command explains each option ('Repeatable.' alone, or nothing, does not)."""
    import click

    for path, command in _commands(main):
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                text = (param.help or "").strip()
                assert len(text.split()) >= 2, (" ".join(path), param.opts, text)



def _options(command):
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help"}


def test_every_option_the_docs_name_is_one_the_command_has():
    """A `--flag` in a doc's inline code is an option of the command the span names (`viewstore spark
    register [--prune]`: register's or the main group's), else of some command or of `python -m
    viewstore.spark.build_jar`, or, in benchmarks/README.md, of `python -m benchmarks`: a renamed or
    removed option leaves no name of it."""
    import click

    def argparse_options(path):
        return set(re.findall(r'add_argument\("(--[\w-]+)"', path.read_text()))

    every = set().union(*(_options(command) for _, command in _commands(main)), _options(main),
                        argparse_options(ROOT / "viewstore" / "spark" / "build_jar.py"))
    benchmarks = argparse_options(ROOT / "benchmarks" / "run.py")
    docs = {"README.md": README, "ARCHITECTURE.md": ARCHITECTURE,
            "spark-catalog.md": (ROOT / "docs" / "spark-catalog.md").read_text(),
            "benchmarks/README.md": (ROOT / "benchmarks" / "README.md").read_text()}
    checked = named = 0
    for doc, text in docs.items():
        prose = re.sub(r"``.*?``", "", re.sub(r"```.*?```", "", text, flags=re.S), flags=re.S)  # blocks, ``a `b` c``
        named += len(re.findall(r"(?<![\w-])--[a-z]", prose))
        for span in re.findall(r"`([^`]+)`", prose):
            words = span.split()
            allowed = benchmarks if doc == "benchmarks/README.md" else every
            if words[:1] == ["viewstore"]:
                command, allowed = main, _options(main)
                for word in words[1:]:
                    sub = command.get_command(click.Context(command),
                                              word) if isinstance(command, click.Group) else None
                    if sub is not None:
                        command = sub
                        allowed = allowed | _options(sub)
            for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", span):
                assert flag in allowed, f"{doc} names {flag} in `{' '.join(words)}`, which that command does not take"
                checked += 1
    assert checked == named > 0  # every option the prose names is in inline code, so it was checked


# -- docs/ARCHITECTURE.md's claims that the code could silently leave behind ---------------------

ARCHITECTURE = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
PACKAGE = ROOT / "viewstore"
#: the core, top to bottom: each module imports only from those above it
CORE = ("errors", "types", "model", "events", "log", "projections", "catalog")
#: the codecs: values only (hms.py also the other two), never the store
CODECS = {"iceberg": set(CORE[:4]), "hms": set(CORE[:4]) | {"iceberg", "formats"}, "formats": set(CORE[:4])}
FRONT_ENDS = ("cli", "tables", "formats.cli", "spark")


def _module_name(path):
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _viewstore_imports(path):
    """The viewstore modules a file imports, anywhere in it (a lazy import is an import too)."""
    import ast

    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{target}.{a.name}".strip(".") if not node.module else target for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("viewstore"):
            found.add(node.module.removeprefix("viewstore").strip("."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("viewstore").strip(".") for a in node.names if a.name.startswith("viewstore")}
    return {t for t in found if t and t != name}


def _layer(module):
    """The name a module goes by in ARCHITECTURE.md's layering: a core module, a codec or a front end."""
    if module == "formats.cli" or module.startswith("spark"):
        return "formats.cli" if module == "formats.cli" else "spark"
    return module.split(".")[0]


def test_imports_flow_one_way_as_the_architecture_says():
    # the doc counted tables.py among the front ends that import the library; it imports none of it
    said = ARCHITECTURE.split("- **The front ends** (", 1)[1].split("`cli.py` loads", 1)[0]
    front, leaves = said.split(") import the library;", 1)
    assert set(re.findall(r"`([\w/]+?)(?:\.py|/)`", front)) == {"cli", "formats/cli", "spark"}
    assert set(re.findall(r"`(\w+)\.py`", leaves)) == {"tables", "signals", "schema"}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        layer = _layer(module)
        imported = {_layer(m) for m in _viewstore_imports(path)} - {layer}
        if layer in CORE:
            allowed = set(CORE[:CORE.index(layer)])
            if layer == "catalog":
                allowed |= {"signals", *CODECS}
        elif layer in CODECS:
            allowed = CODECS[layer]
        elif layer in ("signals", "schema", "tables"):
            allowed = set()
        else:  # a front end, or the package's own __init__ and __main__
            assert layer in FRONT_ENDS + ("", "__main__"), f"{module} is not in ARCHITECTURE.md's layers"
            continue
        assert imported <= allowed, (f"{module} imports {sorted(imported - allowed)}, "
                                     "which ARCHITECTURE.md's layers forbid")
    library = set(CORE) | set(CODECS) | {"signals", "schema"}
    for path in sorted(PACKAGE.rglob("*.py")):
        if _layer(_module_name(path)) in library:
            assert not {_layer(m) for m in _viewstore_imports(path)} & set(FRONT_ENDS), path



def test_the_modules_of_spark_import_one_another_as_architecture_md_says():
    """ARCHITECTURE.md's table of spark/ names every module of the package and, for each, the modules
    of spark/ it imports (anywhere in it), no more and no fewer; those imports never go round in a
    circle, and session.py, the plumbing, imports none of the modules of the calls."""
    rows = dict(re.findall(r"^\| `spark/(\w+)\.py` \| ([^|]*) \|", ARCHITECTURE, re.M))
    modules = {p.stem for p in (PACKAGE / "spark").glob("*.py")} - {"__init__"}
    assert set(rows) == modules, sorted(set(rows) ^ modules)
    imports = {}
    for module in modules:
        found = _viewstore_imports(PACKAGE / "spark" / f"{module}.py")
        imports[module] = {m.split(".", 1)[1] for m in found if m.startswith("spark.")}
        assert imports[module] == set(re.findall(r"`(\w+)`", rows[module])), (module, sorted(imports[module]))
    calls = {"register", "ddl", "audit", "drift"}
    assert not imports["session"] & calls and all("session" in imports[m] for m in calls)
    done: set[str] = set()
    while len(done) < len(modules):  # take the modules whose imports are all taken: a cycle stops this
        ready = {m for m in modules - done if imports[m] <= done}
        assert ready, f"the imports of {sorted(modules - done)} go round in a circle"
        done |= ready


def _imported_top_modules(path):
    """The top-level modules a file imports, anywhere in it (absolute imports only)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_sql_over_the_store_lives_only_in_the_storage_modules():
    """ARCHITECTURE.md: SQL over the store's file only in log.py and projections.py (whose tables
    schema.py declares with SQLModel); nothing else reaches SQLite or SQLAlchemy."""
    assert "SQL over the store's file lives only in `log.py` and `projections.py`" in ARCHITECTURE
    sqlite = {_module_name(p) for p in PACKAGE.rglob("*.py") if "sqlite3" in _imported_top_modules(p)}
    assert sqlite == {"log", "projections"}
    orm = {_module_name(p) for p in PACKAGE.rglob("*.py") if {"sqlalchemy", "sqlmodel"} & _imported_top_modules(p)}
    assert orm == {"schema"}


def test_the_module_table_names_every_module():
    table = set(re.findall(r"^\| `([\w/.]+)` \|", ARCHITECTURE, re.M))
    modules = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert modules <= table, sorted(modules - table)
    assert {"formats/", "formats/cli.py", "spark/"} <= table


def _quoted(doc, pattern):
    """Every figure the pattern's group finds in a doc, as a number (thousands separators dropped)."""
    found = [float(m.replace(",", "")) for m in re.findall(pattern, doc)]
    assert found, f"the docs no longer say {pattern!r}: update this check"
    return set(found)


def test_the_figures_the_docs_quote_are_the_codes():
    """A constant's value quoted in a doc changes when the constant does, or this fails."""
    from viewstore import catalog, log, projections

    docs = {"README": README, "ARCHITECTURE": ARCHITECTURE,
            "spark-catalog": (ROOT / "docs" / "spark-catalog.md").read_text(),
            "register.py": (PACKAGE / "spark" / "register.py").read_text(),
            "ddl.py": (PACKAGE / "spark" / "ddl.py").read_text()}
    wait_s = 10.0  # viewstore.spark.catalog_plugin.TRANSACTION_WAIT_S, read without importing pyspark
    source = (PACKAGE / "spark" / "catalog_plugin.py").read_text()
    assert f"\nTRANSACTION_WAIT_S = {wait_s}\n" in source
    turn_s = 120.0  # viewstore.spark.session.DDL_TURN_WAIT_S
    assert f"\nDDL_TURN_WAIT_S = {turn_s}\n" in (PACKAGE / "spark" / "session.py").read_text()
    supported = re.search(r'\nSUPPORTED_SPARK = "([\d.]+)"\n', source)[1]
    checks = [
        ("ARCHITECTURE", r"`CATCH_UP_EVENTS` \((\d+)\)", catalog.CATCH_UP_EVENTS),
        ("ARCHITECTURE", r"every (\d+)\s+events", projections.SNAPSHOT_EVERY),
        ("ARCHITECTURE", r"keeps up to (\d+) parsed", projections.PARSED_SNAPSHOTS),
        ("ARCHITECTURE", r"at most ([\d,]+) versions and log entries", projections.PARSED_SNAPSHOT_ENTRIES),
        ("ARCHITECTURE", r"three times the\s+(\d+) s busy timeout", log.BUSY_TIMEOUT_MS / 1000),
        ("ARCHITECTURE", r"about (\d+) s \(three times", 3 * log.BUSY_TIMEOUT_MS / 1000),
        ("ARCHITECTURE", r"slice of (\d+) ms", log.LOCK_SLICE_MS),
        ("README", r"slices of (\d+) ms", log.LOCK_SLICE_MS),
        ("README", r"lock \(up to (\d+) s\)", 3 * log.BUSY_TIMEOUT_MS / 1000),
        ("README", r"waits for it up to (\d+) s", 3 * log.BUSY_TIMEOUT_MS / 1000),
        ("ARCHITECTURE", r"schema version stays (\d+)", log.SCHEMA_VERSION),
        ("ARCHITECTURE", r"at most one in (\d+) of the log's events", log.NAMED_SHARE),
        ("ARCHITECTURE", r"(\d+) s at\s+most", wait_s),
        ("README", r"(\d+) s at\s+most", wait_s),
        ("README", r"held it for (\d+) s", wait_s),
        ("README", r"up to (\d+) s \(`DDL_TURN_WAIT_S`\)", turn_s),
        ("ARCHITECTURE", r"up to (\d+) s \(`DDL_TURN_WAIT_S`\)", turn_s),
        ("register.py", r"(\d+) s\b", turn_s),  # the docstring of register_views
        ("ddl.py", r"(\d+) s\b", turn_s),  # the docstring of sql()
        ("README", r"Spark (\d\.\d+)", float(supported)),
        ("spark-catalog", r"Spark (\d\.\d+)", float(supported)),
    ]
    for doc, pattern, value in checks:
        assert _quoted(docs[doc], pattern) == {value}, (doc, pattern, value)


def test_the_events_table_is_described_as_the_log_makes_it():
    from viewstore import log

    described = ARCHITECTURE.split("- `events`:", 1)[1].split("\n- Projections:", 1)[0]
    for column in log.EVENT_COLUMNS:
        assert f"`{column}`" in described, column
    indexes = set(re.findall(r"CREATE (?:UNIQUE )?INDEX IF NOT EXISTS (\w+) ON events", log._LOG_DDL))
    assert set(re.findall(r"`(events_\w+) \(", described)) == indexes
    tables = set(re.findall(r"`(\w+)`", ARCHITECTURE.split("- Projections:", 1)[1].split("\n\n", 1)[0]))
    from viewstore.projections import PROJECTION_TABLES
    assert set(PROJECTION_TABLES) <= tables


def test_the_signals_architecture_md_lists_are_the_modules():
    from viewstore import signals

    row = next(line for line in ARCHITECTURE.splitlines() if line.startswith("| `signals.py`"))
    assert re.findall(r"`(\w+)`", row.split("blinker signals:", 1)[1]) == signals.__all__, row


def test_the_event_types_the_docs_name_are_the_logs():
    """`view.comment_updated`, "view.rolled_back", ... in the docs are types of events.Event (a View's
    attribute, `view.versions`, aside)."""
    import typing

    from viewstore import events
    from viewstore.model import View

    types = {typing.get_args(cls.model_fields["type"].annotation)[0] for cls in events.Event.__subclasses__()
             for cls in (cls, *cls.__subclasses__())}
    texts = [README, ARCHITECTURE, *(p.read_text() for p in (ROOT / "docs").glob("*.md"))]
    named = {name for text in texts for name in re.findall(r"[`\"'](view\.[a-z_]+)[`\"']", text)
             if name.split(".", 1)[1] not in {*View.model_fields, *dir(View)}}
    assert len(named) > 5 and named <= types, sorted(named - types)


def test_benchmarks_readme_names_every_benchmark_once_in_its_list_and_its_table():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.run import registry
    finally:
        sys.path.remove(str(ROOT))
    text = (ROOT / "benchmarks" / "README.md").read_text()
    listed = text.split("`--only NAME ...`", 1)[1].split("\n- ", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == set(registry())
    rows = re.findall(r"^\| `(\w+)` \|", text, re.M)
    assert sorted(rows) == sorted(registry())


def test_benchmarks_readme_gives_the_minutes_results_md_took():
    """The README quoted the run behind RESULTS.md at 6 minutes after a later run, the one RESULTS.md
    holds, took 8: the figure is the one RESULTS.md's first line gives."""
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    took = re.search(r"^A full run of .* took (\d+) minutes\.$", results, re.M)
    assert took, "RESULTS.md no longer says how long its run took: update this check"
    assert _quoted(readme, r"\((\d+) for the run behind RESULTS\.md\)") == {float(took[1])}


def test_benchmarks_help_names_the_options_as_its_readme_does():
    """`python -m benchmarks --help` said what it does as the usage line again (in reST quotes,
    without --json) and spelled the paths' metavars otherwise than the README's option list."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.run import main as benchmarks_main
    finally:
        sys.path.remove(str(ROOT))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        benchmarks_main(["--help"])
    text = " ".join(out.getvalue().split())
    assert "``" not in text and "Runs the benchmarks" in text
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    listed = re.findall(r"^- `(--[a-z-]+(?: [A-Z]+)?)", readme, re.M)
    assert len(listed) == 4 and "--json" in readme
    for option in [*listed, "--json PATH"]:
        assert f" {option} " in text or f"[{option}]" in text, option


def test_the_names_architecture_md_gives_in_code_exist():
    """`log.savepoint`, `Projections.replace`, `session._work_session`, `ViewStore.in_transaction`...:
    a function renamed or removed leaves no name of it in the doc."""
    import importlib

    from viewstore.catalog import ViewStore
    from viewstore.log import EventLog
    from viewstore.model import View
    from viewstore.projections import Projections

    from viewstore.cli import CliContext

    owners = {"ViewStore": ViewStore, "View": View, "Projections": Projections, "EventLog": EventLog,
              "CliContext": CliContext}
    for package in ("viewstore", "viewstore.spark"):
        for path in (PACKAGE / package.removeprefix("viewstore").strip(".")).glob("*.py"):
            if not path.name.startswith("_"):
                owners.setdefault(path.stem, f"{package}.{path.stem}")
    checked = 0
    for name in re.findall(r"`((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)(?:\(\))?`", ARCHITECTURE):
        head, *rest = name.split(".")
        if head not in owners or rest[0] == "py":  # a file name, not a name in code
            continue
        obj = owners[head]
        obj = importlib.import_module(obj) if isinstance(obj, str) else obj
        for part in rest:
            assert hasattr(obj, part), f"ARCHITECTURE.md names `{name}`, which the code no longer has"
            obj = getattr(obj, part)
        checked += 1
    # every inline code span that starts with such a name (a file's name aside) was one checked: a call
    # written out with its arguments, `log.transaction(conn)`, would not be
    spans = [span for span in re.findall(r"`([^`]+)`", ARCHITECTURE) if re.match(r"[A-Za-z_]\w*\.[A-Za-z_]", span)
             and span.split(".")[0] in owners and not re.match(r"\w+\.py\b", span)]
    assert checked == len(spans) > 0


def test_the_dotted_viewstore_names_of_the_docs_exist():
    """`viewstore.spark.catalog_plugin.session_conf`, `viewstore.errors.ViewStoreError`, ... in any
    doc name a module or an attribute of one (`viewstore.db` is a file, `viewstore.store` a property)."""
    import importlib

    texts = [README, ARCHITECTURE, *(p.read_text() for p in (ROOT / "docs").glob("*.md")),
             (ROOT / "benchmarks" / "README.md").read_text()]
    names = {m for text in texts for m in re.findall(r"viewstore(?:\.[A-Za-z_]\w*)+", text)}
    # the same names as the words of the docs that start with "viewstore.": none is missed
    assert names == {word.rstrip(".") for text in texts for word in re.split(r"[^\w.]+", text)
                     if word.startswith("viewstore.")}
    names -= {"viewstore.db", "viewstore.store", "viewstore.fingerprint"}
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for part in parts[cut:]:
                assert hasattr(obj, part), f"the docs name {name}, which the code no longer has"
                obj = getattr(obj, part)
            break


def test_every_public_call_of_the_api_has_a_docstring():
    import inspect

    from viewstore import ViewChange, ViewStore

    missing = []
    for cls in (ViewStore, ViewChange):
        for name in dir(cls):
            if not name.startswith("_"):
                attr = inspect.getattr_static(cls, name)
                fn = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
                if callable(fn) and not inspect.getdoc(fn):
                    missing.append(f"{cls.__name__}.{name}")
    import viewstore.spark as vs

    missing += [f"viewstore.spark.{name}" for name in vs.__all__ if not inspect.getdoc(getattr(vs, name))]
    assert not missing


def test_the_readme_counts_every_option_that_must_not_be_empty_among_the_usage_errors():
    from viewstore.cli import not_empty

    usage = README.split("- `2`: the command line cannot be right", 1)[1].split("\n\n", 1)[0]
    for path, command in [((), main), *_commands(main)]:
        for param in command.params:
            if param.callback is not_empty and param.param_type_name == "option":
                assert f"`{param.opts[0]}`" in usage, (path, param.opts[0])


def test_events_dataframe_names_its_columns_in_order():
    from viewstore.spark import audit

    doc = audit.events_dataframe.__doc__.split("Columns:", 1)[1].split("The filters", 1)[0]
    named = re.findall(r"``(\w+)``", doc)
    assert named[:len(audit._EVENT_FIELDS)] == [name for name, _, _ in audit._EVENT_FIELDS]


def test_the_architecture_gives_the_rows_the_event_log_moves_to_arrow_at_a_time():
    from viewstore.spark import audit

    row = next(line for line in ARCHITECTURE.splitlines() if line.startswith("| `spark/audit.py`"))
    assert f"built {audit._BATCH_ROWS:,} rows at a time" in row, row


def test_query_names_the_events_columns_as_the_log_has_them():
    """ViewStore.query's docstring and `viewstore query --help` list the events table's columns."""
    from viewstore.catalog import ViewStore
    from viewstore.cli import query_
    from viewstore.log import EVENT_COLUMNS

    for doc in (ViewStore.query.__doc__, query_.help):
        listed = " ".join(doc.replace("``", "").split("events (", 1)[1].split(")", 1)[0].split())
        assert re.findall(r"(\w+)(?: in epoch ms| JSON| as JSON)?(?:,|$)", listed) == list(EVENT_COLUMNS), listed


def test_the_readme_names_every_error_type():
    from viewstore import errors

    said = README.split("Every public call either succeeds completely", 1)[1].split("\n\n", 1)[0]
    types = {name for name, value in vars(errors).items()
             if isinstance(value, type) and issubclass(value, errors.ViewStoreError)}
    assert types == set(re.findall(r"`(?:viewstore\.errors\.)?(\w+Error)`", said))
    assert types == set(re.findall(r"(\w+Error) ", errors.__doc__.split("::", 1)[1]))  # its hierarchy


def test_viewstore_spark_lists_its_modules_and_types_its_lazy_names():
    """viewstore.spark's docstring lists every module of the package, and each name it imports lazily
    is also imported for type checkers (without it mypy sees the name as Any): from the same module."""
    import ast

    import viewstore.spark as vs

    listed = re.findall(r"^    (\w+) {2,}", vs.__doc__.split("Modules:", 1)[1], re.M)
    assert sorted(listed) == sorted(p.stem for p in (PACKAGE / "spark").glob("*.py") if p.stem != "__init__")
    tree = ast.parse((PACKAGE / "spark" / "__init__.py").read_text())
    (checking,) = [n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
    typed = {a.name: node.module for node in checking.body if isinstance(node, ast.ImportFrom) for a in node.names}
    assert typed == vs._EXPORTS


def test_every_error_a_public_call_names_is_a_viewstore_error():
    """The Raises: sections of the API (ViewStore, ViewChange, viewstore.spark, viewstore.formats)
    name only ViewStoreError and its subclasses, as the README promises; a renamed class fails here."""
    import inspect

    from viewstore import ViewChange, ViewStore, errors, formats
    import viewstore.spark as vs

    calls = [getattr(vs, name) for name in vs.__all__] + [getattr(formats, name) for name in formats.__all__]
    for cls in (ViewStore, ViewChange):
        for name in dir(cls):
            attr = inspect.getattr_static(cls, name)
            fn = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
            if not name.startswith("_") and callable(fn):
                calls.append(fn)
    named = {}
    for call in calls:
        doc = inspect.getdoc(call) or ""
        if "Raises:" in doc:
            section = re.split(r"\n\S", doc.split("Raises:", 1)[1], maxsplit=1)[0]
            for error in re.findall(r"^    (\w+):", section, re.M):
                named.setdefault(error, getattr(call, "__qualname__", str(call)))
    assert sorted(named) == sorted(errors.__all__)  # and every error of the library is named by some call
    for error, where in named.items():
        value = getattr(errors, error, None)
        assert isinstance(value, type) and issubclass(value, errors.ViewStoreError), (error, where)


def test_the_tests_layout_is_as_architecture_md_says():
    """ARCHITECTURE.md's Tests section names every helper file of tests/, every path it names is
    there, every module of formats/ has its tests/formats/test_<module>.py, and every module of spark/
    its tests/spark/test_spark_<module>.py (or test_<module>.py)."""
    tests = ROOT / "tests"
    section = ARCHITECTURE.split("\n## Tests\n", 1)[1].split("\n## ", 1)[0]
    helpers = {p.name for p in [*tests.glob("*.py"), *(tests / "reliability").glob("*.py")]
               if not p.name.startswith("test_") and p.name != "__init__.py"}
    assert helpers, "no helper files found"
    for name in helpers:
        assert f"`{name}`" in section or f"/{name}`" in section, f"the Tests section does not name {name}"
    for path in re.findall(r"`(tests/[\w/.]+)`", section):
        assert (ROOT / path).exists(), path
    for name in re.findall(r"`(test_\w+\.py)`", section):
        assert list(tests.rglob(name)), name
    for module in (PACKAGE / "formats").glob("*.py"):
        if module.stem != "__init__":
            assert (tests / "formats" / f"test_{module.stem}.py").exists(), module.name
    for module in (PACKAGE / "spark").glob("*.py"):  # build_jar.py: test_catalog_plugin.py checks its jar
        if module.stem not in ("__init__", "build_jar"):
            assert any((tests / "spark" / f"{prefix}{module.stem}.py").exists()
                       for prefix in ("test_spark_", "test_")), module.name
