"""The within-chunk scatter of the atoms' vectors as a chunk's cost, and the price of one more segment
on it.

:func:`scatter_costs` (kernel change-point detection with a linear kernel: ``sum |x_i|^2 - |sum x_i|^2
/ m``) from the band of inner products :func:`gram_band`, dense rows or
:class:`~logichunk.sparse_rows.SparseRows`; :func:`null_penalty` prices a segment by a permutation rule
(what the best single cut removes from the same sentences shuffled), :func:`segment_penalty` grows it
with a long text's length where no size limit bounds a segment.

Why apart: it is one of the two costs the programme (:mod:`~logichunk.boundaries.dp`) runs on, the
one on vectors; :mod:`~logichunk.boundaries.sized` decides with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np

from .. import native
from ..hashing import GOLDEN, occurrence_keys, salted, splitmix64
from ..sparse_rows import GroupedRows, SparseRows
from .dp import MAX_SEGMENT_ATOMS


def gram_band(X: np.ndarray | SparseRows | GroupedRows, width: int, lo: np.ndarray | None = None) -> np.ndarray:
    """``P[i, d] = <x_i, x_{i+d}>`` for ``d < width`` (0 past the last row): every inner product a
    window of ``width`` rows needs. Dense rows: one vector pass per ``d``. Sparse rows: one pass per
    step along each column's entries, so the work follows the shared items, not the vocabulary; with
    ``lo`` (each end's earliest start, :func:`earliest_starts`) only the products some window within
    reach needs are computed (the others are 0). Rows not grouped yet (:class:`~logichunk.sparse_rows.GroupedRows`):
    the band of their sums, from the ungrouped entries in one compiled pass where it is available."""
    return _gram_band(X, width, lo)  # type: ignore[return-value]


def _gram_band(X: np.ndarray | SparseRows | GroupedRows, width: int, lo: np.ndarray | None = None,
               flat: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """:func:`gram_band`; ``flat``: where a compiled pass computes the band of sparse rows, the band flat with its
    rows' offsets, ``(P, off)``, each row only as long as the windows within reach read it
    (:func:`logichunk.native.fit_reach` of the very reach the pass walks by: every product it writes lies inside
    its row; the products are the same, and the cells past a row's reach, never read, are not laid out: a row
    reaches a few atoms where the widest window anywhere spans dozens); else the ``n`` x ``w`` band."""
    w = max(1, int(width))

    def layout(n: int, lo_n: np.ndarray) -> np.ndarray | None:
        return native.fit_reach(0, n, lo_n, 1, n) if flat else None

    if isinstance(X, GroupedRows):
        if X.rows.row.size and X.n:
            lo_g = np.arange(X.n + 1) - w if lo is None else np.maximum(np.asarray(lo, np.int64), np.arange(X.n + 1) - w)
            off = layout(X.n, lo_g)
            fused = native.group_band(X.rows.row, X.rows.col, X.rows.val, X.grp, X.n, w, lo_g, off)
            if fused is not None:
                return fused if off is None else (fused, off)
        X = X.made()
    if isinstance(X, SparseRows):
        n = X.n
        if X.row.size == 0 or n == 0:
            return np.zeros((n, w))
        r, c, v = X.row, X.col, X.val  # by column, then row
        lo_l = np.arange(n + 1) - w if lo is None else np.maximum(np.asarray(lo, np.int64), np.arange(n + 1) - w)
        off = layout(n, lo_l)
        compiled = native.gram_band(w, r, c, v, lo_l, n, off)
        if compiled is not None:
            return compiled if off is None else (compiled, off)
        return _band_numpy(r, c, v, lo_l, n, w)
    Xd = np.asarray(X, dtype=np.float64)
    n = Xd.shape[0]
    P = np.zeros((n, w))
    if n == 0:
        return P
    P[:, 0] = np.einsum("ij,ij->i", Xd, Xd)
    for d in range(1, min(w, n)):
        P[: n - d, d] = np.einsum("ij,ij->i", Xd[: n - d], Xd[d:])
    return P


#: the Gram band is computed and read this many cells (8 bytes each) at a time at most: a text of very short
#: sentences (a list of numbers, one word per line) has hundreds within one chunk's reach, and its whole
#: band would take gigabytes (a fixed bound on memory, not a tuned number)
BAND_CELLS = 1 << 22


def band_blocks(X: np.ndarray | SparseRows | GroupedRows, width: int, lo: np.ndarray, reach: np.ndarray
                ) -> Iterator[tuple[int, np.ndarray | tuple[np.ndarray, np.ndarray], int, int]]:
    """:func:`gram_band` of ``X`` a block of rows at a time, for a programme over chunk ends that reads,
    at end ``b``, the rows ``reach[b] .. b - 1`` (``reach``: the earliest starts clamped to ``width``
    atoms, non-decreasing; ``lo``: as :func:`gram_band` takes it): ``(r0, P, b0, b1)``, the band's rows
    ``[r0, r0 + len(P))`` and the ends ``b0..b1`` they serve, every end once, in order. One block when the
    whole band fits :data:`BAND_CELLS`; else blocks of about that many cells, each overlapping the last by
    the rows its first ends reach back to: the products are the same numbers either way (each is summed
    from its two rows' entries alone), and memory stays bounded in the text's length. Where the compiled kernels
    run, a block's band comes flat with its row offsets, ``(P, off)``, each row only as long as the windows of
    the block's rows reach it (:func:`_gram_band`)."""
    w = max(1, int(width))
    n = X.n if isinstance(X, SparseRows | GroupedRows) else np.asarray(X).shape[0]
    if n * w <= BAND_CELLS:
        yield 0, _gram_band(X, w, lo, flat=True), 1, n
        return
    if isinstance(X, GroupedRows):  # (blocks of rows are taken from the grouped rows themselves)
        X = X.made()
    rows = max(BAND_CELLS // w, 2 * w)
    b0 = 1
    while b0 <= n:
        r0 = int(reach[b0])
        b1 = min(n, max(b0, r0 + rows))
        r0 = min(r0, int(reach[b0 : b1 + 1].min()))  # (any end's reach, were they not in order)
        part = X.rows(r0, b1) if isinstance(X, SparseRows) else np.asarray(X)[r0:b1]
        yield r0, _gram_band(part, w, np.asarray(lo[r0 : b1 + 1], np.int64) - r0, flat=True), b0, b1
        b0 = b1 + 1


def _band_numpy(r: np.ndarray, c: np.ndarray, v: np.ndarray, lo: np.ndarray, n: int, w: int) -> np.ndarray:
    """The sparse :func:`gram_band` in numpy passes: one pass per step ``t`` along every column finds
    the pairs of entries ``t`` apart that share a column within reach, then the products are summed
    in the order :func:`logichunk.native.gram_band` adds them in C (by the pair's first entry, then its
    second), so both give the same bits."""
    r = r.astype(np.int64)  # row * width may pass the index type's range
    first = [np.arange(r.size)]
    keys = [r * w]
    vals = [v * v]
    i = np.arange(r.size)  # entries whose t-th successor may still share their column within reach
    for t in range(1, w):
        i = i[: np.searchsorted(i, r.size - t)]
        j = i + t
        ok = (c[j] == c[i]) & (r[i] >= lo[r[j] + 1])
        i, j = i[ok], j[ok]  # an entry out of reach at step t is out of reach after it
        if i.size == 0:
            break
        first.append(i)
        keys.append(r[i] * w + (r[j] - r[i]))
        vals.append(v[i] * v[j])
    order = np.argsort(np.concatenate(first), kind="stable")  # steps stay in order within an entry
    return np.bincount(np.concatenate(keys)[order], weights=np.concatenate(vals)[order],
                       minlength=n * w).reshape(n, w)


def scatter_costs(X: np.ndarray | SparseRows, width: int, counts: np.ndarray | None = None,
                  sqnorms: np.ndarray | None = None, lo: np.ndarray | None = None) -> np.ndarray:
    """``C[b, k-1]`` = scatter of the atoms ``[b-k, b)`` (rows of ``X``, dense or
    :class:`~logichunk.sparse_rows.SparseRows`) for ``k = 1..width`` (``inf`` where ``k > b``, or
    where ``b - k < lo[b]`` when ``lo`` gives each end its earliest start): one vector pass per
    ``k`` over the ends that still need it, no Python loop over atoms. The squared norm of a window's
    sum grows one atom per pass from the inner products of :func:`gram_band`, so a chunk's cost
    reads only its own rows and does not depend on what precedes it (texts chunked together get the
    costs each gets alone, to the last bit). A row may stand for several atoms glued together: ``X``
    holds their sum, ``counts`` how many they are and ``sqnorms`` the sum of their squared norms (the
    scatter is then exactly that of the atoms)."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    w = max(1, min(int(width), n))
    C = np.full((n + 1, w), np.inf)
    if n == 0:
        return C
    P = gram_band(X, w, lo)
    CP = np.cumsum(P, axis=1)  # CP[s, k-1]: <x_s, x_s + ... + x_{s+k-1}>
    norms = P[:, 0] if sqnorms is None else np.asarray(sqnorms, np.float64)
    cnt = np.ones(n) if counts is None else np.asarray(counts, np.float64)
    ends = np.arange(n)  # the windows ending at atom ends[j]
    reach = ends + 1 if lo is None else ends + 1 - np.asarray(lo, np.int64)[1:]  # widest window per end
    q = np.zeros(n)  # |sum of the window|^2
    sq = np.zeros(n)
    m = np.zeros(n)
    for k in range(1, w + 1):
        keep = reach[ends] >= k
        if not keep.all():
            ends, q, sq, m = ends[keep], q[keep], sq[keep], m[keep]
            if ends.size == 0:
                break
        src = ends - k + 1  # the atom the window gains on the left
        q += 2.0 * CP[src, k - 1] - P[src, 0]
        sq += norms[src]
        m += cnt[src]
        C[ends + 1, k - 1] = np.maximum(sq - q / m, 0.0)
    return C


#: shuffles behind :func:`null_penalty` (orders fixed by the rows' content: the same text always gets
#: the same cuts)
NULL_SHUFFLES = 5
#: atoms :func:`null_penalty` shuffles at most (a sample of a longer text, chosen by content: the price of
#: a cut is a property of the vocabulary's spread, which a sample this size shows; keeps it O(1) per text)
NULL_SAMPLE = 2048
#: atoms of one window of :func:`chunk_prices`, on average: a window holds a few dozen chunks of any level
#: (a sentence or a line an atom), enough for the permutation price's largest gain to show the vocabulary's
#: spread; fixed a priori, not fitted to a set. Windows are at least a quarter of it, and at most four times
PRICE_WINDOW = 256


def _prefix_dots(X: np.ndarray | SparseRows) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per row ``i``: ``|x_i|^2``, ``<x_i, x_0 + ... + x_{i-1}>`` and ``<x_i, T>`` (``T`` the sum of
    all rows), and ``|T|^2`` — what the scatter of every prefix and suffix is made of. Every sum in a fixed
    order (:func:`_fixed_dot`), none by the BLAS: ``T`` spans the vocabulary, and a BLAS dot of over 10,000
    numbers is split among its threads, so its last bits followed the thread count (a machine's cores)."""
    if isinstance(X, SparseRows):
        n = X.n
        r, c, v = X.row, X.col, X.val  # by column, then row
        cs = np.cumsum(v)
        base = _column_starts(c)
        before = cs - v - (cs[base] - v[base])  # the column's sum over earlier rows
        T = np.bincount(c, weights=v, minlength=X.ncol)
        return (X.sqnorms(), np.bincount(r, weights=v * before, minlength=n),
                np.bincount(r, weights=v * T[c], minlength=n), _fixed_dot(T, T))
    Xd = np.asarray(X, dtype=np.float64)
    S = np.cumsum(Xd, axis=0)
    prev = np.zeros(Xd.shape[0])
    prev[1:] = np.einsum("ij,ij->i", Xd[1:], S[:-1])
    T = S[-1]
    return np.einsum("ij,ij->i", Xd, Xd), prev, np.einsum("ij,j->i", Xd, T), _fixed_dot(T, T)


def _fixed_dot(a: np.ndarray, b: np.ndarray) -> float:
    """``<a, b>`` of two vectors: the products summed in numpy's pairwise order, the same bits for the same
    numbers whatever the thread count or the arrays' addresses (``a @ b`` is the BLAS's dot, which splits a
    long vector among its threads and sums the parts in another order)."""
    return float(np.multiply(a, b).sum())


def _column_starts(col: np.ndarray) -> np.ndarray:
    """Per entry of sparse rows (sorted by column), the index of its column's first entry."""
    first = np.ones(col.size, bool)
    first[1:] = col[1:] != col[:-1]
    return np.maximum.accumulate(np.where(first, np.arange(col.size), 0))


def best_single_gain(X: np.ndarray | SparseRows) -> float:
    """How much the best single cut lowers the scatter of the whole sequence ``X`` (dense rows or
    :class:`~logichunk.sparse_rows.SparseRows`)."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    if n < 2:
        return 0.0
    return _best_gain(*_prefix_dots(X))


def _best_gain(sq: np.ndarray, prev: np.ndarray, xt: np.ndarray, tt: float | np.ndarray) -> float:
    """:func:`best_single_gain` from the rows' :func:`_prefix_dots` (two rows or more). Several orders of
    the same rows at once: 2-d arrays, a row per order, ``tt`` one per row; the largest over all of them
    (each row's arithmetic is the 1-d case's, to the bit)."""
    sq, prev, xt = np.atleast_2d(sq), np.atleast_2d(prev), np.atleast_2d(xt)
    tt = np.reshape(np.asarray(tt, dtype=np.float64), (-1, 1))
    n = sq.shape[1]
    ll = np.cumsum(2.0 * prev + sq, axis=1)[:, :-1]  # |L_m|^2, L_m the sum of the first m rows (m = 1..n-1)
    lt = np.cumsum(xt, axis=1)[:, :-1]  # <L_m, T>
    m = np.arange(1, n)
    # scatter(all) - scatter(left) - scatter(right) = |L|^2/m + |T-L|^2/(n-m) - |T|^2/n
    gain = ll / m + (tt - 2.0 * lt + ll) / (n - m) - tt / n
    return float(gain.max())


def row_keys(X: np.ndarray | SparseRows) -> np.ndarray:
    """A 64-bit content key per row, read from the row's own entries (columns and values, to the bit):
    equal rows get equal keys wherever they stand. What :func:`null_penalty` orders its shuffles by when
    the caller has no keys of the text itself (:func:`~logichunk.signals.cohesion.span_keys`, which
    survive an edit elsewhere; a row's values do not, the document's idf moving with every sentence)."""
    if isinstance(X, SparseRows):
        bits = np.ascontiguousarray(X.val, dtype=np.float64).view(np.uint64)
        h = splitmix64((X.col.astype(np.uint64) + GOLDEN) ^ splitmix64(bits + GOLDEN))
        keys = np.zeros(X.n, np.uint64)
        np.add.at(keys, X.row, h)  # a wrapping sum per row: the order of its entries does not matter
        return keys
    Xd = np.ascontiguousarray(X, dtype=np.float64)  # an embedder's rows: every coordinate, to the bit
    return np.array([int.from_bytes(hashlib.blake2b(r.tobytes(), digest_size=8).digest(), "little") for r in Xd],
                    dtype=np.uint64)


def null_orders(keys: np.ndarray, shuffles: int = NULL_SHUFFLES, seed: int = 0, sample: int = NULL_SAMPLE
                ) -> tuple[np.ndarray | None, np.ndarray]:
    """The rows :func:`null_penalty` keeps (sorted; None: all of them) and its ``shuffles`` orders of
    them, each the order of the rows' content ``keys`` (0: a row without content) under a salt of its
    own: a random order that is a function of the content, not of the rows' count or places. Why: an
    edit elsewhere in a document then inserts or removes its own rows in each shuffle and leaves the
    others' order as it was, so the price of a chunk — and every cut it decides far from the edit —
    stays; an order drawn from a generator seeded by the count re-drew every shuffle on any edit (one
    paragraph inserted into a Markdown page moved 2 % of its cuts more than 2,000 characters away).

    Equal keys (a repeated line, rows without content) are made distinct by their rank first, so their
    copies scatter like other rows. Every key is salted with the text's smallest key of content, so that
    what many texts share (rows without content, a ``Yes.``) does not take the same places in every
    text's shuffles (one salt's luck would then be every text's); an edit re-draws the shuffles only
    where it brings a smaller key or removes that one (about one edit in ``n``). A longer text's sample
    is the ``sample`` rows of smallest salted key, so an edit changes it by at most the rows it touches."""
    keep, k = _null_keys(keys, sample)
    return keep, np.argsort(salted(k, _salts(shuffles, seed)), axis=1, kind="stable")


def _null_keys(keys: np.ndarray, sample: int = NULL_SAMPLE) -> tuple[np.ndarray | None, np.ndarray]:
    """:func:`null_orders`' kept rows and their keys before each shuffle's salt: distinct by rank, salted by the
    smallest key of content."""
    raw = np.asarray(keys, dtype=np.uint64)
    filled = raw[raw != 0]
    k = salted(occurrence_keys(raw), int(filled.min()) if filled.size else 0)
    keep = None
    if k.size > sample:
        keep = np.sort(np.argpartition(k, sample)[:sample])
        k = k[keep]
    return keep, k


def _salts(shuffles: int, seed: int) -> np.ndarray:
    """Each shuffle's salt: seed ``s`` takes the next ``shuffles`` numbers after seed ``s - 1``'s."""
    return np.arange(seed * shuffles, (seed + 1) * shuffles, dtype=np.uint64)


def price_windows(keys: np.ndarray, window: int = PRICE_WINDOW) -> np.ndarray:
    """The window of each atom (ids 0, 1, ... in order) that :func:`chunk_prices` prices on its own. A window
    opens at an atom whose content key hits an anchor (one atom in ``window``, by the key's hash: a function of
    the atom's own words, not of where it stands), unless the last anchor lies less than ``window // 4`` atoms
    before it (no window shorter, but the last, which joins the one before it); a run of ``4 * window`` atoms
    without an anchor (a text of repeated or wordless lines) opens one every ``4 * window`` atoms from its
    last. So an edit moves the windows' edges only next to the atoms it changes."""
    k = np.asarray(keys, dtype=np.uint64)
    n = k.size
    if n <= window // 4 * 2:
        return np.zeros(n, np.int64)
    hit = np.flatnonzero((k != 0) & (splitmix64(k ^ GOLDEN) % np.uint64(window) == 0))
    hit = hit[hit > 0]
    kept = hit[np.diff(np.concatenate(([0], hit))) >= window // 4]
    opens = np.zeros(n, dtype=bool)
    opens[kept] = True
    opens[0] = True
    at = np.arange(n)
    since = at - np.maximum.accumulate(np.where(opens, at, 0))  # (atoms since the last window opened)
    opens |= (since > 0) & (since % (4 * window) == 0)
    first = np.flatnonzero(opens)
    if first.size > 1 and n - first[-1] < window // 4:
        opens[first[-1]] = False
    return np.cumsum(opens) - 1


def chunk_prices(X: np.ndarray | SparseRows, keys: np.ndarray, window: int = PRICE_WINDOW) -> np.ndarray:
    """The price of a chunk ending at each atom: :func:`null_penalty` of the atom's window
    (:func:`price_windows`) alone. Why: one price for a whole text is a statistic of every atom of it (the
    largest gain in shuffles of them all): an edit anywhere moved it a little, and the optimum, which has
    near-ties in many places, moved cuts a hundred thousand characters away (a word added near a novel's end
    moved earlier level-1 cuts in 19 of 60 edits). A text of one window pays the text's price, as before;
    the windows of sparse rows are priced in one pass (:func:`_window_prices`), each to the bit as alone."""
    k = np.asarray(keys, dtype=np.uint64)
    win = price_windows(k, window)
    if win.size == 0 or win[-1] == 0:
        return np.full(win.size, null_penalty(X, k))
    edges = np.flatnonzero(np.diff(win)) + 1
    ws, we = np.concatenate(([0], edges)), np.concatenate((edges, [win.size]))
    if isinstance(X, SparseRows) and int((we - ws).max()) <= NULL_SAMPLE:  # (no window sampled)
        return _window_prices(X, k, ws)[win]
    out = np.empty(win.size)
    for a, b in zip(ws.tolist(), we.tolist(), strict=True):
        part = X.take(np.arange(a, b)) if isinstance(X, SparseRows) else np.asarray(X)[a:b]
        out[a:b] = null_penalty(part, k[a:b])
    return out


#: :func:`_window_prices_numpy` runs this many entries' windows at a time at most (its arrays hold a few numbers per
#: entry and shuffle: a bound on memory, not a tuned number)
_WINDOW_BLOCK = 1 << 20


def _window_prices(X: SparseRows, keys: np.ndarray, ws: np.ndarray, shuffles: int = NULL_SHUFFLES, seed: int = 0,
                   fresh: bool = True) -> np.ndarray:
    """The permutation price of each window of the rows ``[ws[w], ws[w + 1])`` (the last to the end) alone, no
    window over :data:`NULL_SAMPLE` rows: :func:`null_penalty`'s largest gain over its shuffles, each the order
    :func:`null_orders` gives the window's ``keys`` (``fresh``: the rows' content keys; else keys made distinct
    and salted already, :func:`_null_keys`). Compiled: one pass per window and shuffle over the window's own
    entries (``native.window_prices``; shuffling every row of the text at once and taking the other windows'
    sums off cost 30-70 ms a 2 MB text); else :func:`_window_prices_numpy`, the same bits, a block of windows at
    a time (each window's sums are its own)."""
    ws = np.asarray(ws, dtype=np.int64)
    got = native.window_prices(X.row, X.col, X.val, X.sqnorms(), keys, ws, X.ncol, shuffles, seed * shuffles, fresh)
    if got is not None:
        return got
    bounds = np.append(ws, X.n)
    upto = np.zeros(X.n + 1, np.int64)
    np.cumsum(np.bincount(X.row, minlength=X.n), out=upto[1:])
    at = upto[bounds]  # the entries before each window
    out, w = [], 0
    while w < ws.size:
        v = min(max(int(np.searchsorted(at, at[w] + _WINDOW_BLOCK, side="right")) - 1, w + 1), ws.size)
        a, b = int(bounds[w]), int(bounds[v])
        part = X if (a, b) == (0, X.n) else X.rows(a, b)
        out.append(_window_prices_numpy(part, keys[a:b], ws[w:v] - a, shuffles, seed, fresh))
        w = v
    return np.concatenate(out)


def _window_prices_numpy(X: SparseRows, keys: np.ndarray, ws: np.ndarray, shuffles: int, seed: int, fresh: bool
                         ) -> np.ndarray:
    """:func:`_window_prices` in numpy passes that add what the compiled kernel adds, in its order: each sum
    runs from 0.0 one term after another (``bincount``, ``cumsum``; no pairwise or BLAS sums), a window's own
    terms only, so a window's price is the same bits whatever the other windows hold. A column's running sum
    over a shuffle's rows is grown one rank at a time across every window, column and shuffle at once (as many
    passes as the most rows one column has in a window); its total in the first shuffle is the column's sum
    ``T`` (an order of the rows' content: the price is a function of the rows, not of their order)."""
    n, nwin = X.n, ws.size
    size = np.diff(np.append(ws, n))
    win = np.repeat(np.arange(nwin), size)
    k = np.asarray(keys, dtype=np.uint64)
    if fresh:  # null_orders' keys, window by window: copies ranked within the window, its smallest key the salt
        order = np.lexsort((k, win))
        ks, wo = k[order], win[order]
        first = np.ones(n, bool)
        first[1:] = (ks[1:] != ks[:-1]) | (wo[1:] != wo[:-1])
        at = np.arange(n)
        rank = np.empty(n, np.uint64)
        rank[order] = (at - np.maximum.accumulate(np.where(first, at, 0))).astype(np.uint64)
        filled = k != 0
        least = np.minimum.reduceat(np.where(filled, k, _NO_KEY), ws)
        least[np.add.reduceat(filled.astype(np.int64), ws) == 0] = 0
        k = splitmix64((k ^ splitmix64(rank + GOLDEN)) ^ splitmix64(least[win] + GOLDEN))
    orders = np.stack([np.lexsort((s, win)) for s in salted(k, _salts(shuffles, seed))])  # window by window
    pos = np.empty_like(orders)
    np.put_along_axis(pos, orders, np.arange(n)[None, :].repeat(shuffles, 0), axis=1)
    r, c, v = X.row, X.col, X.val  # by column, then row: a column's entries of one window are neighbours
    ew = win[r]
    new = np.ones(c.size, bool)
    new[1:] = (c[1:] != c[:-1]) | (ew[1:] != ew[:-1])
    gid = np.cumsum(new) - 1
    start = np.flatnonzero(new)
    # each shuffle's entries by column and window (the groups stay where they are), then by place in the shuffle
    srt = np.argsort(gid[None, :] * max(n, 1) + pos[:, r], axis=1)
    sv = np.take_along_axis(np.broadcast_to(v, srt.shape), srt, axis=1)
    rank_e = np.arange(c.size) - start[gid]  # an entry's place in its group: the same in every shuffle
    before = np.zeros(srt.shape)  # the group's sum over the entries before it: one rank a pass
    by_rank = np.argsort(rank_e, kind="stable")
    bounds = np.searchsorted(rank_e[by_rank], np.arange(int(rank_e.max(initial=0)) + 2))
    for q in range(1, bounds.size - 1):
        at = by_rank[bounds[q] : bounds[q + 1]]
        before[:, at] = before[:, at - 1] + sv[:, at - 1]
    last = np.append(start[1:], c.size) - 1
    T = before[0, last] + sv[0, last] if c.size else np.zeros(0)  # each window's column sums, the first shuffle's
    tt = np.bincount(ew[new], weights=T * T, minlength=nwin)  # |T|^2, column by column
    xt = np.bincount(r, weights=v * T[gid], minlength=n)  # <x_i, T>, a row's entries in column order
    rows = np.take_along_axis(np.broadcast_to(r, srt.shape), srt, axis=1).astype(np.int64)
    flat = (rows + n * np.arange(shuffles)[:, None]).ravel()
    prev = np.bincount(flat, weights=(sv * before).ravel(), minlength=shuffles * n).reshape(shuffles, n)
    # the gain of the best cut of each prefix, windows side by side (a window's sums left-aligned, 0 after)
    j = np.arange(n) - ws[win]
    wide = int(size.max())
    A = np.zeros((shuffles, nwin, wide))
    B = np.zeros((shuffles, nwin, wide))
    A[:, win, j] = 2.0 * np.take_along_axis(prev, orders, axis=1) + X.sqnorms()[orders]
    B[:, win, j] = xt[orders]
    ll, lt = np.cumsum(A, axis=2), np.cumsum(B, axis=2)
    m = np.arange(1, wide + 1)
    nw, t = size[:, None], tt[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = ll / m + (t - 2.0 * lt + ll) / (nw - m) - t / nw
    best = np.where(m < nw, gain, -np.inf).max(axis=(0, 2))
    best[size < 3] = 0.0
    return best


_NO_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)


def null_penalty(X: np.ndarray | SparseRows, keys: np.ndarray | None = None, shuffles: int = NULL_SHUFFLES,
                 seed: int = 0) -> float:
    """The price of one more segment: the largest, over a few shuffles of the same atoms, of the
    scatter the best single cut removes. A permutation rule: a boundary must explain more of the
    text than the best boundary explains in the same sentences in random order, where there is no
    topic to find (a test at level about 1/(shuffles+1)). Scale-free: it moves with the document's
    length and vocabulary. The largest rather than the median of the five was chosen on a named dev
    split (documents 300-600 of Choi, DialSeg711, Weibo and DAct and TIAGE's last 100), never reported:
    ``bench/QUALITY.md``. The shuffles are orders of the rows' content ``keys`` (:func:`null_orders`;
    default :func:`row_keys`), so the price depends on what the rows are, not where they stand."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    if n < 3:
        return 0.0
    if isinstance(X, SparseRows):  # the sample as one window: every window's price is summed alike
        keep, k = _null_keys(row_keys(X) if keys is None else keys)
        S = X if keep is None else X.take(keep)
        return float(_window_prices(S, k, np.zeros(1, np.int64), shuffles, seed, fresh=False)[0])
    keep, orders = null_orders(row_keys(X) if keys is None else keys, shuffles, seed)
    Xd = np.asarray(X, dtype=np.float64)  # dense rows (an embedder's)
    Xd = Xd if keep is None else Xd[keep]
    return _dense_gain(Xd, orders)


#: :func:`_dense_gain` reads the shuffles of up to this many rows from their Gram matrix
_GRAM_MAX = 256
#: ... and longer ones as many shuffles at once as hold about this many numbers
_DENSE_BATCH = 1 << 20


def _dense_gain(X: np.ndarray, orders: np.ndarray) -> float:
    """The largest :func:`best_single_gain` over the shuffles ``orders`` (shuffles x n) of the dense rows
    ``X``. A few rows (a parent's sentences): from their Gram matrix, every shuffle at once — a shuffle
    permutes its rows and columns, and a prefix's ``|L|^2`` is the sum of its top-left block — so the
    dimension is read once, in one product, not per shuffle. More rows: the prefix sums of
    :func:`_prefix_dots`, several shuffles per pass, memory bounded."""
    n = X.shape[0]
    if n <= _GRAM_MAX:
        # the products of the rows in the first shuffle's order (an order of their content: the same bits
        # whatever order the rows came in), the shuffles as orders of those
        first = X[orders[0]]
        G = first @ first.T
        inv = np.empty(n, np.int64)
        inv[orders[0]] = np.arange(n)
        rel = inv[orders]
        Gs = G[rel[:, :, None], rel[:, None, :]]
        prev = np.tril(Gs, -1).sum(axis=2)  # <x_i, x_0 + ... + x_{i-1}> in each shuffle
        sq, xt, tt = np.diagonal(G)[rel], G.sum(axis=1)[rel], float(G.sum())
    else:
        step = max(1, _DENSE_BATCH // max(X.size, 1))
        if orders.shape[0] > step:
            return max(_dense_gain(X, orders[i : i + step]) for i in range(0, orders.shape[0], step))
        Xs = X[orders]  # shuffles x n x dim
        S = np.cumsum(Xs, axis=1)
        prev = np.zeros(orders.shape)
        prev[:, 1:] = np.einsum("sij,sij->si", Xs[:, 1:], S[:, :-1])
        T = S[:, -1]
        sq = np.einsum("ij,ij->i", X, X)[orders]
        xt = np.matmul(Xs, T[:, :, None])[:, :, 0]
        tt = np.einsum("sj,sj->s", T, T)
    return _best_gain(sq, prev, xt, tt)


#: a text's sentences up to which a topic costs :func:`null_penalty` as it is, and how fast the price
#: grows past them (:func:`segment_penalty`); fitted on the dev splits named in ``bench/QUALITY.md``
#: (man pages, READMEs, documents 300-600 of Choi, Weibo, DAct and DialSeg711, TIAGE 300-400), by the
#: mean Pk over them, from a grid of 0.25-1 for the growth and 32-100 for the knee; never on a reported set
SEGMENT_KNEE = 64
SEGMENT_GROWTH = 0.75


def segment_penalty(X: np.ndarray | SparseRows, keys: np.ndarray | None = None) -> float:
    """The price of one more topic in a text with no size limit: :func:`null_penalty`, times
    ``(n / SEGMENT_KNEE) ** SEGMENT_GROWTH`` for a text of ``n > SEGMENT_KNEE`` sentences. Why it grows:
    the permutation rule prices one boundary against one shuffled text, which has no topics but also no
    drift, and a long text's sections drift in vocabulary inside them — on long documents (manual pages,
    Wikipedia articles) it let through three to four cuts per true one, in sentences that each made a
    real but sub-section shift of vocabulary. Short texts (a dialogue, a news story) keep the rule as is.
    The growth stops at :data:`MAX_SEGMENT_ATOMS` sentences, the most one segment may span: the drift a
    segment can hold is bounded there, and a longer text has more sections, not longer ones.
    (:func:`logichunk.segment` decided topics this way until the evidence of the words replaced it,
    :func:`segment_evidence`; the eval keeps it as its ``global-scatter`` row, for comparison.)"""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    return null_penalty(X, keys) * max(1.0, min(n, MAX_SEGMENT_ATOMS) / SEGMENT_KNEE) ** SEGMENT_GROWTH

