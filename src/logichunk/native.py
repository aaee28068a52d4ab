"""The loops numpy cannot vectorise well, in C, compiled once per machine with the system's C
compiler and loaded with :mod:`ctypes`: the boundary DP's recurrence, the walk along each column of
sparse sentence vectors that finds the inner products of nearby rows, and the passes that would
otherwise sort (lexical rows' entries, the permutation penalty's shuffles, tier 1's link distances) or
build array temporaries (lexical weights, summing glued rows), the running sums of a segment's
evidence over every window start (a count per item, reset per start), and the walks that numpy would
make as many whole-array passes as a loop has steps (searches from the previous answer, a sentence's
opening word, the cuts through over-long sentences and their break priorities, a text's content items and its
bigrams' keys), and
the sentence splitter's reads of a text's marks and lines (its candidate ends, abbreviations and soft wraps:
one pass over each line's own characters where numpy gathers them rule by rule from all over the text, a
cache miss each).

Why: the global boundary decision (:func:`logichunk.boundaries.optimal_cuts`) is sequential: the
best cost of a chunk ending at atom ``b`` needs the best costs before it. In Python that is ~0.1 µs
per (start, end) pair, seconds on a megabyte of short sentences; in C it is nanoseconds. The column
walk (:func:`logichunk.boundaries.gram_band`) shrinks a list of live entries step by step; numpy
pays a few array passes per step. :func:`fit_cuts` runs :func:`logichunk.boundaries.fit_global`'s
window costs and DP in one pass per chunk end: numpy builds an (n+1) x w matrix of costs, one pass
per window width, most of it never read (w is the widest window anywhere; a typical end reaches a
few atoms). Every kernel does the floating-point operations of the numpy passes it replaces in the
same order (compiled without fused multiply-add), so both give the same bits (property-tested). The
library is built into ``native/`` of the cache folder (``$LOGICHUNK_CACHE``, else
``$XDG_CACHE_HOME/logichunk``, else ``~/.cache/logichunk``) under a name keyed by its source, flags and
the platform, so a later process only loads it. Without a compiler, when the build fails (remembered
by a ``.failed`` file, not retried), or with ``LOGICHUNK_NATIVE=0``, the callers run their numpy
passes: the same answer, ties included, only slower. :func:`status` says which runs and why.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .cache_dir import cache_root

_SRC = r"""
#include <math.h>
#include <stdint.h>
/* One step of the DP at chunk end b, row[k-1] + price the cost of the chunk [b-k, b): back[b] is the
   start of the best last chunk (ties: the latest start), fm[b] the best total less the reward of a cut
   at b. (price: one price per chunk, added as numpy adds it to a cost matrix, without the copy.) */
static inline void lc_step(int64_t b, int64_t n, const double *row, double price, const int64_t *lo,
                           const double *rw, const uint8_t *restart, double *fm, int64_t *back) {
    double best = 1.0 / 0.0;
    int64_t arg = b - 1;
    for (int64_t a = lo[b]; a < b; a++) {
        double v = fm[a] + (row[b - a - 1] + price);
        if (v <= best) { best = v; arg = a; }
    }
    back[b] = arg;
    if (b < n) fm[b] = restart[b] ? 0.0 : best - rw[b];  /* a forced cut: a fresh start */
}

/* P[off[r] + d] += products of entries of one column d < w rows apart, each entry with the entries after it
   in its column, in entry order (boundaries.scatter._band_numpy's order: by the first entry of each pair, then
   the second), so both give the same sums to the last bit. Entries are sorted by column, then row;
   lo[b]: the earliest row a window ending at row b-1 reaches; the walk from an entry stops at the first
   one out of reach (those after it are further). One pass along each column's entries: the writes stay
   in one row of P at a time (a pass per step along all columns, before, cost 1.6x on Chinese text). Row r
   of P starts at off[r]: r * w for the whole band, or only as long as its windows reach (lc_fit_reach: every
   product written lies within that reach). */
void lc_band(int64_t e, int64_t w, const int32_t *r, const int32_t *c, const double *v, const int64_t *lo,
             const int64_t *off, double *P) {
    for (int64_t i = 0; i < e; i++) {
        int64_t ri = r[i];
        double vi = v[i];
        double *row = P + off[ri];
        row[0] += vi * vi;
        for (int64_t j = i + 1; j < e && j - i < w && c[j] == c[i] && ri >= lo[r[j] + 1]; j++)
            row[r[j] - ri] += vi * v[j];
    }
}

/* boundaries.fit_global's decision, one chunk end at a time: the scatter of every window within reach
   (boundaries.scatter_costs), plus the chunk's penalty and fill cost, then lc_step. The same floating-point
   operations in the same order as those numpy passes, so both give the same cuts, ties included, without
   the (n+1) x w cost matrix. lc_fit_ends runs the ends b0..b1 from the Gram band's rows [r0, r0 + nr) (P,
   its row i from poff[i]; p0 keeps each row's first product, by atom), their row prefix sums written to Q, row i
   from qoff[i] and only as far as an end reads it (lc_fit_reach: the programme reads row s up to the longest
   window that starts there, a few atoms where w, the widest window anywhere, is dozens: the prefix sums of
   whole rows cost a pass over the band and its pages, most of it never read; the band itself is laid out so
   where it can, boundaries.scatter.band_blocks). A long text's band is computed and read a
   block of rows at a time, so its memory stays bounded (the DP's own state, fm and back, runs on from block to
   block); lc_fit_cuts reads the cuts back along the pointers (last first) and returns how many it wrote. */
void lc_fit_reach(int64_t r0, int64_t nr, const int64_t *lo, int64_t b0, int64_t b1, int64_t *len) {
    int monotone = 1;
    for (int64_t b = b0; b < b1; b++) monotone &= lo[b] <= lo[b + 1];
    if (monotone) {  /* (earliest starts never decrease: the ends that reach row s are b0 .. the last one that does) */
        int64_t b = b0 - 1;
        for (int64_t i = 0; i < nr; i++) {
            const int64_t s = r0 + i;
            while (b < b1 && lo[b + 1] <= s) b++;
            len[i] = b >= b0 && b > s ? b - s : 1;  /* (a row's first product, its own norm, at least) */
        }
        return;
    }
    for (int64_t i = 0; i < nr; i++) len[i] = 1;
    for (int64_t b = b0; b <= b1; b++)
        for (int64_t k = 1; k <= b - lo[b]; k++) {
            const int64_t i = b - k - r0;
            if (len[i] < k) len[i] = k;
        }
}
void lc_fit_ends(int64_t n, int64_t w, int64_t r0, int64_t nr, const double *P, const int64_t *poff, double *Q,
                 const int64_t *qoff,
                 const double *norms, const double *cnt, const int64_t *lo, const int64_t *cum, const double *beta,
                 double goal, double fill, const double *rw, const uint8_t *restart, double *p0, double *cost,
                 double *fm, int64_t *back, int64_t b0, int64_t b1) {
    for (int64_t i = 0; i < nr; i++) {
        const double *row = P + poff[i];
        double *out = Q + qoff[i];
        const int64_t len = qoff[i + 1] - qoff[i];
        p0[r0 + i] = row[0];
        if (len > 0) out[0] = row[0];
        for (int64_t d = 1; d < len; d++) out[d] = row[d] + out[d - 1];
    }
    for (int64_t b = b0; b <= b1; b++) {
        double q = 0.0, sq = 0.0, m = 0.0;  /* |sum|^2, sum of |x|^2 and atoms of the window [b-k, b) */
        for (int64_t k = 1; k <= b - lo[b]; k++) {
            int64_t s = b - k;  /* the atom the window gains on the left */
            q += 2.0 * Q[qoff[s - r0] + k - 1] - p0[s];
            sq += norms[s];
            m += cnt[s];
            double c = sq - q / m;
            if (c < 0.0) c = 0.0;
            double f = (double)(cum[b] - cum[s]) / goal;
            if (f > 1.0) f = 1.0;
            f = 1.0 - f;
            cost[k - 1] = c + (beta[b - 1] + fill * f * f);
        }
        lc_step(b, n, cost, 0.0, lo, rw, restart, fm, back);
    }
}

int64_t lc_fit_cuts(int64_t n, const int64_t *back, int64_t *cuts) {
    int64_t k = 0;
    for (int64_t b = n; b > 0; b = back[b])
        if (back[b] > 0) cuts[k++] = back[b] - 1;
    return k;
}

/* ---- the cascade's partitions (chunkers.logic_chain._parts, _fits_whole), a block of their own ----
   n atoms of sizes, parted after each gap i with cut[i] (n - 1 bytes, 0 or 1): ids[i] is atom i's part, fits[p]
   whether part p's sizes sum to at most max_size (a sum of integers: numpy's float sum of them, exact below 2**53,
   compares alike); where whole is given, whole[i] says gap i is no cut and lies inside a part that fits. One pass
   (two with whole) where numpy makes a cumsum, a bincount of weights cast to float and a gather, each over every
   atom, a dozen times a level. Returns the number of parts. */
int64_t lc_parts(int64_t n, const uint8_t *cut, const int64_t *sizes, int64_t max_size, int64_t *ids, uint8_t *fits,
                 uint8_t *whole) {
    int64_t p = 0, sum = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
        ids[i] = p;
        sum += sizes[i];
        if (cut[i]) {
            fits[p++] = sum <= max_size;
            sum = 0;
        }
    }
    ids[n - 1] = p;
    fits[p++] = sum + sizes[n - 1] <= max_size;
    if (whole)
        for (int64_t i = 0; i + 1 < n; i++) whole[i] = !cut[i] & fits[ids[i]];
    return p;
}

/* boundaries.earliest_starts under a size limit: lo[b] (b = 0..n), the first atom a chunk ending at b may start at
   (cum[b] - cum[a] <= max_size, at most b - 1, never before the atom after the last fixed gap before b), by one
   pointer that only moves forwards (the limit's reach grows with b) where numpy searched every end and made six
   passes more. cum: n + 1 entries of scratch, the sizes' prefix. Returns -1 (nothing decided) on a negative size,
   where the prefix does not rise and the search's answer is another. */
int64_t lc_earliest(int64_t n, const int64_t *sizes, int64_t max_size, const uint8_t *fixed, int64_t *cum,
                    int64_t *lo) {
    cum[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (sizes[i] < 0) return -1;
        cum[i + 1] = cum[i] + sizes[i];
    }
    int64_t p = 0, last = 0;
    for (int64_t b = 0; b <= n; b++) {
        const int64_t x = cum[b] - max_size;
        while (p <= n && cum[p] < x) p++;
        int64_t v = p < b - 1 ? p : (b > 0 ? b - 1 : 0);
        if (fixed && b >= 2 && fixed[b - 2]) last = b - 1;
        lo[b] = v > last ? v : last;
    }
    return 0;
}

/* signals.cohesion.lexical_rows' entries without a sort. Span s holds the items ids[lo[s]:hi[s]].
   lc_lexmark marks the ids present in a bitmap (bits, nw words, zeroed) and returns how many there are,
   with base[q] the number of ids below word q: an id's dense number, in ascending id order, is then
   base plus a popcount, so the per-id tables (last, df, at: one slot per distinct id, zeroed) stay small
   and a long text's sparse ids (hashes of words) touch no large table. lc_lexrows: pass 1 counts the
   spans each id is in (df); the ids in 2 <= df < n spans, in ascending order, are the columns; pass 2
   writes each (span, id) entry at its column's cursor, so entries come out by column, then row, each
   with the id's count in the span. Returns the number of entries (row, cnt; the caller writes each
   entry's column from dfc, in order); dfc[k] is column k's df, *ncol the number of columns. */
int64_t lc_lexmark(int64_t n, const int64_t *lo, const int64_t *hi, const uint32_t *ids, int64_t nw,
                   uint64_t *bits, int32_t *base) {
    for (int64_t s = 0; s < n; s++)
        for (int64_t k = lo[s]; k < hi[s]; k++) bits[ids[k] >> 6] |= (uint64_t)1 << (ids[k] & 63);
    int64_t nu = 0;
    for (int64_t q = 0; q < nw; q++) { base[q] = (int32_t)nu; nu += __builtin_popcountll(bits[q]); }
    return nu;
}

/* hashing.bag_hashes over spans of items: out[s] is the wrapping sum, over ids[lo[s]:hi[s]], of each id
   plus the golden ratio, times splitmix64's first multiplier, xor-shifted right by 29 (the same bits). */
void lc_bagkeys(int64_t n, const int64_t *lo, const int64_t *hi, const uint32_t *ids, uint64_t *out) {
    for (int64_t s = 0; s < n; s++) {
        uint64_t h = 0;
        for (int64_t k = lo[s]; k < hi[s]; k++) {
            uint64_t v = ((uint64_t)ids[k] + 0x9E3779B97F4A7C15ULL) * 0xBF58476D1CE4E5B9ULL;
            h += v ^ (v >> 29);
        }
        out[s] = h;
    }
}

/* hashing.occurrence_keys' ranks without a sort: rank[i] is how many keys equal to keys[i] come before it.
   An open-addressed table of cap slots (a power of two, at least twice n; used zeroed). */
void lc_ranks(int64_t n, const uint64_t *keys, int64_t cap, uint64_t *tk, int64_t *tc, uint8_t *used, uint64_t *rank) {
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = keys[i], j = ((k ^ (k >> 31)) * 0x94D049BB133111EBULL) >> 17 & mask;
        while (used[j] && tk[j] != k) j = (j + 1) & mask;
        if (!used[j]) { used[j] = 1; tk[j] = k; tc[j] = 0; }
        rank[i] = (uint64_t)tc[j]++;
    }
}

#define LC_DENSE(id) (base[(id) >> 6] + __builtin_popcountll(bits[(id) >> 6] & ((((uint64_t)1) << ((id) & 63)) - 1)))
static inline __attribute__((always_inline)) int64_t lexrows_body(
        int64_t n, const int64_t *lo, const int64_t *hi, const uint32_t *ids, int64_t nu, const uint64_t *bits,
        const int32_t *base, int32_t *last, int32_t *df, int32_t *at, int32_t *row, int32_t *cnt,
        int64_t *dfc, int64_t *ncol) {
    for (int64_t s = 0; s < n; s++)
        for (int64_t k = lo[s]; k < hi[s]; k++) {
            int32_t d = LC_DENSE(ids[k]);
            if (last[d] != (int32_t)(s + 1)) { last[d] = (int32_t)(s + 1); df[d]++; }
        }
    int64_t kc = 0, off = 0;
    for (int64_t d = 0; d < nu; d++) {  /* dense numbers run in ascending id order */
        if (df[d] >= 2 && df[d] < n) {
            dfc[kc] = df[d];
            at[d] = (int32_t)off;
            off += df[d];
            df[d] = (int32_t)(++kc);  /* the column's number + 1 */
        } else {
            df[d] = 0;  /* not a column: pass 2 skips it */
        }
    }
    *ncol = kc;
    for (int64_t s = 0; s < n; s++)
        for (int64_t j = lo[s]; j < hi[s]; j++) {
            int32_t d = LC_DENSE(ids[j]);
            int32_t c = df[d];
            if (!c) continue;
            if (last[d] != (int32_t)(-s - 1)) {  /* pass 1 left s + 1 > 0 there */
                last[d] = (int32_t)(-s - 1);
                int32_t p = at[d]++;
                row[p] = (int32_t)s;
                cnt[p] = 1;  /* (the column of each entry is written afterwards, in order: see col) */
            } else {
                cnt[at[d] - 1]++;
            }
        }
    return off;
}
#undef LC_DENSE

#define LC_LEXROWS_ARGS int64_t n, const int64_t *lo, const int64_t *hi, const uint32_t *ids, int64_t nu, \
    const uint64_t *bits, const int32_t *base, int32_t *last, int32_t *df, int32_t *at, int32_t *row, \
    int32_t *cnt, int64_t *dfc, int64_t *ncol
#define LC_LEXROWS_NAMES n, lo, hi, ids, nu, bits, base, last, df, at, row, cnt, dfc, ncol
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* the popcount as one instruction where the processor has it (chosen at run time: the library is
   built for any x86-64) */
__attribute__((target("popcnt"))) static int64_t lexrows_popcnt(LC_LEXROWS_ARGS) {
    return lexrows_body(LC_LEXROWS_NAMES);
}
#endif
int64_t lc_lexrows(LC_LEXROWS_ARGS) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("popcnt")) return lexrows_popcnt(LC_LEXROWS_NAMES);
#endif
    return lexrows_body(LC_LEXROWS_NAMES);
}

/* signals.novelty.novelty_prefix_of in two passes, no sort: for item i, d_back / d_fwd, the distance to
   the previous / next item with the same id (511 when it is further than 256 items or absent), and
   prefix[i + 1] = prefix[i] + q[d_back] - q[d_fwd]. Integers only: the same numbers as the row sorts.
   last (one int32 per id up to the largest, zeroed) holds an id's latest position + 1; it is zeroed again
   on return, so a caller may keep it for the next text (its pages touched once, not once a text). */
void lc_novelty(int64_t n, const uint32_t *ids, int32_t *last, const int64_t *q, int64_t *prefix) {
    prefix[0] = 0;
    for (int64_t i = n - 1; i >= 0; i--) {  /* forward links, reading backwards: -q[d_fwd] in place */
        int64_t j = last[ids[i]], d = j ? j - 1 - i : 511;
        prefix[i + 1] = -q[d > 256 ? 511 : d];
        last[ids[i]] = (int32_t)(i + 1);
    }
    for (int64_t i = 0; i < n; i++) last[ids[i]] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = last[ids[i]], d = j ? i - (j - 1) : 511;
        prefix[i + 1] += prefix[i] + q[d > 256 ? 511 : d];
        last[ids[i]] = (int32_t)(i + 1);
    }
    for (int64_t i = 0; i < n; i++) last[ids[i]] = 0;
}

/* lexical_rows' weights, as its numpy passes compute them (the same operations in the same order, so
   the same bits): w = sqrt(cnt) * idf[col]; each row's squared norm summed in entry order (numpy's
   bincount); then w / norm, rows of norm 0 left as they are; sq (n doubles) ends as the squared norms of
   the rows so scaled (SparseRows.sqnorms' bits). */
void lc_lexweights(int64_t e, int64_t n, const int32_t *row, const int32_t *col, const int32_t *cnt, const double *idf,
                   double *sq, double *w) {
    for (int64_t k = 0; k < e; k++) {
        w[k] = sqrt((double)cnt[k]) * idf[col[k]];
        double ww = w[k] * w[k];
        sq[row[k]] += ww;
    }
    for (int64_t i = 0; i < n; i++) {  /* each row's norm once (a square root per entry cost a third of the pass) */
        double nr = sqrt(sq[i]);
        sq[i] = nr > 0.0 ? nr : 1.0;
    }
    for (int64_t k = 0; k < e; k++) w[k] = w[k] / sq[row[k]];
    for (int64_t i = 0; i < n; i++) sq[i] = 0.0;  /* then the unit rows' own squared norms, as bincount sums them */
    for (int64_t k = 0; k < e; k++) {
        double ww = w[k] * w[k];
        sq[row[k]] += ww;
    }
}

/* numpy's pairwise sum of a float64 run (its reduction of a contiguous array: runs under 8 added one by
   one from 0.0, up to 128 in eight interleaved sums, longer ones split in halves at a multiple of 8),
   so a run's sum here has numpy's bits. */
