import re
import threading

import pytest

from viewstore import Column, SQLRepresentation, ValidationError
from viewstore.model import (VersionLogEntry, ViewVersion, same_uuid, to_identifier, to_namespace,
                             validate_properties)


def test_identifiers():
    assert to_identifier("Sales.Daily") == ("sales", "daily")
    assert to_identifier(("a", "b", "C")) == ("a", "b", "c") and to_identifier(["a", "B"]) == ("a", "b")
    needs = "it needs a namespace and a name, as 'ns.view'"
    spaces = "it must be non-empty without surrounding spaces"
    allowed = "dots, backquotes and control characters are not allowed"
    lone = "it is not valid Unicode (a lone surrogate)"
    for bad, message in (("v", f"bad identifier 'v': {needs}"), ("", f"bad identifier '': {needs}"),
                         (".v", f"bad identifier part '': {spaces}"), ("a..b", f"bad identifier part '': {spaces}"),
                         (("a",), f"bad identifier ('a',): {needs}"),
                         (("a", " b"), f"bad identifier part ' b': {spaces}"),
                         (("a", "b "), f"bad identifier part 'b ': {spaces}"),
                         ("a.b\t", f"bad identifier part 'b\\t': {spaces}"),
                         (("a", "b\x00"), f"bad identifier part 'b\\x00': {allowed}"),
                         (("a", "b\x7f"), f"bad identifier part 'b\\x7f': {allowed}"),
                         (("a", "b`"), f"bad identifier part 'b`': {allowed}"),
                         (("a.b", "c"), f"bad identifier part 'a.b': {allowed}"),
                         (7, "an identifier must be a 'namespace.name' string or a tuple, not 7"),
                         (("a", 3), "an identifier part must be a string, not int"),
                         (("a", "b\ud800"), f"bad identifier part 'b\\ud800': {lone}"),
                         (("a", "\ud800"), f"bad identifier part '\\ud800': {lone}"),
                         ({"a": 1, "b": 2},
                          "an identifier must be a 'namespace.name' string or a tuple, not {'a': 1, 'b': 2}")):
        with pytest.raises(ValidationError) as raised:
            to_identifier(bad)
        assert str(raised.value) == message
    assert to_identifier(("a", "N" * 255)) == ("a", "n" * 255)  # a name may have 255 characters, not more
    with pytest.raises(ValidationError, match="longer than 255"):
        to_identifier(("a", "n" * 256))
    with pytest.raises(ValidationError, match="^an identifier part must be a string, not int$"):
        to_identifier(("a", 3))
    with pytest.raises(ValidationError, match="^a namespace level must be a string, not NoneType$"):
        to_namespace(("a", None))
    # counted as stored, in lower case: '\u0130' (I with a dot above) lowers to two characters
    assert to_identifier(("a", "\u0130" * 127 + "n")) == ("a", "i\u0307" * 127 + "n")
    with pytest.raises(ValidationError, match="longer than 255"):
        to_identifier(("a", "\u0130" * 128))
    assert to_namespace("a.b") == ("a", "b") and to_namespace(["A", "b"]) == ("a", "b")
    with pytest.raises(ValidationError, match="^a namespace needs at least one level$"):
        to_namespace(())


def test_columns_and_representations_take_positional_arguments():
    c = Column("amount", "decimal(18, 2)", "in EUR", False)
    assert (c.name, str(c.type), c.comment, c.nullable) == ("amount", "decimal(18,2)", "in EUR", False)
    r = SQLRepresentation("Trino", "SELECT 1")
    assert (r.dialect, r.sql) == ("Trino", "SELECT 1")
    assert c.model_dump(mode="json") == {"name": "amount", "type": "decimal(18,2)", "comment": "in EUR",
                                         "nullable": False}
    with pytest.raises(ValidationError, match=r"^unknown column fields \['extra'\]$"):
        Column("x", "int", extra=1)
    with pytest.raises(ValidationError, match="unknown representation fields"):
        SQLRepresentation("spark", "SELECT 1", type="sql")
    for spaced in (" spark", "spark ", "spark\n"):
        with pytest.raises(ValidationError, match=f"bad dialect {re.escape(repr(spaced))}: it must not be empty, "
                                                  "begin or end with whitespace$"):
            SQLRepresentation(spaced, "SELECT 1")
    assert SQLRepresentation("my engine", "SELECT 1").dialect == "my engine"  # free text: blanks inside are kept
    with pytest.raises(ValidationError, match="^bad representation: sql: Input should be a valid string$"):
        SQLRepresentation("spark", 5)
    for not_text in (b"in EUR", 5):  # strict: bytes are not decoded behind the caller's back
        with pytest.raises(ValidationError, match="comment"):
            Column("amount", "int", not_text)
    for not_a_flag in (None, 2, "maybe"):  # no flag, though Python gives each a truth value
        with pytest.raises(ValidationError, match="^bad column: nullable: Input should be a valid boolean"):
            Column("amount", "int", None, not_a_flag)



