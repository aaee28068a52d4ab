""":func:`logichunk.text.records._whole_file` reads a text's first two lines before it looks for blank lines
among all of them (most texts are no CSV nor JSON Lines, and no more is read): the same verdict as reading
the blank lines first, on texts built from CSV, JSON Lines and prose lines, blank lines among them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import records as R

_LINES = ["a,b,c", "1,2,3", "x, y, z", "4,5,6", '"q,1",2,3', "a\tb", "1\t2", "a;b;c", "1;2;3", '{"a": 1}',
          '{"b": 2} ', "{x", "plain prose, with commas, here", "", "  ", "a,b", "1,2,3,4"]


def _reference(text: str, first: np.ndarray, end: np.ndarray, nl: np.ndarray) -> bool:
    """The reading as it was: blank lines first, then the first two lines, then the rest."""
    m = first.size
    if m < R.RECORDS_MIN or np.any(np.diff(np.searchsorted(nl, first)) != 1):
        return False
    def line(i: int) -> str:
        return text[int(first[i]) : int(end[i])].rstrip("\r \t")
    if all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2)):
        return all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2, m))
    def bare(i: int) -> str:
        x = line(i)
        return R._QUOTED.sub("", x) if '"' in x else x
    head = [bare(0), bare(1)]
    for sep, least in R._SEPARATORS:
        count = head[0].count(sep)
        if count >= least and head[1].count(sep) == count and (sep == "\t" or any(
                h.count(sep) > h.count(sep + " ") for h in head)) \
                and all(bare(i).count(sep) == count for i in range(2, m)):
            return True
    return False


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=12))
def test_whole_file_reads_as_the_blank_lines_first_reading(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    nl = np.asarray([i for i, c in enumerate(text) if c == "\n"], np.int64)
    starts = np.concatenate(([0], nl[:-1] + 1))
    ws = np.asarray([len(x) - len(x.lstrip(" \t")) for x in lines], np.int64)
    keep = np.asarray([bool(x.strip(" \t")) for x in lines])  # (a line's first non-space character: blank lines have none)
    first, end = (starts + ws)[keep], nl[keep]
    assert R._whole_file(text, first, end, nl) == _reference(text, first, end, nl)
