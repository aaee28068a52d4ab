"""The cascade's level work made faster without changing a bit: each compiled shortcut against the numpy
passes (or the slower path) it replaces, on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import native
from logichunk.boundaries import scatter as bd_scatter
from logichunk.signals import cohesion
from logichunk.sparse_rows import GroupedRows, SparseRows


def _rows_and_groups(n: int, ncol: int, density: float, groups: int, dropped: float, seed: int
                     ) -> tuple[SparseRows, np.ndarray, int]:
    """Sparse rows of mixed scales and a grouping of them (sorted, some rows left out), as the glued atoms
    of a level make one."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, ncol)) * (rng.random((n, ncol)) < density) * 10.0 ** rng.integers(-6, 7, (n, ncol))
    grp = np.sort(rng.integers(0, groups, n))
    grp[rng.random(n) < dropped] = -1
    return SparseRows.from_dense(X), grp.astype(np.int64), groups


problems = st.tuples(st.integers(1, 300), st.integers(1, 6), st.floats(0.0, 1.0), st.integers(1, 60),
                     st.floats(0.0, 0.5), st.integers(0, 2**31 - 1))


@settings(max_examples=400, deadline=None)
@given(problems, st.integers(1, 12), st.integers(1, 80))
def test_the_fused_group_band_is_the_band_of_the_grouped_rows_to_the_last_bit(problem, w, max_size):
    """native.group_band (the rows grouped and their band walked in one pass) against the numpy twin: the
    rows grouped by numpy's reduceat, then the numpy band walk; and gram_band of rows not grouped yet is
    that band, with or without the kernel."""
    assert native.available(), native.status()
    S, grp, m = _rows_and_groups(*problem)
    sizes = np.random.default_rng(problem[-1]).integers(1, 20, m)
    lo = np.maximum(bd.earliest_starts(sizes, max_size), np.arange(m + 1) - w)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "group_entries", lambda *a: None)
        G = S.group(grp, m)
    want = bd_scatter._band_numpy(G.row, G.col, G.val, lo, m, w)
    got = native.group_band(S.row, S.col, S.val, grp, m, w, lo)
    assert got is not None and got.shape == (m, w)
    assert got.tobytes() == want.tobytes()
    fused = bd.gram_band(GroupedRows(S, grp, m), w, lo)
    assert fused.tobytes() == bd.gram_band(S.group(grp, m), w, lo).tobytes() == want.tobytes()
    with pytest.MonkeyPatch.context() as mp:  # no kernel: the rows are grouped first, the same band
        mp.setattr(native, "group_band", lambda *a: None)
        assert bd.gram_band(GroupedRows(S, grp, m), w, lo).tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(problems, st.integers(1, 12), st.integers(1, 80), st.booleans(), st.floats(0.0, 0.3))
