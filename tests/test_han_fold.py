"""Traditional and simplified Chinese find each other in lexical matching (logichunk.text.han_fold), while
the text itself is never changed: BM25's terms, a lone-character query, and recall's excerpt placing."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.index import BM25Index, tokenize
from logichunk.integrations.conversations import _find, _patterns, _terms
from logichunk.text import han_fold
from logichunk.text.han_fold import fold_han, han_fold_table

#: traditional characters, their simplified forms, a compatibility ideograph (U+F900), other scripts, a lone
#: surrogate, and a rare character OpenCC writes in Extension G (left as it is)
_ALPHABET = "曠工請假臺灣後髮發乾旷请台湾后发干\uf900豈〇々ＡBc1２ ，。\n\ud800\U0002a23c"


def _han(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in han_fold._HAN_RANGES)


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from(_ALPHABET), max_size=30))
def test_folding_keeps_every_position_and_touches_only_han(text):
    folded = fold_han(text)
    assert len(folded) == len(text)
    assert fold_han(folded) == folded
    assert all(a == b for a, b in zip(text, folded, strict=True) if not _han(a))
    assert tokenize(text) == tokenize(folded)  # (BM25 reads both as one)


def test_the_table_is_opencc_character_by_character():
    assert fold_han("曠工請假，臺灣的頭髮發展") == "旷工请假，台湾的头发发展"
    assert fold_han("\uf900") == fold_han("\u8c48") == "岂"  # (a compatibility ideograph is its unified one)
    assert fold_han("旷工 mqtt") == "旷工 mqtt"
    table = han_fold_table()
    assert len(table) > 4000
    assert all(_han(chr(v)) and v not in table for v in table.values())  # (Han into Han, folded once for all)


def test_traditional_and_simplified_are_one_term():
    assert tokenize("曠工") == tokenize("旷工") == ["旷工"]
    assert tokenize("MQTT斷線重連", segmenter="bigram") == tokenize("MQTT断线重连")


def test_bm25_finds_either_script_from_the_other():
    idx = BM25Index()
    idx.add_many([(1, "员工旷工三日以上予以解除劳动合同"), (2, "員工請假須事先申請"), (3, "报销流程与发票")])
    assert idx.search("曠工", 5)[0].tolist() == [1]
    assert idx.search("请假", 5)[0].tolist() == [2]
    assert idx.search("曠", 5)[0].tolist() == [1]  # (a lone character, read from the bigrams that hold it)
    assert idx.search("請", 5)[0].tolist() == [2]


def test_recall_places_an_excerpt_on_the_other_scripts_words_in_the_texts_own_positions():
    text = "第一條：員工曠工三日以上者，解除合同。"
    found = _find(text, _patterns(_terms("旷工怎么处理")))
    assert found == {"旷工": [(6, 8)]} and text[6:8] == "曠工"


def test_the_shipped_table_is_opencc_s_t2s_read_character_by_character():
    pytest.importorskip("opencc")  # (the zh extra: what the file is made from)
    assert han_fold_table() == han_fold.opencc_table()


def test_without_opencc_the_shipped_table_folds_the_same(monkeypatch):
    monkeypatch.setitem(sys.modules, "opencc", None)  # (import opencc raises ImportError)
    with_it = han_fold_table()
    han_fold_table.cache_clear()
    han_fold._lookup.cache_clear()
    try:
        assert han_fold_table() == with_it
        assert fold_han("曠工請假") == "旷工请假" and tokenize("曠工") == ["旷工"]
        with pytest.raises(ImportError):
            han_fold.opencc_table()
    finally:
        han_fold_table.cache_clear()
        han_fold._lookup.cache_clear()
