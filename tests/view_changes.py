"""Hypothesis strategies for the random operation sequences (tests/test_state_machine.py,
tests/test_cache_freshness.py, tests/test_reference_model.py): dialects, SQL texts and ViewChange
batches, valid or not."""

import hypothesis.strategies as st

from viewstore import SQLRepresentation, ViewChange

DIALECTS = st.sampled_from(["spark", "trino", "Hive", "flink"])
SQL = st.sampled_from(["SELECT 1", "SELECT 2 AS x", "SELECT * FROM t", "select\n  y\nfrom u -- ✓"])
CHANGES = st.one_of(
    st.builds(ViewChange.update_comment, st.one_of(st.none(), st.sampled_from(["c1", "c2"]))),
    st.builds(ViewChange.set_property, st.sampled_from(["k1", "k2", "replace.drop-dialect.allowed"]),
              st.sampled_from(["true", "v"])),
    st.builds(ViewChange.remove_property, st.sampled_from(["k1", "k2"])),
    st.builds(lambda d, s: ViewChange.add_representation(SQLRepresentation(d, s)), DIALECTS, SQL),
    st.builds(ViewChange.update_representation, DIALECTS, SQL),
    st.builds(ViewChange.remove_representation, DIALECTS),
    st.builds(ViewChange.rename, st.sampled_from(["v1", "v5"])),
)
