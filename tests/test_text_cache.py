"""Per-text caches: bounded by entries and by the characters they hold."""

from __future__ import annotations

import threading

from logichunk.text.cache import text_cache
from logichunk.text.charclass import codepoints


def _counting(maxsize: int, max_chars: int):
    calls: list[tuple] = []

    @text_cache(maxsize, max_chars)
    def f(text: str, k: int = 0) -> list:
        calls.append((text, k))
        return [text, k]

    return f, calls


def test_hits_return_the_same_object_and_do_not_recompute():
    f, calls = _counting(4, 100)
    a = f("abc")
    assert f("abc") is a and len(calls) == 1
    assert f("abc", 1) is not a and len(calls) == 2  # other arguments, other entry
    assert f("abc", k=2) == ["abc", 2] and f("abc", k=2) == ["abc", 2] and len(calls) == 3


def test_the_character_budget_lets_old_texts_go_but_keeps_the_newest():
    f, calls = _counting(8, 100)
    f("a" * 40)
    f("b" * 40)
    assert f.cache_info()["chars"] == 80
    f("c" * 40)  # 120 > 100: the least recently used ("a") goes
    assert f.cache_info() == {"entries": 2, "chars": 80, "maxsize": 8, "max_chars": 100}
    big = f("d" * 500)  # alone over the budget: it stays, everything older goes
    assert f.cache_info()["entries"] == 1 and f("d" * 500) is big
    n = len(calls)
    f("b" * 40)
    assert len(calls) == n + 1  # "b" was evicted, so it is computed again


def test_entry_count_bound_and_clear():
    f, calls = _counting(2, 10**9)
    f("x"), f("y"), f("x"), f("z")  # "y" is the least recently used when "z" arrives
    assert f.cache_info()["entries"] == 2
    f("x")
    assert len(calls) == 3
    f("y")
    assert len(calls) == 4
    f.cache_clear()
    assert f.cache_info()["entries"] == 0 and f.cache_info()["chars"] == 0


def test_code_points_of_many_large_texts_are_not_all_kept():
    codepoints.cache_clear()
    texts = [chr(0x4E00 + i) * (6 << 20) for i in range(4)]  # 6 M characters each, 24 MB of code points
    for t in texts:
        assert int(codepoints(t)[0]) == ord(t[0])
    info = codepoints.cache_info()
    assert info["chars"] <= info["max_chars"] or info["entries"] == 1
    assert info["entries"] < len(texts)
    codepoints.cache_clear()


def test_threads_share_one_entry():
    f, calls = _counting(4, 1000)
    out = []
    threads = [threading.Thread(target=lambda: out.append(f("same"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o == ["same", 0] for o in out) and f.cache_info()["entries"] == 1


def test_forget_text_drops_that_texts_entries_only():
    from logichunk.text.cache import forget_text

    f, calls = _counting(8, 10_000)
    a, b = "first text " * 3, "second text " * 3
    f(a), f(a, 1), f(a, k=2), f(b)
    forget_text(a)
    assert f.cache_info() == {"entries": 1, "chars": len(b), "maxsize": 8, "max_chars": 10_000}
    f(b)
    assert len(calls) == 4  # b still cached
    f(a)
    assert len(calls) == 5  # a computed again


def test_a_text_read_in_windows_leaves_no_window_in_the_caches():
    from logichunk import chunk_stream
    from logichunk.text import cache

    for c in list(cache._CACHES):
        c.cache_clear()  # what earlier tests left
    text = "A sentence of prose. Another one here, longer.\n\n" * 400
    parts = list(chunk_stream(text, window=3000, max_size=200))
    assert len(parts) > 3
    assert all(c.cache_info()["entries"] == 0 for c in list(cache._CACHES))


def test_keys_hash_the_ends_but_equality_decides():
    f, calls = _counting(8, 10**6)
    a = "head " + "x" * 100 + " tail"
    b = "head " + "y" * 100 + " tail"  # same length, same ends: one bucket, two entries
    assert f(a) == [a, 0] and f(b) == [b, 0] and len(calls) == 2
    assert f("".join(["head ", "x" * 100, " tail"])) == [a, 0] and len(calls) == 2  # an equal text, another object
    assert f.peek(b) == [b, 0] and f.peek("head " + "z" * 100 + " tail") is None


def test_keyword_arguments_do_not_meet_positional_ones():
    @text_cache(8)
    def g(text: str, *args, **kwargs) -> tuple:
        return args, kwargs

    assert g("t", k=2) == ((), {"k": 2})
    assert g("t", ("k", 2)) == ((("k", 2),), {})  # a positional pair like the keyword's item: its own entry
    assert g("t", 1, k=2) == ((1,), {"k": 2}) and g("t", 1, ("k", 2)) == ((1, ("k", 2)), {})
    # (a key of the arguments tuple and the keywords' items would make these two one entry)
    assert g("t", (1,), (("k", 2),)) == (((1,), (("k", 2),)), {}) and g("t", 1, k=2) == ((1,), {"k": 2})
