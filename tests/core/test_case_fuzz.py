"""Malformed case objects, generated: ``assign`` answers with a LagassignError (one line in the
CLI), never with another exception."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from lagassign import assign
from lagassign.core.errors import LagassignError

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=4)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _member(id_, topics, owned):
    return {"id": id_, "topics": topics, "owned": owned}


members = st.lists(
    st.one_of(
        values,
        st.builds(
            _member,
            st.one_of(st.sampled_from(["C0", "C1", ""]), values),
            st.one_of(st.just(["t0"]), values),
            st.one_of(st.just([["t0", 0]]), values),
        ),
    ),
    max_size=3,
)
partitions = st.lists(
    st.one_of(
        values,
        st.fixed_dictionaries(
            {"topic": st.one_of(st.just("t0"), values), "partition": st.one_of(st.integers(-1, 2), values)},
            optional={"lag": values, "begin": values, "end": values, "committed": values},
        ),
    ),
    max_size=4,
)
cases = st.one_of(
    values,
    st.fixed_dictionaries(
        {"members": members, "partitions": partitions},
        optional={"group": values, "auto_offset_reset": st.one_of(st.sampled_from(["latest", "x"]), values)},
    ),
)


@settings(max_examples=300)
@given(cases, st.sampled_from(["range", "sticky", "lag-optimal", "cooperative-sticky", "constrained-sticky"]))
def test_assign_never_raises_anything_but_a_lagassign_error(case, strategy):
    try:
        out = assign(case, strategy)
    except LagassignError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert set(out) >= {"strategy", "assignment", "metrics"}


@settings(max_examples=15)
@given(cases)
def test_cli_answers_malformed_cases_with_one_line_and_no_traceback(cli_main, case):
    """The command's ``main`` in this process (``cli_main``): an exception it does not turn into
    one line fails the test as the traceback would."""
    result = cli_main("assign", "--strategy", "lag", "-", stdin=json.dumps(case, allow_nan=True))
    assert "Traceback" not in result.stderr
    if result.returncode != 0:
        assert result.returncode == 2 and result.stderr.count("\n") == 1