def test_the_band_laid_out_by_reach_holds_every_product_a_window_reads(problem, w, max_size, grouped, fixing):
    """The band laid out row by row only as far as the windows reach (native.fit_reach: each row's longest window
    from it, as the offsets of a flat band; what the compiled choice reads) holds the n x w band's products of
    each row to the last bit, and the n x w band holds nothing past a row's reach: no product the walk writes
    falls outside the layout."""
    assert native.available(), native.status()
    S, grp, m = _rows_and_groups(*problem)
    X = GroupedRows(S, grp, m) if grouped else S
    n = m if grouped else S.n
    rng = np.random.default_rng(problem[-1])
    sizes = rng.integers(1, 20, n)
    fixed = rng.random(max(n - 1, 0)) < fixing
    lo = np.maximum(bd.earliest_starts(sizes, max_size, fixed), np.arange(n + 1) - w)
    reach = [max([1] + [b - s for b in range(s + 1, n + 1) if lo[b] <= s]) for s in range(n)]
    full = bd.gram_band(X, w, lo)
    laid = bd_scatter._gram_band(X, w, lo, flat=True)
    if not isinstance(laid, tuple):  # (no entries: no kernel ran, the n x w band of zeros)
        assert laid.tobytes() == full.tobytes()
        return
    flat, off = laid
    assert np.diff(off).tolist() == reach
    for s, k in enumerate(reach):
        assert flat[off[s] : off[s + 1]].tobytes() == full[s, :k].tobytes()
        assert not full[s, k:].any()


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
def test_the_reach_of_each_row_is_its_longest_window(n, w, seed, ordered):
    """native.fit_reach against the windows themselves, for a block of rows and ends: the longest window from each
    row (at least 1), whether the earliest starts never decrease (the cascade's, read in one pass) or do."""
    assert native.available(), native.status()
    rng = np.random.default_rng(seed)
    lo = np.maximum(np.arange(n + 1) - rng.integers(1, w + 1, n + 1), 0)
    if ordered:
        lo = np.maximum.accumulate(lo)
    r0 = int(rng.integers(0, n))
    b0 = int(rng.integers(r0 + 1, n + 1))
    b1 = int(rng.integers(b0, n + 1))
    lo[b0 : b1 + 1] = np.maximum(lo[b0 : b1 + 1], r0)  # (a block's ends reach no row before it)
    off = native.fit_reach(r0, b1 - r0, lo, b0, b1)
    want = [max([1] + [b - s for b in range(b0, b1 + 1) if lo[b] <= s < b]) for s in range(r0, b1)]
    assert off is not None and np.diff(off).tolist() == want


def test_a_band_laid_out_shorter_than_the_windows_read_is_left_to_the_numpy_passes():
    """native.fit_cuts reads no row of a laid-out band past its end: where a window would (a band laid out for
    other windows), it answers None, and fit_global then decides by the numpy passes."""
    assert native.available(), native.status()
    n, w = 6, 3
    lo = np.maximum(np.arange(n + 1) - w, 0)
    band = (np.ones(n), np.arange(n + 1, dtype=np.int64))  # (each row one product long: windows read three)
    args = (n, w, None, np.ones(n), lo, np.arange(n + 1) * 10, np.zeros(n), 30.0, 1.0, np.zeros(n),
            np.zeros(n + 1, bool))
    assert native.fit_cuts(iter([(0, band, 1, n)]), *args) is None
    full = (np.ones(n * w), np.arange(n + 1, dtype=np.int64) * w)
    assert native.fit_cuts(iter([(0, full, 1, n)]), *args) is not None


@settings(max_examples=200, deadline=None)
@given(problems, st.integers(2, 60), st.floats(0.0, 0.6), st.booleans())
def test_the_glued_choice_through_the_fused_band_is_the_same(problem, max_size, glued, with_atoms):
    """fit_global over glued atoms of sparse rows (the cascade's call: rows of the whole text, its atoms, a
    price per atom) gives the same cuts whether the band of the glued sums comes from the fused kernel, from
    the grouped rows, or from the numpy passes (no kernel at all)."""
    S, _, _ = _rows_and_groups(*problem)
    rng = np.random.default_rng(problem[-1] + 1)
    atoms = np.flatnonzero(rng.random(S.n) < 0.8) if with_atoms else None
    n = S.n if atoms is None else atoms.size
    if n < 2:
        return
    sizes = rng.integers(1, 12, n)
    reward = np.round(rng.normal(size=n - 1), 2)
    glue = rng.random(n - 1) < glued
    fixed = (rng.random(n - 1) < 0.05) & ~glue
    pen = np.round(rng.random(S.n), 2)
    lim = bd.SizeLimits(max_size, target=max(1, max_size // 2))

    def cuts() -> list[int]:
        return bd.fit_global(sizes, S, reward, lim, fixed=fixed, glue=glue, atoms=atoms,
                             penalty=pen if atoms is None else pen[atoms]).tolist()

    got = cuts()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "group_band", lambda *a: None)
        assert cuts() == got
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "_lib", None)
        mp.setattr(native, "_why", "off in this test")
        assert not native.available()
        assert cuts() == got


