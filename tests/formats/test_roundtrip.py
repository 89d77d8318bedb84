"""decode(encode(v, engine)) == v for every engine: the contract every codec in viewstore.formats passes.

A definition ``v`` here is one an engine can hold exactly (the form ``decode`` returns): types the
engine has, nullability and nested comments only where the engine keeps them, and the engine's own
properties. Definitions from elsewhere gain the documented engine defaults, once.
"""

from __future__ import annotations

import itertools
import json
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewstore import formats
from viewstore.formats import ViewDefinition, flink, hive, iceberg, spark, trino
from viewstore.formats.base import second_text_properties, sql_digest
from viewstore.model import AuditInfo, Column, SQLRepresentation, View, ViewVersion
from viewstore.types import (DecimalType, FixedType, IcebergType, ListType, MapType, PrimitiveType, StructField,
                             StructType, to_iceberg_json)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The Iceberg primitives each engine has an exact type for.
PRIMITIVES = {
    "trino": ["boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
              "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "unknown"],
    "spark": ["boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
              "string", "binary", "variant", "unknown"],
    "hive": ["boolean", "int", "long", "float", "double", "date", "timestamp", "timestamptz", "string", "binary"],
    "flink": ["boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
              "timestamp_ns", "timestamptz_ns", "string", "binary", "unknown"],
    "iceberg": ["boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
                "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary"],
}
#: Engines whose nested types keep ``not null`` and field comments.
KEEPS_NESTED_DETAIL = {"spark", "flink", "iceberg"}
#: Engines whose columns can be ``NOT NULL``.
KEEPS_NULLABILITY = {"spark", "flink", "iceberg"}

text = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12).filter(str.strip)
maybe_text = st.none() | st.text(st.characters(codec="utf-8"), max_size=12)
identifier = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8)
#: What Hive's type parser reads as a struct field name: Unicode letters and digits, ``_``, ``.``, ``$``, space.
hive_field_names = st.text(st.characters(categories=["L", "Nd"], include_characters="_.$ "), min_size=1, max_size=8)
decimals = st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DecimalType(p, s)))


def primitives(engine: str) -> st.SearchStrategy[IcebergType]:
    base = st.sampled_from([PrimitiveType(name) for name in PRIMITIVES[engine]]) | decimals
    return base | st.integers(1, 64).map(FixedType) if engine in ("flink", "iceberg") else base


def iceberg_types(engine: str) -> st.SearchStrategy[IcebergType]:
    detail = engine in KEEPS_NESTED_DETAIL
    flags = st.booleans() if detail else st.just(False)
    comments = maybe_text if detail else st.none()
    names = hive_field_names if engine == "hive" else text
    keys = primitives(engine).filter(lambda t: str(t) != "unknown")

    def nested(children: st.SearchStrategy[IcebergType]) -> st.SearchStrategy[IcebergType]:
        fields = st.lists(st.tuples(names, children, flags, comments), min_size=1, max_size=3,
                          unique_by=lambda f: f[0].lower())
        return (st.builds(ListType, children, flags)
                | st.builds(MapType, keys, children, flags)
                | fields.map(lambda fs: StructType(tuple(StructField(*f) for f in fs))))

    return st.recursive(primitives(engine), nested, max_leaves=5)


@st.composite
def engine_type_string(draw, engine: str, column: Column) -> str:
    """The canonical engine spelling of the column type, or another spelling of the same type."""
    t, name = column.type, str(column.type)
    if engine == "trino":
        options = [trino.engine_type(t)]
        options += {"int": ["tinyint", "smallint", "integer"], "string": ["varchar(7)", "char(3)"],
                    "timestamp": ["timestamp(0)", "timestamp(3)"],
                    "timestamptz": ["timestamp(3) with time zone"]}.get(name, [])
    elif engine == "spark":
        options = [spark.engine_type(t)] + {"int": ["tinyint", "smallint"],
                                            "string": ["char(5)", "varchar(20)"]}.get(name, [])
    elif engine == "hive":
        options = [hive.engine_type(t)] + {"int": ["tinyint", "smallint"],
                                           "string": ["char(5)", "varchar(20)"]}.get(name, [])
    else:
        suffix = "" if column.nullable else " NOT NULL"
        options = [flink.engine_type(t, nullable=column.nullable)]
        options += [o + suffix for o in {"int": ["TINYINT", "SMALLINT", "INTEGER"],
                                         "string": ["STRING", "CHAR(4)", "VARCHAR(10)"],
                                         "timestamp": ["TIMESTAMP(3)"],
                                         "timestamptz": ["TIMESTAMP_LTZ(3)"]}.get(name, [])]
    return draw(st.sampled_from(options))