static double lc_pairwise(const double *a, int64_t n) {
    if (n < 8) {
        double res = 0.0;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return lc_pairwise(a, n2) + lc_pairwise(a + n2, n - n2);
}

/* sparse_rows.SparseRows.group: entries (by column, then row) of rows with grp[row] >= 0, merged where
   neighbouring entries share group and column, each merged run's value its first entry plus the
   pairwise sum of the rest (what numpy's add.reduceat gives). Writes the merged entries to orow, ocol,
   oval (room for e; oval also holds the kept values while they are summed) and returns how many. */
static inline void lc_close_run(int64_t out, int64_t len, int32_t rg, int32_t rc, int32_t *orow, int32_t *ocol,
                                double *oval) {
    oval[out] = len == 1 ? oval[out] : oval[out] + lc_pairwise(oval + out + 1, len - 1);
    orow[out] = rg;
    ocol[out] = rc;
}
int64_t lc_group(int64_t e, const int32_t *row, const int32_t *col, const double *val, const int64_t *grp,
                 int32_t *orow, int32_t *ocol, double *oval) {
    /* one pass: the sums made so far sit at [0, out), the open run's values right after them (its
       entries, dropped rows skipped, laid end to end as numpy compresses them), summed when it closes */
    int64_t out = 0, len = 0;
    int32_t rg = -1, rc = 0;
    for (int64_t k = 0; k < e; k++) {
        int64_t g = grp[row[k]];
        if (g < 0) continue;
        if (len && ((int32_t)g != rg || col[k] != rc)) {
            lc_close_run(out++, len, rg, rc, orow, ocol, oval);
            len = 0;
        }
        rg = (int32_t)g;
        rc = col[k];
        oval[out + len++] = val[k];
    }
    if (len) lc_close_run(out++, len, rg, rc, orow, ocol, oval);
    return out;
}

/* boundaries.gram_band of SparseRows.group's rows, straight from the ungrouped entries (by column, then row;
   grp[row] the row's group, < 0 left out, non-decreasing over the others): each column's entries are merged
   into og/ov (room for one column's entries) as lc_group merges them, then walked as lc_band walks the grouped
   entries, so P gets the same sums to the last bit without the grouped entries written out (per level, megabytes
   on a long text: a pass and their pages). P: zeroed, its rows from off; lo and off as lc_band reads them. */
void lc_group_band(int64_t e, const int32_t *row, const int32_t *col, const double *val, const int64_t *grp,
                   int64_t w, const int64_t *lo, const int64_t *off, int64_t *og, double *ov, double *P) {
    int64_t k = 0;
    while (k < e) {
        const int32_t c = col[k];
        int64_t out = 0, len = 0, rg = -1;
        for (; k < e && col[k] == c; k++) {
            const int64_t g = grp[row[k]];
            if (g < 0) continue;
            if (len && g != rg) {  /* (lc_close_run's sum: the first value plus the pairwise sum of the rest) */
                if (len > 1) ov[out] = ov[out] + lc_pairwise(ov + out + 1, len - 1);
                og[out++] = rg;
                len = 0;
            }
            rg = g;
            ov[out + len++] = val[k];
        }
        if (len) {
            if (len > 1) ov[out] = ov[out] + lc_pairwise(ov + out + 1, len - 1);
            og[out++] = rg;
        }
        for (int64_t i = 0; i < out; i++) {
            const int64_t ri = og[i];
            const double vi = ov[i];
            double *prow = P + off[ri];
            prow[0] += vi * vi;
            for (int64_t j = i + 1; j < out && j - i < w && ri >= lo[og[j] + 1]; j++)
                prow[og[j] - ri] += vi * ov[j];
        }
    }
}

/* boundaries.scatter._window_prices: the permutation price (boundaries.null_penalty) of each window of sparse rows
   alone, window w the rows [ws[w], ws[w+1]) (win: each row's window), with the same floating-point operations in
   the same order as scatter._window_prices_numpy, so both give the same bits. The entries are dealt out window by
   window (streams: a scatter of every entry to its row across the text cost a cache miss each), then each window
   is laid out by row (its columns numbered within it) and run alone: per shuffle (its rows in the order of their
   keys salted by salt0 + s, stable: null_orders' argsort) prev = <x_i, the rows before it>, each column's
   running sum read and grown as the rows come; the column sums T are the first shuffle's (an order of the rows'
   content), |T|^2 summed over the columns in order, xt[i] = <x_i, T> over a row's entries in column order; then
   the best single cut's gain (scatter._best_gain's formula) at every prefix. fresh: keys are the rows' own
   content keys, made distinct in each window by their rank among its equal keys and salted by its smallest key
   of content, as null_orders does (else: keys so made already). out[w]: the largest gain (0 below 3 rows). A
   window holds fewer than 2^15 rows. Work: rc (n), wptr (nwin+1), wrow, wval, rcol, rval, colsum, T (e), rowptr, xt,
   kk, sk, ord, prev (the widest window, +1), cnt (65537). */
static inline uint64_t lc_mix(uint64_t h);
/* out[0..m) = the stable argsort of key[0..m): a counting pass on the top bits (hashes: spread over the buckets),
   then insertion, which only reorders a bucket's keys, in index order (stable) */
static void lc_argsort_u64(int64_t m, const uint64_t *key, int64_t *out, int64_t *cnt) {
    int b = 0;
    while (b < 16 && ((int64_t)1 << b) < 2 * m) b++;  /* (two buckets a key: few to insert, few mispredictions) */
    if (b == 0) {
        for (int64_t i = 0; i < m; i++) out[i] = i;
    } else {
        int64_t nb = (int64_t)1 << b;
        int sh = 64 - b;
        for (int64_t i = 0; i <= nb; i++) cnt[i] = 0;
        for (int64_t i = 0; i < m; i++) cnt[(key[i] >> sh) + 1]++;
        for (int64_t i = 0; i < nb; i++) cnt[i + 1] += cnt[i];
        for (int64_t i = 0; i < m; i++) out[cnt[key[i] >> sh]++] = i;
    }
    for (int64_t i = 1; i < m; i++) {
        int64_t x = out[i], j = i;
        uint64_t kx = key[x];
        while (j > 0 && key[out[j - 1]] > kx) { out[j] = out[j - 1]; j--; }
        out[j] = x;
    }
}
void lc_window_prices(int64_t n, int64_t e, int64_t nwin, int64_t shuffles, uint64_t salt0, int64_t fresh,
                      const int32_t *row, const int32_t *col, const double *val, const double *sq,
                      const uint64_t *keys, const int64_t *ws, const int32_t *win, int32_t *rc, int64_t *wptr, uint16_t *wrow,
                      double *wval, int64_t *rowptr, int32_t *rcol, double *rval, double *colsum, double *T,
                      double *xt, uint64_t *kk, uint64_t *sk, int64_t *ord, double *prev, int64_t *cnt, double *out) {
    const uint64_t G = 0x9E3779B97F4A7C15ULL;
    /* the entries window by window, each window's by column, then row (streams, not a scatter over the text):
       the row in the window, its top bit set on a column's first entry in the window */
    for (int64_t i = 0; i < n; i++) rc[i] = 0;
    for (int64_t k = 0; k < e; k++) rc[row[k]]++;  /* (by row: neighbours are rows apart, no chain in memory) */
    wptr[0] = 0;
    for (int64_t w = 0; w < nwin; w++) {
        int64_t t = wptr[w];
        for (int64_t i = ws[w]; i < ws[w + 1]; i++) t += rc[i];
        wptr[w + 1] = t;
    }
    for (int64_t k = 0, wl = -1, cl = -1; k < e; k++) {
        int32_t r = row[k], w = win[r];
        int64_t p = wptr[w]++;
        wrow[p] = (uint16_t)((r - (int32_t)ws[w]) | (w != wl || col[k] != cl) << 15);
        wval[p] = val[k];
        wl = w;
        cl = col[k];
    }
    for (int64_t w = nwin; w > 0; w--) wptr[w] = wptr[w - 1];
    wptr[0] = 0;
    for (int64_t w = 0; w < nwin; w++) {
        int64_t a = ws[w], m = ws[w + 1] - a, e0 = wptr[w], ne = wptr[w + 1] - e0, nc = 0;
        const uint16_t *er = wrow + e0;
        const double *ev = wval + e0;
        /* the window's entries by row, each row's in column order, the columns numbered in the window */
        for (int64_t j = 0; j <= m; j++) rowptr[j] = 0;
        for (int64_t k = 0; k < ne; k++) rowptr[(er[k] & 0x7FFF) + 1]++;
        for (int64_t j = 0; j < m; j++) rowptr[j + 1] += rowptr[j];
        for (int64_t k = 0; k < ne; k++) {
            nc += k > 0 && er[k] >> 15;
            int64_t p = rowptr[er[k] & 0x7FFF]++;
            rcol[p] = (int32_t)nc;
            rval[p] = ev[k];
        }
        nc += ne > 0;
        for (int64_t j = m; j > 0; j--) rowptr[j] = rowptr[j - 1];
        rowptr[0] = 0;
        if (fresh) {
            const uint64_t *raw = keys + a;
            uint64_t least = 0;
            for (int64_t j = 0; j < m; j++) {
                if (raw[j] && (!least || raw[j] < least)) least = raw[j];
                sk[j] = lc_mix(raw[j] + G);  /* (a bijection: equal keys stay together, spread over the buckets) */
            }
            uint64_t salt = lc_mix(least + G), rank = 0;
            lc_argsort_u64(m, sk, ord, cnt);
            for (int64_t j = 0; j < m; j++) {
                int64_t i = ord[j];
                rank = (j > 0 && raw[ord[j - 1]] == raw[i]) ? rank + 1 : 0;
                kk[i] = lc_mix((raw[i] ^ lc_mix(rank + G)) ^ salt);
            }
        } else {
            for (int64_t j = 0; j < m; j++) kk[j] = keys[a + j];
        }
        const double *wq = sq + a;
        double T2 = 0.0, tn = 0.0, best = -1.0 / 0.0;
        for (int64_t s = 0; s < shuffles; s++) {
            uint64_t h = lc_mix(salt0 + (uint64_t)s + G);
            for (int64_t j = 0; j < m; j++) sk[j] = lc_mix(kk[j] ^ h);
            lc_argsort_u64(m, sk, ord, cnt);
            for (int64_t c = 0; c < nc; c++) colsum[c] = 0.0;
            for (int64_t j = 0; j < m; j++) {  /* prev: each column's running sum read, then grown */
                int64_t i = ord[j];
                double p = 0.0;
                for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) {
                    int32_t c = rcol[q];
                    double b = colsum[c];
                    p += rval[q] * b;
                    colsum[c] = b + rval[q];
                }
                prev[j] = p;
            }
            if (s == 0) {  /* T, the column sums, as the first shuffle adds them (an order of the rows' content) */
                for (int64_t c = 0; c < nc; c++) { T[c] = colsum[c]; T2 += T[c] * T[c]; }
                for (int64_t i = 0; i < m; i++) {
                    double x = 0.0;
                    for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) x += rval[q] * T[rcol[q]];
                    xt[i] = x;
                }
                tn = T2 / (double)m;
            }
            double ll = 0.0, lt = 0.0;
            for (int64_t j = 0; j + 1 < m; j++) {
                int64_t i = ord[j];
                double d = 2.0 * prev[j] + wq[i];
                ll = j ? ll + d : d;
                lt = j ? lt + xt[i] : xt[i];
                double g = ll / (double)(j + 1) + (T2 - 2.0 * lt + ll) / (double)(m - j - 1) - tn;
                if (g > best) best = g;
            }
        }
        out[w] = m < 3 ? 0.0 : best;
    }
}

/* The evidence of every window of atoms: for each start a in [a0, a1) and last atom b < hi[a] (hi[a] the
   furthest end), out[(b+1-row0)*w + (b-a)] = the sum, over the items of atoms a..b in entry order, of
   steps[off[v] + r], v the item's kind and r how often it came before in the window (laid out by end,
   as boundaries.scatter_costs' costs, from row row0: rows before it are summed through, not stored);
   given first (one weight per kind), out2 the same windows' sums of first[v] over their kinds (r == 0):
   boundaries.evidence._evidence_sums, the same additions in the same order. tally (kinds) must be zeroed; it is
   left zeroed. */
void lc_evidence(int64_t a0, int64_t a1, int64_t w, int64_t row0, const int64_t *ptr, const int32_t *item,
                 const int64_t *hi, const int64_t *off, const double *steps, int64_t *tally, double *out,
                 const double *first, double *out2) {
    for (int64_t a = a0; a < a1; a++) {
        double s = 0.0, f = 0.0;
        for (int64_t b = a; b < hi[a]; b++) {
            for (int64_t e = ptr[b]; e < ptr[b + 1]; e++) {
                int64_t v = item[e];
                int64_t r = tally[v]++;
                s += steps[off[v] + r];
                if (first && r == 0) f += first[v];
            }
            if (b + 1 < row0) continue;
            out[(b + 1 - row0) * w + (b - a)] = s;
            if (first) out2[(b + 1 - row0) * w + (b - a)] = f;
        }
        for (int64_t e = ptr[a]; e < ptr[hi[a]]; e++) tally[item[e]] = 0;
    }
}

/* signals.ngrams._rows_entropy's sums over r rows of w sorted keys: sum[i] adds clogc[c] for each run of
   c >= 2 equal keys other than the sentinel (the type's maximum), runs in ascending order as numpy's
   bincount adds them, and nsent[i] counts the sentinels (they sort last). Only repeats count: a key equal
   to the one before it. The sentinels are counted back from the row's end; the repeats before them are read
   as the bits of a word, 64 keys a word (eight compares at once where AVX2 is there, chosen at run time,
   32-bit keys), and walked bit by bit: a run of c equal keys is c - 1 repeats in a row, and each repeat adds
   clogc[0] while its run goes on, clogc[c] of the run before where a new one opens (and the last run at the
   end): no branch on the data, and an adder's chain as long as the repeats (a third of a window's keys on
   natural text), not the runs. clogc[0] and clogc[1] are 0.0, which leaves the sum's bits as they are, so
   these are the sums of the numpy passes, to the bit. (Before: a pass writing every run's end, then one adding
   clogc of every run, lone keys included: 16 instructions a key of tier 3's windows of English, 8 here, and
   2.3 ns a key against 1.5.) */
#define LC_RUNS_ROWS(T, REPEATS)                                                                   \
    const T S = (T)~(T)0;                                                                          \
    for (int64_t i = 0; i < r; i++) {                                                              \
        const T *x = rows + i * w;                                                                 \
        int64_t ns = 0;                                                                            \
        for (int64_t j = w - 1; j >= 0 && x[j] == S; j--) ns++;                                    \
        const int64_t m = w - ns;                                                                  \
        int64_t c = 1, last = -2; /* the open run: c equal keys, its last repeat at last */        \
        double s = 0.0;                                                                            \
        for (int64_t b = 1; b < m; b += 64) {                                                      \
            uint64_t bits = REPEATS(x, b, m - b < 64 ? m : b + 64);                                \
            while (bits) {                                                                         \
                const int64_t j = b + __builtin_ctzll(bits);                                       \
                const int64_t opens = -(int64_t)(j != last + 1); /* all ones: a new run (masks, not \
                    a branch the compiler would make of a ?:, mispredicted at every other repeat) */      \
                bits &= bits - 1;                                                                  \
                s += clogc[c & opens];                                                             \
                c = ((c + 1) & ~opens) | (2 & opens);                                              \
                last = j;                                                                          \
            }                                                                                      \
        }                                                                                          \
        sum[i] = c > 1 ? s + clogc[c] : s;                                                         \
        nsent[i] = (double)ns;                                                                     \
    }
#define LC_REPEATS(NAME, T)                                                                        \
static inline uint64_t NAME(const T *x, int64_t b, int64_t e) {                                    \
    uint64_t bits = 0;                                                                             \
    for (int64_t j = b; j < e; j++) bits |= (uint64_t)(x[j] == x[j - 1]) << (j - b);               \
    return bits;                                                                                   \
}
LC_REPEATS(lc_repeats32, uint32_t)
LC_REPEATS(lc_repeats64, uint64_t)
#define LC_RUNS_ARGS int64_t r, int64_t w, const uint32_t *rows, const double *clogc, double *sum, double *nsent
static void lc_runs32_plain(LC_RUNS_ARGS) { LC_RUNS_ROWS(uint32_t, lc_repeats32) }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
__attribute__((target("avx2"))) static inline uint64_t lc_repeats32_avx2(const uint32_t *x, int64_t b, int64_t e) {
    uint64_t bits = 0;
    int64_t j = b;
    for (; j + 8 <= e; j += 8) {
        const __m256i now = _mm256_loadu_si256((const __m256i *)(x + j));
        const __m256i before = _mm256_loadu_si256((const __m256i *)(x + j - 1));
        bits |= (uint64_t)(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(now, before))) << (j - b);
    }
    for (; j < e; j++) bits |= (uint64_t)(x[j] == x[j - 1]) << (j - b);
    return bits;
}
__attribute__((target("avx2"))) static void lc_runs32_avx2(LC_RUNS_ARGS) { LC_RUNS_ROWS(uint32_t, lc_repeats32_avx2) }
#endif
void lc_runs32(LC_RUNS_ARGS) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx2")) { lc_runs32_avx2(r, w, rows, clogc, sum, nsent); return; }
#endif
    lc_runs32_plain(r, w, rows, clogc, sum, nsent);
}
void lc_runs64(int64_t r, int64_t w, const uint64_t *rows, const double *clogc, double *sum, double *nsent) {
    LC_RUNS_ROWS(uint64_t, lc_repeats64)
}

/* signals.ngrams._keys for n = 2 with 32-bit keys, in one pass where numpy makes seven (a gather of the content
   table, the mask's OR, two shifts, the OR of the halves, the sentinel's mask): key[i] = d(cp[i]) << 16 | d(cp[i+1]),
   d the alphabet's dense numbering (dense[c], when given) or the code point itself (all below 0x10000), the
   type's maximum where neither character is content (mask) and valid[i] saying whether one is. content: a byte
   per code point, 0 or 1 (the caller checks the text's code points are in the table). */
void lc_bigrams(int64_t m, const uint32_t *cp, const uint8_t *content, const uint32_t *dense, int64_t mask,
                uint32_t *key, uint8_t *valid) {
    for (int64_t i = 0; i < m; i++) {
        uint32_t a = cp[i], b = cp[i + 1];
        uint8_t v = content[a] | content[b];
        uint32_t k = dense ? (dense[a] << 16 | dense[b]) : (a << 16 | b);
        valid[i] = v;
        key[i] = (mask && !v) ? 0xFFFFFFFFu : k;
    }
}

/* The dense numbering of the code points cp (n of them, each below size) that signals.ngrams._keys takes from
   numpy's cumsum of the bincount's presence: dense[c] = how many distinct code points lie below c (c present; the
   entries of absent ones as numpy leaves them, one less than those below, unread). dense: size zeroed entries.
   Returns how many distinct code points there are. */
int64_t lc_alphabet(int64_t n, const uint32_t *cp, int64_t size, uint32_t *dense) {
    for (int64_t i = 0; i < n; i++) dense[cp[i]] = 1;
    uint32_t run = 0;
    for (int64_t j = 0; j < size; j++) {
        run += dense[j];
        dense[j] = run - 1u;
    }
    return (int64_t)run;
}

/* text.end_candidates._skip_ws_each: for each offset q[i], the first offset at or after it whose code point
   has none of the flag bits `ws` in fl (or q[i] itself past the text's end). The offsets come sorted, so an
   offset inside the whitespace run the last walk crossed takes that walk's end without a walk of its own
   (a text of a million newlines is walked once). */
#define LC_SKIPWS(NAME, T)                                                                          \
void NAME(int64_t n, const T *cp, const uint16_t *fl, int64_t ws, int64_t m, const int64_t *q,        \
          int64_t *out) {                                                                         \
    int64_t lo = 0, hi = 0; /* [lo, hi): the last run walked, all whitespace; hi ends it */        \
    for (int64_t i = 0; i < m; i++) {                                                             \
        int64_t a = q[i];                                                                         \
        if (a >= lo && a < hi) { out[i] = hi; continue; }                                         \
        int64_t b = a;                                                                            \
        while (b >= 0 && b < n && (fl[cp[b]] & ws)) b++;                                          \
        out[i] = b;                                                                               \
        lo = a;                                                                                   \
        hi = b;                                                                                   \
    }                                                                                             \
}
LC_SKIPWS(lc_skipws8, uint8_t)
LC_SKIPWS(lc_skipws16, uint16_t)
LC_SKIPWS(lc_skipws32, uint32_t)

/* text._arrays._walk: from each at[i], past up to `steps` code points of the set `take` (a table of
   ntake flags by code point; past its end: not taken), forwards while below bound[i] or backwards while
   at or above it; at[i] ends where the walk stopped, more[i] says it ran out of steps still in the set,
   noted[i] that it passed a code point of the set `note` (nnote flags; none when nnote is 0). A position
   outside the text reads its nearest end, as the numpy passes clip it. lc_walk_one is one such walk (from a,
   to the bound bound; lc_read_terms makes four per sentence with it). */
static inline __attribute__((always_inline)) int64_t lc_walk_one(const uint32_t *cp, int64_t ncp, int64_t a,
        int64_t bound, const uint8_t *take, int64_t ntake, int64_t steps, int back, const uint8_t *note,
        int64_t nnote, uint8_t *more, uint8_t *noted) {
    int64_t k = 0;
    uint8_t nd = 0;
    /* where every position the walk may read lies in the text (most walks: a line's edges), the same walk with
       its reach set once: no clamp, no bound nor step count to test per step (lo..hi: the positions it may read) */
    const int64_t hi = back ? a : (bound < a + steps ? bound : a + steps) - 1;
    const int64_t lo = back ? (bound > a - steps + 1 ? bound : a - steps + 1) : a;
    if (lo >= 0 && hi <= ncp - 1 && a >= 0 && a <= ncp - 1) {
        const int64_t a0 = a;
        if (back) {
            for (; a >= lo; a--) {
                const uint32_t c = cp[a];
                if (c >= (uint64_t)ntake || !take[c]) break;
                if (c < (uint64_t)nnote && note[c]) nd = 1;
            }
            k = a0 - a;
        } else {
            for (; a <= hi; a++) {
                const uint32_t c = cp[a];
                if (c >= (uint64_t)ntake || !take[c]) break;
                if (c < (uint64_t)nnote && note[c]) nd = 1;
            }
            k = a - a0;
        }
        *more = k == steps;
        *noted = nd;
        return a;
    }
    for (; k < steps; k++) {
        const int64_t p = a < 0 ? 0 : (a > ncp - 1 ? ncp - 1 : a);
        const uint32_t c = cp[p];
        const int inside = back ? a >= bound : a < bound;
        if (!inside || c >= (uint64_t)ntake || !take[c]) break;
        if (c < (uint64_t)nnote && note[c]) nd = 1;
        a += back ? -1 : 1;
    }
    *more = k == steps;
    *noted = nd;
    return a;
}
void lc_walk(int64_t m, const uint32_t *cp, int64_t ncp, int64_t *at, const int64_t *bound, const uint8_t *take,
             int64_t ntake, int64_t steps, int64_t back, const uint8_t *note, int64_t nnote, uint8_t *more,
             uint8_t *noted) {
    for (int64_t i = 0; i < m; i++)
        at[i] = lc_walk_one(cp, ncp, at[i], bound[i], take, ntake, steps, back != 0, note, nnote, &more[i], &noted[i]);
}

/* text.structure._last_ats: each span's last character, past up to `blanks` code points of `blank` and then up to
   two of `closer` backwards (never before the span's second character; a negative answer reads 0): plain[i] without
   the closers, closed[i] past them. Two walks of lc_walk_one per span in one call, where _last_at made a kernel call
   (and its gathers) per query, most spans queried several times. */