words = st.sampled_from(["rivers", "river", "flow", "markets", "price", "goods", "sea", "The", "a", "of", "河流",
                         "市场", "价格", "海", "x2", "Über", ". ", "\n", "。"])


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=1, max_size=80), st.data())
def test_rows_and_keys_found_once_are_the_rows_and_keys(parts, data):
    """lexical_rows_keys (the spans' items found once, the ranges of tiling spans read off each other) gives
    lexical_rows' rows and span_keys' keys, bit for bit; and the item ranges of spans that tile are those two
    searches give."""
    text = " ".join(parts)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=20))) - {len(text)})
    edges = np.array([0, *cuts, len(text)], np.int64)
    starts, ends = edges[:-1], edges[1:]
    if data.draw(st.booleans()) and starts.size > 1:  # spans that leave gaps: searched both ways
        ends = ends.copy()
        ends[:-1] = np.maximum(starts[:-1], ends[:-1] - 1)
    rows, keys = cohesion.lexical_rows_keys(text, starts, ends)
    want = cohesion.lexical_rows(text, starts, ends)
    assert (rows.n, rows.ncol) == (want.n, want.ncol)
    for a, b in ((rows.row, want.row), (rows.col, want.col), (rows.val, want.val), (rows.sqnorms(), want.sqnorms())):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert keys.tobytes() == cohesion.span_keys(text, starts, ends).tobytes()
    allpos, _ = cohesion.content_items(text)
    _, lo, hi = cohesion._item_ranges(text, starts, ends)
    assert lo.tolist() == np.searchsorted(allpos, starts).tolist()
    assert hi.tolist() == np.searchsorted(allpos, ends).tolist()


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 200), st.integers(1, 40), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))
def test_the_compiled_lexical_weights_are_the_numpy_weights_to_the_last_bit(n, ncol, density, seed):
    """native.lexical_weights (each row's norm taken once) against lexical_rows' numpy passes: the same weights
    and squared norms, bit for bit, with rows of no entry and rows whose items all weigh 0 (norm 0: left as
    they are)."""
    assert native.available(), native.status()
    rng = np.random.default_rng(seed)
    mask = rng.random((ncol, n)) < density
    col, row = np.nonzero(mask)  # by column, then row
    row, col = row.astype(np.int32), col.astype(np.int32)
    cnt = rng.integers(1, 9, row.size).astype(np.int32)
    idf = rng.random(ncol) * 10.0 ** rng.integers(-3, 4, ncol) * (rng.random(ncol) < 0.8)
    got = native.lexical_weights(row, col, cnt, idf, n)
    assert got is not None
    w = np.sqrt(cnt) * idf[col]
    norm = np.sqrt(np.bincount(row, weights=w * w, minlength=n))
    w = w / np.where(norm > 0, norm, 1.0)[row]
    assert got[0].tobytes() == w.tobytes()
    assert got[1].tobytes() == np.bincount(row, weights=w * w, minlength=n).tobytes()


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400), st.floats(0.0, 1.0), st.integers(0, 60), st.sampled_from([0, 1, 50, 300, 2**62]),
       st.integers(0, 2**31 - 1))
