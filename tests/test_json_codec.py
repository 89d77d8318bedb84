"""The log's JSON codec (orjson) writes and reads exactly what the json module would, for what the store holds."""

import json

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from viewstore import ValidationError
from viewstore.log import dumps, loads

# what the store ever writes: model_dump(mode="json") of events and projection state (no floats)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)  # Cs: lone surrogates, refused
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def reference(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_dumps_is_byte_for_byte_json_dumps(value):
    assert dumps(value) == reference(value)
    assert loads(dumps(value)) == value == json.loads(reference(value))


@pytest.mark.parametrize("text", ['{"a":1,"a":2}', '"\\u00e9\\n\\t\\"\\\\"', "[1e2, 0.5, -0]", '{"k": [true, null]}',
                                  "12345678901234567890", "-9223372036854775808", '"\\ud83d\\ude00"'])
def test_loads_agrees_with_json_loads(text):
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "{", "[1,]", "nope", '{"a" 1}'])
def test_loads_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, {"version-id": 2**70}])
def test_an_integer_beyond_64_bits_is_a_validation_error(value):
    with pytest.raises(ValidationError, match="64-bit"):
        dumps(value)


def test_a_lone_surrogate_is_a_validation_error():
    with pytest.raises(ValidationError, match="^cannot store this value as JSON: str is not valid UTF-8: "
                                              "surrogates not allowed$"):
        dumps({"comment": "a\ud800"})