void lc_last_ats(int64_t m, const uint32_t *cp, int64_t ncp, const int64_t *starts, const int64_t *ends,
                 const uint8_t *blank, int64_t nblank, int64_t blanks, const uint8_t *closer, int64_t ncloser,
                 int64_t *plain, int64_t *closed) {
    uint8_t more, noted;
    for (int64_t i = 0; i < m; i++) {
        const int64_t s = starts[i] + 1;
        const int64_t e = lc_walk_one(cp, ncp, ends[i] - 1, s, blank, nblank, blanks, 1, blank, 0, &more, &noted);
        const int64_t c = lc_walk_one(cp, ncp, e, s, closer, ncloser, 2, 1, closer, 0, &more, &noted);
        plain[i] = e < 0 ? 0 : e;
        closed[i] = c < 0 ? 0 : c;
    }
}

/* numpy.searchsorted(a, v, side) for int64 arrays, a sorted: out[i] is the first index whose a[] is >= v[i]
   (right: > v[i]). Each search starts from the previous answer and gallops (1, 2, 4, ... steps) towards
   v[i] before the binary search, so sorted needles cost O(log gap) each and touch the haystack in
   order, where numpy's binary search starts over from the whole haystack (cache misses on long ones).
   Any order of needles gives numpy's answer; only the speed depends on it. */
void lc_search(int64_t n, const int64_t *a, int64_t m, const int64_t *v, int64_t right, int64_t *out) {
    int64_t p = 0;
    for (int64_t i = 0; i < m; i++) {
        const int64_t x = v[i];
        int64_t lo, hi; /* the answer lies in [lo, hi] */
        /* below(j): a[j] lies before the answer (a[j] < x, right: a[j] <= x) */
#define LC_BELOW(j) (right ? a[j] <= x : a[j] < x)
        if (p < n && LC_BELOW(p)) {          /* forwards from p */
            int64_t step = 1;
            lo = p + 1;
            hi = p + 1;
            while (hi < n && LC_BELOW(hi)) { lo = hi + 1; hi += step; step <<= 1; }
            if (hi > n) hi = n;
        } else {                             /* backwards from p */
            int64_t step = 1;
            hi = p;
            lo = p;
            while (lo > 0 && !LC_BELOW(lo - 1)) { hi = lo - 1; lo -= step; step <<= 1; }
            if (lo < 0) lo = 0;
        }
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (LC_BELOW(mid)) lo = mid + 1; else hi = mid;
        }
#undef LC_BELOW
        out[i] = lo;
        p = lo;
    }
}

/* binary searches of a sorted int64 array */
static int64_t lc_upper(const int64_t *a, int64_t n, int64_t x) { /* first index with a[i] > x */
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
    return lo;
}
static int64_t lc_lower(const int64_t *a, int64_t n, int64_t x) { /* first index with a[i] >= x */
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (a[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
}

/* text.discourse.opens_with_marker per span [starts[i], ends[i]) of the code points cp, the same answers:
   past the quotes, brackets and spaces that open it (skip[c], at most 24), an English word of ASCII
   letters packed 5 bits a letter (at most 12; ended by anything but a letter, a digit or a hyphen) found in
   plain, or in answers when only spaces and quotes come before punctuation (stop[c]) or the window's end
   within 8 characters; else two Chinese characters (c0 << 21 | c1) in two, or the first in one. Only the
   span's first 24 characters are read; the key lists are sorted. */
static int lc_in(const int64_t *a, int64_t n, int64_t x) { /* x is in the sorted a */
    int64_t i = lc_lower(a, n, x);
    return i < n && a[i] == x;
}
void lc_markers(int64_t m, const uint32_t *cp, const int64_t *starts, const int64_t *ends, const uint8_t *skip,
                const uint8_t *stop, const int64_t *plain, int64_t np_, const int64_t *answers, int64_t na,
                const int64_t *two, int64_t nt, const int64_t *one, int64_t no, uint8_t *out) {
    for (int64_t i = 0; i < m; i++) {
        /* a sentence start a few sentences on: its characters are a cache miss each in a long text */
        if (i + 16 < m) __builtin_prefetch(cp + starts[i + 16]);
        const int64_t lim = ends[i] < starts[i] + 24 ? ends[i] : starts[i] + 24;
#define LC_CH(p) ((p) < lim ? (int64_t)cp[p] : (int64_t)0)
        int64_t first = starts[i];
        for (int k = 0; k < 24; k++) {
            int64_t c = LC_CH(first);
            if (!skip[c < 0xFFFF ? c : 0xFFFF]) break;
            first++;
        }
        int64_t key = 0, length = -1;
        for (int64_t k = 0; k <= 12; k++) {
            int64_t low = LC_CH(first + k) | 0x20;
            int letter = low >= 0x61 && low <= 0x7A;
            if (!letter) { length = k; break; }
            if (k < 12) key += (low - 96) << (5 * k);
        }
        int hit = 0;
        if (length > 0) {
            int64_t after = LC_CH(first + length);
            if (!((after >= 0x30 && after <= 0x39) || after == 0x2D)) {
                hit = lc_in(plain, np_, key);
                if (!hit && lc_in(answers, na, key)) {
                    int ends_after = 1;
                    for (int64_t k = 0; k < 8; k++) {
                        int64_t c = LC_CH(first + length + k);
                        if (c != 0 && !skip[c < 0xFFFF ? c : 0xFFFF]) { ends_after = c <= 0xFFFF && stop[c]; break; }
                    }
                    hit = ends_after;
                }
            }
        }
        if (!hit) {
            int64_t c0 = LC_CH(first);
            hit = lc_in(two, nt, (c0 << 21) | LC_CH(first + 1)) || lc_in(one, no, c0);
        }
#undef LC_CH
        out[i] = (uint8_t)hit;
    }
}

/* boundaries.forced.inner_breaks' walk through one over-long sentence of n characters: prefix (n+1, non-
   decreasing) its sizes, pri (n-1) the break priority of a cut at each inner offset k+1. While the rest is
   over max_size: the furthest offset that fits, the best priority in the back half of that window (else
   in all of it), the last such offset; or, where nothing fits, the next allowed offset. Writes the cut
   offsets (local) to cuts (n at most), returns how many, and the roughest priority used in *worst. */
static int64_t lc_inner(int64_t n, const int64_t *prefix, const int8_t *pri, int64_t max_size, int64_t *cuts,
                        int64_t *worst) {
    int64_t pos = 0, k = 0, w = 3;
    const int64_t half = max_size / 2 > 1 ? max_size / 2 : 1;
    while (prefix[n] - prefix[pos] > max_size) {
        int64_t hi = lc_upper(prefix, n + 1, prefix[pos] + max_size) - 1;
        if (hi > n - 1) hi = n - 1;
        int64_t lo = lc_lower(prefix, n + 1, prefix[pos] + half);
        if (lo < pos + 1) lo = pos + 1;
        int64_t choice = -1;
        const int64_t from[2] = {lo, pos + 1};
        for (int t = 0; t < 2 && choice < 0; t++) {
            if (hi < pos + 1) break;
            int best = -2;
            int64_t at = -1;
            for (int64_t j = from[t] - 1; j < hi; j++) if (pri[j] >= best) { best = pri[j]; at = j; }
            if (at >= 0 && best >= 0) { choice = at + 1; if (best < w) w = best; }
        }
        if (choice < 0) {
            int64_t j = pos;
            while (j < n - 1 && pri[j] < 0) j++;
            if (j >= n - 1) break;
            choice = j + 1;
            w = 0;
        }
        cuts[k++] = choice;
        pos = choice;
    }
    *worst = w;
    return k;
}

/* signals.items.content_items from position a on: a maximal run of ALNUM characters (cls[c] & (alnum | cjk)
   == alnum) longer than one character is a word, its id a hash of its first four characters folded as 16-bit
   (c | 0x20) values (the item module's numpy passes: h = those values little-end first, h ^= h >> 29,
   h *= m1, id = h >> 45 | 2^19), kept unless its bit is set in stopbits (2^20 bits, little-endian
   within a byte); a CJK character c is an item (id c) where cjk[c].
   Pass 1, branch-free per character, writes every word start and CJK item (a word's id 0 for now); pass 2
   hashes the words and drops the short and the stop words. Writes (position, id) in position order, at
   most cap, stopping only between items; *next is where a further call goes on. Returns how many. */
/* lc_items' first pass over the characters [i, end) (at most cap - k entries: no test inside), branch-free per
   character; prev: whether the character before i is a word's */
#define LC_ITEMS_CHARS                                                                              \
    for (; i < end; i++) {                                                                         \
        uint32_t c = cp[i];                                                                        \
        uint32_t kind = cls[c] & both;                                                             \
        uint32_t al = kind == (uint32_t)alnum;                                                     \
        uint32_t item = (kind == (uint32_t)cjkf) & (cjk[c] != 0);                                  \
        pos[k] = i;                                                                                \
        ids[k] = c & (0u - item);                                                                  \
        k += (al & (prev ^ 1u)) | item;                                                            \
        prev = al;                                                                                 \
    }
#define LC_ITEMS_PASS1_ARGS int64_t n, const uint32_t *cp, int64_t i, const uint8_t *cls, int64_t alnum, int64_t cjkf, \
    const uint8_t *cjk, int64_t cap, int64_t *pos, uint32_t *ids, int64_t *next
static int64_t lc_items_pass1(LC_ITEMS_PASS1_ARGS) {
    const uint8_t both = (uint8_t)(alnum | cjkf);
    int64_t k = 0;
    uint32_t prev = i > 0 && (cls[cp[i - 1]] & both) == (uint8_t)alnum;
    while (i < n && k < cap) {
        /* each character adds one entry at most: this stretch cannot overflow, so no test inside */
        int64_t end = i + (cap - k) < n ? i + (cap - k) : n;
        LC_ITEMS_CHARS
    }
    *next = i;
    return k;
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* lc_items_pass1 with 64 characters of ASCII read at once where a stretch holds only those (English, code): each
   one's two flags (a word's character; a CJK item: never, by the tables) from two 128-bit tables made of cls and
   cjk, eight characters a step (AVX2, chosen at run time), the entries written from the flags' set bits; any
   other stretch of 64 as lc_items_pass1 reads it (CJK text: an item per character, as fast so). The same
   entries: 2.3x on English text. */
__attribute__((target("avx2"))) static int64_t lc_items_pass1_avx2(LC_ITEMS_PASS1_ARGS) {
    const uint8_t both = (uint8_t)(alnum | cjkf);
    uint32_t wa[8] = {0}, wi[8] = {0};
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t kind = cls[c] & both;
        wa[c >> 5] |= (uint32_t)(kind == (uint32_t)alnum) << (c & 31);
        wi[c >> 5] |= (uint32_t)((kind == (uint32_t)cjkf) & (cjk[c] != 0)) << (c & 31);
    }
    const __m256i ta = _mm256_loadu_si256((const __m256i *)wa), ti = _mm256_loadu_si256((const __m256i *)wi);
    const __m256i low5 = _mm256_set1_epi32(31), high = _mm256_set1_epi32(~127);
    int64_t k = 0;
    uint32_t prev = i > 0 && (cls[cp[i - 1]] & both) == (uint8_t)alnum;
    while (i < n && k < cap) {
        int64_t end = i + (cap - k) < n ? i + (cap - k) : n;
        if (end - i >= 64) {
            __m256i v[8], any = _mm256_setzero_si256();
            for (int q = 0; q < 8; q++) {
                v[q] = _mm256_loadu_si256((const __m256i *)(cp + i + 8 * q));
                any = _mm256_or_si256(any, v[q]);
            }
            if (_mm256_testz_si256(any, high)) {
                uint64_t al = 0, item = 0;
                for (int q = 0; q < 8; q++) {
                    __m256i word = _mm256_srli_epi32(v[q], 5), bit = _mm256_and_si256(v[q], low5);
                    __m256i fa = _mm256_srlv_epi32(_mm256_permutevar8x32_epi32(ta, word), bit);
                    __m256i fi = _mm256_srlv_epi32(_mm256_permutevar8x32_epi32(ti, word), bit);
                    al |= (uint64_t)(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(fa, 31))) << (8 * q);
                    item |= (uint64_t)(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(fi, 31))) << (8 * q);
                }
                uint64_t ev = (al & ~((al << 1) | prev)) | item;  /* word starts and CJK items */
                prev = (uint32_t)(al >> 63);
                while (ev) {
                    int j = __builtin_ctzll(ev);
                    ev &= ev - 1;
                    pos[k] = i + j;
                    ids[k] = (item >> j) & 1u ? cp[i + j] : 0u;
                    k++;
                }
                i += 64;
                continue;
            }
            end = i + 64;
        }
        LC_ITEMS_CHARS
    }
    *next = i;
    return k;
}
#endif
int64_t lc_items(int64_t n, const uint32_t *cp, int64_t a, const uint8_t *cls, int64_t alnum, int64_t cjkf,
                 const uint8_t *stopbits, const uint8_t *cjk, uint64_t m1, int64_t cap, int64_t *pos, uint32_t *ids,
                 int64_t *next) {
    const uint8_t both = (uint8_t)(alnum | cjkf);
#define LC_AL(p) ((p) < n && (cls[cp[p]] & both) == (uint8_t)alnum)
    int64_t k;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx2"))
        k = lc_items_pass1_avx2(n, cp, a, cls, alnum, cjkf, cjk, cap, pos, ids, next);
    else
#endif
        k = lc_items_pass1(n, cp, a, cls, alnum, cjkf, cjk, cap, pos, ids, next);
    int64_t out = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t s = pos[j];
        uint32_t id = ids[j];
        if (!id) {  /* a word: its id, and kept only if longer than a letter and not a stop word */
            uint32_t two = LC_AL(s + 1), three = two && LC_AL(s + 2), four = three && LC_AL(s + 3);
            uint64_t h = (uint64_t)(uint16_t)(cp[s] | 0x20);
            h |= (uint64_t)((uint16_t)(cp[s + two] | 0x20) & (0u - two)) << 16;
            h |= (uint64_t)((uint16_t)(cp[s + 2 * three] | 0x20) & (0u - three)) << 32;
            h |= (uint64_t)((uint16_t)(cp[s + 3 * four] | 0x20) & (0u - four)) << 48;
            h ^= h >> 29;
            h *= m1;
            id = (uint32_t)(h >> 45) | (1u << 19);
            /* no branch on the stop table (a cache miss per word): the loads overlap */
            id &= 0u - (two & ((stopbits[(id >> 3) & 0x1FFFF] >> (id & 7)) & 1u ^ 1u));
        }
        pos[out] = s;
        ids[out] = id;
        out += id != 0;
    }
#undef LC_AL
    return out;
}

/* lc_inner over m over-long sentences at once: sentence i's prefix is prefix[po[i] : po[i+1]] (its own,
   from 0), its break priorities pri[po[i] - i : po[i+1] - i - 2]; its cuts go to cuts from the end of the
   previous sentence's, their number to k[i], the roughest priority to worst[i]. */
void lc_inner_many(int64_t m, const int64_t *po, const int64_t *prefix, const int8_t *pri, int64_t max_size,
                   int64_t *cuts, int64_t *k, int64_t *worst) {
    int64_t at = 0;
    for (int64_t i = 0; i < m; i++) {
        k[i] = lc_inner(po[i + 1] - po[i] - 1, prefix + po[i], pri + (po[i] - i), max_size, cuts + at, worst + i);
        at += k[i];
    }
}

/* The DP's steps for the chunk ends b0 <= b < b1, rows[b - b0] the costs of the chunks ending at b (n+1
   rows of w in all; see boundaries/dp.py): the whole matrix from b0 = 1, or a band of rows at a time, fm
   and back kept by the caller between bands (the same steps, the same bits). */
void lc_dp_rows(int64_t b0, int64_t b1, int64_t n, int64_t w, const double *rows, double price,
                const int64_t *lo, const double *rw, const uint8_t *restart, double *fm, int64_t *back) {
    for (int64_t b = b0; b < b1; b++) lc_step(b, n, rows + (b - b0) * w, price, lo, rw, restart, fm, back);
}

/* models.embed_hash's features of one batch added to acc (texts x dim, float64, zeroed) in the order its numpy
   passes add them: np.bincount over the families' (row, hash, weight) triples laid end to end, the CJK 1-, 2-
   and 3-grams, then the words, then the words' 3-grams, then their 4-grams, each family in position order. cp:
   the batch's code points (texts joined by NUL, one NUL before and after), row: each position's text; cls: the
   class table (cjk and alnum its bits); stopzh (sorted) the Chinese function characters, stopw (sorted) the
   function words' hashes; wt: each family's weight as float32, then the same for a stop character or word
   (cjk1, cjk2, cjk3, word, gram3, gram4 | stop cjk1, -, -, stop word, stop gram3, stop gram4); seed: each
   family's. A feature's hash h adds +-w (the sign: h's top bit) to bucket h mod dim of its text's row. */
static inline uint64_t lc_mix(uint64_t h) {
    h ^= h >> 30; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 27; h *= 0x94D049BB133111EBULL; return h ^ (h >> 31);
}
static inline void lc_addf(double *acc, int64_t dim, int64_t row, uint64_t h, float w) {
    float v = (h >> 63) ? -w : w;
    /* (a power of two's remainder is a mask: a division per feature was most of the pass) */
    uint64_t b = (dim & (dim - 1)) == 0 ? h & (uint64_t)(dim - 1) : h % (uint64_t)dim;
    acc[row * dim + (int64_t)b] += (double)v;
}
static inline int lc_in32(const uint32_t *a, int64_t n, uint32_t x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (a[mid] < x) lo = mid + 1; else hi = mid; }
    return lo < n && a[lo] == x;
}
static inline int lc_in64(const uint64_t *a, int64_t n, uint64_t x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (a[mid] < x) lo = mid + 1; else hi = mid; }
    return lo < n && a[lo] == x;
}
void lc_hashfeat(int64_t m, const uint32_t *cp, const int64_t *row, const uint8_t *cls, int64_t cjkbit,
                 int64_t alnumbit, const uint32_t *stopzh, int64_t nzh, const uint64_t *stopw, int64_t nw,
                 const float *wt, const uint64_t *seed, int64_t dim, double *acc) {
    const uint64_t P = 0x100000001B3ULL, LT = 0x110001, GT = 0x110002;
#define LC_CJK(i) ((cls[cp[i] > 0x10FFFF ? 0x10FFFF : cp[i]] & cjkbit) != 0)
#define LC_WORD(i) ((cls[cp[i] > 0x10FFFF ? 0x10FFFF : cp[i]] & (cjkbit | alnumbit)) == alnumbit)
    /* one text at a time (its features, and so its row of sums, stay in cache): texts never share a sum, and
       inside one text the families and positions come in the numpy passes' order */
    int64_t t0 = 0;
    while (t0 < m) {
        while (t0 < m && cp[t0] == 0) t0++;
        int64_t t1 = t0;
        while (t1 < m && cp[t1] != 0) t1++;
        if (t1 == t0) break;
        for (int64_t n = 1; n <= 3; n++) {
            int64_t run = 0;  /* CJK characters ending at i */
            for (int64_t i = t0; i < t1; i++) {
                run = LC_CJK(i) ? run + 1 : 0;
                if (run < n) continue;
                int64_t s = i - n + 1;
                uint64_t h = seed[n - 1];
                for (int64_t k = 0; k < n; k++) h = h * P + cp[s + k];
                float w = (n == 1 && lc_in32(stopzh, nzh, cp[s])) ? wt[6] : wt[n - 1];
                lc_addf(acc, dim, row[s], lc_mix(h), w);
            }
        }
        /* the words: maximal runs of word characters, read as "<" chars ">"; pass 0 their whole-word hashes,
           passes 1 and 2 their 3- and 4-grams (a word's stop weight from its whole-word hash, each pass) */
        for (int64_t pass = 0; pass < 3; pass++) {
            int64_t i = t0;
            while (i < t1) {
                if (!LC_WORD(i)) { i++; continue; }
                int64_t a = i;
                while (i < t1 && LC_WORD(i)) i++;
                int64_t len = i - a + 2;  /* with its markers */
                uint64_t sum = LT, pw = 1;
                for (int64_t k = 1; k < len; k++) {
                    pw *= P;
                    sum += (k < len - 1 ? (uint64_t)cp[a + k - 1] : GT) * pw;
                }
                uint64_t wh = lc_mix(sum ^ seed[3]);
                int stop = lc_in64(stopw, nw, wh);
                if (pass == 0) { lc_addf(acc, dim, row[a], wh, stop ? wt[9] : wt[3]); continue; }
                int64_t n = pass + 2;
                float w = stop ? wt[9 + pass] : wt[3 + pass];
                for (int64_t s = 0; s + n <= len; s++) {
                    uint64_t h = seed[3 + pass];
                    for (int64_t k = s; k < s + n; k++)
                        h = h * P + (k == 0 ? LT : k == len - 1 ? GT : (uint64_t)cp[a + k - 1]);
                    lc_addf(acc, dim, row[a], lc_mix(h), w);
                }
            }
        }
        t0 = t1;
    }
#undef LC_CJK
#undef LC_WORD
}

/* The sentence splitter's passes over a text's code units (sz bytes each: 1, 2 or 4, the narrowest exact
   dtype, text.end_candidates._units), read where they are instead of gathered once per rule from all over
   the text. lc_text: the units, the splitter's uint16 flags by code point (text.sentence_chars._flags) and a
   table of character sets by code point (cls, ncls entries; past its end: none), a bit each (LC_W_*). Each
   kernel's body is inlined once per unit size (LC_SIZED), so that lc_at compiles to a plain load. */