def test_the_compiled_partition_is_the_numpy_passes(n, density, top, max_size, seed):
    """native.parts (one pass: each atom's part, whether each part fits, the gaps inside a part that fits) against
    the numpy passes it replaces in the cascade's _parts and _fits_whole (a cumsum, a bincount of the sizes as
    floats, a gather): the same ids, the same answers, and the same through _parts and _fits_whole either way."""
    from logichunk.chunkers import logic_chain as lc

    assert native.available(), native.status()
    rng = np.random.default_rng(seed)
    cut = rng.random(n - 1) < density
    sizes = rng.integers(0, top + 1, n)
    ids = np.zeros(n, np.int64)
    np.cumsum(cut, out=ids[1:])
    fits = np.bincount(ids, weights=sizes) <= max_size
    got = native.parts(cut, sizes, max_size, whole=True)
    assert got is not None and got[2] is not None
    assert got[0].tolist() == ids.tolist()
    assert got[1].tolist() == fits.tolist()
    assert got[2].tolist() == (~cut & fits[ids[:-1]]).tolist()
    fast = lc._parts(cut, sizes, max_size), lc._fits_whole(cut, sizes, max_size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "parts", lambda *a, **k: None)
        slow = lc._parts(cut, sizes, max_size), lc._fits_whole(cut, sizes, max_size)
    assert fast[0][0].tolist() == slow[0][0].tolist() and fast[0][1].tolist() == slow[0][1].tolist()
    assert fast[1].tolist() == slow[1].tolist()


def test_the_compiled_partition_leaves_other_inputs_to_numpy():
    """Sizes that are not int64, a limit that is no integer or past int64, or no atom: the numpy passes decide."""
    cut = np.array([True, False])
    assert native.parts(cut, np.array([1.0, 2.0, 3.0]), 3) is None
    assert native.parts(cut, np.array([1, 2, 3]), 2.5) is None
    assert native.parts(cut, np.array([1, 2, 3]), 2**63) is None
    assert native.parts(np.zeros(0, bool), np.zeros(0, np.int64), 3) is None
    assert native.parts(cut.astype(np.int64), np.array([1, 2, 3]), 3) is None


_pieces = st.sampled_from(["Word ", "more words here. ", "A sentence ends. ", "Why? ", "\n", "\n\n", "# Heading\n",
                           "- item one\n", "1. step\n", "The steps are as follows:\n", "```\ncode(x)\n  y = 1\n```\n",
                           "    indented line\n", "Dr. Who. ", "中文句子。", "def f(a):\n    return a\n", "x" * 70])


@settings(max_examples=60, deadline=None)
@given(st.lists(_pieces, min_size=1, max_size=90).map("".join),
       st.sampled_from([(60, 30, 12), (200, 100, 40), (120, 120, 50)]))
def test_the_levels_read_spans_and_edges_as_the_searches_found_them(text, sizes):
    """What the levels below the first read instead of searching again (each atom's span, each piece's end
    boundary, the boundaries no strong bond ties) is what the searches over the text's boundaries give, at every
    level, on texts of headings, lists, lead-ins, code and over-long sentences."""
    from logichunk import CascadeSettings, chunk_logic_chain
    from logichunk.chunkers import logic_chain as lc

    seen: list[int] = []
    orig = lc._Run._global_cuts

    def checked(self, a_start, a_end, asz, sc, gaps, inner, sep, limits, level, ends_at, spans):
        span_start = self._cohesion_vectors()[0]
        if self._spans_rise:
            assert spans.tolist() == np.searchsorted(span_start, a_start).tolist()
        last = np.flatnonzero(np.append(sep, True))
        assert ends_at.tolist() == np.searchsorted(self.B, a_end[last]).tolist()
        tie, free = self._ties()
        assert tie.tolist() == (self.NC & ~self.IN).tolist()
        assert free.tolist() == np.append(np.flatnonzero(~tie), self.B.size).tolist()
        seen.append(level)
        return orig(self, a_start, a_end, asz, sc, gaps, inner, sep, limits, level, ends_at, spans)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lc._Run, "_global_cuts", checked)
        chunk_logic_chain(text, CascadeSettings(sizes=sizes))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 300), st.integers(0, 80), st.sampled_from([1, 7, 60, 400, 2**62]), st.floats(0.0, 1.0),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_the_compiled_earliest_starts_are_the_searches(n, top, max_size, density, has_fixed, seed):
    """native.earliest (one pointer that moves forwards) against earliest_starts' numpy passes (a search of every
    end, the cap at b - 1, the last fixed gap): the same starts; a negative size is left to the search."""
    from logichunk.boundaries import dp

    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, top + 1, n).astype(np.int64)
    fixed = rng.random(max(n - 1, 0)) < density if has_fixed else None
    got = native.earliest(sizes, max_size, fixed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "earliest", lambda *a: None)
        want = dp.earliest_starts(sizes, max_size, fixed)
    assert got is not None and got.tolist() == want.tolist()
    assert dp.earliest_starts(sizes, max_size, fixed).tolist() == want.tolist()
    if n:
        sizes[rng.integers(0, n)] = -1
        assert native.earliest(sizes, max_size, fixed) is None


