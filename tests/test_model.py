import pytest

from viewstore import Column, SQLRepresentation, ValidationError
from viewstore.model import to_identifier, to_namespace


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