typedef struct {
    const void *cp;
    int64_t sz, n;
    const uint16_t *fl, *cls;
    int64_t ncls;
} lc_text;
#define LC_INLINE static inline __attribute__((always_inline))
LC_INLINE uint32_t lc_at(const lc_text *t, int64_t i) {
    return t->sz == 1 ? ((const uint8_t *)t->cp)[i] : t->sz == 2 ? ((const uint16_t *)t->cp)[i]
                                                                  : ((const uint32_t *)t->cp)[i];
}
LC_INLINE int lc_has(const lc_text *t, uint32_t c, int bit) { return c < (uint64_t)t->ncls && (t->cls[c] & bit); }
#define LC_SIZED(sz, BODY, ...) do {                                                               \
        if ((sz) == 1) BODY(1, __VA_ARGS__); else if ((sz) == 2) BODY(2, __VA_ARGS__); else BODY(4, __VA_ARGS__); \
    } while (0)

/* text.end_candidates._ends in one pass over the text's code units: the offsets and kinds (kind[c], nkind
   entries; past its end, or 0: none) of its line terminators (kind >= knl; a CR, kind kcr, before a LF is none:
   the LF ends the line) and of its other candidates (the terminators), each to its own arrays (room for n
   each); counts: how many of each. Where kind has an entry for every unit the text may hold (a str's code
   points: at most U+10FFFF, as the flag tables are read: _flags_cover), the runs read it unchecked. */
LC_INLINE void lc_ends_body(int64_t sz, int64_t n, const void *cp, const uint8_t *kind, int64_t nkind, int64_t knl,
                            int64_t kcr, int64_t *nl, uint8_t *nlk, int64_t *term, uint8_t *termk, int64_t *counts) {
    const lc_text t = {cp, sz, n, 0, 0, 0};
    int64_t a = 0, b = 0, i = 0;
    const int full = nkind >= (sz == 1 ? 0x100 : sz == 2 ? 0x10000 : 0x110000);
#define LC_KIND(j) (lc_at(&t, (j)) < (uint64_t)nkind ? kind[lc_at(&t, (j))] : 0)
#define LC_KIND_FULL(j) kind[lc_at(&t, (j))]
    for (;;) {
        /* (four units at a time, one test for the four: most runs of four hold no candidate) */
        if (full)
            while (i + 4 <= n && !(LC_KIND_FULL(i) | LC_KIND_FULL(i + 1) | LC_KIND_FULL(i + 2) | LC_KIND_FULL(i + 3)))
                i += 4;
        else
            while (i + 4 <= n && !(LC_KIND(i) | LC_KIND(i + 1) | LC_KIND(i + 2) | LC_KIND(i + 3))) i += 4;
#undef LC_KIND_FULL
        if (i >= n) break;
        const int64_t k = LC_KIND(i);
        if (!k) { i++; continue; }
        if (k < knl) {
            term[b] = i;
            termk[b++] = (uint8_t)k;
        } else if (!(k == kcr && i + 1 < n && lc_at(&t, i + 1) == 0x0A)) {
            nl[a] = i;
            nlk[a++] = (uint8_t)k;
        }
        i++;
    }
#undef LC_KIND
    counts[0] = a;
    counts[1] = b;
}
void lc_ends(int64_t n, const void *cp, int64_t sz, const uint8_t *kind, int64_t nkind, int64_t knl, int64_t kcr,
             int64_t *nl, uint8_t *nlk, int64_t *term, uint8_t *termk, int64_t *counts) {
    LC_SIZED(sz, lc_ends_body, n, cp, kind, nkind, knl, kcr, nl, nlk, term, termk, counts);
}

/* text.abbreviations._abbreviated, one dot at a time: whether the '.' at dots[i] closes an abbreviation or an
   initial. tok, sep: the flag bits (fl) of a token's characters (ASCII letters and '.') and of what stands
   before a token; abbr, num, cont: the sorted keys (abbreviations._key) of the abbreviations, of those before a
   number (digit[i]) and of those before a lower-case word (lower[i]); pairs: the sorted keys of their last two
   characters (128 * the last but one + the last). */
LC_INLINE void lc_abbrev_body(int64_t sz, int64_t n, const void *cp, const uint16_t *fl, int64_t tok, int64_t sep,
                              int64_t m, const int64_t *dots, const uint8_t *digit, const uint8_t *lower,
                              const int64_t *abbr, int64_t na, const int64_t *num, int64_t nn, const int64_t *cont,
                              int64_t nc, const int64_t *pairs, int64_t np_, uint8_t *out) {
    const lc_text t = {cp, sz, n, fl, 0, 0};
    for (int64_t i = 0; i < m; i++) {
        const int64_t d = dots[i];
        const uint32_t c1 = lc_at(&t, d - 1 > 0 ? d - 1 : 0), c2 = lc_at(&t, d - 2 > 0 ? d - 2 : 0);
        const int tok1 = d >= 1 && (fl[c1] & tok), tok2 = tok1 && d >= 2 && (fl[c2] & tok);
        if (!tok2) {  /* one letter standing alone: an initial */
            out[i] = tok1 && (d < 2 || (fl[c2] & sep));
            continue;
        }
        if (!(c2 == 0x2E || lc_in(pairs, np_, (int64_t)c2 * 128 + c1))) {  /* ends unlike any listed */
            out[i] = 0;
            continue;
        }
        /* the token: up to 8 characters back (7 in its key), each a letter or a dot */
        uint32_t ch[8] = {0};
        int64_t key = 0, len = 0;
        for (int64_t j = 1; j <= 8; j++) {
            const int64_t p = d - j;
            const uint32_t c = lc_at(&t, p > 0 ? p : 0);
            if (!(p >= 0 && (fl[c] & tok))) break;
            ch[j - 1] = c;
            if (j <= 7) key = key * 128 + c;
            len++;
        }
        const int64_t before = d - len - 1;
        const int alone = len >= 1 && len <= 7 && (before < 0 || (fl[lc_at(&t, before)] & sep));
        int hit = lc_in(abbr, na, key) || (len == 1 && ch[0] >= 0x41 && ch[0] != 0x2E)
                  || (digit[i] && lc_in(num, nn, key)) || (lower[i] && lc_in(cont, nc, key));
        if (len == 3 || len == 5 || len == 7) {  /* letter-dot sequences: U.S, e.g, a.m, U.S.A */
            int seq = 1;
            for (int64_t k = 0; k < len; k++)
                seq &= k % 2 == 0 ? ch[k] >= 0x41 && ch[k] != 0x2E : ch[k] == 0x2E;
            hit |= seq;
        }
        const int first_dot = len >= 1 && len <= 7 && ch[len - 1] == 0x2E;  /* (".Dr." is no title) */
        out[i] = hit && alone && !first_dot;
    }
}
void lc_abbrev(int64_t n, const void *cp, int64_t sz, const uint16_t *fl, int64_t tok, int64_t sep, int64_t m,
               const int64_t *dots, const uint8_t *digit, const uint8_t *lower, const int64_t *abbr, int64_t na,
               const int64_t *num, int64_t nn, const int64_t *cont, int64_t nc, const int64_t *pairs, int64_t np_,
               uint8_t *out) {
    LC_SIZED(sz, lc_abbrev_body, n, cp, fl, tok, sep, m, dots, digit, lower, abbr, na, num, nn, cont, nc, pairs, np_,
             out);
}

/* text.soft_wraps' character sets, bits of cls (soft_wraps._WRAP_CLASSES sets them in this order) */
#define LC_W_OPENER 1       /* what a line may open with before its first letter */
#define LC_W_CLOSER 2       /* quotes and backticks a line's end is read past */
#define LC_W_JOINER 4       /* , ; and dashes: a line ending in one goes on */
#define LC_W_CJKON 8        /* the marks a CJK sentence goes on with at a line's start */
#define LC_W_PROSE_END 16   /* a line ending in one ends as prose does */
#define LC_W_STMT_END 32    /* what a statement of code ends with */
#define LC_W_VARIABLE 64    /* what may follow a shell variable's $ */
#define LC_W_BULLET 128     /* a list item's bullet */
#define LC_W_ITEM_MARK 256  /* what follows an ordered item's number */
#define LC_W_RULE 512       /* what a rule is drawn with */

/* soft_wraps._past_quote_marks: each pos[i] past the quote marks that open its line ('>', each with up to one
   space after it, four deep at most), never past stop[i]. */
LC_INLINE void lc_quoted_body(int64_t sz, int64_t n, const void *cp, int64_t m, const int64_t *pos,
                              const int64_t *stop, int64_t *out) {
    const lc_text t = {cp, sz, n, 0, 0, 0};
    for (int64_t i = 0; i < m; i++) {
        int64_t p = pos[i];
        for (int k = 0; k < 4 && p < stop[i] && lc_at(&t, p < n - 1 ? p : n - 1) == 0x3E; k++) {
            p++;
            if (p < stop[i] && lc_at(&t, p < n - 1 ? p : n - 1) == 0x20) p++;
        }
        out[i] = p;
    }
}
void lc_quoted(int64_t n, const void *cp, int64_t sz, int64_t m, const int64_t *pos, const int64_t *stop,
               int64_t *out) {
    LC_SIZED(sz, lc_quoted_body, n, cp, m, pos, stop, out);
}

/* text.code_text._line_reads: per line of code (its text from ts[i], 0 <= ts[i] < n; te[i] <= n: where the next
   line starts, or its terminator), the code points its text opens with and the one after it (out[0], out[1]; past
   the text's end: its last), the one before te[i] (out[2]; before the text: its first), where a walk back from
   te[i] - 1 over the set trail (ntrail flags by code point; past its end: not in it), at most 256 steps and never
   below ts[i], stops (back[i]: text._arrays._walk's answer), and the code points there and right before it
   (out[3], out[4]; before the text: its first). What numpy gathers in six passes over all the lines, each a
   cache miss per line, in one. */
LC_INLINE void lc_codelines_body(int64_t sz, int64_t n, const void *cp, const uint8_t *trail, int64_t ntrail,
                                 int64_t m, const int64_t *ts, const int64_t *te, uint32_t *out, int64_t *back) {
    const lc_text t = {cp, sz, n, 0, 0, 0};
    for (int64_t i = 0; i < m; i++) {
        const int64_t a = ts[i], e = te[i] - 1;
        out[i] = lc_at(&t, a);
        out[m + i] = lc_at(&t, a + 1 < n - 1 ? a + 1 : n - 1);
        out[2 * m + i] = lc_at(&t, e > 0 ? e : 0);
        int64_t b = e;
        for (int k = 0; k < 256; k++) {
            const uint32_t c = lc_at(&t, b < 0 ? 0 : (b > n - 1 ? n - 1 : b));
            if (b < a || c >= (uint64_t)ntrail || !trail[c]) break;
            b--;
        }
        back[i] = b;
        out[3 * m + i] = lc_at(&t, b > 0 ? b : 0);
        out[4 * m + i] = lc_at(&t, b - 1 > 0 ? b - 1 : 0);
    }
}
void lc_codelines(int64_t n, const void *cp, int64_t sz, const uint8_t *trail, int64_t ntrail, int64_t m,
                  const int64_t *ts, const int64_t *te, uint32_t *out, int64_t *back) {
    LC_SIZED(sz, lc_codelines_body, n, cp, trail, ntrail, m, ts, te, out, back);
}

/* soft_wraps._columns: per line (its text from ts[i] to its terminator te[i]), whether text follows a run of
   three spaces or more twice inside it (at offsets ts[i] < c < te[i]), or a rule's characters stand at both
   of its ends. The runs are looked for as a search for three spaces does (Horspool's skip): a character that
   is no space rules out the three runs of three that would hold it, so prose is read a third of its
   characters at a time. */
LC_INLINE void lc_columns_body(int64_t sz, int64_t n, const void *cp, const uint16_t *cls, int64_t ncls, int64_t m,
                               const int64_t *ts, const int64_t *te, uint8_t *out) {
    const lc_text t = {cp, sz, n, 0, cls, ncls};
    for (int64_t i = 0; i < m; i++) {
        const int64_t a = ts[i], b = te[i];
        int64_t gaps = 0;
        /* x: where a run of three spaces may end, its text after it at x + 1 (a < x + 1 < b) */
        for (int64_t x = a > 2 ? a : 2; x + 1 < b && gaps < 2;) {
            const int s0 = lc_at(&t, x) != 0x20, s1 = lc_at(&t, x - 1) != 0x20, s2 = lc_at(&t, x - 2) != 0x20;
            const int64_t skip = s0 ? 3 : s1 ? 2 : s2;  /* (a select, not a branch: prose mixes them at random) */
            if (skip) x += skip;
            else {  /* three spaces end at x: to the end of the run, then the text after it */
                while (x + 1 < b && lc_at(&t, x + 1) == 0x20) x++;
                gaps += x + 1 < b;
                x += 4;  /* (the next run of three ends past that text) */
            }
        }
        const int rule = b - a >= 2 && lc_has(&t, lc_at(&t, a < n - 1 ? a : n - 1), LC_W_RULE)
                         && lc_has(&t, lc_at(&t, a + 1), LC_W_RULE) && lc_has(&t, lc_at(&t, b - 2), LC_W_RULE)
                         && lc_has(&t, lc_at(&t, b - 1), LC_W_RULE);
        out[i] = gaps >= 2 || rule;
    }
}
void lc_columns(int64_t n, const void *cp, int64_t sz, const uint16_t *cls, int64_t ncls, int64_t m,
                const int64_t *ts, const int64_t *te, uint8_t *out) {
    LC_SIZED(sz, lc_columns_body, n, cp, cls, ncls, m, ts, te, out);
}

/* per span [a[i], b[i]) (clipped to the text), whether a code point of the set `bit` lies in it. Spans in
   order of their starts, overlapping or not, read each character once: the first member at or after a start
   answers the spans after it too, until a span starts past it. */
LC_INLINE void lc_spans_any_body(int64_t sz, int64_t n, const void *cp, const uint16_t *cls, int64_t ncls,
                                 int64_t bit, int64_t m, const int64_t *a, const int64_t *b, uint8_t *out) {
    const lc_text t = {cp, sz, n, 0, cls, ncls};
    int64_t hit = -1, clear = 0, prev = 0;  /* hit: the first member at or after the last start read (-1: none
                                               known); no member in [the last start, clear) */
    for (int64_t i = 0; i < m; i++) {
        const int64_t s = a[i] > 0 ? a[i] : 0, e = b[i] < n ? b[i] : n;
        if (s < prev) { hit = -1; clear = s; }  /* (a span out of order: read afresh) */
        prev = s;
        if (hit < s) {
            int64_t p = clear > s ? clear : s;
            hit = -1;
            while (p < e && !lc_has(&t, lc_at(&t, p), (int)bit)) p++;
            if (p < e) hit = p;
            clear = p;
        }
        out[i] = hit >= 0 && hit < e;
    }
}
void lc_spans_any(int64_t n, const void *cp, int64_t sz, const uint16_t *cls, int64_t ncls, int64_t bit, int64_t m,
                  const int64_t *a, const int64_t *b, uint8_t *out) {
    LC_SIZED(sz, lc_spans_any_body, n, cp, cls, ncls, bit, m, a, b, out);
}

/* soft_wraps._item_text for one line's text start ts */
LC_INLINE int64_t lc_item_text(const lc_text *t, int64_t ts) {
    const int64_t n = t->n, top = n - 1;
    if (ts >= n) return ts;
    const uint32_t c0 = lc_at(t, ts);
    const int bullet = lc_has(t, c0, LC_W_BULLET);
    if (!bullet && !(c0 >= 0x30 && c0 <= 0x39)) return ts;
    int64_t digits = 0;
    while (digits < 3) {  /* an ordered item's number, up to three digits */
        const int64_t p = ts + digits;
        const uint32_t c = lc_at(t, p < top ? p : top);
        if (!(p < n && c >= 0x30 && c <= 0x39)) break;
        digits++;
    }
    const int64_t mark = ts + digits;
    int64_t text = mark + 1;
    const int is_mark = digits > 0 ? lc_has(t, lc_at(t, mark < top ? mark : top), LC_W_ITEM_MARK) : bullet;
    uint32_t c = lc_at(t, text < top ? text : top);
    if (!(is_mark && text < n && (c == 0x20 || c == 0x09))) return ts;
    for (int k = 0; k < 4; k++) {  /* the spaces after the marker, four at most */
        c = lc_at(t, text < top ? text : top);
        if (!(text < n && (c == 0x20 || c == 0x09))) break;
        text++;
    }
    return text;
}

/* soft_wraps._labelled for one line: a colon before a space or a tab, or a full-width colon, in
   [w, min(w + word_max, line_end)) */
LC_INLINE int lc_labelled(const lc_text *t, int64_t w, int64_t line_end, int64_t word_max) {
    const int64_t stop = w + word_max < line_end ? w + word_max : line_end;
    for (int64_t p = w; p < stop; p++) {
        const uint32_t c = lc_at(t, p);
        if (c == 0xFF1A) return 1;
        if (c == 0x3A && p + 1 < t->n) {
            const uint32_t d = lc_at(t, p + 1);
            if (d == 0x20 || d == 0x09) return 1;
        }
    }
    return 0;
}

/* soft_wraps._statements for one line (its text from ts to its last character last) */
LC_INLINE int lc_statement(const lc_text *t, int64_t ts, int64_t last) {
    const int64_t n = t->n;
    if (last >= ts) {
        const int64_t at = last < 0 ? 0 : last > n - 1 ? n - 1 : last;
        const uint32_t c = lc_at(t, at);
        if (lc_has(t, c, LC_W_STMT_END) || (c == 0x3B && last > ts && lc_at(t, at > 0 ? at - 1 : 0) == 0x29)) return 1;
    }
    const int64_t e = last < n - 1 ? last : n - 1;
    for (int64_t p = ts > 0 ? ts : 0; p <= e; p++) {
        const uint32_t c = lc_at(t, p);
        if (c == 0x3D || (c == 0x24 && p + 1 < n && lc_has(t, lc_at(t, p + 1), LC_W_VARIABLE))) return 1;
    }
    return 0;
}

/* soft_wraps._soft_wraps' next_letter and read, per line terminator idx[j]: cn[j], the flags of the next
   line's first letter (past up to two openers); with mode 1 (the breaks at the width) or 2 (the others),
   out[j] = keep | goes_on << 1 | other << 2, read's verdict. The per-terminator arrays: nl (the terminator),
   w_nl (the next line's text), end (its text's end), ts (this line's text), ls (its start), nx (the next
   terminator, or the text's end), len (nl - ls), wid (the text's wrap width); lo/hi (nr): the ranges Markdown
   keeps whole (lo sorted), hard (nh, sorted): the hard line starts; xi, xn: the columns that tabs add to this
   line's indent and to the next line's (len holds xi already). par: the flag bits WS, LOWER, UPPER, DIGIT,
   CJK, CJKP, TERM, CLOSE, then _WORD_MAX and MIN_WRAP_WIDTH. */
