import pytest

from viewstore import Column, SQLRepresentation, ValidationError
from viewstore.model import VersionLogEntry, ViewVersion, to_identifier, to_namespace


def test_identifiers():
    assert to_identifier("Sales.Daily") == ("sales", "daily")
    assert to_identifier(("a", "b", "C")) == ("a", "b", "c")
    for bad in ("v", "", ".v", "a..b", ("a",), ("a", " b"), ("a", "b\x00"), ("a.b", "c"), 7, ("a", 3)):
        with pytest.raises(ValidationError):
            to_identifier(bad)
    assert to_namespace("a.b") == ("a", "b")
    with pytest.raises(ValidationError):
        to_namespace(())


def test_columns_and_representations_take_positional_arguments():
    c = Column("amount", "decimal(18, 2)", "in EUR", False)
    assert (c.name, str(c.type), c.comment, c.nullable) == ("amount", "decimal(18,2)", "in EUR", False)
    r = SQLRepresentation("Trino", "SELECT 1")
    assert (r.dialect, r.sql) == ("Trino", "SELECT 1")
    assert c.model_dump(mode="json") == {"name": "amount", "type": "decimal(18,2)", "comment": "in EUR",
                                         "nullable": False}
    with pytest.raises(ValidationError):
        Column("x", "int", extra=1)
    with pytest.raises(ValidationError):
        SQLRepresentation(" spark", "SELECT 1")
    with pytest.raises(ValidationError):
        SQLRepresentation("spark", 5)


@pytest.mark.parametrize("field, value", [("version_id", 2**31), ("schema_id", -(2**31) - 1), ("timestamp_ms", 2**63),
                                          ("version_id", "1"), ("version_id", True), ("timestamp_ms", 1.0)])
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


def test_id_ranges_shorten_runs_of_version_ids():
    from viewstore.model import id_ranges

    assert id_ranges([5, 1, 2, 3, 7, 8, 10]) == "1-3, 5, 7-8, 10"
    assert id_ranges(range(1, 3001)) == "1-3000" and id_ranges([4]) == "4" and id_ranges([]) == "none"