@pytest.mark.parametrize("not_a_flag", ["no", "yes", "off", "false", 0, 1, 1.0])
def test_a_column_s_nullable_is_a_flag_not_a_value_with_a_truth_value(not_a_flag):
    """pydantic's lax booleans took "no", "off" and 0 as False and "yes", 1 and 1.0 as True: a typo or
    a wrong value in a caller's data silently became a column's nullability."""
    message = f"^bad column: nullable: Input should be a valid boolean, not {re.escape(repr(not_a_flag))}$"
    with pytest.raises(ValidationError, match=message):
        Column("amount", "int", None, not_a_flag)
    with pytest.raises(ValidationError, match=message):
        Column(**{"name": "amount", "type": "int", "nullable": not_a_flag})
    assert Column("amount", "int", None, False).nullable is False and Column("amount", "int").nullable is True


@pytest.mark.parametrize("not_an_int", ["1", 1.0, True])
def test_the_audit_the_view_and_a_diff_side_hold_ints_not_what_converts_to_one(not_an_int):
    """AuditInfo, View and ViewDiffSide took "1", 1.0 and True for their times, ids and stream
    versions (as 1), and refused a bad one with pydantic's own error, not the library's."""
    from viewstore.model import AuditInfo, View, ViewDiffSide

    got = re.escape(repr(not_an_int))
    audit = dict(creator="me", create_time_ms=1, last_modifier="me", last_modified_time_ms=2)
    for field in ("create_time_ms", "last_modified_time_ms"):
        with pytest.raises(ValidationError, match=f"^bad audit info: {field}: Input should be a valid integer, "
                                                  f"not {got}$"):
            AuditInfo(**{**audit, field: not_an_int})
    side = dict(identifier=("a", "v"), uuid="u", current_version_id=1, stream_version=1, last_modifier="me",
                last_modified_time_ms=2)
    for field in ("current_version_id", "stream_version", "last_modified_time_ms"):
        with pytest.raises(ValidationError, match=f"^bad diff side: {field}: Input should be a valid integer, "
                                                  f"not {got}$"):
            ViewDiffSide(**{**side, field: not_an_int})
    _, whole, _ = _lazy_and_whole()
    fields = dict(whole)
    for field in ("current_version_id", "stream_version"):
        with pytest.raises(ValidationError, match=f"^bad view: {field}: Input should be a valid integer, not {got}$"):
            View(**{**fields, field: not_an_int})
    assert View(**fields) == whole and AuditInfo(**audit).create_time_ms == 1


def test_a_view_s_ids_and_times_are_bounded_as_the_log_stores_them():
    """A View's current version id is an Iceberg int and its audit's times longs, as its versions' are."""
    from viewstore.model import AuditInfo, View

    _, whole, _ = _lazy_and_whole()
    with pytest.raises(ValidationError, match="^bad view: current_version_id: Input should be less than or equal "
                                              "to 2147483647$"):
        View(**{**dict(whole), "current_version_id": 2**31})
    with pytest.raises(ValidationError, match="^bad audit info: create_time_ms: Input should be less than or equal "
                                              "to 9223372036854775807$"):
        AuditInfo(creator="me", create_time_ms=2**63, last_modifier="me", last_modified_time_ms=1)


def test_a_column_made_without_nullable_is_nullable_however_it_is_made():
    """The field's own default is the constructor's: a column built without validation and without a
    nullable (model_construct, as a reader of trusted rows does) is the column Column(name, type) makes."""
    made = Column.model_construct(name="c", type=Column("c", "int").type, comment=None)
    assert made.nullable is True and made == Column("c", "int") == Column(name="c", type="int")


def test_the_audit_s_and_a_diff_side_s_every_id_and_time_is_bounded():
    """Each of AuditInfo's and ViewDiffSide's ids and times is an Iceberg int or long, not only the
    first: a bound left off one field took a value the log cannot store."""
    from viewstore.model import AuditInfo, ViewDiffSide

    with pytest.raises(ValidationError, match="^bad audit info: last_modified_time_ms: Input should be greater than "
                                              "or equal to -9223372036854775808$"):
        AuditInfo(creator="me", create_time_ms=1, last_modifier="me", last_modified_time_ms=-(2**63) - 1)
    side = dict(identifier=("a", "v"), uuid="u", current_version_id=1, stream_version=1, last_modifier="me",
                last_modified_time_ms=2)
    for field, value, bound in [("current_version_id", 2**31, "less than or equal to 2147483647"),
                                ("last_modified_time_ms", 2**63, "less than or equal to 9223372036854775807")]:
        with pytest.raises(ValidationError, match=f"^bad diff side: {field}: Input should be {bound}$"):
            ViewDiffSide(**{**side, field: value})


