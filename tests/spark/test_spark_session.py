"""viewstore.spark.session against the real (Hive-enabled) test SparkSession: what every call of
viewstore.spark shares (argument checks, stored text read as written, the SQL configs a copy
captures, the fingerprint of a copy, the refusal inside a store transaction, the turn at view DDL)."""

from __future__ import annotations

import json
import uuid

import pytest

from viewstore import Column, ValidationError, ViewChange, ViewStore, ViewStoreError, signals
from viewstore.spark import (check_views, create_view, detach, events_dataframe, import_metastore_views,
                             register_views, sql)
from viewstore.spark.register import table_references

from spark_views import _alter_record, _ddl_turn_held_elsewhere, _stored, _view_properties

pytestmark = pytest.mark.spark


def test_public_calls_refuse_arguments_of_the_wrong_type_clearly(spark, store):
    """Each says which argument is wrong and what it must be (sql's statement: see
    test_sql_of_a_statement_that_is_not_text_says_so): table_references raised TypeError, detach
    said 'attach needs ...'."""
    with pytest.raises(ValidationError, match="query must be a string, not int"):
        table_references(5)
    with pytest.raises(ValidationError, match="dialect must be a string, not NoneType"):
        table_references("SELECT 1", None)
    with pytest.raises(ValidationError, match="^detach needs a SparkSession, not int"):
        detach(5, "vs")
    with pytest.raises(ValidationError, match="^store must be a ViewStore, not str$"):
        register_views(spark, str(store.path))
    for blank in ("", " \t"):  # no dialect at all: not every view skipped as lacking it
        with pytest.raises(ValidationError, match="bad dialect"):
            register_views(spark, store, dialect=blank)


def test_a_session_object_with_no_jvm_session_behind_it_is_refused_as_no_classic_session(store):
    """A SparkSession instance that no py4j session stands behind is refused before it is used (each
    call raised AttributeError from the first use)."""
    from pyspark.sql import SparkSession

    shell = object.__new__(SparkSession)
    calls = [lambda: register_views(shell, store), lambda: check_views(shell, store),
             lambda: create_view(shell, store, "s.v", "SELECT 1 AS x"), lambda: sql(shell, store, "SELECT 1"),
             lambda: events_dataframe(shell, store)]
    for call in calls:
        with pytest.raises(ValidationError, match=r"^spark must be a classic \(py4j\) SparkSession, not SparkSession$"):
            call()
    assert store.event_count() == 0


def test_a_view_whose_text_spark_cannot_parse_fails_alone_and_is_no_engine_failure(spark, store, ns):
    """The metastore answers, so a view reading one whose stored text does not parse is that view's
    failure: reported, broken, a ValidationError; never an EngineError."""
    spark.sql(f"CREATE DATABASE {ns}")
    spark.sql(f"CREATE VIEW {ns}.src AS SELECT 1 AS x")
    _alter_record(spark, ns, "src", text="SELEC x FROMM nowhere")
    _stored(store, f"{ns}.reader", f"SELECT x FROM {ns}.src", ns, columns=[Column("x", "int", nullable=False)])
    report = register_views(spark, store, ns)
    assert [(f.identifier, f.condition) for f in report.failed] == [(f"{ns}.reader", "PARSE_SYNTAX_ERROR")]
    (entry,) = check_views(spark, store, ns).views
    assert (entry.status, entry.condition) == ("broken", "PARSE_SYNTAX_ERROR")
    with pytest.raises(ValidationError, match="PARSE_SYNTAX_ERROR") as raised:
        create_view(spark, store, f"{ns}.again", f"SELECT x FROM {ns}.src")
    assert str(raised.value).count("[PARSE_SYNTAX_ERROR]") == 1  # Spark's explanation starts with it


