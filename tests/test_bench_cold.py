"""The throughput bench's cold runs (bench/bench_throughput.py): each chunks a text that no per-text cache
can have seen, while the plain runs' cache clearing leaves no logichunk per-text entry behind."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from logichunk import chunk
from logichunk.text.cache import _CACHES

_BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def bt():
    """The bench module, imported without leaving its thread-pool pins in this process's environment."""
    env, path = dict(os.environ), list(sys.path)
    sys.path.insert(0, str(_BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_throughput", _BENCH / "bench_throughput.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        os.environ.clear()
        os.environ.update(env)
        sys.path[:] = path
    return mod


TEXT = ("The river rose in the night. By morning the lower town was under water.\n\n"
        "Nobody had expected it so early in the year; the snow had barely begun to melt. ") * 40


def _entries() -> dict[str, int]:
    return {c.__qualname__: c.cache_info()["entries"] for c in list(_CACHES)}


def test_cold_texts_are_new_and_keep_the_text(bt) -> None:
    texts = [bt.cold_text(TEXT, i) for i in range(3)]
    assert all(t is not TEXT and t != TEXT and t.endswith(TEXT) for t in texts)
    assert len(set(texts)) == 3 and len({len(t) for t in texts}) == 1  # distinct, same size
    assert texts[0][: len(texts[0]) - len(TEXT)].endswith("\n\n")  # a paragraph of its own


def test_a_cold_text_misses_every_cache_the_plain_text_fills(bt) -> None:
    bt.clear_caches()
    base = _entries()
    # the plain runs' clearing leaves no module-level entry; a cache of an object's method (a tokenizer's
    # TokenMeasure._spans, made by another test of this process) lives with its object, off the bench's path
    assert not any(n for k, n in base.items() if "." not in k), base
    chunk(TEXT, max_size=512)
    first = _entries()
    filled = {k for k, n in first.items() if n > base[k]}
    assert filled  # the chunk call does keep per-text entries (else this test proves nothing)
    chunk(TEXT, max_size=512)
    assert _entries() == first  # the same text again: every lookup hits, no new entry
    chunk(bt.cold_text(TEXT, 0), max_size=512)
    after = _entries()
    assert all(after[k] > first[k] for k in filled), {k: (first[k], after[k]) for k in filled}
    bt.clear_caches()