def test_a_refused_value_is_shown_shortened_when_its_text_is_long():
    """The value a strict field refused is shown as its repr up to 60 characters, a longer one as its
    first 57 and '...', so a refusal of a large value stays one readable line."""
    from viewstore.model import AuditInfo

    audit = dict(creator="me", create_time_ms=1, last_modifier="me", last_modified_time_ms=2)
    fits = "x" * 58  # its repr is 60 characters
    with pytest.raises(ValidationError, match=f"^bad audit info: create_time_ms: Input should be a valid integer, "
                                              f"not '{fits}'$"):
        AuditInfo(**{**audit, "create_time_ms": fits})
    with pytest.raises(ValidationError) as caught:
        AuditInfo(**{**audit, "create_time_ms": fits + "y"})
    assert str(caught.value) == f"bad audit info: create_time_ms: Input should be a valid integer, not '{'x' * 56}..."


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_a_blank_column_name_dialect_sql_or_property_key_is_refused(blank):
    with pytest.raises(ValidationError, match="column name must be non-empty"):
        Column(blank, "int")
    with pytest.raises(ValidationError, match="bad dialect"):
        SQLRepresentation(blank, "SELECT 1")
    with pytest.raises(ValidationError, match="SQL of a representation must not be empty"):
        SQLRepresentation("spark", blank)
    with pytest.raises(ValidationError, match="bad property key"):
        validate_properties({blank: "v"})


def test_a_fields_own_refusal_is_its_message_alone_not_behind_the_models_and_the_fields_names():
    """'bad representation: dialect: bad dialect ' spark': ...' said dialect three times."""
    for make, message in [
        (lambda: SQLRepresentation(" spark", "SELECT 1"),
         "bad dialect ' spark': it must not be empty, begin or end with whitespace"),
        (lambda: Column(" ", "int"), "a column name must be non-empty"),
        (lambda: SQLRepresentation("spark", " "), "the SQL of a representation must not be empty"),
        # several faults: each said once, after what was refused; pydantic's own by the field
        (lambda: SQLRepresentation("", " "), "bad representation: bad dialect '': it must not be empty, begin or "
                                             "end with whitespace; the SQL of a representation must not be empty"),
        (lambda: SQLRepresentation("spark", 5), "bad representation: sql: Input should be a valid string"),
        (lambda: ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, columns=(), representations=(),
                             summary={"k": 1}),
         "bad view version: summary.k: Input should be a valid string"),  # a nested field's path, dotted
        (lambda: VersionLogEntry(timestamp_ms=1, version_id="1"),
         "bad version log entry: version_id: Input should be a valid integer, not '1'"),
    ]:
        with pytest.raises(ValidationError) as caught:
            make()
        assert str(caught.value) == message


@pytest.mark.parametrize("field, value", [("version_id", 2**31), ("schema_id", -(2**31) - 1), ("timestamp_ms", 2**63),
                                          ("timestamp_ms", -(2**63) - 1), ("version_id", "1"), ("version_id", True),
                                          ("timestamp_ms", 1.0)])
def test_versions_hold_iceberg_ints_and_longs(field, value):
    """Ids are Iceberg ints (32 bits) and times longs (64 bits), so every value fits SQLite and the
    reference implementation; a wrong one is a ValidationError, never an overflow further down."""
    good = dict(version_id=1, timestamp_ms=1, schema_id=0, columns=(),
                representations=(SQLRepresentation("spark", "SELECT 1"),))
    with pytest.raises(ValidationError, match=field):
        ViewVersion(**{**good, field: value})
    if field != "schema_id":
        with pytest.raises(ValidationError, match=field):
            VersionLogEntry(**{"version_id": 1, "timestamp_ms": 1, field: value})


def test_a_history_size_may_have_a_plus_sign_and_a_property_key_must_be_valid_unicode():
    """The reference reads version.history.num-entries with Java's Integer.parseInt, which takes a
    leading + as Python's int() does; a key with a lone surrogate cannot be stored as UTF-8."""
    assert validate_properties({"version.history.num-entries": "+5"}) == {"version.history.num-entries": "+5"}
    # keys are case-sensitive, as the reference reads them: these are properties of no meaning
    assert validate_properties({"Version.History.Num-Entries": "x", "WRITE.METADATA.COMPRESSION-CODEC": "zstd"})
    with pytest.raises(ValidationError, match="not valid Unicode"):
        validate_properties({"k\ud800": "v"})


def test_a_history_size_of_thousands_of_digits_is_read_as_the_reference_reads_it():
    """Python's int() refuses a text of more than 4300 digits with a ValueError of its own, no
    ValidationError; Java's Integer.parseInt, with which the reference reads the size, takes leading
    zeros however many."""
    zeros = "0" * 5000 + "5"
    assert validate_properties({"version.history.num-entries": zeros}) == {"version.history.num-entries": zeros}
    for huge in ("9" * 5000, "+" + "0" * 5000 + "2147483648", "-" + "0" * 5000 + "1"):
        with pytest.raises(ValidationError, match="^version.history.num-entries must be a positive integer, not '"):
            validate_properties({"version.history.num-entries": huge})