@pytest.mark.parametrize("call", ["register", "check"])
def test_a_view_dropped_by_another_process_after_the_listing_is_passed_over(spark, store, ns, call):
    """Another process drops a view just after the call listed the store's views (the moment the
    listing returns, which a profile hook watches: the call reads the store and nothing else in
    between, so no signal or catalog event comes there)."""
    import sys

    from viewstore import ViewStore

    _stored(store, f"{ns}.a", "SELECT 1 AS x", ns, columns=[Column("x", "int", nullable=False)])
    _stored(store, f"{ns}.b", "SELECT 2 AS x", ns, columns=[Column("x", "int", nullable=False)])
    dropped = []

    def listed_then_dropped(frame, event, arg):
        if event == "return" and frame.f_code is ViewStore.list_views.__code__ and not dropped:
            with ViewStore(store.path, actor="bob") as other:
                dropped.append(other.drop_view(f"{ns}.a"))

    sys.setprofile(listed_then_dropped)
    try:
        if call == "register":
            seen = []
            report = register_views(spark, store, ns, progress=lambda done, total: seen.append((done, total)))
        else:
            report = check_views(spark, store, ns)
    finally:
        sys.setprofile(None)
    assert dropped == [True]
    if call == "register":
        assert report.registered == [f"{ns}.b"] and report.ok
        assert seen == [(1, 2), (2, 2)]  # the view passed over counts as settled
    else:
        assert [v.identifier for v in report.views] == [f"{ns}.b"]


# -- fixed defects ---------------------------------------------------------------------------------


def test_stored_text_reaches_spark_without_variable_substitution(spark, store, ns):
    text = "SELECT '${spark.app.name}' AS s"
    _stored(store, f"{ns}.v", text, ns, [Column("s", "string", "col ${spark.app.name}")],
            comment="${spark.app.name}", properties={"p": "${spark.app.name}"})
    spark.conf.set("spark.sql.variable.substitute", "true")
    try:
        assert register_views(spark, store, ns).registered == [f"{ns}.v"]
        assert spark.conf.get("spark.sql.variable.substitute") == "true"  # the session's own setting is back
    finally:
        spark.conf.unset("spark.sql.variable.substitute")
    assert spark.sql(f"SELECT s FROM {ns}.v").first().s == "${spark.app.name}"
    described = {r.col_name: r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()}
    assert described["s"].comment == "col ${spark.app.name}"
    assert described["Comment"].data_type == "${spark.app.name}"
    assert {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {ns}.v").collect()}["p"] == "${spark.app.name}"
    assert check_views(spark, store, ns).ok
    view = create_view(spark, store, f"{ns}.w", text)  # analyzed and stored as written
    assert view.sql_for("spark") == text and view.columns[0].name == "s"


@pytest.mark.parametrize("call, message", [
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", None),
     "invalid SQL for view {ns}.v: the SQL must be a non-empty string, not None"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties="ab"),
     "properties must be a dict of strings, not str"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties=[1, 2]),
     "properties must be a dict of strings, not list"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", properties={"a": 1}),
     "property 'a' must have a string value, not 1"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", replace="yes"),
     "replace must be True or False, not 'yes'"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", comment=5),
     "a comment must be a string, not 5"),
    (lambda spark, store, ns: create_view(spark, store, 5, "SELECT 1 AS x"),
     "an identifier must be a 'namespace.name' string or a tuple, not 5"),
    (lambda spark, store, ns: create_view(spark, "not a store", f"{ns}.v", "SELECT 1 AS x"),
     "store must be a ViewStore, not str"),
    (lambda spark, store, ns: create_view("not spark", store, f"{ns}.v", "SELECT 1 AS x"),
     "spark must be a classic (py4j) SparkSession, not str"),
    (lambda spark, store, ns: events_dataframe(spark, store, types=5),
     "types must be an event type or a list of them, not 5"),
    (lambda spark, store, ns: events_dataframe(spark, store, actor=5), "an actor must be a string, not 5"),
    (lambda spark, store, ns: events_dataframe(spark, None), "store must be a ViewStore, not NoneType"),
    (lambda spark, store, ns: events_dataframe("not spark", store),
     "spark must be a classic (py4j) SparkSession, not str"),
    (lambda spark, store, ns: register_views(spark, store, refresh="x"), "refresh must be True or False, not 'x'"),
    (lambda spark, store, ns: register_views(spark, store, prune=1),  # a flag is True or False, not a number
     "prune must be True or False, not 1"),
    (lambda spark, store, ns: create_view(spark, store, f"{ns}.v", "SELECT 1 AS x", replace=0),
     "replace must be True or False, not 0"),
    (lambda spark, store, ns: register_views(spark, object()), "store must be a ViewStore, not object"),
    (lambda spark, store, ns: check_views(spark, {}), "store must be a ViewStore, not dict"),
    (lambda spark, store, ns: sql(spark, None, "SELECT 1"), "store must be a ViewStore, not NoneType"),
])
def test_bad_arguments_raise_validation_errors_and_write_nothing(spark, store, ns, call, message):
    with pytest.raises(ValidationError) as refused:
        call(spark, store, ns)
    assert str(refused.value) == message.format(ns=ns)
    assert store.event_count() == 0