user_properties = st.dictionaries(identifier.map(lambda k: f"user.{k}"), st.text(max_size=8), max_size=3)


@st.composite
def definitions(draw, engine: str) -> ViewDefinition:
    """A definition exactly as ``engine`` holds it (the form decode returns)."""
    # an Iceberg schema names each field once (viewstore: ignoring case); engine records may repeat one
    unique = (lambda c: c.name.lower()) if engine == "iceberg" else id
    columns = tuple(draw(st.lists(st.builds(
        Column, text, iceberg_types(engine), maybe_text,
        st.booleans() if engine in KEEPS_NULLABILITY else st.just(True)), min_size=1, max_size=4, unique_by=unique)))
    sql = draw(text)
    database = draw(st.none() | text)
    properties = draw(user_properties)
    catalog, namespace, security = None, (), None
    if engine != "iceberg":
        types = [draw(engine_type_string(engine, c)) for c in columns]
        properties[f"hms.{engine}.column-types"] = json.dumps(types, ensure_ascii=False)

    if engine == "trino":
        catalog = draw(st.none() | text)
        namespace = draw(st.just(()) | st.tuples(text)) if catalog is not None else ()
        security = draw(st.sampled_from(["DEFINER", "INVOKER"]))
        if draw(st.booleans()):
            path = draw(st.lists(st.fixed_dictionaries({"catalogName": text, "schemaName": text}), max_size=2))
            properties[trino.PATH_KEY] = json.dumps(path, ensure_ascii=False, separators=(",", ":"))
        properties.update(draw(st.fixed_dictionaries({}, optional={
            "trino_created_by": text, "trino_version": text, "trino_query_id": text})))
    elif engine == "spark":
        catalog = draw(st.none() | text)
        namespace = draw(st.lists(text, max_size=2).map(tuple)) if catalog is not None else ()
        properties["spark.sql.create.version"] = draw(st.sampled_from(["3.1.2", "3.5.3", "4.3.0"]))
        mode = draw(st.none() | st.sampled_from(spark.SCHEMA_MODES))
        if mode is not None:
            properties["view.schemaMode"] = mode
        if mode != "EVOLUTION" and draw(st.booleans()):
            properties["view.query.out.numCols"] = str(len(columns))
            properties.update({f"view.query.out.col.{i}": draw(text) for i in range(len(columns))})
            properties[spark.QUERY_OUT_SQL_KEY] = sql_digest(sql)  # the names are that query's
        for key in spark.REFERRED_TEMP_NAMES:
            if draw(st.booleans()):
                properties[key] = "[]"
        properties.update({f"view.sqlConfig.spark.sql.{k}": v for k, v in draw(
            st.dictionaries(identifier, st.text(max_size=5), max_size=2)).items()})
        expanded = draw(st.none() | text.filter(lambda s: s != sql))
        properties.update(second_text_properties(spark.EXPANDED_TEXT_KEY, expanded, sql))
    elif engine == "hive":
        namespace = (database,) if database else ()
        original = draw(st.none() | text.filter(lambda s: s != sql))
        properties.update(second_text_properties(hive.ORIGINAL_TEXT_KEY, original, sql))
    elif engine == "flink":
        expanded = draw(st.none() | text.filter(lambda s: s != sql))
        properties.update(second_text_properties(flink.EXPANDED_TEXT_KEY, expanded, sql))
        plain = draw(st.none() | st.text(max_size=5))
        if plain is not None:
            properties[flink.PLAIN_COMMENT_KEY] = plain
        properties.update({f"flink.option.{k}": v for k, v in draw(
            st.dictionaries(identifier, st.text(max_size=5), max_size=2)).items()})
    return ViewDefinition(
        dialect=engine if engine != "iceberg" else draw(st.sampled_from(["spark", "trino", "spark-sql"])),
        sql=sql, columns=columns, comment=draw(maybe_text), default_catalog=catalog,
        default_namespace=namespace, owner=draw(st.none() | text), security_mode=security,
        properties=properties, database=database, name=draw(st.none() | text))


@SETTINGS
@given(definitions("trino"))
def test_trino_round_trip(definition):
    assert formats.decode(formats.encode(definition, "trino")) == definition


@SETTINGS
@given(definitions("spark"))
def test_spark_round_trip(definition):
    assert formats.decode(formats.encode(definition, "spark")) == definition


@SETTINGS
@given(definitions("hive"))
def test_hive_round_trip(definition):
    assert formats.decode(formats.encode(definition, "hive")) == definition


@SETTINGS
@given(definitions("flink"))
def test_flink_round_trip(definition):
    assert formats.decode(formats.encode(definition, "flink")) == definition


_uuids = (f"00000000-0000-0000-0000-{i:012}" for i in itertools.count())