def test_a_property_map_is_checked_into_a_dict_of_its_own_and_no_map_is_none_alone():
    """The store adds the comment to the checked properties: the caller's dict stays as given. An empty
    value of another type is no property map."""
    given = {"k": "v"}
    checked = validate_properties(given)
    assert checked == given and checked is not given
    assert validate_properties(None) == {}
    with pytest.raises(ValidationError, match="property 'k' must have a string value, not 5"):
        validate_properties({"k": 5})
    for not_a_map in ([], "", 0, ()):
        with pytest.raises(ValidationError, match="properties must be a dict of strings"):
            validate_properties(not_a_map)


def test_a_version_given_no_default_catalog_namespace_or_summary_has_none():
    version = ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, columns=(),
                          representations=(SQLRepresentation("Spark", "SELECT 1"),))
    assert (version.default_catalog, version.default_namespace, version.summary) == (None, (), {})


def test_id_ranges_shorten_runs_of_version_ids():
    from viewstore.model import id_ranges

    assert id_ranges([5, 1, 2, 3, 7, 8, 10]) == "1-3, 5, 7-8, 10"
    assert id_ranges(range(1, 3001)) == "1-3000" and id_ranges([4]) == "4" and id_ranges([]) == "none"


def test_id_runs_are_the_sorted_runs_of_consecutive_ids():
    from viewstore.model import id_runs

    assert id_runs([5, 1, 2, 3, 7, 8, 10]) == [[1, 3], [5, 5], [7, 8], [10, 10]]
    assert id_runs(range(1, 3001)) == [[1, 3000]] and id_runs([]) == [] and id_runs([-2, -1, 0]) == [[-2, 0]]
    assert id_runs([3, 1, 2, 2]) == [[1, 3]] and id_runs([4, 2, 2]) == [[2, 2], [4, 4]]  # each id once


def test_id_ranges_of_negative_ids_read_unambiguously():
    """An imported view may have negative version ids (Iceberg's are any 32-bit int): "-2--1" read
    as nothing a person could use."""
    from viewstore.model import id_ranges

    assert id_ranges([-2, -1]) == "-2 to -1"
    assert id_ranges([-3, -2, -1, 0, 1, 5, 7, 8]) == "-3 to 1, 5, 7-8" and id_ranges([-4]) == "-4"
    assert id_ranges([0, 1, 2]) == "0-2"  # a run from 0 has no minus sign to confuse


class _History:
    """A ViewHistory that counts what it is asked for."""

    def __init__(self, versions, log):
        self._versions, self._log, self.asked = versions, log, []

    def versions(self):
        self.asked.append("versions")
        return self._versions

    def version_log(self):
        self.asked.append("version_log")
        return self._log

    def version(self, version_id):
        self.asked.append(version_id)
        return next((v for v in self._versions if v.version_id == version_id), None)

    def version_ids(self):
        self.asked.append("version_ids")
        return tuple(v.version_id for v in self._versions)


def _lazy_and_whole():
    from viewstore.model import AuditInfo, View

    versions = tuple(ViewVersion(version_id=i, timestamp_ms=i, schema_id=0, columns=(Column("x", "int"),),
                                 representations=(SQLRepresentation("spark", f"SELECT {i}"),)) for i in (1, 2))
    log = tuple(VersionLogEntry(timestamp_ms=i, version_id=i) for i in (1, 2))
    fields = dict(identifier=("a", "v"), uuid="u", properties={"comment": "c"}, security_mode="DEFINER",
                  current_version_id=2, audit=AuditInfo(creator="me", create_time_ms=1, last_modifier="me",
                                                        last_modified_time_ms=2), stream_version=2)
    history = _History(versions, log)
    return View.lazy(history, **fields), View(**fields, versions=versions, version_log=log), history


def test_a_lazy_view_gives_its_version_ids_without_building_its_versions():
    lazy, whole, history = _lazy_and_whole()
    assert lazy.version_ids == (1, 2) and history.asked == ["version_ids"]
    assert "versions" not in lazy.__dict__  # nothing built
    assert whole.version_ids == (1, 2)
    assert len(lazy.versions) == 2
    assert lazy.version_ids == (1, 2) and history.asked == ["version_ids", "versions"]  # from the versions built