# -- edges found by planting bugs -----------------------------------------------------------------


def test_recorded_configs_that_are_not_all_strings_count_as_none(spark, store, ns):
    """A summary's SQL configs with a value that is no string (JSON true, a number) are unreadable:
    the view registers under the session's configs, as a view with none recorded does."""
    for name, configs in (("flag", {"spark.sql.ansi.enabled": True}), ("number", {"spark.sql.session.timeZone": 0})):
        _stored(store, f"{ns}.{name}", "SELECT 1 AS x", ns, [Column("x", "int")],
                summary={"spark.sql-configs": json.dumps(configs)})
    # unreadable in the summary, Spark's properties of the view are not read in their place
    _stored(store, f"{ns}.text", "SELECT 1 AS x", ns, [Column("x", "int")], summary={"spark.sql-configs": "{"},
            properties={"view.sqlConfig.spark.sql.session.timeZone": "Asia/Kolkata"})
    report = register_views(spark, store, ns)
    assert report.ok, report.failed
    assert sorted(report.registered) == [f"{ns}.flag", f"{ns}.number", f"{ns}.text"]
    zone = spark.conf.get("spark.sql.session.timeZone")
    assert zone != "Asia/Kolkata"
    for name in ("number", "text"):
        assert _view_properties(spark, ns, name)["view.sqlConfig.spark.sql.session.timeZone"] == zone


def test_a_recorded_schema_mode_is_read_in_any_case_and_spacing_as_spark_reads_it(spark, store, ns):
    """Spark's parser takes ``WITH SCHEMA type   evolution``; the mode recorded in a summary reads the same."""
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")],
            summary={"spark.schema-mode": " type \t evolution "})
    assert register_views(spark, store, ns).ok
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()
    assert next(r.data_type for r in rows if r.col_name == "View Schema Mode") == "TYPE EVOLUTION"


def test_a_recorded_schema_mode_spark_does_not_know_gives_spark_s_default_and_the_summary_s_wins(spark, store, ns):
    """A mode of no meaning is left out of the statement (the copy registers with Spark's default),
    and a view with a mode in its summary and another in Spark's property takes the summary's."""
    _stored(store, f"{ns}.unknown", "SELECT 1 AS x", ns, [Column("x", "int")],
            summary={"spark.schema-mode": "sometimes"})
    _stored(store, f"{ns}.both", "SELECT 1 AS x", ns, [Column("x", "int")], summary={"spark.schema-mode": "BINDING"},
            properties={"view.schemaMode": "EVOLUTION"})
    assert register_views(spark, store, ns).ok
    for name, mode in (("unknown", "COMPENSATION"), ("both", "BINDING")):
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.{name}").collect()
        assert next(r.data_type for r in rows if r.col_name == "View Schema Mode") == mode, name


def test_a_schema_mode_in_the_properties_of_a_view_from_the_metastore_registers(spark, store, ns):
    """A view imported from a metastore has its mode as Spark's property ``view.schemaMode``, not in its summary."""
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")], properties={"view.schemaMode": "binding"})
    assert register_views(spark, store, ns).ok
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.v").collect()
    assert next(r.data_type for r in rows if r.col_name == "View Schema Mode") == "BINDING"