def metadata_for(definition: ViewDefinition) -> dict:
    """Iceberg view metadata holding the definition (what viewstore.iceberg would write)."""
    ids = itertools.count(1)
    return {
        "view-uuid": definition.properties[iceberg.VIEW_UUID_KEY], "format-version": 1, "location": "file:/v",
        "properties": {**{k: v for k, v in definition.properties.items() if not k.startswith("hms.")},
                       **({"comment": definition.comment} if definition.comment is not None else {})},
        "current-schema-id": 0, "current-version-id": 1,
        "schemas": [{"schema-id": 0, **to_iceberg_json(StructType(tuple(
            StructField(c.name, c.type, not c.nullable, c.comment) for c in definition.columns)), ids)}],
        "versions": [{"version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": definition.summary,
                      "default-catalog": definition.default_catalog,
                      "default-namespace": list(definition.default_namespace),
                      "representations": [{"type": "sql", "sql": r.sql, "dialect": r.dialect}
                                          for r in definition.representations]}],
        "version-log": [{"timestamp-ms": 1, "version-id": 1}],
    }


@st.composite
def iceberg_definitions(draw) -> ViewDefinition:
    base = draw(definitions("iceberg"))
    catalog = draw(st.none() | text)
    others = draw(st.lists(st.builds(SQLRepresentation, st.sampled_from(["hive", "trino", "flink"]), text),
                           max_size=2, unique_by=lambda r: r.dialect))
    return base.model_copy(update={
        "default_catalog": catalog, "default_namespace": tuple(draw(st.lists(text, max_size=2))),
        "other_representations": tuple(r for r in others if r.dialect != base.dialect),
        "summary": {"engine-name": "spark", "engine-version": "4.3.0"},
        "properties": {**base.properties, iceberg.VIEW_UUID_KEY: next(_uuids),
                       iceberg.METADATA_LOCATION_KEY: "file:/v/metadata/00001.metadata.json"}})


@SETTINGS
@given(iceberg_definitions())
def test_iceberg_round_trip(definition):
    record = formats.encode(definition, "iceberg")
    assert formats.detect(record) == "iceberg"
    assert formats.decode(record, metadata=json.dumps(metadata_for(definition))) == definition


@SETTINGS
@given(st.sampled_from(["trino", "spark", "hive", "flink"]).flatmap(
    lambda engine: st.tuples(st.just(engine), definitions(engine))), identifier, identifier, text)
def test_the_stores_view_round_trips(engine_and_definition, database, name, owner):
    engine, definition = engine_and_definition
    definition = definition.model_copy(update={
        "database": database, "name": name, "owner": owner,
        "default_namespace": (database,) if engine == "hive" else definition.default_namespace})
    version = ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, columns=definition.columns,
                          representations=(SQLRepresentation(engine, definition.sql),),
                          default_catalog=definition.default_catalog,
                          default_namespace=definition.default_namespace)
    comment = {"comment": definition.comment} if definition.comment is not None else {}
    view = View(identifier=(database, name), uuid="u", properties={**definition.properties, **comment},
                security_mode=definition.security_mode or "DEFINER", current_version_id=1,
                versions=(version,), version_log=(), stream_version=1,
                audit=AuditInfo(creator=owner, create_time_ms=1, last_modifier=owner, last_modified_time_ms=1))
    assert formats.decode(formats.encode(view, engine)) == definition


#: What each engine adds to a definition that did not come from it.
ADDED_BY = {
    "trino": {"hms.trino.column-types", "trino_created_by", "trino_version"},
    "spark": {"hms.spark.column-types", "spark.sql.create.version", "view.schemaMode",
              *spark.REFERRED_TEMP_NAMES, "view.query.out.numCols", *(f"view.query.out.col.{i}" for i in range(4)),
              spark.QUERY_OUT_SQL_KEY},
    "hive": {"hms.hive.column-types"},
    "flink": {"hms.flink.column-types"},
}


@SETTINGS
@given(st.sampled_from(["trino", "spark", "hive", "flink"]).flatmap(
    lambda engine: st.tuples(st.just(engine), definitions(engine))))
def test_a_definition_from_elsewhere_gains_only_the_engine_defaults_once(engine_and_definition):
    engine, definition = engine_and_definition
    foreign = definition.model_copy(update={"properties": {
        k: v for k, v in definition.properties.items() if k.startswith("user.")}})
    once = formats.decode(formats.encode(foreign, engine))
    assert once.model_copy(update={"properties": foreign.properties}) == foreign
    assert foreign.properties.items() <= once.properties.items()
    assert set(once.properties) - set(foreign.properties) <= ADDED_BY[engine]
    assert formats.decode(formats.encode(once, engine)) == once