def test_a_lazy_view_builds_its_history_on_first_read_and_is_a_plain_value():
    import copy
    import pickle

    lazy, whole, history = _lazy_and_whole()
    assert lazy.sql_for("spark") == "SELECT 2" and lazy.columns[0].name == "x" and lazy.comment == "c"
    assert history.asked == [2, 2]  # the current version alone
    assert lazy.versions is lazy.versions and history.asked == [2, 2, "versions"]  # built once
    assert lazy == whole and whole == lazy  # equality builds the version log too
    derived = type("Derived", (type(whole),), {})(**dict(whole))
    assert derived != whole and whole != derived  # a model of another class is another value, as in pydantic
    assert history.asked == [2, 2, "versions", "version_log"]
    for make in (lambda v: v, pickle.loads, copy.copy, copy.deepcopy):
        lazy, whole, _ = _lazy_and_whole()
        value = pickle.dumps(lazy) if make is pickle.loads else lazy
        assert make(value) == whole
    lazy, whole, history = _lazy_and_whole()
    history.lock = threading.Lock()  # View.lazy takes any history, one that cannot be pickled or copied too:
    assert pickle.loads(pickle.dumps(lazy)) == whole  # no pickle holds it
    copied = copy.deepcopy(lazy)  # nor a deep copy
    assert copied == whole and copied.model_fields_set == whole.model_fields_set
    lazy, whole, _ = _lazy_and_whole()
    assert lazy.model_dump() == whole.model_dump() and list(lazy.model_dump()) == list(type(whole).model_fields)
    lazy, whole, _ = _lazy_and_whole()
    assert repr(lazy) == repr(whole) and dict(lazy) == dict(whole) and lazy.model_dump_json() == whole.model_dump_json()
    assert [name for name, _ in lazy] == [name for name, _ in whole] == list(type(whole).model_fields)
    lazy, whole, _ = _lazy_and_whole()
    assert lazy.model_copy(update={"current_version_id": 1}).current_version.version_id == 1
    lazy, whole, _ = _lazy_and_whole()
    assert lazy.version(1) is whole.versions[0]
    with pytest.raises(ValidationError, match="no version 7; it has 1-2"):
        lazy.version(7)
    with pytest.raises(TypeError):
        hash(lazy)  # a dict of properties: no View is hashable
    assert type(whole).model_json_schema(mode="serialization") == type(whole).model_json_schema()


def test_a_view_built_whole_finds_a_version_by_its_id_and_is_equal_to_no_value_of_another_kind():
    lazy, whole, _ = _lazy_and_whole()
    assert whole.version(1) is whole.versions[0] and whole.version(2) is whole.versions[1]
    with pytest.raises(ValidationError, match="^view a.v has no version 7; it has 1-2$"):
        whole.version(7)
    for view in (whole, lazy):
        assert view != dict(whole) and view != ("a", "v") and view != 1
    assert whole.__eq__(dict(whole)) is NotImplemented  # as pydantic's: the other side may know better


@pytest.mark.parametrize("version_id", ["1", 1.0, True, None])
def test_a_version_asked_for_by_no_int_is_refused_as_such(version_id):
    """An id of another type (the text of a CLI argument, say) is not "no version 1; it has 1-2":
    the message says the id must be an int, as rollback_view's does, for a lazy View and a whole one."""
    lazy, whole, _ = _lazy_and_whole()
    for view in (lazy, whole):
        with pytest.raises(ValidationError) as raised:
            view.version(version_id)
        assert str(raised.value) == f"a version id must be an integer, not {version_id!r}"
    assert lazy.version(1) == whole.version(1) == whole.versions[0]  # an int still finds its version


@pytest.mark.parametrize("change", [lambda d: d.__setitem__("k", "v"), lambda d: d.__delitem__("comment"),
                                    lambda d: d.pop("comment"), lambda d: d.popitem(), lambda d: d.setdefault("k", "v"),
                                    lambda d: d.update(k="v"), lambda d: d.clear(), lambda d: d.__ior__({"k": "v"})])
def test_a_view_s_properties_and_a_version_s_summary_refuse_a_change_however_the_view_was_made(change):
    """Built lazily, built whole (validated), copied, pickled or read back from its dump, a View holds
    read-only dicts, and a version's summary is one by default too."""
    import copy
    import pickle

    from viewstore.model import ReadOnlyDict, View

    lazy, whole, _ = _lazy_and_whole()
    summarized = ViewVersion(version_id=1, timestamp_ms=1, schema_id=0, columns=(Column("x", "int"),),
                             representations=(SQLRepresentation("spark", "SELECT 1"),), summary={"comment": "s"})
    views = [lazy, whole, copy.copy(lazy), copy.deepcopy(whole), pickle.loads(pickle.dumps(lazy)),
             View.model_validate(whole.model_dump()), View.model_validate_json(whole.model_dump_json())]
    maps = [*(v.properties for v in views), *(v.summary for v in views), summarized.summary,
            copy.deepcopy(summarized).summary, ViewVersion.model_construct().summary]
    for held in maps:
        assert type(held) is ReadOnlyDict
        before = dict(held)
        with pytest.raises(TypeError, match="^a View is read-only"):
            change(held)
        assert held == before
    assert all(v.properties == {"comment": "c"} and v == whole for v in views)