def test_a_view_imported_from_the_metastore_registers_under_the_configs_spark_captured(spark, store, ns):
    """Its configs are Spark's ``view.sqlConfig.*`` properties: the copy answers as the original did."""
    query = "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms"
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.sql(f"CREATE DATABASE {ns}")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
        spark.sql(f"CREATE VIEW {ns}.hms AS {query}")
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        import_metastore_views(spark, store, ns)
        spark.sql(f"DROP VIEW {ns}.hms")
        assert register_views(spark, store, ns).ok
        assert spark.sql(f"SELECT ms FROM {ns}.hms").first().ms == 1704047400000  # midnight in Kolkata
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_sql_configs_are_recorded_and_registered_with_the_view(spark, store, ns):
    query = "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms"
    kolkata, utc = 1704047400000, 1704067200000
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.sql(f"CREATE DATABASE {ns}")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")  # the defining driver
        view = sql(spark, store, f"CREATE VIEW {ns}.v AS {query}")
        spark.sql(f"CREATE VIEW {ns}.own AS {query}")  # Spark's own view captures the same configs
        captured = {k[len("view.sqlConfig."):]: v for k, v in _view_properties(spark, ns, "own").items()
                    if k.startswith("view.sqlConfig.")}
        assert json.loads(view.summary["spark.sql-configs"]) == captured
        assert captured["spark.sql.session.timeZone"] == "Asia/Kolkata"
        create_view(spark, store, f"{ns}.by_api", query)

        spark.conf.set("spark.sql.session.timeZone", "UTC")  # a later driver
        spark.conf.set("spark.sql.caseSensitive", "true")  # a setting the views did not capture
        spark.sql(f"DROP VIEW {ns}.v")
        report = register_views(spark, store, ns)
        assert report.ok and sorted(report.registered) == [f"{ns}.by_api", f"{ns}.v"]
        for name in ("v", "by_api", "own"):
            assert spark.sql(f"SELECT ms FROM {ns}.{name}").first().ms == kolkata, name
            assert "view.sqlConfig.spark.sql.caseSensitive" not in _view_properties(spark, ns, name)
        assert spark.sql(f"SELECT {query[7:]}").first().ms == utc  # the session's own settings are back
        assert spark.conf.get("spark.sql.caseSensitive") == "true"
        assert register_views(spark, store, ns).unchanged == [f"{ns}.by_api", f"{ns}.v"]

        # a copy made again by vs.sql (ALTER VIEW ... SET) follows the stored configs too
        spark.sql(f"DROP VIEW {ns}.v")
        sql(spark, store, f"ALTER VIEW {ns}.v SET TBLPROPERTIES ('k' = '1')")
        assert spark.sql(f"SELECT ms FROM {ns}.v").first().ms == kolkata

        # a recorded config Spark refuses: the views fail (each of them, though the configs are set
        # once for views recorded alike), and the session's configs are put back
        for name in ("v", "by_api"):
            store.replace_view(f"{ns}.{name}", columns=view.columns, representations=view.representations,
                               default_namespace=list(view.default_namespace), default_catalog=view.default_catalog,
                               summary={**view.summary, "spark.sql-configs": json.dumps(
                                   {**captured, "spark.sql.ansi.enabled": "maybe"})})
        report = register_views(spark, store, ns)
        assert sorted(f.identifier for f in report.failed) == [f"{ns}.by_api", f"{ns}.v"]
        assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
        assert spark.conf.get("spark.sql.caseSensitive") == "true"
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
        spark.conf.unset("spark.sql.caseSensitive")


def test_a_view_without_recorded_configs_keeps_the_fingerprint_earlier_releases_gave_its_copy():
    """Copies made before configs were recorded stay unchanged for register_views: their fingerprint
    is the hash of the statement (without it), the catalog and the namespace, as it was."""
    import hashlib

    from viewstore.spark.session import FINGERPRINT, _create_statement

    target = ("spark_catalog", ("sales",))
    statement, fingerprint = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], "c", {"k": "1"},
                                               target)
    plain = statement.replace(f", '{FINGERPRINT}' = '{fingerprint}'", "")
    assert fingerprint == hashlib.sha256("\0".join([plain, *target[:1], *target[1]]).encode()).hexdigest()[:32]
    with_configs = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], "c", {"k": "1"}, target,
                                     configs={"spark.sql.session.timeZone": "UTC"})[1]
    assert with_configs != fingerprint  # views recorded under other configs are copied again
    none_captured = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], "c", {"k": "1"}, target,
                                      configs={})[1]
    assert none_captured != fingerprint  # recorded as none at all is no view recorded without configs