LC_INLINE void lc_wrapread_body(int64_t sz, int64_t n, const void *cp, const uint16_t *fl, const uint16_t *cls,
                                int64_t ncls, const int64_t *par, const int64_t *const *line, int64_t k,
                                const int64_t *idx, int64_t mode, const int64_t *lo, const int64_t *hi, int64_t nr,
                                const int64_t *hard, int64_t nh, uint16_t *cn_out, uint8_t *out) {
    const lc_text t = {cp, sz, n, fl, cls, ncls};
    const int64_t *nl = line[0], *w_nl = line[1], *end = line[2], *ts_ = line[3], *ls = line[4], *nx = line[5],
                  *len = line[6], *wid_ = line[7], *xi = line[8], *xn = line[9];
    const int WS = (int)par[0], LOWER = (int)par[1], UPPER = (int)par[2], DIGIT = (int)par[3], CJK = (int)par[4],
              CJKP = (int)par[5], TERM = (int)par[6], CLOSE = (int)par[7];
    const int64_t word_max = par[8], min_width = par[9];
    const int at_width = mode == 1;
#define LC_PY(x) ((x) < 0 ? (x) + n : (x))  /* (an index as numpy reads it: -1 the last; e and ne are never below 0
                                              on the lines the reader reads) */
    int64_t seen_s = -1, seen_e = -1;  /* the last next line read as a statement or not (consecutive breaks read */
    int seen = 0;                      /* a line as the next one, then as this one: the same test) */
    for (int64_t j = 0; j < k; j++) {
        const int64_t i = idx[j], w = w_nl[i], e = end[i] - 1;
        int64_t a = w;
        for (int r = 0; r < 2; r++)
            if (a < e && lc_has(&t, lc_at(&t, a), LC_W_OPENER)) a++;
        const int cn = fl[lc_at(&t, LC_PY(a < e ? a : e))];
        cn_out[j] = (uint16_t)cn;
        if (!mode) continue;
        const int cjk_next = (cn & CJK) && !(cn & (CJKP | TERM)), lower_next = (cn & LOWER) != 0;
        /* the line's last character, past up to three spaces, then past up to two closing quotes or backticks */
        const int64_t ts = ts_[i];
        int64_t last = nl[i] - 1;
        for (int r = 0; r < 3; r++)
            if (last >= ts && (fl[lc_at(&t, last > 0 ? last : 0)] & WS)) last--;
        int64_t core = last > 0 ? last : 0;
        for (int r = 0; r < 2; r++)
            if (core > ts && lc_has(&t, lc_at(&t, core), LC_W_CLOSER)) core--;
        const uint32_t cc = lc_at(&t, core);
        const int c_last = fl[cc], joiner = lc_has(&t, cc, LC_W_JOINER);
        const int wordy = (c_last & (LOWER | UPPER | DIGIT)) || joiner;
        const int cjk_last = (c_last & CJK) && !(c_last & (CJKP | TERM));
        const int64_t wid = wid_[i];
        const int latin = wid >= min_width;
        const int cjk_on = lc_has(&t, lc_at(&t, LC_PY(w < e ? w : e)), LC_W_CJKON);
        const int cjk_more = cjk_on || ((cn & (LOWER | UPPER | DIGIT)) && at_width);
        const int goes_on = (wordy && lower_next && latin) || ((cjk_last || joiner) && cjk_next)
                            || (cjk_last && cjk_more) || (joiner && cjk_on);
        int other = !goes_on && (latin || cjk_next) && ((wordy && (cn & (UPPER | DIGIT))) || (c_last & (TERM | CLOSE)));
        /* not before a title: the next line short of the width, ending unlike prose */
        const int64_t nxt = nx[i];
        int64_t ne = nxt - 1;
        for (int r = 0; r < 3; r++)
            if (ne > w && (fl[lc_at(&t, ne)] & WS)) ne--;
        if (nxt - nl[i] - 1 + xn[i] + 1 + word_max <= wid && !lc_has(&t, lc_at(&t, LC_PY(ne)), LC_W_PROSE_END))
            other = 0;
        if (!at_width) other = 0;
        /* the next line indented no deeper than this one's text (in columns), no label, the next word too long */
        int keep = (goes_on || other) && last >= ts && w - nl[i] - 1 + xn[i] <= lc_item_text(&t, ts) - ls[i] + xi[i];
        if (keep) keep = !lc_labelled(&t, w, nxt, word_max);
        if (keep && at_width) {
            int64_t word = word_max - 1;
            if (cjk_next) word = 1;
            else
                for (int64_t q = 0; q < word_max - 1; q++)
                    if (w + q >= n || (fl[lc_at(&t, w + q)] & WS)) { word = q; break; }
            keep = len[i] + 1 + (word > 1 ? word : 1) > wid;
        }
        /* not inside what Markdown keeps whole, nor before a hard break; neither line a statement of code */
        for (int r = 0; r < 2 && keep && nr; r++) {
            const int64_t pos = r ? w : last, q = lc_upper(lo, nr, pos) - 1;
            keep = !(q >= 0 && pos < hi[q]);
        }
        if (keep && nh) keep = !lc_in(hard, nh, w);
        if (keep) {
            int code = ts == seen_s && last == seen_e ? seen : lc_statement(&t, ts, last);
            if (!code) {
                seen_s = w;
                seen_e = ne;
                code = seen = lc_statement(&t, w, ne);
            }
            keep = !code;
        }
        out[j] = (uint8_t)(keep | goes_on << 1 | other << 2);
    }
#undef LC_PY
}
void lc_wrapread(int64_t n, const void *cp, int64_t sz, const uint16_t *fl, const uint16_t *cls, int64_t ncls,
                 const int64_t *par, const int64_t *nl, const int64_t *w_nl, const int64_t *end, const int64_t *ts,
                 const int64_t *ls, const int64_t *nx, const int64_t *len, const int64_t *wid, const int64_t *xi,
                 const int64_t *xn, int64_t k,
                 const int64_t *idx, int64_t mode, const int64_t *lo, const int64_t *hi, int64_t nr,
                 const int64_t *hard, int64_t nh, uint16_t *cn, uint8_t *out) {
    const int64_t *const line[10] = {nl, w_nl, end, ts, ls, nx, len, wid, xi, xn};
    LC_SIZED(sz, lc_wrapread_body, n, cp, fl, cls, ncls, par, line, k, idx, mode, lo, hi, nr, hard, nh, cn, out);
}

/* The positions i (in order) of the code points with lo <= cp[i] < lo + span and table[cp[i] - lo] set: a few
   marks of a text (its quotation marks) found in one pass, where numpy's two compares, their mask and its
   nonzero read the text four times. out holds n. Returns how many. */
int64_t lc_table_hits(int64_t n, const uint32_t *cp, uint32_t lo, uint32_t span, const uint8_t *table, int64_t *out) {
    int64_t k = 0, i = 0;
    for (; i + 16 <= n; i += 16) {  /* (sixteen at a time: a run of sixteen with none in the range is one test) */
        int in = 0;
        for (int j = 0; j < 16; j++) in |= cp[i + j] - lo < span;
        if (!in) continue;
        for (int j = 0; j < 16; j++) {
            const uint32_t d = cp[i + j] - lo;
            if (d < span && table[d]) out[k++] = i + j;
        }
    }
    for (; i < n; i++) {
        const uint32_t d = cp[i] - lo;
        if (d < span && table[d]) out[k++] = i;
    }
    return k;
}
"""

# ------------------------------------------------------------------------------------------------------------------
# The cascade's kernels (chunkers.logic_chain, boundaries, signals): a block of their own.
_SRC += r"""
/* signals.novelty.novelty_jump's sum over the scales: out[i] = 0.0, then for each scale K in order
   out[i] += (double)(P[b + k] + P[b - k] - 2 P[b]) / (double)K with k = min(room[i], K), the integers and the
   floating-point operations of its numpy passes in their order (one pass over the offsets, where numpy makes
   six per scale), so the same bits. */
void lc_jump(int64_t m, const int64_t *P, const int64_t *b, const int64_t *room, int64_t ns, const int64_t *scales,
             double *out) {
    for (int64_t i = 0; i < m; i++) {
        const int64_t at = b[i], r = room[i], twice = 2 * P[at];
        double o = 0.0;
        for (int64_t s = 0; s < ns; s++) {
            const int64_t K = scales[s], k = r < K ? r : K;
            o += (double)(P[at + k] + P[at - k] - twice) / (double)K;
        }
        out[i] = o;
    }
}

/* signals.ngrams' windows of n-gram keys as rows: out[i] = key[starts[i] .. starts[i] + w) (keys of size bytes),
   a copy of each row at once, where numpy's index of the windows' view steps through them key by key (about ten
   instructions a key: on a long text, tier 3's windows copied so cost as much as their sorts). */
#include <string.h>
void lc_windows(int64_t r, int64_t w, int64_t size, const char *key, const int64_t *starts, char *out) {
    const int64_t row = w * size;
    for (int64_t i = 0; i < r; i++) memcpy(out + i * row, key + starts[i] * size, (size_t)row);
}

/* boundaries.forced.break_priorities_many before its URLs and its joiners: the priority of a cut after each of the
   spans' characters laid end to end (m spans [starts[i], starts[i] + lens[i]) of the code points cp; pri[j], j < the
   characters in all - 1, the pair of character j and the next, which may be the next span's first). One pass over
   the characters where numpy makes a dozen over all of them: 1 where either is CJK, 2 at a word start after
   whitespace, 3 where a clause mark is the last non-space character before a non-space one in its span (an ASCII
   ",", ";", ":" or ")" only with whitespace after it in its span, a ")" not 2 to 5 characters after a "(" in its
   span); a word after an indent (its first character in indent[], an indent inside the span) gives its priority to
   the line's start (the pair before the indent, where a line_end[] character ends the line: the higher of the two)
   and keeps 0, as after an indent that opens the span; -1 where a cut splits a character (charclass.
   pair_cut_allowed's rule, the regional indicators' pairs counted over the characters laid end to end, as there)
   but after a joiner (U+200D): its pairs are written to zwj (at most zcap: index and the next code point), their
   rule read by category there. Returns the joiners' pairs. */
static inline int lc_bp_ri(uint32_t c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }
static inline int lc_bp_lead(uint32_t c) { return (c >= 0x1100 && c <= 0x115F) || (c >= 0xA960 && c <= 0xA97C); }
static inline int lc_bp_in(const uint8_t *table, int64_t size, uint32_t c) { return (int64_t)c < size && table[c]; }
/* the priority of a cut between c0 and c1 (classes k0, k1) but for the indents, -1 where it splits a character;
   solid: the last non-space character up to c0 in its span is a clause mark; run: the regional indicators in a row
   up to and with c0. The class bits as text.charclass has them (native.break_priorities checks): constants, so the
   pass keeps its state in registers. */
enum { LC_WS = 1, LC_CJK = 4, LC_MARK = 16, LC_SURR = 32 };
static inline int lc_bp_pair(uint32_t c0, uint8_t k0, uint32_t c1, uint8_t k1, int solid, int64_t run) {
    if (k1 & LC_MARK) return -1;
    if (c0 >= 0x1100 || c0 == 0x0D) {  /* (the other rules' first characters: CR, jamo, surrogates, flags) */
        if (c0 == 0x0D && c1 == 0x0A) return -1;
        if ((k0 & LC_SURR) && c1 >= 0xDC00 && c1 <= 0xDFFF) return -1;
        if (lc_bp_lead(c0) && (lc_bp_lead(c1) || (c1 >= 0xAC00 && c1 <= 0xD7A3))) return -1;
        if ((run & 1) && lc_bp_ri(c1)) return -1;
    }
    if (!(k1 & LC_WS)) {
        if (solid) return 3;
        if (k0 & LC_WS) return 2;
    }
    return ((k0 | k1) & LC_CJK) != 0;
}
int64_t lc_break_pri(int64_t m, const uint32_t *cp, const int64_t *starts, const int64_t *lens, const uint8_t *cls,
                     const uint8_t *clause, const uint8_t *indent,
                     int64_t nindent, const uint8_t *line_end, int64_t nline, int8_t *pri, int64_t zcap, int64_t *zwj) {
    int64_t total = 0, j = 0, nz = 0, run = 0;  /* j: the character among all; run: as lc_bp_pair's, over all */
    for (int64_t i = 0; i < m; i++) total += lens[i];
    for (int64_t i = 0; i < m; i++) {
        const int64_t a = starts[i], n = lens[i];
        if (n == 0) continue;
        int solid = 0;
        uint32_t c0 = cp[a], c1;
        uint8_t k0 = cls[c0], k1;
        for (int64_t t = 0; t < n; t++, j++) {
            const int inside = t + 1 < n;
            if (inside) c1 = cp[a + t + 1];
            else if (j + 1 < total) {  /* (the next span's first: a pair across two spans is never read, but written) */
                int64_t i2 = i + 1;
                while (lens[i2] == 0) i2++;
                c1 = cp[starts[i2]];
            } else return nz;
            k1 = cls[c1];
            if (!(k0 & LC_WS)) {
                int mk = c0 < 0xFFFF && clause[c0];
                if (mk && (c0 == 0x3A || c0 == 0x2C || c0 == 0x3B || c0 == 0x29)) {
                    mk = inside && (k1 & LC_WS);
                    if (c0 == 0x29)
                        for (int64_t d = 2; d <= 5 && d <= t; d++) if (cp[a + t - d] == 0x28) mk = 0;
                }
                solid = mk;
            }
            run = lc_bp_ri(c0) ? run + 1 : 0;
            int p = lc_bp_pair(c0, k0, c1, k1, solid, run);
            if (c0 == 0x200D) {
                if (nz < zcap) { zwj[2 * nz] = j; zwj[2 * nz + 1] = c1; }
                nz++;
            }
            if (p >= 2 && inside && (k0 & LC_WS) && !(k1 & LC_WS) && lc_bp_in(indent, nindent, c0)) {
                int64_t s = a + t;  /* back over the indent to the character before it */
                while (s >= a && lc_bp_in(indent, nindent, cp[s])) s--;
                if (s < a) p = 0;
                else if (lc_bp_in(line_end, nline, cp[s])) {
                    int8_t *q = pri + (j - (a + t - s));
                    if (*q >= 0 && *q < p) *q = (int8_t)p;
                    p = 0;
                }
            }
            pri[j] = (int8_t)p;
            c0 = c1;
            k0 = k1;
        }
    }
    return nz;
}
"""

#: no fused multiply-add: the kernels must round as numpy's separate operations do
_FLAGS = ("-O2", "-ffp-contract=off", "-shared", "-fPIC")

_lib: ctypes.CDLL | None = None
_why: str = "not loaded yet"


def _cache_dir() -> Path:
    return cache_root() / "native"


def _key() -> str:
    h = hashlib.sha256()
    h.update(_SRC.encode())
    h.update(" ".join(_FLAGS).encode())
    h.update(f"{platform.machine()}|{platform.system()}|{sys.implementation.cache_tag}".encode())
    return h.hexdigest()[:16]


def _load() -> ctypes.CDLL | None:
    global _lib, _why
    if _lib is not None or _why != "not loaded yet":
        return _lib
    if os.environ.get("LOGICHUNK_NATIVE", "1") == "0":
        _why = "off (LOGICHUNK_NATIVE=0)"
        return None
    folder = _cache_dir()
    suffix = ".dll" if sys.platform == "win32" else ".so"
    so = folder / f"lc_dp_{_key()}{suffix}"
    failed = so.with_suffix(".failed")
    try:
        if not so.exists():
            if failed.exists():
                _why = f"the earlier build failed ({failed})"
                return None
            cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
            if not cc:
                _why = "no C compiler (cc, gcc or clang) on PATH"
                return None
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                src = Path(tmp) / "lc_dp.c"
                src.write_text(_SRC)
                out = Path(tmp) / so.name
                r = subprocess.run([cc, *_FLAGS, "-o", str(out), str(src)],
                                   capture_output=True, text=True, timeout=120)
                if r.returncode != 0 or not out.exists():
                    failed.write_text(r.stderr[-2000:] or "build failed")
                    _why = f"the build failed ({failed})"
                    return None
                os.replace(out, so)  # atomic: another process sees the whole file or none
        lib = ctypes.CDLL(str(so))
        _bind_text(lib)  # (the text layer's kernels: their block is below, before status())
        lib.lc_band.restype = None
        lib.lc_band.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 6
        lib.lc_lexmark.restype = ctypes.c_int64
        lib.lc_lexmark.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] + [ctypes.c_void_p] * 2
        lib.lc_ranks.restype = None
        lib.lc_ranks.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 4
        lib.lc_bagkeys.restype = None
        lib.lc_bagkeys.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 4
        lib.lc_lexrows.restype = ctypes.c_int64
        lib.lc_lexrows.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] + [ctypes.c_void_p] * 9
        lib.lc_window_prices.restype = None
        lib.lc_window_prices.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_uint64, ctypes.c_int64] + [ctypes.c_void_p] * 23
        lib.lc_novelty.restype = None
        lib.lc_novelty.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 4
        lib.lc_group.restype = ctypes.c_int64
        lib.lc_group.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 7
        lib.lc_group_band.restype = None
        lib.lc_group_band.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 4 + [ctypes.c_int64] + [ctypes.c_void_p] * 5
        lib.lc_lexweights.restype = None
        lib.lc_lexweights.argtypes = [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 6
        lib.lc_evidence.restype = None
        lib.lc_evidence.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_void_p] * 9
        for name in ("lc_runs32", "lc_runs64"):
            getattr(lib, name).restype = None
            getattr(lib, name).argtypes = [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 4
        lib.lc_bigrams.restype = None
        lib.lc_bigrams.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] + [ctypes.c_void_p] * 2
        lib.lc_alphabet.restype = ctypes.c_int64
        lib.lc_alphabet.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        lib.lc_markers.restype = None
        lib.lc_markers.argtypes = ([ctypes.c_int64] + [ctypes.c_void_p] * 5 + [ctypes.c_void_p, ctypes.c_int64] * 4
                                   + [ctypes.c_void_p])
        lib.lc_items.restype = ctypes.c_int64
        lib.lc_items.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64]
                                 + [ctypes.c_void_p] * 3)
        lib.lc_inner_many.restype = None
        lib.lc_inner_many.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] + [ctypes.c_void_p] * 3
        for name in ("lc_skipws8", "lc_skipws16", "lc_skipws32"):
            getattr(lib, name).restype = None
            getattr(lib, name).argtypes = ([ctypes.c_int64] + [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 2
                                           + [ctypes.c_void_p] * 2)
        lib.lc_walk.restype = None
        lib.lc_walk.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
                                + [ctypes.c_int64] * 3 + [ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 2)
        lib.lc_last_ats.restype = None
        lib.lc_last_ats.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
                                    + [ctypes.c_int64] * 2 + [ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 2)
        lib.lc_search.restype = None
        lib.lc_search.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.c_void_p]
        lib.lc_dp_rows.restype = None
        lib.lc_dp_rows.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_void_p, ctypes.c_double] + [ctypes.c_void_p] * 5
        lib.lc_fit_ends.restype = None
        lib.lc_fit_ends.argtypes = ([ctypes.c_int64] * 4 + [ctypes.c_void_p] * 9 + [ctypes.c_double] * 2
                                    + [ctypes.c_void_p] * 6 + [ctypes.c_int64] * 2)
        lib.lc_fit_reach.restype = None
        lib.lc_fit_reach.argtypes = [ctypes.c_int64] * 2 + [ctypes.c_void_p] + [ctypes.c_int64] * 2 + [ctypes.c_void_p]
        lib.lc_hashfeat.restype = None
        lib.lc_hashfeat.argtypes = ([ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 2
                                    + [ctypes.c_void_p, ctypes.c_int64] * 2 + [ctypes.c_void_p] * 2
                                    + [ctypes.c_int64, ctypes.c_void_p])
        lib.lc_fit_cuts.restype = ctypes.c_int64
        lib.lc_fit_cuts.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
        lib.lc_earliest.restype = ctypes.c_int64
        lib.lc_earliest.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
        lib.lc_parts.restype = ctypes.c_int64
        lib.lc_parts.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
        lib.lc_ends.restype = None
        lib.lc_ends.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p] + [ctypes.c_int64] * 3
                                + [ctypes.c_void_p] * 5)
        lib.lc_abbrev.restype = None
        lib.lc_abbrev.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p] + [ctypes.c_int64] * 3
                                  + [ctypes.c_void_p] * 3 + [ctypes.c_void_p, ctypes.c_int64] * 4 + [ctypes.c_void_p])
        lib.lc_quoted.restype = None
        lib.lc_quoted.argtypes = [ctypes.c_int64, ctypes.c_void_p] + [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 3
        lib.lc_codelines.restype = None
        lib.lc_codelines.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                      ctypes.c_int64] + [ctypes.c_void_p] * 4)
        lib.lc_columns.restype = None
        lib.lc_columns.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
                                   + [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 3)
        lib.lc_spans_any.restype = None
        lib.lc_spans_any.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
                                     + [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 3)
        lib.lc_wrapread.restype = None
        lib.lc_wrapread.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 2
                                    + [ctypes.c_int64] + [ctypes.c_void_p] * 11 + [ctypes.c_int64, ctypes.c_void_p]
                                    + [ctypes.c_int64] + [ctypes.c_void_p] * 2 + [ctypes.c_int64, ctypes.c_void_p,
                                                                                  ctypes.c_int64] + [ctypes.c_void_p] * 2)
        lib.lc_table_hits.restype = ctypes.c_int64
        lib.lc_table_hits.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32] \
            + [ctypes.c_void_p] * 2
        _bind_cascade(lib)
        _lib, _why = lib, f"compiled ({so})"
    except (OSError, AttributeError, subprocess.SubprocessError) as e:  # (AttributeError: a kernel missing)
        _why = f"unavailable ({type(e).__name__}: {e})"
        _lib = None
    return _lib


def _c(dtype: type, *arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays as C-contiguous arrays of ``dtype`` (no copy where they are already): what a kernel
    reads through a pointer."""
    return [np.ascontiguousarray(a, dtype=dtype) for a in arrays]


def _data_at() -> int | None:
    """Where an ndarray object holds its data pointer, past the object's header (numpy's ``PyArrayObject_fields``:
    ``PyObject_HEAD`` then ``char *data``, what its ``PyArray_BYTES`` reads), checked against ``.ctypes.data`` for a
    few arrays and views; None where it does not read the same (another interpreter, another layout)."""
    if sys.implementation.name != "cpython":  # (an id is an address in CPython only: elsewhere, never read)
        return None
    at = object.__basicsize__
    try:
        base = np.arange(16, dtype=np.int64)
        probes = (base, base[3:], base[::2], np.zeros(0), np.empty((2, 3))[1:])
        ok = all(ctypes.c_void_p.from_address(id(a) + at).value == a.ctypes.data for a in probes)
    except (OSError, ValueError, TypeError, OverflowError):
        return None
    return at if ok else None


_DATA_AT = _data_at()
#: np.iinfo(np.int32).max, once (np.iinfo builds an object per call: a few µs, a dozen times a short text's levels)
_I32_MAX = 2**31 - 1
_void_at = ctypes.c_void_p.from_address


def _ptr(a: np.ndarray) -> int | None:
    """The address of ``a``'s data, what ``a.ctypes.data`` gives, read straight from the array object where
    :func:`_data_at` found where it lies. Why: ``.ctypes`` builds a helper object per read (~1.5 µs), and a short
    text's levels pass ~200 arrays to kernels: a tenth of their time on a 3 KB text."""
    return a.ctypes.data if _DATA_AT is None else _void_at(id(a) + _DATA_AT).value


def _bytes(table: np.ndarray) -> np.ndarray:
    """A bool table as the kernels read it, one byte per entry: a view where it is contiguous (the
    layout's tables run to 65,536 entries, a copy each call cost more than the walk)."""
    if table.dtype == np.bool_ and table.flags.c_contiguous:
        return table.view(np.uint8)
    return np.ascontiguousarray(table, dtype=np.uint8)