class _DamagedHistory(_History):
    """A ViewHistory whose versions cannot be built (a damaged row in the store)."""

    def versions(self):
        from viewstore.errors import CorruptLogError

        raise CorruptLogError("damaged; rebuild() repairs it")


@pytest.mark.parametrize("dump", [lambda v: v.model_dump(), lambda v: v.model_dump(mode="json"),
                                  lambda v: v.model_dump_json(), lambda v: v.model_dump(include={"uuid"})])
def test_a_lazy_view_that_cannot_build_its_history_fails_a_dump_with_that_error(dump):
    """The history is built before the dump: pydantic would wrap the error in its own
    PydanticSerializationError, which is no ViewStoreError."""
    from viewstore.errors import CorruptLogError
    from viewstore.model import View

    lazy, whole, _ = _lazy_and_whole()
    fields = {name: getattr(lazy, name) for name in View.model_fields if name not in ("versions", "version_log")}
    damaged = View.lazy(_DamagedHistory(whole.versions, whole.version_log), **fields)
    with pytest.raises(CorruptLogError, match="rebuild"):
        dump(damaged)


def test_sql_for_a_dialect_that_is_not_text_is_a_validation_error():
    """It was an AttributeError ('int' object has no attribute 'lower')."""
    lazy, whole, _ = _lazy_and_whole()
    for view in (lazy, whole):
        assert view.sql_for("SPARK") == "SELECT 2" and view.sql_for("trino") is None
        for bad in (5, None, b"spark"):
            with pytest.raises(ValidationError, match="a dialect is a string"):
                view.sql_for(bad)


def test_a_view_s_dialects_are_spelt_as_stored():
    assert _view(reps=(("Spark", "SELECT 1"), ("trino", "SELECT 1"))).dialects == ("Spark", "trino")


def test_a_view_s_namespace_is_every_level_before_its_name():
    view = _view(identifier=("a", "b", "c", "v"))
    assert (view.namespace, view.name) == (("a", "b", "c"), "v")


def test_a_view_s_current_version_accessors_read_the_current_version_not_the_first_or_the_last():
    """After a rollback the current version is neither the first nor the last: the View's accessors
    read the one its current_version_id names, built whole or lazily."""
    from viewstore.model import AuditInfo, View

    versions = tuple(ViewVersion(version_id=i, timestamp_ms=i, schema_id=i, columns=(Column(f"c{i}", "int"),),
                                 representations=(SQLRepresentation("spark", f"SELECT {i}"),),
                                 default_catalog=f"cat{i}", default_namespace=(f"ns{i}",), summary={"n": str(i)})
                     for i in (1, 2, 3))
    log = tuple(VersionLogEntry(timestamp_ms=i, version_id=v) for i, v in enumerate((1, 2, 3, 2), 1))
    fields = dict(identifier=("a", "v"), uuid="u", properties={}, security_mode="DEFINER", current_version_id=2,
                  audit=AuditInfo(creator="me", create_time_ms=1, last_modifier="me", last_modified_time_ms=4),
                  stream_version=4)
    for view in (View(**fields, versions=versions, version_log=log), View.lazy(_History(versions, log), **fields)):
        assert view.current_version is versions[1]
        assert (view.columns, view.representations, view.sql_for("spark")) == (versions[1].columns,
                                                                               versions[1].representations, "SELECT 2")
        assert (view.default_catalog, view.default_namespace, view.summary) == ("cat2", ("ns2",), {"n": "2"})


def test_a_trusted_audit_info_is_the_object_model_construct_makes():
    """AuditInfo.trusted (built for the View every write returns) skips model_construct's generic work,
    not its result: the same fields, fields set, extra and private values, so equality, dumps,
    copies and pickles cannot tell them apart."""
    import copy
    import pickle

    import pydantic

    from viewstore.model import AuditInfo

    trusted = AuditInfo.trusted("me", 1, "you", 2)
    made = AuditInfo.model_construct(creator="me", create_time_ms=1, last_modifier="you", last_modified_time_ms=2)
    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(trusted, name) == getattr(made, name), name
    assert list(trusted.__dict__) == list(AuditInfo.model_fields)  # the fields' order, as dumps show it
    assert trusted == made and trusted.model_dump_json() == made.model_dump_json()
    assert pickle.loads(pickle.dumps(trusted)) == made and copy.deepcopy(trusted) == made
    assert trusted == AuditInfo(creator="me", create_time_ms=1, last_modifier="you", last_modified_time_ms=2)
    assert trusted.model_fields_set is not AuditInfo.trusted("me", 1, "you", 2).model_fields_set  # one set each
    with pytest.raises(pydantic.ValidationError):
        trusted.creator = "other"  # frozen, as every model here


# -- diff_views -------------------------------------------------------------------------------