def test_the_store_id_leaves_the_fingerprints_of_the_release_before_store_ids_as_they_were():
    """The values below are what the release before store ids computed for these definitions: a copy it
    made is still found unchanged by register_views, which then only adds the store's id to it."""
    from viewstore.spark.session import FINGERPRINT, STORE, _create_statement

    target = ("spark_catalog", ("sales",))
    args = (("sales", "v"), "SELECT 1 AS x", [Column("x", "int", "the x")], "c",
            {"k": "1", "owner": "o", "comment": "c"}, target)
    store_id = str(uuid.uuid4())
    statement, fingerprint = _create_statement(*args, store_id=store_id)
    assert fingerprint == _create_statement(*args)[1] == "02dcc1d8577e2b153b66fbf4d37e2c6e"
    assert f"'{FINGERPRINT}' = '{fingerprint}'" in statement and f"'{STORE}' = '{store_id}'" in statement
    configured = _create_statement(*args, "BINDING", {"spark.sql.session.timeZone": "UTC"}, store_id)[1]
    assert configured == "fcb9db4347cae7e0dca25ea0ab211ecb"
    # a stored property of that name (a view imported from a copy) neither reaches the copy nor counts
    forged = _create_statement(*args[:4], {**args[4], STORE: "forged"}, target, store_id=store_id)
    assert forged == (statement, fingerprint)
    copied = _create_statement(*args[:4], {**args[4], FINGERPRINT: "0" * 32}, target, store_id=store_id)
    assert copied == (statement, fingerprint)  # nor does a fingerprint imported with a copy


def test_a_copys_statement_is_the_same_for_properties_in_another_order_or_the_default_schema_mode():
    """Neither makes the copy differ from the one made before: it is not made again."""
    from viewstore.spark.session import _create_statement

    target = ("spark_catalog", ("sales",))
    made = _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], None, {"a": "1", "b": "2"}, target)
    assert _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], None, {"b": "2", "a": "1"},
                             target) == made
    assert _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], None, {"a": "1", "b": "2"},
                             target, "COMPENSATION") == made
    assert "WITH SCHEMA" not in made[0]
    configs = {"spark.sql.session.timeZone": "UTC", "spark.sql.ansi.enabled": "true"}
    assert _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], None, {}, target, configs=configs) \
        == _create_statement(("sales", "v"), "SELECT 1 AS x", [Column("x", "int")], None, {}, target,
                             configs=dict(reversed(configs.items())))
    # no columns recorded: no column list, which Spark would refuse empty
    assert _create_statement(("sales", "v"), "SELECT 1 AS x", [], None, {}, target)[0].startswith(
        "CREATE OR REPLACE VIEW spark_catalog.`sales`.`v` TBLPROPERTIES (")


def test_a_view_without_recorded_configs_registers_under_the_sessions(spark, store, ns):
    """Its copy captures what the session sets (here a time zone), as Spark's own view would."""
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")])
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
    try:
        assert register_views(spark, store, ns).ok
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert _view_properties(spark, ns, "v")["view.sqlConfig.spark.sql.session.timeZone"] == "Asia/Kolkata"


def test_a_view_after_one_whose_configs_spark_refuses_captures_the_sessions(spark, store, ns):
    """b's time zone, set before Spark refused its other config, is taken back at once: c, recorded
    without configs, captures the session's time zone, not b's."""
    for name, configs in (("a", {"spark.sql.session.timeZone": "Asia/Kolkata"}),
                          ("b", {"spark.sql.session.timeZone": "America/New_York", "spark.sql.caseSensitive": "maybe"}),
                          ("c", None)):
        _stored(store, f"{ns}.{name}", "SELECT 1 AS x", ns, [Column("x", "int")],
                summary={} if configs is None else {"spark.sql-configs": json.dumps(configs)})
    report = register_views(spark, store, ns)
    assert report.registered == [f"{ns}.a", f"{ns}.c"] and [f.identifier for f in report.failed] == [f"{ns}.b"]
    assert _view_properties(spark, ns, "c")["view.sqlConfig.spark.sql.session.timeZone"] \
        == spark.conf.get("spark.sql.session.timeZone")


def test_recorded_configs_never_turn_variable_substitution_on(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT '${spark.app.name}' AS s", ns, [Column("s", "string")],
            summary={"spark.sql-configs": json.dumps({"spark.sql.variable.substitute": "true"})})
    assert register_views(spark, store, ns).ok
    assert spark.sql(f"SELECT s FROM {ns}.v").first().s == "${spark.app.name}"


def test_a_column_name_with_a_backquote_reaches_the_copy(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("we`ird", "int")])
    assert register_views(spark, store, ns).ok
    assert spark.table(f"{ns}.v").columns == ["we`ird"]