def _detail(tree) -> tuple:
    """Everything a tree says: each chunk's id, span, method and meta (size, cut score), the stats, the bubbles."""
    return ([(c.id, c.span.start, c.span.end, c.method, sorted(c.meta.items())) for c in tree],
            sorted((k, repr(v)) for k, v in tree.stats.items()), repr(tree.bubbles))


def _all_pieces(pieces, lo, hi, bonded):
    return pieces, lo, hi


_LEAD_INS = st.sampled_from(["A plain opening line is here.\n", "The first steps are:\n", "Step alpha goes first.\n",
                             "The next steps are:\n", "Step beta is a long line that goes on and on with many more words "
                             "in it so that it is long.\n", "\n", "An end paragraph is here.\n", "第一组步骤如下：\n"])


@settings(max_examples=50, deadline=None)
@example("A plain opening line is here.\nThe first steps are:\nStep alpha goes first.\nThe next steps are:\nStep beta "
         "is a long line that goes on and on with many more words in it so that it is long.\n\nAn end paragraph is "
         "here.\n", (95, 47), True)  # (a lead-in chain across a one-atom piece: it must stay; moved a cut once)
@given(st.lists(_pieces | _LEAD_INS, min_size=1, max_size=90).map("".join),
       st.sampled_from([(60, 30, 12), (200, 100, 40), (120, 120, 50), (300, 150, 60, 30), (95, 47)]), st.booleans())
def test_pieces_of_one_atom_left_out_of_a_level_change_no_tree(text, sizes, composite):
    """A level below the first leaves out the pieces of one atom (logic_chain._cuttable: nothing to cut there or
    below) but those at a bonded boundary (a chain of lead-ins reads across piece edges): every chunk, method, size,
    cut score, stat and bubble is what the level gives with them in."""
    from logichunk import CascadeSettings, chunk_logic_chain
    from logichunk.chunkers import logic_chain as lc

    cfg = CascadeSettings(sizes=sizes, composite=composite)
    got = _detail(chunk_logic_chain(text, cfg))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lc, "_cuttable", _all_pieces)
        assert got == _detail(chunk_logic_chain(text, cfg))


def test_a_level_leaves_out_its_pieces_of_one_atom_and_stops_where_none_is_left():
    """Sentences over the deeper limits are pieces of one atom below level 1: they are left out (the level works on
    the others), and a level left with none returns at once (a fourth level here): the same tree as with them in."""
    from logichunk import CascadeSettings, chunk_logic_chain
    from logichunk.chunkers import logic_chain as lc

    text = ("A short one here. " * 4 + "y" * 150 + ". ") * 6
    cfg = CascadeSettings(sizes=(400, 200, 100, 90))
    seen: list[tuple[int, int]] = []  # (pieces in, pieces kept; 0: none, the level returned)
    cuttable = lc._cuttable

    def counted(pieces, lo, hi, bonded):
        out = cuttable(pieces, lo, hi, bonded)
        seen.append((pieces.starts.size, 0 if out is None else out[0].starts.size))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lc, "_cuttable", counted)
        got = _detail(chunk_logic_chain(text, cfg))
    assert any(0 < kept < n for n, kept in seen), seen  # (some left out, some kept)
    assert seen[-1][1] == 0, seen  # (the last level found nothing to cut)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lc, "_cuttable", _all_pieces)
        assert got == _detail(chunk_logic_chain(text, cfg))