def _view(columns=(("x", "int"),), reps=(("spark", "SELECT 1 AS x"),), properties=None, version_id=1,
          identifier=("a", "v"), uuid="u", security_mode="DEFINER", default_catalog=None, default_namespace=("a",)):
    """A View of one current version, built whole (no store: diff_views compares values)."""
    from viewstore.model import AuditInfo, View

    version = ViewVersion(version_id=version_id, timestamp_ms=version_id, schema_id=0,
                          columns=tuple(Column(*c) for c in columns),
                          representations=tuple(SQLRepresentation(*r) for r in reps),
                          default_catalog=default_catalog, default_namespace=default_namespace)
    return View(identifier=identifier, uuid=uuid, properties=properties or {}, security_mode=security_mode,
                current_version_id=version_id, versions=(version,),
                version_log=(VersionLogEntry(timestamp_ms=version_id, version_id=version_id),),
                audit=AuditInfo(creator="me", create_time_ms=1, last_modifier="you", last_modified_time_ms=7),
                stream_version=version_id)


def test_diff_views_of_equal_views_is_no_change_and_says_which_views_it_compared():
    from viewstore.model import diff_views

    diff = diff_views(_view(), _view())
    assert not diff.changed
    assert diff.before == diff.after
    assert (diff.before.identifier, diff.before.uuid, diff.before.current_version_id, diff.before.stream_version,
            diff.before.last_modifier, diff.before.last_modified_time_ms) == (("a", "v"), "u", 1, 1, "you", 7)
    dumped = diff.model_dump(mode="json")
    assert dumped["changed"] is False and dumped["columns_added"] == [] and dumped["comment"] is None


def test_diff_views_pairs_columns_by_name_case_aside_and_says_what_changed_in_each():
    from viewstore.model import BeforeAfter, diff_views

    before = _view(columns=[("id", "int"), ("Amount", "decimal(10,2)", "in EUR"), ("gone", "string"),
                            ("flag", "boolean")])
    after = _view(columns=[("id", "bigint"), ("amount", "decimal(10,2)", "in EUR"), ("flag", "boolean", None, False),
                           ("new", "date", "added")])
    diff = diff_views(before, after)
    assert diff.changed
    assert diff.columns_added == (Column("new", "date", "added"),)
    assert diff.columns_removed == (Column("gone", "string"),)
    assert diff.columns_changed == (
        BeforeAfter[Column](before=Column("id", "int"), after=Column("id", "bigint")),
        BeforeAfter[Column](before=Column("Amount", "decimal(10,2)", "in EUR"),
                            after=Column("amount", "decimal(10,2)", "in EUR")),
        BeforeAfter[Column](before=Column("flag", "boolean"), after=Column("flag", "boolean", None, False)))
    assert diff.column_order is None  # the columns both sides have are in the same order
    comment = diff_views(_view(columns=[("x", "int", "old")]), _view(columns=[("x", "int", "new")]))
    assert [(c.before.comment, c.after.comment) for c in comment.columns_changed] == [("old", "new")]


def test_diff_views_says_when_the_columns_come_in_another_order():
    from viewstore.model import diff_views

    diff = diff_views(_view(columns=[("a", "int"), ("b", "int"), ("c", "int")]),
                      _view(columns=[("b", "int"), ("A", "int"), ("d", "int")]))
    assert diff.column_order.before == ("a", "b", "c") and diff.column_order.after == ("b", "A", "d")
    assert [c.after.name for c in diff.columns_changed] == ["A"] and diff.changed
    moved = diff_views(_view(columns=[("a", "int"), ("b", "int")]), _view(columns=[("b", "int"), ("a", "int")]))
    assert moved.changed and not moved.columns_changed
    assert (moved.column_order.before, moved.column_order.after) == (("a", "b"), ("b", "a"))
    added = diff_views(_view(columns=[("a", "int"), ("b", "int")]),
                       _view(columns=[("z", "int"), ("a", "int"), ("b", "int")]))
    assert added.column_order is None and [c.name for c in added.columns_added] == ["z"]


def test_diff_views_pairs_representations_by_dialect_case_aside():
    from viewstore.model import diff_views

    before = _view(reps=[("spark", "SELECT 1 AS x"), ("Trino", "SELECT 1 AS x"), ("hive", "SELECT 1 AS x")])
    after = _view(reps=[("spark", "SELECT 2 AS x"), ("trino", "SELECT 1 AS x"), ("flink", "SELECT 1 AS x")])
    diff = diff_views(before, after)
    assert diff.representations_added == (SQLRepresentation("flink", "SELECT 1 AS x"),)
    assert diff.representations_removed == (SQLRepresentation("hive", "SELECT 1 AS x"),)
    changed = [(r.before.dialect, r.before.sql, r.after.dialect, r.after.sql) for r in diff.representations_changed]
    assert changed == [("spark", "SELECT 1 AS x", "spark", "SELECT 2 AS x"),
                       ("Trino", "SELECT 1 AS x", "trino", "SELECT 1 AS x")]  # a dialect's spelling is stored text