def test_keys_spark_owns_are_left_out_of_the_copy_in_any_case(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int")],
            properties={"View.Note": "1", "SPARK.SQL.note": "2", "Hms.note": "3", "keep": "4"})
    assert register_views(spark, store, ns).ok
    properties = _view_properties(spark, ns, "v")
    assert properties["keep"] == "4" and not {"View.Note", "SPARK.SQL.note", "Hms.note"} & set(properties)


def test_empty_comments_reach_the_copy(spark, store, ns):
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int", "")], comment="")
    assert register_views(spark, store, ns).ok
    assert spark.table(f"{ns}.v").schema["x"].metadata == {"comment": ""}
    table = spark._jsparkSession.sharedState().externalCatalog().getTable(ns, "v")
    assert table.comment().isDefined() and table.comment().get() == ""


def test_backslashes_and_quotes_in_comments_and_properties_reach_the_copy_as_written(spark, store, ns):
    text = "it's C:\\new\\table\\' \\u0041"
    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns, [Column("x", "int", text)], comment=text, properties={"p\\q": text})
    assert register_views(spark, store, ns).ok
    assert spark.table(f"{ns}.v").schema["x"].metadata == {"comment": text}
    assert spark._jsparkSession.sharedState().externalCatalog().getTable(ns, "v").comment().get() == text
    assert _view_properties(spark, ns, "v")["p\\q"] == text


def test_views_recorded_under_different_configs_each_get_their_own(spark, store, ns):
    """The configs are switched key by key from one view to the next; each copy captures its own."""
    zones = ["Asia/Kolkata", "UTC", "America/New_York", "Asia/Kolkata"]
    spark.sql(f"CREATE DATABASE {ns}")
    for i, zone in enumerate(zones):
        configs = {"spark.sql.session.timeZone": zone}
        if i == 2:
            configs.update({"spark.sql.ansi.enabled": "false", "spark.sql.caseSensitive": "true"})
        _stored(store, f"{ns}.v{i}", "SELECT unix_millis(TIMESTAMP'2024-01-01 00:00:00') AS ms", ns,
                [Column("ms", "long", nullable=False)], summary={"spark.sql-configs": json.dumps(configs)})
    before = {key: spark.conf.get(key) for key in ("spark.sql.session.timeZone", "spark.sql.ansi.enabled",
                                                   "spark.sql.caseSensitive")}
    assert register_views(spark, store, ns).ok
    for i, zone in enumerate(zones):
        properties = _view_properties(spark, ns, f"v{i}")
        assert properties["view.sqlConfig.spark.sql.session.timeZone"] == zone
        assert (properties["view.sqlConfig.spark.sql.ansi.enabled"] == "false") == (i == 2)  # else the default
        assert ("view.sqlConfig.spark.sql.caseSensitive" in properties) == (i == 2)  # not carried to the next
    assert {key: spark.conf.get(key) for key in before} == before
    assert check_views(spark, store, ns).ok


# -- inside a store transaction ----------------------------------------------------------------------


def test_work_that_changes_the_session_is_refused_inside_a_store_transaction(spark, store, data, ns):
    """A rollback of the block takes back the store's part of the work, never the session's: the
    copies would outlive the definitions they copy. Reads go on."""
    from viewstore import ViewStoreError

    spark.sql(f"CREATE DATABASE {ns}")
    _stored(store, f"{ns}.base", f"SELECT order_id FROM {data}.orders", ns, [("order_id", "bigint")])
    register_views(spark, store, ns)
    before = store.event_count()
    with pytest.raises(RuntimeError, match="rolled back"):
        with store.transaction():
            store.alter_view(f"{ns}.base", ViewChange.update_comment("in the block"))
            refused = [lambda: register_views(spark, store, ns),
                       lambda: sql(spark, store, f"CREATE VIEW {ns}.ddl AS SELECT 2 AS two"),
                       lambda: sql(spark, store, f"ALTER VIEW {ns}.base SET TBLPROPERTIES ('k' = 'v')"),
                       lambda: sql(spark, store, f"DROP VIEW {ns}.base")]
            for call in refused:
                with pytest.raises(ViewStoreError, match="cannot take back"):
                    call()
            assert check_views(spark, store, ns).ok  # reading goes on
            assert sql(spark, store, f"SELECT count(*) AS n FROM {ns}.base").collect()[0].n == 3
            raise RuntimeError("rolled back")
    assert store.event_count() == before
    names = {r.viewName for r in spark.sql(f"SHOW VIEWS IN {ns}").collect()}
    assert names == {"base"}  # no copy was made of what the block never committed
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {ns}.base").collect()}
    assert "k" not in described.get("Table Properties", "")
    assert create_view(spark, store, f"{ns}.made", "SELECT 1 AS one").identifier == (ns, "made")  # after: fine


