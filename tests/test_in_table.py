"""The text layer's set membership by table (:func:`logichunk.text._arrays._in_table`) gives the same answers from
its compiled pass (:func:`logichunk.native.in_table`) as from its numpy passes: values below 0, past the table's
end, at its last entry, of either type the kernel reads, in any shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import _arrays

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=300), st.lists(st.integers(-400, 700), max_size=600),
       st.sampled_from([np.uint32, np.int64]), st.booleans())
def test_the_kernel_answers_as_the_numpy_passes(table: list[bool], values: list[int], dtype: type, square: bool
                                                ) -> None:
    t = np.asarray(table, bool)
    v = np.asarray([x % 1000 for x in values] if dtype is np.uint32 else values, dtype)
    if square and v.size >= 4:  # (a 2-D block, read through a strided view: the kernel reads a copy)
        k = int(np.sqrt(v.size))
        v = v[: k * k].reshape(k, k)[:, ::-1]
    want = _arrays._in_table_passes(t, v)
    got = native.in_table(t, v)
    assert got is not None and got.dtype == np.bool_ and got.shape == v.shape
    assert np.array_equal(got, want)
    assert np.array_equal(_arrays._in_table(t, v), want)


def test_the_edges_of_the_table() -> None:
    t = np.zeros(5, bool)
    t[[0, 4]] = True
    v = np.array([-1, 0, 1, 4, 5, 2**40, -(2**40)], np.int64)
    assert native.in_table(t, v).tolist() == [False, True, False, True, False, False, False]
    assert native.in_table(t, np.array([0, 4, 5, 2**32 - 1], np.uint32)).tolist() == [True, True, False, False]


def test_what_the_kernel_does_not_read_is_left_to_numpy() -> None:
    t = np.ones(4, bool)
    assert native.in_table(t, np.array([1, 2], np.int32)) is None  # (another value type)
    assert native.in_table(np.zeros(0, bool), np.array([1], np.int64)) is None  # (an empty set)
    assert native.in_table(t.view(np.uint8), np.array([1], np.int64)) is None  # (a table that is no bool table)
    v = np.arange(-3, 2 * _arrays._KERNEL_MIN, dtype=np.int32)
    assert np.array_equal(_arrays._in_table(t, v), (v >= 0) & (v < 4))
