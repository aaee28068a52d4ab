"""native.searchsorted: numpy's indices, whatever the needles' order, from the galloping C search."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native

I64 = np.iinfo(np.int64)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(-40, 40), max_size=300), st.lists(st.integers(-45, 45), min_size=native._SEARCH_MIN, max_size=400),
       st.sampled_from(["left", "right"]), st.sampled_from(["any", "sorted", "reversed"]), st.booleans())
def test_the_galloping_search_gives_numpys_indices(hay, needles, side, order, extremes) -> None:
    """Duplicates in the haystack (runs of equal offsets), needles before, inside and after it, in any
    order (each search starts from the previous answer: sorted, reversed and shuffled needles all
    gallop differently), the int64 extremes."""
    assert native.available(), native.status()
    a = np.sort(np.asarray(hay + ([I64.min, I64.max] if extremes else []), dtype=np.int64))
    v = np.asarray(needles + ([I64.min, I64.max, 0] if extremes else []), dtype=np.int64)
    if order == "sorted":
        v = np.sort(v)
    elif order == "reversed":
        v = np.sort(v)[::-1].copy()
    got = native.searchsorted(a, v, side)
    assert got.dtype == np.int64
    assert got.tolist() == np.searchsorted(a, v, side=side).tolist()


def test_long_sorted_needles_take_the_compiled_path_and_agree() -> None:
    """Over the threshold of needles the kernel answers (a wrong kernel would show here, not only in the
    fallback); other types and few needles give numpy's answer too."""
    rng = np.random.default_rng(7)
    a = np.sort(rng.integers(0, 10**6, 50_000)).astype(np.int64)
    v = np.sort(rng.integers(-5, 10**6 + 5, 5_000)).astype(np.int64)
    assert v.size >= native._SEARCH_MIN
    for side in ("left", "right"):
        assert np.array_equal(native.searchsorted(a, v, side), np.searchsorted(a, v, side=side))
        assert np.array_equal(native.searchsorted(a.astype(np.int32), v.astype(np.int32), side),
                              np.searchsorted(a, v, side=side))
        assert np.array_equal(native.searchsorted(a, v[:3], side), np.searchsorted(a, v[:3], side=side))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\t", "|", "b\n", "中", "😀", "||", "x\t"]), max_size=60).map("".join),
       st.lists(st.tuples(st.integers(-3, 70), st.integers(0, 12)), max_size=40),
       st.sampled_from(["any", "sorted", "reversed"]), st.sampled_from([np.uint8, np.uint16, np.uint32]))
def test_the_span_search_finds_what_a_search_of_the_whole_text_finds(text, spans, order, dtype) -> None:
    """``native.spans_any`` (whether a tab or a ``|`` lies in each span, each character read once for spans in
    order) gives what the soft-wrap reader's numpy search gives (the set's offsets, then a count per span), for
    spans in order, reversed or shuffled, overlapping, empty and past either end of the text, in every code
    unit width."""
    from logichunk.text.charclass import codepoints
    from logichunk.text.soft_wraps import _TABLE_BIT, _WRAP_CLASSES

    cp = codepoints(text)
    if dtype != np.uint32:
        if int(cp.max(initial=0)) > np.iinfo(dtype).max:
            return
        cp = cp.astype(dtype)
    a = np.array([s for s, _ in spans], np.int64)
    b = a + np.array([k for _, k in spans], np.int64)
    if order == "sorted":
        a, b = a[np.argsort(a, kind="stable")], b[np.argsort(a, kind="stable")]
    elif order == "reversed":
        a, b = a[np.argsort(-a, kind="stable")], b[np.argsort(-a, kind="stable")]
    got = native.spans_any(cp, _WRAP_CLASSES, _TABLE_BIT, a, b)
    tab = np.flatnonzero((cp == 0x09) | (cp == 0x7C))
    lo, hi = np.clip(a, 0, cp.size), np.clip(b, 0, cp.size)
    assert got.tolist() == (np.searchsorted(tab, hi) > np.searchsorted(tab, lo)).tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 5), st.integers(1, 4), st.sampled_from(["u1", "i4", "i8", "f8", "u8", "?"]))
def test_the_data_address_read_from_the_array_is_what_ctypes_gives(n, start, step, dtype) -> None:
    """native._ptr (the data pointer read past the array object's header, what the wrappers pass to kernels) is
    ``a.ctypes.data`` for arrays, slices, strided and 2-d views and empty arrays; on CPython the header's size is
    found, so the fast read is the one taken."""
    assert native._DATA_AT is not None
    base = np.zeros(n, dtype)
    for a in (base, base[start:], base[::step], base[start::step], np.zeros((n, 3), dtype)[start:, 1:],
              np.asarray(base.tolist(), dtype)):
        assert native._ptr(a) == a.ctypes.data or (a.ctypes.data == 0 and native._ptr(a) is None)


def test_the_data_address_is_never_read_from_an_id_outside_cpython(monkeypatch) -> None:
    """Outside CPython an id is no address: the probe would read stray memory, so it is not made and the wrappers
    pass ``.ctypes.data``."""
    import types

    monkeypatch.setattr(native.sys, "implementation", types.SimpleNamespace(name="pypy"))
    assert native._data_at() is None