def test_a_statement_spark_refuses_lets_another_registration_go_on_at_once(spark, store, ns, monkeypatch):
    """Spark refuses the query of a CREATE VIEW after the statement took the driver's turn at view DDL:
    another thread has the turn at once, not after DDL_TURN_WAIT_S (nor never, had the refusal kept it)."""
    import threading

    import viewstore.spark.session as session

    monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 2.0)
    with pytest.raises(ValidationError, match=r"\[TABLE_OR_VIEW_NOT_FOUND\]"):
        sql(spark, store, f"CREATE VIEW {ns}.v AS SELECT * FROM no_such_table_here")
    _stored(store, f"{ns}.w", "SELECT 1 AS x", ns)
    outcome = []

    def register():
        try:
            outcome.append(register_views(spark, store, ns).registered)
        except ViewStoreError as error:
            outcome.append(error)

    thread = threading.Thread(target=register)
    thread.start()
    thread.join(120)
    assert outcome == [[f"{ns}.w"]]


@pytest.mark.parametrize("holding", ["transaction", "before_commit"])
def test_a_thread_holding_a_store_waits_for_the_ddl_turn_only_as_long_as_the_catalog_waits(
        spark, store, ns, tmp_path, monkeypatch, holding):
    """A thread inside another store's transaction() block, or in one of its before_commit
    receivers, asks for the DDL turn while the thread holding the turn waits for that very store:
    it gives up (ConcurrencyError, busy) after the catalog bridge's wait (TRANSACTION_WAIT_S), not
    DDL_TURN_WAIT_S, so the two stand still no longer than a Spark statement on a held store does."""
    import threading
    import time

    import viewstore.spark.catalog_plugin as plugin
    import viewstore.spark.session as session
    from viewstore import ConcurrencyError, ViewStore

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    with ViewStore(tmp_path / "other.db", actor="a") as other:
        monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 20.0)
        monkeypatch.setattr(plugin, "TRANSACTION_WAIT_S", 0.5)
        has_turn, held = threading.Event(), threading.Event()

        def turn_then_other_store():  # as a DDL statement on ``other`` that holds the turn, then reads the store
            with session._one_ddl_at_a_time():
                has_turn.set()
                held.wait(30)
                other.view_exists("a.b")

        thread = threading.Thread(target=turn_then_other_store)
        thread.start()
        has_turn.wait(30)
        outcome = {}

        def ask_for_the_turn(*_args, **_kwargs):
            held.set()
            started = time.monotonic()
            try:
                register_views(spark, store, ns)
            except ConcurrencyError as e:
                outcome["error"] = e
            outcome["seconds"] = time.monotonic() - started

        try:
            if holding == "transaction":
                with other.transaction():
                    ask_for_the_turn()
            else:
                signals.before_commit.connect(ask_for_the_turn, sender=other)
                try:
                    _stored(other, "a.c", "SELECT 1 AS x", ["a"])
                finally:
                    signals.before_commit.disconnect(ask_for_the_turn, sender=other)
        finally:
            held.set()
            thread.join(60)
        assert outcome["error"].busy and outcome["seconds"] < 5, outcome
        assert not spark.catalog.databaseExists(ns)


def test_a_thread_holding_a_store_waits_no_longer_than_the_ddl_turn_wait(spark, store, ns, tmp_path, monkeypatch):
    """The shorter of the two waits: here DDL_TURN_WAIT_S, the catalog's being its default 10 s."""
    import time

    import viewstore.spark.session as session
    from viewstore import ConcurrencyError, ViewStore

    _stored(store, f"{ns}.v", "SELECT 1 AS x", ns)
    monkeypatch.setattr(session, "DDL_TURN_WAIT_S", 0.2)
    with ViewStore(tmp_path / "other.db", actor="a") as other:
        with _ddl_turn_held_elsewhere(), other.transaction():
            started = time.monotonic()
            with pytest.raises(ConcurrencyError) as raised:
                register_views(spark, store, ns)
            seconds = time.monotonic() - started
    assert raised.value.busy and seconds < 5, seconds
