"""logichunk and its peers side by side on a 1 MB slice of each corpus (pytest-benchmark).

Slow and not part of the default run; take it with::

    pytest bench/test_bench_chunk.py -m slow --benchmark-group-by=group --benchmark-columns=min,rounds

Each benchmark is one run (no warm-up, caches cleared, a fresh chunker), and nothing asserts on
time: the numbers are for reading. The assertions only check that each method produced sane chunks.
The full table, with sizes, cut placement and memory, comes from ``bench/bench_throughput.py``.
"""

from __future__ import annotations

import pytest

import bench_throughput as bt
import corpora

pytestmark = pytest.mark.slow

SLICE_BYTES = 1_000_000


@pytest.fixture(scope="module")
def slices() -> dict[str, str]:
    msg = corpora.missing_message()
    if msg:
        pytest.skip(msg)
    out = {}
    for name, (text, _info) in corpora.build(("en", "zh"), SLICE_BYTES).items():
        out[name] = text.encode("utf-8")[:SLICE_BYTES].decode("utf-8", errors="ignore")
    return out


@pytest.mark.parametrize("method", bt.INPROC_METHODS)
@pytest.mark.parametrize("corpus", ["en", "zh"])
def test_chunk_1mb(benchmark, slices: dict[str, str], corpus: str, method: str) -> None:
    text = slices[corpus]
    factory = bt.FACTORIES[method]
    try:
        factory()
    except ImportError as e:
        pytest.skip(f"{bt.DISTRIBUTIONS[method]} not installed: {e}")

    def setup():
        bt.clear_caches()
        return (factory(), text), {}

    benchmark.group = f"{corpus}, 1 MB slice, {bt.MAX_SIZE}-char target"
    benchmark.extra_info["utf8_bytes"] = len(text.encode("utf-8"))
    result = benchmark.pedantic(lambda fn, t: fn(t), setup=setup, rounds=1, iterations=1, warmup_rounds=0)

    texts, own = bt.extract(method, result)
    benchmark.extra_info["chunks"] = len(texts)
    assert texts and all(texts)
    assert max(len(t) for t in texts) <= bt.MAX_SIZE
    if own is not None:
        assert all(text[a:b] == t for (a, b), t in zip(own, texts, strict=True))
    if method == "logichunk":
        assert "".join(texts) == text