def test_diff_views_reports_properties_and_keeps_the_comment_apart():
    from viewstore.model import diff_views

    before = _view(properties={"comment": "old", "kept": "1", "changed": "a", "removed": "r"})
    after = _view(properties={"comment": "new", "kept": "1", "changed": "b", "added": "n"})
    diff = diff_views(before, after)
    assert (diff.comment.before, diff.comment.after) == ("old", "new")
    assert diff.properties_added == {"added": "n"} and diff.properties_removed == {"removed": "r"}
    assert {k: (v.before, v.after) for k, v in diff.properties_changed.items()} == {"changed": ("a", "b")}
    gone = diff_views(before, _view(properties={"kept": "1", "changed": "a", "removed": "r"}))
    assert (gone.comment.before, gone.comment.after) == ("old", None) and not gone.properties_removed
    assert diff_views(_view(properties={"k": "v"}), _view(properties={"k": "v"})).changed is False


def test_diff_views_reports_the_security_mode_and_defaults():
    from viewstore.model import diff_views

    diff = diff_views(_view(), _view(security_mode="INVOKER", default_catalog="prod", default_namespace=("b", "c")))
    assert (diff.security_mode.before, diff.security_mode.after) == ("DEFINER", "INVOKER")
    assert (diff.default_catalog.before, diff.default_catalog.after) == (None, "prod")
    assert (diff.default_namespace.before, diff.default_namespace.after) == (("a",), ("b", "c"))
    assert diff.changed and not diff.columns_changed and not diff.representations_changed


@pytest.mark.parametrize("other", [dict(identifier=("a", "w")), dict(uuid="another"), dict(version_id=2)])
def test_a_diff_of_views_that_differ_only_in_name_uuid_or_version_is_a_change(other):
    from viewstore.model import diff_views

    diff = diff_views(_view(), _view(**other))
    assert diff.changed and diff.model_dump()["changed"] is True
    assert not (diff.columns_added or diff.columns_changed or diff.representations_changed or diff.comment)


def test_diff_views_takes_views_only():
    from viewstore.model import diff_views

    for before, after in ((None, _view()), (_view(), {"identifier": "a.v"})):
        with pytest.raises(ValidationError, match="must be a View"):
            diff_views(before, after)


def test_a_view_diff_is_frozen():
    from viewstore.model import diff_views

    diff = diff_views(_view(), _view(version_id=2))
    with pytest.raises(ValueError, match="frozen"):  # pydantic's own error
        diff.comment = None
    assert diff.changed


def test_a_change_of_case_alone_is_a_change_where_the_store_keeps_the_text():
    from viewstore.model import diff_views

    before = _view(properties={"comment": "Orders", "k": "A"}, default_catalog="Prod", default_namespace=("a",))
    after = _view(properties={"comment": "orders", "k": "a"}, default_catalog="prod", default_namespace=("A",),
                  reps=[("spark", "select 1 as x")])
    diff = diff_views(before, after)
    assert (diff.comment.before, diff.comment.after) == ("Orders", "orders")
    assert {k: (v.before, v.after) for k, v in diff.properties_changed.items()} == {"k": ("A", "a")}
    assert (diff.default_catalog.before, diff.default_catalog.after) == ("Prod", "prod")
    assert (diff.default_namespace.before, diff.default_namespace.after) == (("a",), ("A",))
    assert [(r.before.sql, r.after.sql) for r in diff.representations_changed] == [("SELECT 1 AS x", "select 1 as x")]


def test_same_uuid_is_one_uuid_text_in_either_case_and_nothing_else():
    """Two spellings are one UUID when they are the same text, or both UUID texts that differ only in
    the case of their hex digits; text that is no UUID is compared as it is written, and what is no
    text is no UUID, not even equal to itself (a metadata file's view-uuid may be null)."""
    uuid = "0abcdef1-2345-4abc-8def-00000000000a"
    assert same_uuid(uuid, uuid) and same_uuid(uuid, uuid.upper()) and same_uuid(uuid.upper(), uuid)
    assert same_uuid("0AbCdEf1-2345-4ABC-8dEf-00000000000A", uuid)
    assert not same_uuid(uuid, uuid[:-1] + "b") and not same_uuid(uuid, uuid[:-1])
    assert same_uuid("not a uuid", "not a uuid")
    assert not same_uuid("not a uuid", "NOT A UUID") and not same_uuid(uuid[:-1], uuid[:-1].upper())
    assert not same_uuid(uuid + "0", uuid.upper() + "0")  # one digit too many: no UUID
    assert not same_uuid(uuid, uuid[:-1].upper() + "G") and not same_uuid("g" + uuid[1:], "G" + uuid[1:])
    for other in (None, 42, b"0abcdef1-2345-4abc-8def-00000000000a", ["x"]):
        assert not same_uuid(other, other) and not same_uuid(other, uuid) and not same_uuid(uuid, other)