_NO_TABLE = np.zeros(0, bool)


def _entries(row: np.ndarray, col: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse entries as the kernels read them: int32 rows and columns, float64 values."""
    (row, col), (val,) = _c(np.int32, row, col), _c(np.float64, val)
    return row, col, val


# ---- the text layer's kernels: sentence splitting and layout -----------------------------------------------------
_SRC += r"""
/* text.line_kinds._first_marks: per mark k (its code points marks[off[k]] .. marks[off[k + 1] - 1], two at least,
   the first two below 128), the offset of its first occurrence in the text's code points cp (n of them), -1 where
   it has none. One pass for all of them, where str.find reads the text once per mark: each position's pair of
   characters is looked up in a table of the marks' first pairs (a load, no branch: most pairs are none), then
   compared with the marks of that pair still not found. Stops once every mark is found. */
void lc_first_marks(int64_t n, const uint32_t *cp, int64_t nm, const uint32_t *marks, const int64_t *off,
                    int64_t *out) {
    int8_t head[128 * 128], next[128];  /* per first pair, a chain of its marks (in order) */
    int64_t left = 0;
    for (int64_t k = 0; k < nm; k++) out[k] = -1;
    if (nm > 127) return;  /* (127 marks at most: the caller checks) */
    for (int64_t p = 0; p < 128 * 128; p++) head[p] = -1;
    for (int64_t k = nm - 1; k >= 0; k--) {
        if (off[k + 1] - off[k] < 2 || marks[off[k]] >= 128 || marks[off[k] + 1] >= 128 || marks[off[k]] == 0) continue;
        const int64_t p = marks[off[k]] * 128 + marks[off[k] + 1];
        next[k] = head[p];
        head[p] = (int8_t)k;
        left++;
    }
    uint8_t lead[256] = {0};  /* the marks' first characters (ASCII: each is its own low byte) */
    for (int64_t k = 0; k < nm; k++)
        if (off[k + 1] - off[k] >= 2 && marks[off[k]] < 128) lead[marks[off[k]]] = 1;
    for (int64_t i = 0; i + 1 < n && left > 0; i++) {
        /* (four characters at a time, one test for the four, by their low bytes: a load each, no compare; most
           runs of four hold no mark's first character. A character past ASCII whose low byte is one stops the
           run, and the test below passes over it) */
#define LC_LEAD(j) lead[cp[j] & 0xFF]
        while (i + 4 < n && !(LC_LEAD(i) | LC_LEAD(i + 1) | LC_LEAD(i + 2) | LC_LEAD(i + 3))) i += 4;
#undef LC_LEAD
        if (i + 1 >= n) break;
        const uint32_t c = cp[i];
        if (c >= 128 || !lead[c]) continue;  /* (most characters: a compare and a load) */
        const uint32_t d = cp[i + 1];
        const int64_t p = d < 128 ? (int64_t)c * 128 + d : 0;  /* (pair 0: NUL first, never a mark's) */
        if (head[p] < 0) continue;
        int8_t *link = &head[p];  /* (found marks leave their chain) */
        for (int64_t k = *link; k >= 0; k = *link) {
            const int64_t len = off[k + 1] - off[k];
            int64_t j = 2;
            if (i + len <= n)
                while (j < len && cp[i + j] == marks[off[k] + j]) j++;
            if (i + len <= n && j == len) { out[k] = i; left--; *link = next[k]; }
            else link = &next[k];
        }
    }
}

LC_INLINE int lc_in_set(const uint8_t *table, int64_t size, uint32_t c) { return c < (uint64_t)size && table[c]; }

/* text.structure._read_terms, one sentence at a time (its four walks and the tests on where they stop, in one
   pass where numpy made each a pass over all the sentences): per sentence [starts[i], ends[i]), whether it is
   decided (decided[i]) and a term (term[i]). Tables (bool bytes by code point, and their sizes): space (str.isspace),
   newline, closer, blank (space and tab), tab, prose_end; indent: _INDENT_MAX, title: TITLE_MAX_CHARS. */
void lc_read_terms(int64_t ncp, const uint32_t *cp, int64_t m, const int64_t *starts, const int64_t *ends,
                   const uint8_t *space, int64_t nspace, const uint8_t *newline, int64_t nnewline,
                   const uint8_t *closer, int64_t ncloser, const uint8_t *blank, int64_t nblank, const uint8_t *tab,
                   int64_t ntab, const uint8_t *prose, int64_t nprose, int64_t indent, int64_t title,
                   uint8_t *decided, uint8_t *term) {
    for (int64_t i = 0; i < m; i++) {
        const int64_t a = starts[i], b = ends[i];
        uint8_t long_q, saw_nl, long_c, none, long_e, tab_e, long_s, tab_s;
        const int64_t q = lc_walk_one(cp, ncp, b - 1, a, space, nspace, indent + 8, 1, newline, nnewline, &long_q,
                                      &saw_nl);
        const int64_t r = lc_walk_one(cp, ncp, q, a + 1, closer, ncloser, 8, 1, 0, 0, &long_c, &none);
        const int64_t e = lc_walk_one(cp, ncp, b - 1, a, blank, nblank, indent + 1, 1, tab, ntab, &long_e, &tab_e);
        const int64_t s = lc_walk_one(cp, ncp, a - 1, a - indent > 0 ? a - indent : 0, blank, nblank, indent + 1, 1,
                                      tab, ntab, &long_s, &tab_s);
        const int64_t nxt = b - 1 - e, own = a - 1 - s;
        const uint32_t first = cp[a < ncp - 1 ? a : ncp - 1], before = cp[s > 0 ? s : 0];
        decided[i] = !(long_q | long_c | long_e | tab_e | long_s | tab_s) && cp[e > 0 ? e : 0] == 0x0A && a > indent
                     && !lc_in_set(space, nspace, first) && (before == 0x0A || !lc_in_set(space, nspace, before));
        term[i] = saw_nl && q >= a && q - a < title && !lc_in_set(prose, nprose, cp[r > 0 ? r : 0]) && before == 0x0A
                  && nxt > own;
    }
}
"""

# (the text layer's reads per value: membership in a small set, :func:`in_table`)
_SRC += r"""
/* text._arrays._in_table: out[i] = whether v[i] is in the set `table` (a bool byte per value, size of them; what
   lies below 0 or past its end is not), in one pass where numpy makes four (a compare, a clip, a gather, an and)
   over the values and builds a temporary for each. LC_IN_TABLE(name, T): one kernel per value type. */
#define LC_IN_TABLE(NAME, T)                                                                                 \
void NAME(int64_t n, const T *v, const uint8_t *table, int64_t size, uint8_t *out) {                         \
    for (int64_t i = 0; i < n; i++) {                                                                        \
        const uint64_t c = (uint64_t)v[i];  /* (a negative value wraps past any table) */                    \
        const int in = c < (uint64_t)size;  /* (no branch: text's values fall in and out of a set at random) */  \
        out[i] = (uint8_t)(in & table[in ? c : 0]);                                                          \
    }                                                                                                        \
}
LC_IN_TABLE(lc_in_table_u32, uint32_t)
LC_IN_TABLE(lc_in_table_i64, int64_t)

/* text.structure._stamp_lines: a chat export's header lines' reading before its regular expression, per candidate
   line i (its sentence's start starts[i] and seam seams[i]: the next line's start), in one pass over the lines'
   own last and first characters where numpy gathered them step by step from all over the text: out[i] bit 1, the
   line passes the first step (its last two characters or its first two may be a clock's); bit 2, it passes both
   (a clock's colon near its end or near its start, within `near` characters). bits: the sets by code point (LC_ST_*,
   nbits entries; past the end: none). An index below 0 reads from the text's end, and the reads clipped where
   numpy's were, so the same answers; n >= 3. */
enum { LC_ST_END = 1, LC_ST_OPEN = 2, LC_ST_COLON = 4, LC_ST_CLOSE = 8, LC_ST_AMPM = 16, LC_ST_AP = 32, LC_ST_SPACE = 64,
       LC_ST_DIGCOLON = 128, LC_ST_BLANK = 256 };
LC_INLINE uint32_t lc_cpw(const uint32_t *cp, int64_t n, int64_t i) { return cp[i < 0 ? i + n : i]; }
LC_INLINE int lc_dig(uint32_t c) { return c - 0x30u < 10u; }
LC_INLINE int lc_st(const uint16_t *bits, int64_t nbits, uint32_t c, int bit) { return c < (uint64_t)nbits && (bits[c] & bit); }
LC_INLINE int lc_clock(const uint32_t *cp, int64_t n, int64_t p) {
    p = p < 1 ? 1 : p;
    p = p > n - 2 ? n - 2 : p;
    return cp[p] == 0x3A && lc_dig(cp[p - 1]) && lc_dig(cp[p + 1]);
}
void lc_stamps(int64_t n, const uint32_t *cp, int64_t m, const int64_t *starts, const int64_t *seams,
               const uint16_t *bits, int64_t nbits, int64_t near, uint8_t *out) {
    for (int64_t i = 0; i < m; i++) {
        const int64_t s = starts[i], z = seams[i], e = z - 2;
        const uint32_t f = cp[s], last = lc_cpw(cp, n, e);
        out[i] = 0;
        if (!lc_st(bits, nbits, last, LC_ST_END) && !lc_st(bits, nbits, f, LC_ST_OPEN)) continue;
        const uint32_t prev = cp[e - 1 > 0 ? e - 1 : 0];
        const int opens = (lc_dig(f) || f == 0x5B) && lc_st(bits, nbits, cp[s + 1 < n - 1 ? s + 1 : n - 1], LC_ST_DIGCOLON);
        const int rev = lc_st(bits, nbits, last, LC_ST_COLON) && prev == 0x29 && lc_dig(cp[e - 2 > 0 ? e - 2 : 0]);
        if (!((lc_dig(prev) && (lc_dig(last) || lc_st(bits, nbits, last, LC_ST_CLOSE))) || rev
              || (lc_st(bits, nbits, last, LC_ST_AMPM) && lc_st(bits, nbits, prev | 0x20, LC_ST_AP))
              || lc_st(bits, nbits, last, LC_ST_SPACE) || opens)) continue;
        out[i] = 1;
        int64_t at = z - 1;
        for (int k = 0; k < 3; k++) {
            const uint32_t c = lc_cpw(cp, n, at);
            if (lc_st(bits, nbits, c, LC_ST_BLANK) || c == 0x0A || c == 0x0D) at--;
        }
        const uint32_t end = lc_cpw(cp, n, at);
        int64_t x = lc_st(bits, nbits, end, LC_ST_AMPM) ? at - 2 : lc_st(bits, nbits, end, LC_ST_CLOSE) ? at - 1 : at;
        if (lc_st(bits, nbits, end, LC_ST_COLON) && cp[at - 1 > 0 ? at - 1 : 0] == 0x29) x = at - 2;
        x -= lc_st(bits, nbits, cp[x > 0 ? x : 0], LC_ST_SPACE);
        int keep = lc_dig(cp[x > 0 ? x : 0]) && lc_clock(cp, n, x - 2) && x - 2 > s;
        if (!keep && (lc_dig(f) || f == 0x5B))
            for (int64_t k = 1; k < near && !keep; k++) keep = lc_clock(cp, n, s + k);
        out[i] |= keep ? 2 : 0;
    }
}

/* text.lines.line_table: the lines of the code points cp (n of them), split at each LF: per line k its start,
   its end (the LF's offset, n for the last line), its first offset that is no space nor tab (its end where none)
   and its last one before its end less a CR right before it (its start - 1 where none). One pass: the LFs found
   by wmemchr where wchar_t holds a code point (glibc's vectorised search), only each line's edges read after.
   The four outputs hold n + 1 entries; returns the count of lines. */
#include <wchar.h>
int64_t lc_lines(int64_t n, const uint32_t *cp, int64_t *start, int64_t *end, int64_t *first, int64_t *last) {
    int64_t k = 0, s = 0;
    for (;;) {
        int64_t e;
#if WCHAR_MAX >= 0x10FFFF
        const wchar_t *hit = s < n ? wmemchr((const wchar_t *)cp + s, L'\n', (size_t)(n - s)) : 0;
        e = hit ? (int64_t)(hit - (const wchar_t *)cp) : n;
#else
        for (e = s; e < n && cp[e] != 0x0A; e++) {}
#endif
        int64_t f = s, l = e - 1;
        while (f < e && (cp[f] == 0x20 || cp[f] == 0x09)) f++;
        if (l >= s && cp[l] == 0x0D) l--;
        while (l >= s && (cp[l] == 0x20 || cp[l] == 0x09)) l--;
        start[k] = s; end[k] = e; first[k] = f; last[k] = l; k++;
        if (e >= n) return k;
        s = e + 1;
    }
}
"""


def _bind_text(lib: ctypes.CDLL) -> None:
    """The argument types of the text layer's kernels (their block of ``_SRC``; :func:`_load` calls it)."""
    lib.lc_first_marks.restype = None
    lib.lc_first_marks.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
    lib.lc_read_terms.restype = None
    lib.lc_read_terms.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 2
                                  + [ctypes.c_void_p, ctypes.c_int64] * 6 + [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 2)
    lib.lc_stamps.restype = None
    lib.lc_stamps.argtypes = ([ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_void_p] * 3
                              + [ctypes.c_int64] * 2 + [ctypes.c_void_p])
    lib.lc_lines.restype = ctypes.c_int64
    lib.lc_lines.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 5
    for name in ("lc_in_table_u32", "lc_in_table_i64"):
        getattr(lib, name).restype = None
        getattr(lib, name).argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 2 + [ctypes.c_int64, ctypes.c_void_p]


def first_marks(cp: np.ndarray, marks: tuple[str, ...]) -> list[int] | None:
    """Per mark of ``marks`` (127 at most; two characters at least, the first two ASCII, no NUL first), the offset
    of its first occurrence in the text whose code points ``cp`` (uint32) are, -1 where it has none:
    ``text.find(mark)`` for each, in one pass over the text (:c:func:`lc_first_marks`); None when the kernel is not
    available or a mark is not as required."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or cp.ndim != 1 or len(marks) > 127 \
            or not all(len(m) >= 2 and 0 < ord(m[0]) < 128 and ord(m[1]) < 128 for m in marks):
        return None
    (cp,) = _c(np.uint32, cp)
    flat = np.frombuffer("".join(marks).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    off = np.zeros(len(marks) + 1, np.int64)
    np.cumsum([len(m) for m in marks], out=off[1:])
    out = np.empty(len(marks), np.int64)
    lib.lc_first_marks(cp.size, _ptr(cp), len(marks), _ptr(flat), _ptr(off), _ptr(out))
    return out.tolist()


def read_terms(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, tables: tuple[np.ndarray, ...], indent: int,
               title: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text.structure._read_terms` in one pass per sentence (``cp``: uint32 code points; ``tables``:
    the bool tables by code point of whitespace, the line feed, the closers, the blanks, the tab and prose's ends):
    the same (decided, term); None when the kernel is not available or ``cp`` is empty."""
    lib = _load()
    if lib is None or cp.size == 0 or cp.dtype != np.uint32 or len(tables) != 6:
        return None
    (cp,), (starts, ends) = _c(np.uint32, cp), _c(np.int64, starts, ends)
    tabs = [_bytes(t) for t in tables]
    decided, term = np.zeros(starts.size, np.uint8), np.zeros(starts.size, np.uint8)
    lib.lc_read_terms(cp.size, _ptr(cp), starts.size, _ptr(starts), _ptr(ends),
                      *(x for t in tabs for x in (_ptr(t), t.size)), int(indent), int(title),
                      _ptr(decided), _ptr(term))
    return decided.view(bool), term.view(bool)


#: the value types :func:`in_table` reads, each with its kernel
_IN_TABLE_KERNELS = {np.dtype(np.uint32): "lc_in_table_u32", np.dtype(np.int64): "lc_in_table_i64"}


def in_table(table: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """Whether each value of ``values`` (uint32 or int64, any shape) is in the set ``table`` (a bool table by
    value; what lies below 0 or past its end is not), in one pass (:c:func:`lc_in_table_u32`): what
    :func:`logichunk.text._arrays._in_table`'s numpy passes give; None when the kernel is not available or the
    values are of another type."""
    name = _IN_TABLE_KERNELS.get(values.dtype)
    lib = _load() if name is not None else None
    if lib is None or table.dtype != np.bool_ or table.size == 0:
        return None
    flat = np.ascontiguousarray(values).reshape(-1)
    table = _bytes(table)
    out = np.empty(flat.size, np.uint8)
    getattr(lib, name)(flat.size, _ptr(flat), _ptr(table), table.size, _ptr(out))
    return out.view(bool).reshape(values.shape)


def stamps(cp: np.ndarray, starts: np.ndarray, seams: np.ndarray, bits: np.ndarray, near: int) -> np.ndarray | None:
    """:func:`logichunk.text.structure._stamp_lines`' two steps per candidate line (its sentence's start and seam;
    ``cp``: uint32 code points, three or more; ``bits``: uint16 sets by code point), in one pass
    (:c:func:`lc_stamps`): per line, bit 1 where it passes the first step, bit 2 where it passes both; None when the
    kernel is not available."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or cp.size < 3 or bits.dtype != np.uint16:
        return None
    (cp,), (starts, seams), (bits,) = _c(np.uint32, cp), _c(np.int64, starts, seams), _c(np.uint16, bits)
    out = np.empty(starts.size, np.uint8)
    lib.lc_stamps(cp.size, _ptr(cp), starts.size, _ptr(starts), _ptr(seams), _ptr(bits),
                  bits.size, int(near), _ptr(out))
    return out


def lines(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text.lines.line_table`'s four columns (start, end, first, last: int64) of the text whose
    code points ``cp`` (uint32) are, in one pass (:c:func:`lc_lines`); None when the kernel is not available."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or cp.ndim != 1:
        return None
    (cp,) = _c(np.uint32, cp)
    cols = [np.empty(cp.size + 1, np.int64) for _ in range(4)]  # (pages past the lines are never touched)
    k = lib.lc_lines(cp.size, _ptr(cp), *(_ptr(c) for c in cols))
    return tuple(c[:k].copy() for c in cols)  # type: ignore[return-value]


# ---- end of the text layer's kernels ---------------------------------------------------------------------------


def status() -> str:
    """How the boundary DP runs in this process: ``compiled (path)`` or why it runs in Python."""
    _load()
    return _why


def available() -> bool:
    """Whether the compiled kernels run in this process (else callers take their numpy paths)."""
    return _load() is not None


def dp_back(cost: np.ndarray, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray, price: float = 0.0
            ) -> np.ndarray | None:
    """The DP's back pointers from the compiled kernel (each chunk's cost ``cost + price``, without the
    copy), or None when it is not available: :func:`dp_rows` over every chunk end."""
    n = cost.shape[0] - 1
    fm = np.zeros(n + 1)
    back = np.zeros(n + 1, dtype=np.int64)
    return back if dp_rows(cost[1:], 1, lo, rw, restart, fm, back, price) else None


def gram_band(w: int, row: np.ndarray, col: np.ndarray, val: np.ndarray, lo: np.ndarray, n: int,
              off: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`logichunk.boundaries.gram_band` on sparse rows from the compiled kernel (``lo``: each
    end's earliest start, already clamped to ``w`` rows), or None when it is not available. ``off``: the rows'
    offsets in a flat band, each row only as long as its windows reach (:func:`fit_reach`; the same products):
    the flat band; else the ``n`` x ``w`` band."""
    lib = _load()
    if lib is None or row.size > _I32_MAX:  # (columns, fewer than the entries, go as int32)
        return None
    row, col, val = _entries(row, col, val)
    (lo,) = _c(np.int64, lo)
    (at,) = _c(np.int64, np.arange(n + 1, dtype=np.int64) * w if off is None else off)
    P = np.zeros(int(at[-1]))
    lib.lc_band(row.size, w, _ptr(row), _ptr(col), _ptr(val), _ptr(lo), _ptr(at),
                _ptr(P))
    return P.reshape(n, w) if off is None else P


def fit_reach(r0: int, nr: int, lo: np.ndarray, b0: int, b1: int) -> np.ndarray | None:
    """Per row ``r0 .. r0 + nr - 1``, how far the windows of the chunk ends ``b0..b1`` read it (``lo``: each end's
    earliest start, clamped): the longest window that starts there, at least 1 (the row's own norm), as row
    offsets (``nr + 1``, from 0) of a band laid out that long (:func:`gram_band`, :func:`fit_cuts`); None when
    the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (lo,) = _c(np.int64, lo)
    off = np.zeros(nr + 1, np.int64)
    lib.lc_fit_reach(r0, nr, _ptr(lo), b0, b1, _ptr(off[1:]))
    return np.cumsum(off, out=off)


def fit_cuts(blocks: Iterable[tuple[int, np.ndarray | tuple[np.ndarray, np.ndarray], int, int]], n: int, w: int,
             norms: np.ndarray | None,
             counts: np.ndarray, lo: np.ndarray, cum: np.ndarray, beta: np.ndarray, goal: float, fill: float,
             rw: np.ndarray, restart: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.boundaries.fit_global`'s cuts (sorted gap indices) over ``n`` atoms from the compiled
    kernel, from the Gram band a block of rows at a time (``blocks``: ``(r0, P, b0, b1)``, the band's rows
    ``[r0, r0 + len(P))`` and the chunk ends ``b0..b1`` they serve, in order, every end
    once; ``P`` a ``len`` x ``w`` band, or ``(flat band, row offsets)`` laid out by :func:`fit_reach`) and what :func:`~logichunk.boundaries.scatter_costs`, the penalty and fill terms and
    :func:`~logichunk.boundaries.optimal_cuts` read (``lo`` clamped to ``w`` atoms; ``norms`` None: each
    row's first product in the band), or None when it is not available. ``blocks`` is read only when it is."""
    lib = _load()
    if lib is None:
        return None
    own = norms is None
    (sq,) = [np.empty(n)] if own else _c(np.float64, norms)
    (lo, cum) = _c(np.int64, lo, cum)
    args = [sq, *_c(np.float64, counts), lo, cum, *_c(np.float64, beta)]
    (rw,), (rs,) = _c(np.float64, rw), _c(np.uint8, restart)
    work = [np.empty(n), np.empty(max(w, 1)), np.zeros(n + 1)]
    back = np.zeros(n + 1, dtype=np.int64)
    Q = np.empty(0)
    for r0, P, b0, b1 in blocks:
        # (each row's prefix sums only as far as a window reads them: a few atoms of a band dozens wide)
        if isinstance(P, tuple):  # (a band laid out by its rows' reach)
            (P,), (poff,) = _c(np.float64, P[0]), _c(np.int64, P[1])
            nr = poff.size - 1
        else:
            (P,) = _c(np.float64, P)
            nr, P = P.shape[0], P.reshape(-1)
            poff = np.arange(nr + 1, dtype=np.int64) * w
        reach = fit_reach(r0, nr, lo, b0, b1)  # (what these ends read of each row)
        if reach is None or np.any(np.diff(reach) > np.diff(poff)):  # (a band shorter than read: never, but not
            return None  # read past its rows; the numpy passes decide)
        # (each row one longer than it is read: rows as far apart as the band's, a power of two on a text of tiny
        # lines, made the prefix pass's loads from the band wait on its stores, 4K aliasing: 1.3x the whole call)
        qoff = reach + np.arange(nr + 1, dtype=np.int64)
        if own:
            sq[r0 : r0 + nr] = P[poff[:-1]]
        if Q.size < qoff[-1]:
            Q = np.empty(int(qoff[-1]))
        lib.lc_fit_ends(n, w, r0, nr, _ptr(P), _ptr(poff), _ptr(Q), _ptr(qoff),
                        *(_ptr(a) for a in args),
                        float(goal), float(fill),
                        _ptr(rw), _ptr(rs), *(_ptr(a) for a in work), _ptr(back), b0, b1)
    cuts = np.empty(max(n - 1, 0), dtype=np.int64)
    k = lib.lc_fit_cuts(n, _ptr(back), _ptr(cuts))
    return cuts[:k][::-1].copy()


def parts(cut: np.ndarray, sizes: np.ndarray, max_size: int, whole: bool = False
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """:func:`logichunk.chunkers.logic_chain._parts` in one compiled pass (:c:func:`lc_parts`): each atom's part,
    whether each part fits ``max_size`` and, with ``whole``, per gap whether it is no cut inside a part that fits
    (``_fits_whole``); the same answers. None when the kernel is not there or the inputs are not a bool gap per
    atom but the last, int64 sizes (at least one) and an integer limit of int64 range."""
    lib = _load()
    n = sizes.size
    if (lib is None or cut.dtype != np.bool_ or sizes.dtype != np.int64 or cut.ndim != 1 or sizes.ndim != 1
            or n == 0 or cut.size != n - 1 or not isinstance(max_size, int | np.integer)
            or not -(2**63) <= int(max_size) < 2**63):
        return None
    (cut,), (sizes,) = _c(np.bool_, cut), _c(np.int64, sizes)
    ids, fits = np.empty(n, np.int64), np.empty(n, np.bool_)
    inner = np.empty(n - 1, np.bool_) if whole else None
    k = lib.lc_parts(n, _ptr(cut), _ptr(sizes), int(max_size), _ptr(ids), _ptr(fits),
                     None if inner is None else _ptr(inner))
    return ids, fits[:k], inner


def earliest(sizes: np.ndarray, max_size: int, fixed: np.ndarray | None) -> np.ndarray | None:
    """:func:`logichunk.boundaries.earliest_starts` under a size limit in one compiled pass (:c:func:`lc_earliest`),
    the same starts; None when the kernel is not there, the sizes are not int64 (or one is negative), ``fixed`` is
    not a bool per gap, or the limit lies outside ``(-2**62, 2**62]``."""
    lib = _load()
    n = sizes.size
    if (lib is None or sizes.dtype != np.int64 or sizes.ndim != 1 or not isinstance(max_size, int | np.integer)
            or not -(2**62) < int(max_size) <= 2**62
            or (fixed is not None and (fixed.dtype != np.bool_ or fixed.shape != (max(n - 1, 0),)))):
        return None
    (sizes,) = _c(np.int64, sizes)
    f = None if fixed is None or n < 2 else _c(np.bool_, fixed)[0]
    cum, lo = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    if lib.lc_earliest(n, _ptr(sizes), int(max_size), None if f is None else _ptr(f), _ptr(cum),
                       _ptr(lo)) < 0:
        return None
    return lo


def lexical_entries(lo: np.ndarray, hi: np.ndarray, ids: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`logichunk.signals.cohesion.lexical_rows`' entries before weighting, from the compiled
    kernel: span ``s`` holds the items ``ids[lo[s]:hi[s]]`` (``uint32``); the columns are the ids in
    at least two spans and not in all of them, in ascending order. Returns ``(row, col, count, df)``
    by column, then row (``df`` per column), or None when the kernel is not available. Work in the
    number of items: no sort (the numpy path sorts the ids)."""
    lib = _load()
    n = lo.size
    if lib is None or ids.size >= _I32_MAX or n >= _I32_MAX:
        return None
    lo, hi = _c(np.int64, lo, hi)
    (ids,) = _c(np.uint32, ids)
    m = int((hi - lo).sum())
    nw = (int(ids[lo[0]:hi[-1]].max()) >> 6) + 1 if m else 1
    bits, base = np.zeros(nw, np.uint64), np.empty(nw, np.int32)
    nu = lib.lc_lexmark(n, _ptr(lo), _ptr(hi), _ptr(ids), nw, _ptr(bits), _ptr(base))
    last, df, at = np.zeros((3, nu + 1), np.int32)  # one slot per distinct id
    row, cnt = np.empty(m, np.int32), np.empty(m, np.int32)
    dfc, ncol = np.empty(nu + 1, np.int64), np.zeros(1, np.int64)
    e = lib.lc_lexrows(n, _ptr(lo), _ptr(hi), _ptr(ids), nu, _ptr(bits), _ptr(base),
                       _ptr(last), _ptr(df), _ptr(at), _ptr(row), _ptr(cnt),
                       _ptr(dfc), _ptr(ncol))
    dfc = dfc[: int(ncol[0])]
    # entries come out by column, dfc[k] of column k: their columns in one sequential pass rather than as a
    # third scattered write per item in the kernel
    col = np.repeat(np.arange(dfc.size, dtype=np.int32), dfc)
    return row[:e], col, cnt[:e], dfc


def bag_keys(lo: np.ndarray, hi: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.hashing.bag_hashes` of the spans ``ids[lo[s]:hi[s]]`` (``uint32`` ids) from the
    compiled kernel, to the bit, in one pass without temporaries; None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    lo, hi = _c(np.int64, lo, hi)
    (ids,) = _c(np.uint32, ids)
    out = np.empty(lo.size, np.uint64)
    lib.lc_bagkeys(lo.size, _ptr(lo), _ptr(hi), _ptr(ids), _ptr(out))
    return out


def occurrence_ranks(keys: np.ndarray) -> np.ndarray | None:
    """Per key, how many equal keys come before it (``uint64``), from the compiled kernel's hash table in
    one pass, no sort; None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (keys,) = _c(np.uint64, keys)
    n = keys.size
    cap = 1 << max(4, int(2 * n).bit_length())
    rank = np.empty(n, np.uint64)
    work = [np.empty(cap, np.uint64), np.empty(cap, np.int64), np.zeros(cap, np.uint8)]  # held through the call
    lib.lc_ranks(n, _ptr(keys), cap, *(_ptr(a) for a in work), _ptr(rank))
    return rank


def window_prices(row: np.ndarray, col: np.ndarray, val: np.ndarray, sq: np.ndarray, keys: np.ndarray,
                  ws: np.ndarray, ncol: int, shuffles: int, salt0: int, fresh: bool) -> np.ndarray | None:
    """The permutation price of each window ``[ws[w], ws[w + 1])`` (the last to the rows' end) of the sparse rows
    ``(row, col, val)`` (by column, then row; ``sq`` their squared norms) alone, as
    :func:`logichunk.boundaries.scatter._window_prices_numpy` gives it, to the last bit; None when the kernel is
    not available."""
    lib = _load()
    e = row.size
    n, nwin = keys.size, ws.size
    bounds = np.append(np.asarray(ws, np.int64), n)
    size = np.diff(bounds)
    if lib is None or e >= _I32_MAX or size.max() >= 1 << 15:  # (a window's rows: 15 bits)
        return None
    row, col, val = _entries(row, col, val)
    (sq,), (keys,) = _c(np.float64, sq), _c(np.uint64, keys)
    win = np.repeat(np.arange(nwin, dtype=np.int32), size)
    widest = max(int(size.max()), 1)
    out = np.empty(nwin)
    work = [np.empty(n, np.int32), np.empty(nwin + 1, np.int64), np.empty(e, np.uint16), np.empty(e),
            np.empty(widest + 1, np.int64), np.empty(e, np.int32), np.empty(e), np.empty(e), np.empty(e),
            np.empty(widest), np.empty(widest, np.uint64), np.empty(widest, np.uint64), np.empty(widest, np.int64),
            np.empty(widest), np.empty((1 << 16) + 1, np.int64)]
    lib.lc_window_prices(n, e, nwin, shuffles, salt0, int(fresh), _ptr(row), _ptr(col), _ptr(val),
                         _ptr(sq), _ptr(keys), _ptr(bounds), _ptr(win),
                         *(_ptr(a) for a in work), _ptr(out))
    return out

#: :func:`novelty_prefix` numbers up to this many ids densely first (a sort of a few thousand costs less than
#: the word ids' table of 2^20 entries, whose touched pages a short text paid for: ~0.19 → ~0.02 ms a paragraph)
_DENSE_IDS = 4096
#: per thread, the id table :func:`novelty_prefix` lends a long text's walk (kept zeroed between calls)
_novelty_tables = threading.local()


def novelty_prefix(ids: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.signals.novelty.novelty_prefix_of` from the compiled kernel: the prefix sums
    (int64, n+1) of ``q[back] - q[fwd]``, ``back``/``fwd`` each item's distance to the previous/next
    item with the same id (511 past 256 items or none), ``q`` the 512 quantised surprisals; None when
    the kernel is not available."""
    lib = _load()
    if lib is None or ids.size >= _I32_MAX:
        return None
    (ids,), (q,) = _c(np.uint32, ids), _c(np.int64, q)
    if 0 < ids.size <= _DENSE_IDS:  # a short text: its ids numbered densely (the kernel only compares them), so
        _, dense = np.unique(ids, return_inverse=True)  # its table is a few entries, not a megabyte of pages
        ids = np.ascontiguousarray(dense.ravel(), dtype=np.uint32)
    prefix = np.empty(ids.size + 1, np.int64)
    top = int(ids.max()) + 1 if ids.size else 1
    if ids.size <= _DENSE_IDS:
        last = np.zeros(top, np.int32)  # calloc'd: pages of absent ids untouched
    else:  # (this thread's table, which the kernel leaves zeroed: a long text's faults on fresh pages of it cost
        last = getattr(_novelty_tables, "last", None)  # more than the walks, ~3 ms a 2 MB Chinese text)
        if last is None or last.size < top:
            last = _novelty_tables.last = np.zeros(max(top, 1 << 20), np.int32)
    lib.lc_novelty(ids.size, _ptr(ids), _ptr(last), _ptr(q), _ptr(prefix))
    return prefix


def group_entries(row: np.ndarray, col: np.ndarray, val: np.ndarray, grp: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:meth:`logichunk.sparse_rows.SparseRows.group`'s merged entries ``(row, col, val)`` from the
    compiled kernel, each sum with the bits of numpy's ``add.reduceat``; None when the kernel is not
    available. One pass, no temporaries beyond the output."""
    lib = _load()
    if lib is None:
        return None
    e = row.size
    row, col, val = _entries(row, col, val)
    (grp,) = _c(np.int64, grp)
    orow, ocol, oval = np.empty(e, np.int32), np.empty(e, np.int32), np.empty(e)
    k = lib.lc_group(e, _ptr(row), _ptr(col), _ptr(val), _ptr(grp), _ptr(orow),
                     _ptr(ocol), _ptr(oval))
    return orow[:k], ocol[:k], oval[:k]


def group_band(row: np.ndarray, col: np.ndarray, val: np.ndarray, grp: np.ndarray, m: int, w: int, lo: np.ndarray,
               off: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`gram_band` (``m`` x ``w``) of the rows :meth:`~logichunk.sparse_rows.SparseRows.group` would make of
    the entries ``(row, col, val)`` (by column, then row) with ``grp``, to the last bit, from one compiled pass that
    never writes the grouped entries out (``lo``: each end's earliest start, already clamped to ``w`` rows; ``off``:
    as :func:`gram_band` reads it); None when the kernel is not available."""
    lib = _load()
    if lib is None or row.size > _I32_MAX:
        return None
    row, col, val = _entries(row, col, val)
    (grp, lo) = _c(np.int64, grp, lo)
    (at,) = _c(np.int64, np.arange(m + 1, dtype=np.int64) * w if off is None else off)
    P = np.zeros(int(at[-1]))
    og, ov = np.empty(row.size, np.int64), np.empty(row.size)  # (only the longest column's part is touched)
    lib.lc_group_band(row.size, _ptr(row), _ptr(col), _ptr(val), _ptr(grp), w, _ptr(lo),
                      _ptr(at), _ptr(og), _ptr(ov), _ptr(P))
    return P.reshape(m, w) if off is None else P


def lexical_weights(row: np.ndarray, col: np.ndarray, cnt: np.ndarray, idf: np.ndarray, n: int
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.signals.cohesion.lexical_rows`' weights: ``sqrt(cnt) * idf[col]``, each row
    scaled to unit length (rows of norm 0 left as they are), with the bits of its numpy passes and
    none of their temporaries, and the squared norms of the rows so scaled (what
    :meth:`~logichunk.sparse_rows.SparseRows.sqnorms` would sum); None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (idf,), (row, col, cnt) = _c(np.float64, idf), _c(np.int32, row, col, cnt)
    sq, w = np.zeros(n), np.empty(row.size)
    lib.lc_lexweights(row.size, n, _ptr(row), _ptr(col), _ptr(cnt), _ptr(idf), _ptr(sq),
                      _ptr(w))
    return w, sq


def evidence_sums(ptr: np.ndarray, item: np.ndarray, hi: np.ndarray, off: np.ndarray, steps: np.ndarray,
                  w: int, first: np.ndarray | None = None, starts: tuple[int, int] | None = None,
                  rows: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray | None] | None:
    """:func:`logichunk.boundaries.evidence_costs`' window sums (``(n+1) x w``, by end, as its costs;
    cells of no window left 0) from the compiled kernel, with the bits of its numpy loop, and, given
    ``first`` (one weight per kind), the same windows' sums of ``first`` over their kinds; ``starts``
    (``a0, a1``) and ``rows`` (``r0, r1``): only the windows from those starts, and only those rows
    of the matrix; None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (ptr, hi, off), (item,), (steps,) = _c(np.int64, ptr, hi, off), _c(np.int32, item), _c(np.float64, steps)
    n = hi.size
    a0, a1 = (0, n) if starts is None else starts
    r0, r1 = (0, n + 1) if rows is None else rows
    out = np.zeros((r1 - r0) * w)
    tally = np.zeros(max(off.size - 1, 1), np.int64)
    (fw,) = _c(np.float64, first) if first is not None else (None,)
    out2 = np.zeros((r1 - r0) * w) if first is not None else None
    lib.lc_evidence(a0, a1, w, r0, _ptr(ptr), _ptr(item), _ptr(hi), _ptr(off),
                    _ptr(steps), _ptr(tally), _ptr(out), None if fw is None else _ptr(fw),
                    None if out2 is None else _ptr(out2))
    return out.reshape(r1 - r0, w), None if out2 is None else out2.reshape(r1 - r0, w)


def dp_rows(rows: np.ndarray, b0: int, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray, fm: np.ndarray,
            back: np.ndarray, price: float = 0.0) -> bool:
    """:func:`dp_back`'s steps for the chunk ends ``b0 .. b0 + len(rows) - 1`` only, updating ``fm`` and
    ``back`` (float64 and int64, ``n + 1`` each, kept between bands) in place; False when the kernel is
    not available."""
    lib = _load()
    if lib is None:
        return False
    (rows, rw), (lo,), (rs,) = _c(np.float64, rows, rw), _c(np.int64, lo), _c(np.uint8, restart)
    n = lo.size - 1
    lib.lc_dp_rows(b0, b0 + rows.shape[0], n, rows.shape[1], _ptr(rows), float(price), _ptr(lo),
                   _ptr(rw), _ptr(rs), _ptr(fm), _ptr(back))
    return True


def sorted_run_sums(rows: np.ndarray, clogc: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For each row of ``rows`` (r x w, sorted, ``uint32`` or ``uint64``, the type's maximum a sentinel):
    the sum of ``clogc[c]`` over its runs of ``c >= 2`` equal keys other than the sentinel, in ascending
    order, and the number of sentinels (float64): what :func:`logichunk.signals.ngrams._rows_entropy`
    reads after its sort, with the bits of its numpy passes; None when the kernel is not available."""
    lib = _load()
    kernel = {np.dtype(np.uint32): "lc_runs32", np.dtype(np.uint64): "lc_runs64"}.get(rows.dtype)
    if lib is None or kernel is None or rows.ndim != 2:
        return None
    (rows,), (clogc,) = _c(rows.dtype, rows), _c(np.float64, clogc)
    r, w = rows.shape
    if clogc.size <= w:
        return None
    out, nsent = np.empty(r), np.empty(r)
    getattr(lib, kernel)(r, w, _ptr(rows), _ptr(clogc), _ptr(out), _ptr(nsent))
    return out, nsent


def bigram_keys(cp: np.ndarray, content: np.ndarray, mask: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.signals.ngrams._keys` for ``n = 2`` from the compiled kernels (``cp``: uint32 code
    points; ``content``: its uint8 table, 0 or 1 per code point): the same uint32 keys and content mask, in
    one pass over the text; None when the kernel is not available, a code point lies past the table, or the
    keys need 64 bits (65,535 distinct characters or more, one beyond the BMP)."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or cp.ndim != 1 or cp.size < 2 or content.dtype != np.uint8:
        return None
    top = int(cp.max())
    if top >= content.size:
        return None
    (cp,), (content,) = _c(np.uint32, cp), _c(np.uint8, content)
    dense = None
    if top >= 0x10000:  # beyond the BMP: the alphabet numbered densely, as numpy numbers it
        dense = np.zeros(top + 1, np.uint32)
        if lib.lc_alphabet(cp.size, _ptr(cp), dense.size, _ptr(dense)) >= 0xFFFF:
            return None
    m = cp.size - 1
    key, valid = np.empty(m, np.uint32), np.empty(m, np.bool_)
    lib.lc_bigrams(m, _ptr(cp), _ptr(content), None if dense is None else _ptr(dense), int(mask),
                   _ptr(key), _ptr(valid))
    return key, valid


def skip_ws(cp: np.ndarray, fl: np.ndarray, ws: int, q: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.text.end_candidates._skip_ws_each` from the compiled kernel (``cp``: the text's
    code units, uint8, uint16 or uint32; ``fl``: the splitter's uint16 flags by code point; ``ws``: the
    whitespace bit; ``q``: sorted offsets): the same offsets; None when it is not available."""
    lib = _load()
    kernel = {1: "lc_skipws8", 2: "lc_skipws16", 4: "lc_skipws32"}.get(cp.dtype.itemsize)
    if lib is None or kernel is None or fl.dtype != np.uint16 or cp.dtype.kind != "u":
        return None
    (cp,), (fl,), (q,) = _c(cp.dtype, cp), _c(np.uint16, fl), _c(np.int64, q)
    out = np.empty(q.size, np.int64)
    getattr(lib, kernel)(cp.size, _ptr(cp), _ptr(fl), int(ws), q.size, _ptr(q), _ptr(out))
    return out


def walk(cp: np.ndarray, at: np.ndarray, bound: np.ndarray, take: np.ndarray, steps: int, back: bool,
         note: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text._arrays._walk` from the compiled kernel, one pass per walk instead of one
    array pass per step (``cp``: uint32 code points; ``take``, ``note``: bool tables by code point): the
    same answers; None when the kernel is not available or ``cp`` is empty."""
    lib = _load()
    if lib is None or cp.size == 0:
        return None
    (cp,), (at, bound) = _c(np.uint32, cp), _c(np.int64, at, bound)
    at = at.copy()
    take, nt = _bytes(take), _bytes(note if note is not None else _NO_TABLE)
    more, noted = np.zeros(at.size, np.uint8), np.zeros(at.size, np.uint8)
    lib.lc_walk(at.size, _ptr(cp), cp.size, _ptr(at), _ptr(bound), _ptr(take), take.size,
                int(steps), int(back), _ptr(nt), nt.size, _ptr(more), _ptr(noted))
    return at, more.view(bool), noted.view(bool)


def last_ats(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, blank: np.ndarray, blanks: int,
             closer: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text.structure._last_ats` in one compiled pass (:c:func:`lc_last_ats`): where each span's last
    character lies past up to ``blanks`` of ``blank`` (a bool table by code point), and past up to two of ``closer``
    after them; the same offsets. None when the kernel is not available, ``cp`` is empty or the step count is not a
    small non-negative integer."""
    lib = _load()
    if lib is None or cp.size == 0 or not isinstance(blanks, int | np.integer) or not 0 <= int(blanks) < 2**31:
        return None
    (cp,), (starts, ends) = _c(np.uint32, cp), _c(np.int64, starts, ends)
    blank, closer = _bytes(blank), _bytes(closer)
    plain, closed = np.empty(starts.size, np.int64), np.empty(starts.size, np.int64)
    lib.lc_last_ats(starts.size, _ptr(cp), cp.size, _ptr(starts), _ptr(ends), _ptr(blank),
                    blank.size, int(blanks), _ptr(closer), closer.size, _ptr(plain), _ptr(closed))
    return plain, closed


#: needles below which numpy's own search is as fast as the call into C
_SEARCH_MIN = 64


def searchsorted(a: np.ndarray, v: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted(a, v, side)`` (``a`` sorted), the same indices: in C for 1-d int64 arrays of
    many needles, each search starting from the previous answer (:c:func:`lc_search`), so the
    offsets of a text's spans, which come in order, cost a step or two each instead of a binary search
    of the whole haystack; numpy's search otherwise (other types, few needles, no compiler)."""
    if (isinstance(a, np.ndarray) and isinstance(v, np.ndarray) and a.dtype == np.int64 and v.dtype == np.int64
            and a.ndim == 1 and v.ndim == 1 and v.size >= _SEARCH_MIN and side in ("left", "right")):
        lib = _load()
        if lib is not None:
            (a, v) = _c(np.int64, a, v)
            out = np.empty(v.size, np.int64)
            lib.lc_search(a.size, _ptr(a), v.size, _ptr(v), int(side == "right"), _ptr(out))
            return out
    return np.searchsorted(a, v, side=side)


def markers(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, skip: np.ndarray, stop: np.ndarray,
            keys: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray | None:
    """:func:`logichunk.text.discourse.opens_with_marker` in one pass per span (``cp`` the text's code
    points, ``skip``/``stop`` its tables over the BMP, ``keys`` its sorted key lists: plain, answers,
    two characters, one): the same answers; None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (cp,), (starts, ends, *keys) = _c(np.uint32, cp), _c(np.int64, starts, ends, *keys)
    skip, stop = _bytes(skip), _bytes(stop)
    out = np.zeros(starts.size, np.uint8)
    args = [_ptr(a) for a in (cp, starts, ends, skip, stop)]
    for k in keys:
        args += [_ptr(k), k.size]
    lib.lc_markers(starts.size, *args, _ptr(out))
    return out.view(bool)


def inner_cuts_many(prefixes: np.ndarray, po: np.ndarray, pri: np.ndarray, max_size: int
                    ) -> list[tuple[list[int], int]] | None:
    """:func:`logichunk.boundaries.forced.inner_breaks`' walk through over-long sentences, in C, one call
    for all of them: sentence ``i``'s own prefix is ``prefixes[po[i] : po[i + 1]]`` (``n_i + 1``
    entries), its priorities ``pri[po[i] - i : po[i + 1] - i - 2]`` (laid end to end as
    :func:`logichunk.boundaries.break_priorities_many` gives them: one entry fewer than the characters
    in all). Per sentence its cut offsets (local, from 1) and the roughest break priority used (3 when
    none); None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (prefixes, po), (pri,) = _c(np.int64, prefixes, po), _c(np.int8, pri)
    m = po.size - 1
    chars = prefixes.size - m
    if prefixes.size != int(po[-1]) or pri.size != max(chars - 1, 0):
        raise ValueError(f"{pri.size} break priorities for spans of {chars} characters in all")
    cuts = np.empty(max(prefixes.size, 1), np.int64)
    k, worst = np.zeros(m, np.int64), np.zeros(m, np.int64)
    lib.lc_inner_many(m, _ptr(po), _ptr(prefixes), _ptr(pri), int(max_size), _ptr(cuts),
                      _ptr(k), _ptr(worst))
    at = np.zeros(m + 1, np.int64)
    np.cumsum(k, out=at[1:])
    flat, bounds, w = cuts[: int(at[-1])].tolist(), at.tolist(), worst.tolist()
    return [(flat[bounds[i] : bounds[i + 1]], w[i]) for i in range(m)]


#: items :func:`content_items` writes per call (a CJK text has about one per character): output buffers
#: stay this size however long the text (a text of up to this many characters is read in one call, into
#: buffers of its length whose untouched pages cost nothing, returned as they are: fresh 64K blocks, then their
#: copies or their concatenation, faulted in twice the pages, ~0.7 ms a 2 MB text)
_ITEMS_BLOCK = 1 << 22


def content_items(cp: np.ndarray, cls: np.ndarray, alnum: int, cjk_flag: int, stop_bits: np.ndarray,
                  cjk: np.ndarray, m1: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.signals.items.content_items`' ``(positions, ids)`` of the code points ``cp``
    in one pass (``cls`` the class table; ``stop_bits`` the stop words' 2^20 word-id bits, little-endian
    in each byte, ``np.packbits(table, bitorder="little")``: a table that stays in cache; ``cjk`` the
    table of CJK characters that count; ``m1`` the hash multiplier): the same items; None when the
    kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (cp,), (cls, stop_bits, cjk) = _c(np.uint32, cp), _c(np.uint8, cls, stop_bits, cjk)
    if stop_bits.size != 1 << 17:
        raise ValueError(f"{stop_bits.size} bytes of stop-word bits, not 2^17")
    n = cp.size
    cap = min(max(n, 1), _ITEMS_BLOCK)
    pos_parts: list[np.ndarray] = []
    id_parts: list[np.ndarray] = []
    nxt = np.zeros(1, np.int64)
    a = 0
    while a < n:
        pos, ids = np.empty(cap, np.int64), np.empty(cap, np.uint32)
        k = lib.lc_items(n, _ptr(cp), a, _ptr(cls), int(alnum), int(cjk_flag), _ptr(stop_bits),
                         _ptr(cjk), int(m1), cap, _ptr(pos), _ptr(ids), _ptr(nxt))
        # (no copy: one part is returned as it is, its untouched pages never resident; several are concatenated)
        pos_parts.append(pos[:k])
        id_parts.append(ids[:k])
        a = int(nxt[0])
    if len(pos_parts) == 1:
        return pos_parts[0], id_parts[0]
    if not pos_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32)
    return np.concatenate(pos_parts), np.concatenate(id_parts)


def hash_features(cp: np.ndarray, row: np.ndarray, cls: np.ndarray, cjk_bit: int, alnum_bit: int, stop_zh: np.ndarray,
                  stop_words: np.ndarray, weights: np.ndarray, seeds: np.ndarray, n: int, dim: int
                  ) -> np.ndarray | None:
    """:mod:`logichunk.models.embed_hash`'s sums of one batch's features, ``n`` texts x ``dim`` float64, added in
    the order its numpy passes (``np.bincount`` over the families' triples) add them: the same bits, in one pass
    per family instead of some thirty numpy calls a batch (a store embeds a few dozen texts at a time: the calls'
    fixed cost was most of the hash embedder's time there). ``cp``: the batch's code points as ``_prepare``
    gives them, ``row`` each one's text; ``stop_zh``, ``stop_words`` sorted; ``weights``: twelve float32 (each
    family's, then its stop weight); ``seeds`` six. None when the kernel is not available."""
    lib = _load()
    if lib is None:
        return None
    (cp, stop_zh), (row,), (cls,), (stop_words, seeds), (weights,) = (
        _c(np.uint32, cp, stop_zh), _c(np.int64, row), _c(np.uint8, cls), _c(np.uint64, stop_words, seeds),
        _c(np.float32, weights))
    acc = np.zeros(n * dim)
    lib.lc_hashfeat(cp.size, _ptr(cp), _ptr(row), _ptr(cls), int(cjk_bit), int(alnum_bit),
                    _ptr(stop_zh), stop_zh.size, _ptr(stop_words), stop_words.size, _ptr(weights),
                    _ptr(seeds), int(dim), _ptr(acc))
    return acc


def _code_units(cp: np.ndarray) -> np.ndarray | None:
    """A text's code units as the splitter's kernels read them (unsigned, 1, 2 or 4 bytes each, contiguous), or
    None for any other array."""
    if cp.ndim != 1 or cp.dtype.kind != "u" or cp.dtype.itemsize not in (1, 2, 4):
        return None
    return np.ascontiguousarray(cp)


def _flags_cover(fl: np.ndarray, units: np.ndarray) -> bool:
    """Whether the uint16 flag table ``fl`` has an entry for every code point the units may hold (a str's: at most
    U+10FFFF), as the kernels index it unchecked."""
    return fl.dtype == np.uint16 and fl.ndim == 1 and fl.size >= (1 << 8 * units.itemsize if units.itemsize < 4
                                                                    else 0x110000)


def ends(cp: np.ndarray, kind: np.ndarray, knl: int, kcr: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text.end_candidates._ends` in one pass (``cp``: the text's code units, a str's, at most
    U+10FFFF: a ``kind`` that covers them is read unchecked, as :func:`_flags_cover`'s tables are; ``kind``: the uint8
    candidate kind by code point, 0 for none; ``knl``: the least kind of a line terminator, ``kcr`` a CR's): the
    line terminators' offsets (int64, a CRLF as its LF) and kinds (uint8), then the terminators'; None when the
    kernel is not available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or kind.dtype != np.uint8:
        return None
    kind = np.ascontiguousarray(kind)
    n = units.size
    # (room for every offset: the pages past the hits are never touched)
    nl, term, nlk, termk = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.uint8), np.empty(n, np.uint8)
    counts = np.zeros(2, np.int64)
    lib.lc_ends(n, _ptr(units), units.itemsize, _ptr(kind), kind.size, int(knl), int(kcr), _ptr(nl),
                _ptr(nlk), _ptr(term), _ptr(termk), _ptr(counts))
    a, b = counts.tolist()
    return nl[:a].copy(), nlk[:a].copy(), term[:b].copy(), termk[:b].copy()


def abbreviated(cp: np.ndarray, fl: np.ndarray, tok: int, sep: int, dots: np.ndarray, digit_next: np.ndarray,
                lower_next: np.ndarray, keys: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray | None:
    """:func:`logichunk.text.abbreviations._abbreviated` in one pass over the dots (``fl``: the splitter's uint16
    flags; ``tok``, ``sep``: its bits of a token's characters and of what stands before one; ``keys``: the sorted
    int64 keys of the abbreviations, of those before a number, of those before a lower-case word, and of their
    last two characters): the same answers; None when the kernel is not available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or units.size == 0 or not _flags_cover(fl, units):
        return None
    (dots, *keys), (digit_next, lower_next), (fl,) = (_c(np.int64, dots, *keys), _c(np.uint8, digit_next, lower_next),
                                                      _c(np.uint16, fl))
    out = np.zeros(dots.size, np.uint8)
    args = []
    for k in keys:
        args += [_ptr(k), k.size]
    lib.lc_abbrev(units.size, _ptr(units), units.itemsize, _ptr(fl), int(tok), int(sep), dots.size,
                  _ptr(dots), _ptr(digit_next), _ptr(lower_next), *args, _ptr(out))
    return out.view(bool)


def quote_marks(cp: np.ndarray, pos: np.ndarray, stop: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.text.soft_wraps._past_quote_marks` from the compiled kernel, reading each line's first
    characters only: the same offsets; None when it is not available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or units.size == 0:
        return None
    pos, stop = _c(np.int64, pos, stop)
    out = np.empty(pos.size, np.int64)
    lib.lc_quoted(units.size, _ptr(units), units.itemsize, pos.size, _ptr(pos), _ptr(stop),
                  _ptr(out))
    return out


def code_lines(cp: np.ndarray, ts: np.ndarray, te: np.ndarray, trail: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`logichunk.text.code_text._line_reads` from the compiled kernel, one pass over the lines where numpy
    makes six (``cp``: the text's code units, any width; ``trail``: a bool table by code point): the same
    values (as uint32); None when it is not available or a line lies outside the text (numpy's answer there is
    its own: an error, or an index from the end)."""
    lib = _load()
    units = _code_units(cp)
    m = ts.size
    if lib is None or units is None or units.size == 0 or m == 0 or m != te.size:
        return None
    ts, te = _c(np.int64, ts, te)
    if int(ts.min()) < 0 or int(ts.max()) >= units.size or int(te.max()) > units.size:
        return None
    tr = _bytes(trail)
    out = np.empty((5, m), np.uint32)
    back = np.empty(m, np.int64)
    lib.lc_codelines(units.size, _ptr(units), units.itemsize, _ptr(tr), tr.size, m, _ptr(ts),
                     _ptr(te), _ptr(out), _ptr(back))
    return out[0], out[1], out[2], back, out[3], out[4]


def columns(cp: np.ndarray, cls: np.ndarray, ts: np.ndarray, te: np.ndarray) -> np.ndarray | None:
    """:func:`logichunk.text.soft_wraps._columns` from the compiled kernel (``cls``: the wrap reader's uint16
    sets by code point, :data:`~logichunk.text.soft_wraps._WRAP_CLASSES`), reading each line's own characters
    instead of the whole text: the same answers; None when it is not available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or units.size == 0 or cls.dtype != np.uint16:
        return None
    ts, te = _c(np.int64, ts, te)
    cls = np.ascontiguousarray(cls)
    out = np.zeros(ts.size, np.uint8)
    lib.lc_columns(units.size, _ptr(units), units.itemsize, _ptr(cls), cls.size, ts.size, _ptr(ts),
                   _ptr(te), _ptr(out))
    return out.view(bool)


def spans_any(cp: np.ndarray, cls: np.ndarray, bit: int, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Per span ``[a[i], b[i])`` of the text's code units ``cp``, whether a code point of the set ``bit`` of
    ``cls`` (uint16 sets by code point) lies in it, reading the spans only; None when the kernel is not
    available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or cls.dtype != np.uint16:
        return None
    a, b = _c(np.int64, a, b)
    cls = np.ascontiguousarray(cls)
    out = np.zeros(a.size, np.uint8)
    lib.lc_spans_any(units.size, _ptr(units), units.itemsize, _ptr(cls), cls.size, int(bit), a.size,
                     _ptr(a), _ptr(b), _ptr(out))
    return out.view(bool)


def wrap_read(cp: np.ndarray, fl: np.ndarray, cls: np.ndarray, par: np.ndarray, lines: tuple[np.ndarray, ...],
              idx: np.ndarray, mode: int, lo: np.ndarray, hi: np.ndarray, hard: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """The soft-wrap reader's ``next_letter`` and ``read`` (:func:`logichunk.text.soft_wraps._soft_wraps`) for
    the line terminators ``idx``, one pass over each line's own characters: the next letters' flags (uint16)
    and, with ``mode`` 1 (breaks at the width) or 2 (the others), per terminator ``keep | goes_on << 1 | other
    << 2`` (uint8). ``lines``: the per-terminator arrays nl, w_nl, end, text_start, line_start, nxt_nl, length,
    width, and the columns tabs add to this line's indent and to the next line's; ``par``: the flag bits and limits (:c:func:`lc_wrapread`). None when the kernel is not available."""
    lib = _load()
    units = _code_units(cp)
    if lib is None or units is None or units.size == 0 or not _flags_cover(fl, units) or cls.dtype != np.uint16:
        return None
    lines = tuple(_c(np.int64, *lines))
    idx, lo, hi, hard, par = _c(np.int64, idx, lo, hi, hard, par)
    (fl, cls) = _c(np.uint16, fl, cls)
    cn = np.zeros(idx.size, np.uint16)
    out = np.zeros(idx.size, np.uint8)
    lib.lc_wrapread(units.size, _ptr(units), units.itemsize, _ptr(fl), _ptr(cls), cls.size,
                    _ptr(par), *(_ptr(a) for a in lines), idx.size, _ptr(idx), int(mode),
                    _ptr(lo), _ptr(hi), lo.size, _ptr(hard), hard.size, _ptr(cn),
                    _ptr(out))
    return cn, out


def table_hits(cp: np.ndarray, lo: int, table: np.ndarray) -> np.ndarray | None:
    """The positions (int64, in order) of the code points ``c`` of ``cp`` (uint32) with ``lo <= c < lo +
    table.size`` and ``table[c - lo]`` nonzero, in one pass; None when the kernel is not available."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or table.size >= 1 << 32 or not 0 <= lo < 1 << 32:
        return None
    (cp,) = _c(np.uint32, cp)
    table = _bytes(table != 0)
    out = np.empty(cp.size, np.int64)  # (pages past the hits are never touched)
    k = lib.lc_table_hits(cp.size, _ptr(cp), int(lo), table.size, _ptr(table), _ptr(out))
    return out[:k].copy()



# ------------------------------------------------------------------------------------------------------------------
# The cascade's kernels (chunkers.logic_chain, boundaries, signals): their argument types and wrappers.


def _bind_cascade(lib: ctypes.CDLL) -> None:
    """The argument types of the kernels in the cascade's block of ``_SRC``."""
    lib.lc_jump.restype = None
    lib.lc_jump.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 3 + [ctypes.c_int64] + [ctypes.c_void_p] * 2
    lib.lc_windows.restype = None
    lib.lc_windows.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 3
    lib.lc_break_pri.restype = ctypes.c_int64
    lib.lc_break_pri.argtypes = ([ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
                                 + [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p])


def novelty_jump_sums(P: np.ndarray, b: np.ndarray, room: np.ndarray, scales: tuple[int, ...]) -> np.ndarray | None:
    """:func:`logichunk.signals.novelty.novelty_jump`'s sum over ``scales`` before its last division and clip
    (``P``: int64 prefix sums; ``b``, ``room``: int64 per offset), the bits of its numpy passes, in one compiled
    pass; None when the kernel is not available or the arrays are not int64."""
    lib = _load()
    if lib is None or P.dtype != np.int64 or b.dtype != np.int64 or room.dtype != np.int64:
        return None
    (P, b, room) = _c(np.int64, P, b, room)
    ks = np.asarray(scales, dtype=np.int64)
    out = np.empty(b.size)
    lib.lc_jump(b.size, _ptr(P), _ptr(b), _ptr(room), ks.size, _ptr(ks), _ptr(out))
    return out


def windows(key: np.ndarray, starts: np.ndarray, w: int) -> np.ndarray | None:
    """The rows ``key[s : s + w]`` for each start ``s`` (a 1-d array of keys), a new (r, w) array: what indexing
    ``sliding_window_view(key, w)`` by ``starts`` gives, one copy a row; None when the kernel is not available or
    a window is not inside ``key`` (numpy's index then wraps or raises, as the caller's does)."""
    lib = _load()
    if lib is None or key.ndim != 1 or not 1 <= w <= key.size:
        return None
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    if starts.ndim != 1 or (starts.size and (int(starts.min()) < 0 or int(starts.max()) + w > key.size)):
        return None
    key = np.ascontiguousarray(key)
    out = np.empty((starts.size, w), key.dtype)
    lib.lc_windows(starts.size, w, key.itemsize, _ptr(key), _ptr(starts), _ptr(out))
    return out


#: joiners' pairs :func:`break_priorities` reads back from one call (more: the numpy passes, the same answer)
_ZWJ_CAP = 256
#: the class table's whitespace, CJK, mark and high-surrogate bits :c:func:`lc_break_pri` is compiled with
_CLASS_BITS = (1, 4, 16, 32)


def break_priorities(cp: np.ndarray, starts: np.ndarray, lens: np.ndarray, cls: np.ndarray, bits: tuple[int, ...],
                     clause: np.ndarray, indent: np.ndarray, line_end: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`logichunk.boundaries.forced.break_priorities_many` of the spans ``[starts[i], starts[i] + lens[i])`` of
    the code points ``cp`` (uint32; ``lens`` not negative, two characters at least in all), in one pass
    (:c:func:`lc_break_pri`), but for the URLs and the joiners: ``(pri, zwj)``, ``zwj`` the rows (index, next code
    point) of the pairs after a U+200D, whose rule (a category) the caller applies. ``cls``: the class table;
    ``bits``: its whitespace, CJK, mark and high-surrogate bits; ``clause`` (65,536 entries), ``indent``,
    ``line_end``: bool tables by code point. None when the kernel is not available, the arguments are not as
    required, or the joiners are many."""
    lib = _load()
    if lib is None or cp.dtype != np.uint32 or cls.dtype != np.uint8 or cls.size < 0x110000 or clause.size < 0xFFFF \
            or tuple(int(b) for b in bits) != _CLASS_BITS:
        return None
    (cp,), (starts, lens) = _c(np.uint32, cp), _c(np.int64, starts, lens)
    clause, indent, line_end = _bytes(clause), _bytes(indent), _bytes(line_end)
    pri = np.empty(int(lens.sum()) - 1, np.int8)
    zwj = np.empty((_ZWJ_CAP, 2), np.int64)
    nz = lib.lc_break_pri(starts.size, _ptr(cp), _ptr(starts), _ptr(lens), _ptr(cls),
                          _ptr(clause), _ptr(indent), indent.size,
                          _ptr(line_end), line_end.size, _ptr(pri), _ZWJ_CAP, _ptr(zwj))
    return None if nz > _ZWJ_CAP else (pri, zwj[:nz])
