"""Sentence splitter: exact sentence texts on hand cases (zh, en, mixed, Markdown), the tiling
invariants on random text, robustness and speed on large inputs."""

from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logichunk.text.sentences import (
    BREAK_HARD,
    BREAK_LINE,
    BREAK_NONE,
    BREAK_PARAGRAPH,
    SentenceSpans,
    _split_scalar,
    _split_vector,
    sentences,
    split_sentences,
)
from logichunk.types import Sentence, Span

WS_CHARS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
MARKS = set(range(0x300, 0x370)) | {0x200C, 0x200D} | set(range(0xFE00, 0xFE10)) | set(range(0x1F3FB, 0x1F400))


def check(text: str) -> SentenceSpans:
    """Split and assert every structural invariant of the result; on short texts, also that the
    scalar and the vectorised implementations agree exactly."""
    s = split_sentences(text)
    n = len(s)
    if text and len(text) <= 50_000:
        for impl in (_split_scalar, _split_vector):
            bounds, brk = impl(text)
            assert bounds.tolist() == s.starts[1:].tolist(), impl.__name__
            assert brk.tolist() == s.breaks.tolist(), impl.__name__
    assert s.text is text
    assert s.starts.dtype == np.int64 and s.ends.dtype == np.int64 and s.breaks.dtype == np.int8
    assert s.starts.shape == (n,) and s.ends.shape == (n,)
    if not text:
        assert n == 0 and s.breaks.size == 0
        return s
    assert n >= 1
    assert s.breaks.shape == (n - 1,)
    assert s.starts[0] == 0 and s.ends[-1] == len(text)
    assert np.array_equal(s.starts[1:], s.ends[:-1])
    assert np.all(s.ends > s.starts)
    assert set(s.breaks.tolist()) <= {BREAK_NONE, BREAK_LINE, BREAK_PARAGRAPH, BREAK_HARD}
    assert "".join(s.texts()) == text
    for st_ in s.starts[1:].tolist():
        assert text[st_] not in WS_CHARS, "a sentence after the first starts on whitespace"
        assert ord(text[st_]) not in MARKS and not 0xDC00 <= ord(text[st_]) <= 0xDFFF
    return s


def texts(text: str) -> list[str]:
    return check(text).texts()


def breaks(text: str) -> list[int]:
    return check(text).breaks.tolist()


# --------------------------------------------------------------------------- contract


def test_empty_and_whitespace_only():
    assert len(check("")) == 0
    assert texts(" ") == [" "]
    assert texts("  \n\n\t \u3000") == ["  \n\n\t \u3000"]
    assert texts("\n") == ["\n"]


def test_leading_whitespace_belongs_to_first_sentence():
    assert texts("\n\n  Hello there. Bye.") == ["\n\n  Hello there. ", "Bye."]
    assert texts("\n\n你好。再见。") == ["\n\n你好。", "再见。"]
    # the leading newlines are not a gap: the first gap counts only the sentence's own newline
    assert breaks("\n\nOne.\nTwo.") == [BREAK_LINE]


def test_trailing_whitespace_belongs_to_sentence_before():
    assert texts("One.   Two.  \n\n  Three.\n") == ["One.   ", "Two.  \n\n  ", "Three.\n"]


def test_sentence_objects_and_indexing():
    s = check("One. Two. Three.")
    assert len(s) == 3
    assert s[0] == Sentence(Span(0, 5), 0)
    assert s[-1] == Sentence(Span(10, 16), 2)
    assert [x.index for x in s] == [0, 1, 2]
    assert [x.span.of(s.text) for x in s] == s.texts()
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(IndexError):
        s[-4]
    assert sentences("One. Two.") == [Sentence(Span(0, 5), 0), Sentence(Span(5, 9), 1)]


def test_arrays_are_read_only():
    s = split_sentences("One. Two.")
    with pytest.raises(ValueError):
        s.starts[0] = 3


def test_long_texts_take_the_vectorised_path_and_agree():
    # many marks: split_sentences goes vectorised; the scalar twin must still agree
    text = "".join(f"Sentence number {i} ends here. 第{i}句。\n" for i in range(400))
    s = check(text)
    assert len(s) == 800
    assert s.texts()[:3] == ["Sentence number 0 ends here. ", "第0句。\n", "Sentence number 1 ends here. "]
    assert s.breaks.tolist()[:3] == [BREAK_NONE, BREAK_LINE, BREAK_NONE]


def test_scalar_path_gives_up_on_many_marks():
    text = "Ab cd. " * 10
    assert _split_scalar(text, limit=5) is None
    assert _split_scalar(text, limit=50)[0].tolist() == list(range(7, 70, 7))


def test_rejects_non_str():
    with pytest.raises(TypeError):
        split_sentences(b"bytes.")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- English


def test_english_basic_marks():
    assert texts("It rained. Was it cold? Yes! Then it stopped.") == [
        "It rained. ", "Was it cold? ", "Yes! ", "Then it stopped."]
    assert texts("Really?! No way!!! Why?? Fine.") == ["Really?! ", "No way!!! ", "Why?? ", "Fine."]


@pytest.mark.parametrize("abbr", ["Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "St.", "Inc.", "Ltd.", "vs.",
                                  "Fig.", "Jan.", "Sept.", "Dec.", "e.g.", "i.e.", "U.S.", "U.K.", "a.m.",
                                  "p.m.", "Ph.D.", "Gen.", "approx."])
def test_english_abbreviations_do_not_end_sentences(abbr):
    assert texts(f"We met {abbr} Smith there. Then we left.") == [
        f"We met {abbr} Smith there. ", "Then we left."]


def test_english_abbreviations_hand_cases():
    assert texts("Dr. Watson met Mrs. Hudson at 221B Baker St. London is big.") == [
        "Dr. Watson met Mrs. Hudson at 221B Baker St. London is big."]
    assert texts("J. K. Rowling wrote it. T. S. Eliot did not.") == [
        "J. K. Rowling wrote it. ", "T. S. Eliot did not."]
    assert texts("See Fig. 3 and No. 5 for details. No. I refuse.") == [
        "See Fig. 3 and No. 5 for details. ", "No. ", "I refuse."]
    assert texts("Apples, pears, etc. are fruit. We ate them etc. The end.") == [
        "Apples, pears, etc. are fruit. ", "We ate them etc. ", "The end."]
    assert texts("He works at Acme Inc. in Boston. It is fine.") == [
        "He works at Acme Inc. in Boston. ", "It is fine."]
    assert texts("It was cold on Jan. 5 this year. Good.") == ["It was cold on Jan. 5 this year. ", "Good."]


def test_titles_in_capitals_and_firms_in_lower_case_do_not_end_sentences():
    """A transcript's or a script's speaker in capitals (``DR. MORGAN:``), and a filing's table that writes
    a firm in lower case, were cut after the title's dot."""
    assert texts("INTERVIEWER: Where?\n\nDR. MORGAN: At the farm. PROF. LEE agreed.") == [
        "INTERVIEWER: Where?\n\n", "DR. MORGAN: At the farm. ", "PROF. LEE agreed."]
    assert texts("Shares of cadence design systems inc. rose. SEE NO. 5 FIRST. I SAW IT. The END.") == [
        "Shares of cadence design systems inc. rose. ", "SEE NO. 5 FIRST. ", "I SAW IT. ", "The END."]
    for abbr in ("GEN.", "MRS.", "ST.", "INC."):
        assert texts(f"WE MET {abbr} SMITH THERE. THEN WE LEFT.") == [f"WE MET {abbr} SMITH THERE. ", "THEN WE LEFT."]


def test_english_lower_case_after_the_mark():
    # "!" and "?" go on before a lower-case word; so does "." after an abbreviation or a quote
    assert texts("Yahoo! is a company. Ok.") == ["Yahoo! is a company. ", "Ok."]
    assert texts("Apples etc. and pears. Wait 10 min. then go.") == ["Apples etc. and pears. ", "Wait 10 min. then go."]
    assert texts('He said "hi." and left. Ok.') == ['He said "hi." and left. ', "Ok."]
    assert texts("The U.S. government. Dr. smith") == ["The U.S. government. ", "Dr. smith"]
    # after an ordinary word a lower-case start is still a new sentence (lower-cased text, chat)
    assert texts("revenue grew in 2007. the company said. ok. see you") == [
        "revenue grew in 2007. ", "the company said. ", "ok. ", "see you"]


def test_english_numbers_and_versions():
    assert texts("Pi is 3.14. Release v2.0.1 is out. It costs $1.5m. Now 42. 43 is next.") == [
        "Pi is 3.14. ", "Release v2.0.1 is out. ", "It costs $1.5m. ", "Now 42. ", "43 is next."]
    assert texts("Call 555.1234 now. Or 1.5.") == ["Call 555.1234 now. ", "Or 1.5."]


def test_english_urls_and_emails():
    assert texts("See https://example.com/a.b?c=d for more. Then stop.") == [
        "See https://example.com/a.b?c=d for more. ", "Then stop."]
    assert texts("Visit www.example.com. Mail john.doe@mail.example.org. Bye.") == [
        "Visit www.example.com. ", "Mail john.doe@mail.example.org. ", "Bye."]
    assert texts("Go to https://a.b/c?d=e.f&g=h!i. Yes.") == ["Go to https://a.b/c?d=e.f&g=h!i. ", "Yes."]


def test_english_quotes_and_brackets_after_the_mark():
    assert texts('"He left." She said so.') == ['"He left." ', "She said so."]
    assert texts("'Quoted.' Next. (An aside.) After.") == ["'Quoted.' ", "Next. ", "(An aside.) ", "After."]
    assert texts('"Why?" he asked. "Because!" She laughed.') == ['"Why?" he asked. ', '"Because!" ', "She laughed."]
    assert texts("It ended (see Fig.) Then more.") == ["It ended (see Fig.) ", "Then more."]


def test_english_ellipses():
    assert texts("Wait... What happened? I think... maybe not.") == [
        "Wait... ", "What happened? ", "I think... maybe not."]
    assert texts("Hmm.. Yes. And then...") == ["Hmm.. ", "Yes. ", "And then..."]
    assert texts('He paused... "Go," he said.') == ['He paused... ', '"Go," he said.']
    assert texts("Wait\u2026 What? I mean\u2026 no.") == ["Wait\u2026 ", "What? ", "I mean\u2026 no."]
    assert texts("Hello...world. Ok.") == ["Hello...world. ", "Ok."]


# --------------------------------------------------------------------------- Chinese


def test_chinese_marks():
    assert texts("我们走吧。真的吗？太好了！好；再见。") == ["我们走吧。", "真的吗？", "太好了！", "好；", "再见。"]
    assert texts("他走了……我很难过。是吗？！对。") == ["他走了……", "我很难过。", "是吗？！", "对。"]
    assert texts("然后…我们走。") == ["然后…", "我们走。"]


def test_chinese_closing_quotes_and_brackets_stay():
    assert texts("他说：“你好。”然后走了。") == ["他说：“你好。”", "然后走了。"]
    assert texts("他说：「我明天去。」她说：『好的！』（真的吗？）【注意。】《书名。》结束") == [
        "他说：「我明天去。」", "她说：『好的！』", "（真的吗？）", "【注意。】", "《书名。》", "结束"]
    assert texts("问：“为什么？”答：‘不知道。’好") == ["问：“为什么？”", "答：‘不知道。’", "好"]


def test_chinese_full_width_period_and_digits():
    assert texts("价格是３．１４元。版本２．０．好") == ["价格是３．１４元。", "版本２．０．", "好"]
    assert texts("第一句．第二句") == ["第一句．", "第二句"]
    # decimal points between Chinese numerals; a full stop before a year
    assert texts("寬約六一．五公尺，高二.五公尺。人口510萬．1950年好") == [
        "寬約六一．五公尺，高二.五公尺。", "人口510萬．", "1950年好"]


def test_an_enumerators_dot_inside_a_line_ends_no_sentence():
    # the People's Daily's "四种类型：１．单项业务企业，…；２．主导产品企业" (each number stays with its item)
    assert texts("划分为四种类型：１．单项业务企业，指占９５％以上；２．主导产品企业，指占７０％；３．相关联企业。下文") == [
        "划分为四种类型：１．单项业务企业，指占９５％以上；", "２．主导产品企业，指占７０％；", "３．相关联企业。", "下文"]
    assert texts("Steps: 1. Install it. 2. Run it. Then wait.") == ["Steps: 1. Install it. ", "2. Run it. ", "Then wait."]
    assert texts("类型：1. 单项业务；2. 主导产品。") == ["类型：1. 单项业务；", "2. 主导产品。"]
    # one number alone, numbers that do not run on, a number after a word, a blank line between: ends as before
    assert texts("Score: 3. Then we left.") == ["Score: 3. ", "Then we left."]
    assert texts("Steps: 1. Install it. 3. Run it.") == ["Steps: 1. ", "Install it. ", "3. ", "Run it."]
    assert texts("He scored 1. Then she scored 2. We won.") == ["He scored 1. ", "Then she scored 2. ", "We won."]
    assert texts("See: 1. First.\n\n2. Second.") == ["See: 1. ", "First.\n\n", "2. Second."]  # (a list item)
    # the digits' script and the dot must match (full-width １． does not run on to ASCII 2.)
    assert texts("类型：１．单项；2．主导。") == ["类型：１．", "单项；", "2．", "主导。"]


def test_chinese_with_spaces_and_ascii_marks():
    assert texts("你好。 再见。\u3000好的!我们走?行") == ["你好。 ", "再见。\u3000", "好的!", "我们走?", "行"]


def test_mixed_chinese_and_english():
    assert texts("I love 北京. It is great.我也喜欢。Dr. Li 说：好的。OK!") == [
        "I love 北京. ", "It is great.", "我也喜欢。", "Dr. Li 说：好的。", "OK!"]
    assert texts("我们用 Python 3.11 写代码。It works. 很好！") == [
        "我们用 Python 3.11 写代码。", "It works. ", "很好！"]


# --------------------------------------------------------------------------- lines and paragraphs


def test_newlines_end_sentences():
    s = check("roses are red\nviolets are blue\n\nsugar is sweet")
    assert s.texts() == ["roses are red\n", "violets are blue\n\n", "sugar is sweet"]
    assert s.breaks.tolist() == [BREAK_LINE, BREAK_PARAGRAPH]


def test_newline_after_abbreviation_still_ends():
    assert texts("Ask Dr.\nSmith") == ["Ask Dr.\n", "Smith"]


def test_line_terminator_variants():
    s = check("a\r\nb\r\n\r\nc\rd\u2028e\u2029f\x0cg\x85h")
    assert s.texts() == ["a\r\n", "b\r\n\r\n", "c\r", "d\u2028", "e\u2029", "f\x0c", "g\x85", "h"]
    assert s.breaks.tolist() == [BREAK_LINE, BREAK_PARAGRAPH, BREAK_LINE, BREAK_LINE, BREAK_PARAGRAPH,
                                 BREAK_PARAGRAPH, BREAK_LINE]


def test_blank_line_with_spaces_is_a_paragraph():
    s = check("One.  \n   \t\n  Two.")
    assert s.texts() == ["One.  \n   \t\n  ", "Two."]
    assert s.breaks.tolist() == [BREAK_PARAGRAPH]


def test_breaks_inside_a_line_are_none():
    assert breaks("One. Two. Three.\nFour.") == [BREAK_NONE, BREAK_NONE, BREAK_LINE]


def test_chat_log_lines():
    log = "alice: hi\nbob: hey there. how are you\nalice: fine!\n"
    assert texts(log) == ["alice: hi\n", "bob: hey there. ", "how are you\n", "alice: fine!\n"]


# --------------------------------------------------------------------------- Markdown


def test_markdown_headings_and_lists():
    text = "# Title. With a dot\nSome text. More text.\n\n- item one. Still one.\n- item two\n1. first\n2) second\n"
    s = check(text)
    assert s.texts() == ["# Title. With a dot\n", "Some text. ", "More text.\n\n", "- item one. ", "Still one.\n",
                         "- item two\n", "1. first\n", "2) second\n"]
    assert s.breaks.tolist() == [BREAK_LINE, BREAK_NONE, BREAK_HARD, BREAK_NONE, BREAK_HARD, BREAK_HARD, BREAK_HARD]


def test_markdown_heading_after_paragraph_is_hard():
    assert breaks("Intro.\n## Part two\nBody.") == [BREAK_HARD, BREAK_LINE]
    assert breaks("Intro.\n#hashtag\nBody.") == [BREAK_LINE, BREAK_LINE]
    assert breaks("Intro.\n####### seven\nBody.") == [BREAK_LINE, BREAK_LINE]


def test_markdown_ordered_list_marker_is_not_a_sentence_end():
    assert texts("1. Install it. Then run.\n2. Done.") == ["1. Install it. ", "Then run.\n", "2. Done."]
    assert texts("1、第一。第二\n2、好") == ["1、第一。", "第二\n", "2、好"]
    assert breaks("1、第一。第二\n2、好") == [BREAK_NONE, BREAK_HARD]


def test_markdown_code_fence_is_not_split_on_punctuation():
    text = "Before.\n```python\nx = a.b()  # Note. Really! Yes?\n\n# not a heading. no\n```\nAfter. Done."
    s = check(text)
    assert s.texts() == ["Before.\n", "```python\n", "x = a.b()  # Note. Really! Yes?\n\n",
                         "# not a heading. no\n", "```\n", "After. ", "Done."]
    assert s.breaks.tolist() == [BREAK_HARD, BREAK_LINE, BREAK_PARAGRAPH, BREAK_LINE, BREAK_HARD, BREAK_NONE]


def test_markdown_tilde_fence_and_fence_pairing():
    # a ``` line inside a ~~~ fence does not close it
    text = "~~~\ncode. x\n```\nmore. y\n~~~\nText. End."
    assert texts(text) == ["~~~\n", "code. x\n", "```\n", "more. y\n", "~~~\n", "Text. ", "End."]


def test_markdown_unclosed_fence_runs_to_the_end():
    assert texts("Text. Here.\n```\nunclosed. With. Dots.\n# not heading") == [
        "Text. ", "Here.\n", "```\n", "unclosed. With. Dots.\n", "# not heading"]


def test_markdown_inline_triple_backticks_are_no_fence():
    assert texts("```inline``` code. Then more.") == ["```inline``` code. ", "Then more."]


def test_markdown_rules_and_tables():
    text = "Para.\n\n***\n* * *\nNext.\n| a. b | c |\n|---|---|\n| d. e | f |\nAfter. End."
    s = check(text)
    assert s.texts() == ["Para.\n\n", "***\n", "* * *\n", "Next.\n", "| a. b | c |\n", "|---|---|\n",
                         "| d. e | f |\n", "After. ", "End."]
    assert s.breaks.tolist() == [BREAK_HARD, BREAK_HARD, BREAK_HARD, BREAK_HARD, BREAK_LINE, BREAK_LINE,
                                 BREAK_HARD, BREAK_NONE]


def test_markdown_setext_heading():
    s = check("Intro.\n\nTitle. Sub\n=====\nText.\n\n---\nMore.")
    assert s.texts() == ["Intro.\n\n", "Title. Sub\n", "=====\n", "Text.\n\n", "---\n", "More."]
    assert s.breaks.tolist() == [BREAK_HARD, BREAK_LINE, BREAK_LINE, BREAK_HARD, BREAK_HARD]


def test_markdown_bullets_need_a_space():
    assert breaks("Cold.\n-5 degrees.\n*emphasis*\n- item") == [BREAK_LINE, BREAK_LINE, BREAK_HARD]


def test_markdown_nested_list_indentation_goes_to_the_previous_item():
    assert texts("- a\n  - nested. Two\n") == ["- a\n  ", "- nested. ", "Two\n"]
    assert breaks("- a\n  - nested. Two\n") == [BREAK_HARD, BREAK_NONE]


# --------------------------------------------------------------------------- robustness


def test_emoji_combining_marks_and_zwj():
    assert texts("Hi \U0001f44b\U0001f3fd! Family \U0001f468\u200d\U0001f469\u200d\U0001f467 here. Cafe\u0301. Done.") == [
        "Hi \U0001f44b\U0001f3fd! ", "Family \U0001f468\u200d\U0001f469\u200d\U0001f467 here. ", "Cafe\u0301. ", "Done."]


def test_no_cut_before_a_combining_mark():
    s = check("End.\n\u0301x. Next")
    assert "\u0301" not in [s.text[i] for i in s.starts.tolist()]
    assert s.texts() == ["End.\n\u0301x. ", "Next"]


def test_lone_surrogates_and_nul():
    assert texts("\ud800. Lone \udc00 surrogate. X") == ["\ud800. ", "Lone \udc00 surrogate. ", "X"]
    assert texts("ab\x00cd. Ef\x00gh.\x00") == ["ab\x00cd. ", "Ef\x00gh.\x00"]


def test_crlf_is_never_split():
    s = check("a.\r\nb.\r\n")
    assert s.texts() == ["a.\r\n", "b.\r\n"]


def test_long_whitespace_runs():
    text = "One." + " " * 50 + "Two.\n" + "\n" * 30 + " " * 40 + "Three." + "\t" * 100
    s = check(text)
    assert s.texts() == ["One." + " " * 50, "Two.\n" + "\n" * 30 + " " * 40, "Three." + "\t" * 100]
    assert s.breaks.tolist() == [BREAK_NONE, BREAK_PARAGRAPH]


def test_huge_line_without_punctuation_is_one_fast_sentence():
    text = "word " * 2_000_000  # 10 MB, no mark, no newline
    t0 = time.perf_counter()
    s = split_sentences(text)
    elapsed = time.perf_counter() - t0
    assert len(s) == 1 and s.ends[0] == len(text)
    # ~0.1 s on one core: the bound only catches a quadratic scan (hours at 10 MB), not a slow machine
    assert elapsed < 30.0, elapsed


def test_huge_chinese_line_is_one_sentence():
    text = "中文没有标点" * 500_000
    s = split_sentences(text)
    assert len(s) == 1


def test_chinese_with_emoji_and_astral_ideographs():
    # characters outside the BMP take the 32-bit code-point path
    text = "好的😀。我们走吧！𠀀字？" * 3 + "完"
    assert texts(text)[:3] == ["好的😀。", "我们走吧！", "\U00020000字？"]
    assert len(check(text)) == 10


def test_many_tiny_sentences():
    s = check("Ab cd. " * 100_000)
    assert len(s) == 100_000
    assert s.texts()[:2] == ["Ab cd. ", "Ab cd. "]
    s = check("好。" * 100_000)
    assert len(s) == 100_000
    s = check("x\n" * 100_000)
    assert len(s) == 100_000 and set(s.breaks.tolist()) == {BREAK_LINE}


def test_only_punctuation():
    assert texts("...") == ["..."]
    assert texts("。。。") == ["。。。"]
    assert texts("?! ?!") == ["?! ?!"]  # a mark after a mark does not start a sentence
    assert texts("Wait. . . what? Yes ! No") == ["Wait. . . ", "what? ", "Yes ! ", "No"]
    assert texts("\n\n。\n\n") == ["\n\n。\n\n"]


# --------------------------------------------------------------------------- properties

_ZH = st.sampled_from(list("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"))
_EN_WORD = st.sampled_from(["the", "cat", "sat", "on", "an", "mat", "and", "then", "it", "rained", "over",
                            "London", "Paris", "number", "42", "is", "big", "small", "we", "left", "home"])
_CAP = st.sampled_from(["The", "Cats", "We", "London", "Paris", "It", "Then", "Nobody", "Rain"])


@st.composite
def english_sentences(draw):
    n = draw(st.integers(1, 12))
    out = []
    for _ in range(n):
        words = [draw(_CAP)] + draw(st.lists(_EN_WORD, min_size=0, max_size=8))
        mark = draw(st.sampled_from([".", "!", "?", "?!", "...", '."', "!)"]))
        space = draw(st.sampled_from([" ", "  ", "\t", " \u00a0"]))
        out.append(" ".join(words) + mark + space)
    return out


@st.composite
def chinese_sentences(draw):
    n = draw(st.integers(1, 12))
    out = []
    for _ in range(n):
        body = "".join(draw(st.lists(_ZH, min_size=1, max_size=15)))
        mark = draw(st.sampled_from(["。", "！", "？", "；", "……", "！？", "。”", "？」", "…』", "！）"]))
        space = draw(st.sampled_from(["", "", "", " ", "\u3000"]))
        out.append(body + mark + space)
    return out


@settings(max_examples=60, deadline=None)
@given(english_sentences())
def test_property_english_sentences_split_exactly(parts):
    assert texts("".join(parts)) == parts


@settings(max_examples=60, deadline=None)
@given(chinese_sentences())
def test_property_chinese_sentences_split_exactly(parts):
    assert texts("".join(parts)) == parts


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(english_sentences(), chinese_sentences()), min_size=1, max_size=5))
def test_property_mixed_paragraphs(paras):
    # paragraphs joined by blank lines: sentences stay exact, the joins are paragraph breaks
    pieces = []
    kinds = []
    for i, p in enumerate(paras):
        p = list(p)
        if i < len(paras) - 1:
            p[-1] = p[-1].rstrip(" \t\u3000\u00a0") + "\n\n"
        pieces += p
        kinds += [BREAK_NONE] * (len(p) - 1) + [BREAK_PARAGRAPH]
    s = check("".join(pieces))
    assert s.texts() == pieces
    assert s.breaks.tolist() == kinds[:-1]


_ALPHABET = st.sampled_from(
    list("abcXYZ019 .!?。！？；…，、：,;:\"'“”‘’「」『』（）()[]{}#`~-*_+=|>•\t\n\r\x0b\x0c\x85\u2028\u2029 \u3000\xa0")
    + ["\u0301", "\u200d", "\ufe0f", "\U0001f600", "\U0001f3fd", "\ud800", "\udc00", "\x00", "中", "文",
       "...", "```", "\n\n", "\r\n", "Dr. ", "e.g. ", "U.S. ", "3.14", "# ", "- ", "1. ", "| ", "---", "http://a.b/c?d=e"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=80).map("".join))
def test_property_tiling_on_random_text(text):
    check(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_property_tiling_on_any_unicode(text):
    check(text)


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=60))
def test_property_tiling_with_surrogates(text):
    check(text)


_PLAIN = st.sampled_from(list("ab XY中文.!?。，\t \u3000") + ["\n", "\r\n", "\n\n", "\u2028", "\u2029", "Dr. "])


@settings(max_examples=100, deadline=None)
@given(st.lists(_PLAIN, max_size=60).map("".join))
def test_property_every_line_break_ends_a_sentence_and_sets_the_gap(text):
    """Without Markdown, each gap's strength is the line-break weight of the sentence's trailing
    whitespace, and every line break followed by text starts a new sentence there."""
    s = check(text)
    first = len(text) - len(text.lstrip(WS_CHARS))
    starts = set(s.starts.tolist())
    i = 0
    while i < len(text):
        if text[i] in "\n\r\u2028\u2029":
            j = i
            while j < len(text) and text[j] in WS_CHARS:
                j += 1
            if i >= first and j < len(text):
                assert j in starts, (text, i)
            i = j
        else:
            i += 1
    for k, b in enumerate(s.breaks.tolist()):
        sent = s.texts()[k] if k else text[first: s.ends[0]]
        weight = sent.replace("\r\n", "\n").count("\n") + sent.count("\r") - sent.count("\r\n") \
            + sent.count("\u2028") + 2 * sent.count("\u2029")
        assert b == min(weight, BREAK_PARAGRAPH), (text, k)


@settings(max_examples=60, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join), st.lists(_ALPHABET, max_size=40).map("".join))
@example("a", "a\r\t# ")  # (a line that a CR alone opens: its tab is four columns of indent, "# " no heading)
def test_property_a_paragraph_break_separates_independent_texts(a, b):
    """Sentences never run across a blank line: splitting "a\\n\\nb" keeps a cut at b's start."""
    a = a.rstrip(WS_CHARS)
    b = b.lstrip(WS_CHARS)
    if not a or not b or unicodedata.category(b[0]) in ("Mn", "Me", "Cs") or ord(b[0]) in MARKS:
        return
    if "```" in a or "~~~" in a:  # an open fence in ``a`` legitimately swallows ``b``'s punctuation
        return
    text = a + "\n\n" + b
    assert len(a) + 2 in set(check(text).starts.tolist())


# --------------------------------------------------------------------------- throughput (slow)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "chunking"


def _corpus(name: str, target: int = 5_000_000) -> str:
    docs = [json.loads(line)["text"] for line in (DATA / f"{name}.corpus.jsonl").open(encoding="utf-8")]
    one = "\n\n".join(docs)
    reps = -(-target // len(one.encode("utf-8")))
    return "\n\n".join([one] * reps)


@pytest.mark.slow
@pytest.mark.parametrize("name, floor", [("chroma_general", 50), ("drcd_dev_article", 75)])
def test_throughput_on_5mb_corpora(name, floor):
    """MB/s (UTF-8) of split_sentences on ~5 MB built from the shared corpora, CPU time of the
    best of 5 runs, each on a fresh string (no cached hash or code points). Floors are half the
    targets, to catch regressions on a busy machine."""
    if not (DATA / f"{name}.corpus.jsonl").exists():
        pytest.skip("shared data not available")
    base = _corpus(name)
    mb = len(base.encode("utf-8")) / 1e6
    best = float("inf")
    for i in range(5):
        text = base + str(i)
        t0 = time.process_time()
        split_sentences(text)
        best = min(best, time.process_time() - t0)
    print(f"{name}: {mb:.2f} MB in {best * 1e3:.1f} ms CPU = {mb / best:.0f} MB/s")
    assert mb / best > floor


_ENUM_PIECES = st.sampled_from(["1. ", "2. ", "3.", "１．", "２．", "３．", "1．", "2．", "12. ", "13. ", ": ", "：",
                                "; ", "；", ", ", "。", ". ", "Word ", "item", "单项", " ", "\n", "\n\n", "(", "a1. ", "v", "9",
                                "\x15", "²", "٣"])


@settings(max_examples=300, deadline=None)
@example(["：", "²", "１．", "单项", "；", "²", "２．"])  # (a superscript is a digit but no decimal one: no crash)
@given(st.lists(_ENUM_PIECES, min_size=1, max_size=30))
def test_property_enumerators_read_alike_by_both_paths(pieces):
    # the scalar and the vectorised splitters read inline enumerators alike (check() compares them)
    check("".join(pieces))


_END_PIECES = st.sampled_from(list(".!?。！？；｡．…‥‼⁇⁈⁉\n\r\x0b\x0c\x85\u2028\u2029 ab中") + ["\r\n", "\r\r\n", "😀", "\x80", "é"])


@settings(max_examples=800, deadline=None)
@given(st.lists(_END_PIECES, max_size=80).map("".join), st.booleans())
def test_property_the_compiled_end_search_finds_what_numpy_finds(text, wide):
    """The line terminators and terminators with their kinds, found in one pass in C
    (:func:`logichunk.native.ends`), are the numpy search's (every mark, every line terminator, a CRLF as its
    LF, a CR at the end), in the text's own code unit width and in 4-byte units."""
    from unittest import mock

    from logichunk import native
    from logichunk.text.charclass import codepoints
    from logichunk.text.end_candidates import _ends, _units

    assert native.available(), native.status()
    cp = codepoints(text) if wide else _units(text)
    fast = _ends(text, cp)
    with mock.patch.object(native, "_load", lambda: None):
        slow = _ends(text, cp)
    for a, b in zip(fast, slow, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), text


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([" ", "\t", "\n", "\u3000", "\xa0", "a", "中", "\n\n", " " * 12, "😀"]), max_size=60)
       .map("".join), st.lists(st.integers(-2, 70), max_size=40))
def test_property_whitespace_is_skipped_alike_with_and_without_the_compiled_walk(text, offsets):
    """``_skip_ws`` (sorted offsets, repeated ones and runs of them inside one whitespace run) hands the whole
    query to the compiled walk, which skips what it walked already; the numpy passes solve the last query of
    each chain: the same offsets."""
    from unittest import mock

    from logichunk import native
    from logichunk.text.end_candidates import _skip_ws, _units
    from logichunk.text.sentence_chars import _flags

    cp = _units(text)
    q = np.array(sorted(offsets), np.int64)
    q = q[q >= 0]
    fast = _skip_ws(text, cp, _flags(), q)
    with mock.patch.object(native, "_load", lambda: None):
        slow = _skip_ws(text, cp, _flags(), q)
    assert fast.tolist() == slow.tolist(), (text, q)


_ABBR_PIECES = st.sampled_from(["Dr", "dr", "Mr", "U", "S", "e", "g", "a", "m", "No", "etc", "Fig", "Ph", "D", "Jan",
                                "x", "abcdefgh", "Español", "中", ".", ".", ".", " ", " ", "(", "\"", "!", "1", "😀"])


@settings(max_examples=800, deadline=None)
@given(st.lists(_ABBR_PIECES, max_size=40).map("".join), st.booleans(), st.integers(0, 2**32))
def test_property_the_compiled_abbreviation_test_reads_as_the_numpy_passes(text, wide, seed):
    """``_abbreviated`` on every dot of a text (known abbreviations, initials, letter-dot sequences, tokens too
    long or not standing alone, a dot at the text's start), what follows each drawn: in C
    (:func:`logichunk.native.abbreviated`) the numpy passes' answers."""
    from unittest import mock

    from logichunk import native
    from logichunk.text.abbreviations import _abbreviated
    from logichunk.text.charclass import codepoints
    from logichunk.text.end_candidates import _units
    from logichunk.text.sentence_chars import _flags

    cp = codepoints(text) if wide else _units(text)
    dots = np.flatnonzero(cp == 0x2E).astype(np.int64)
    rng = np.random.default_rng(seed)
    digit_next, lower_next = rng.random(dots.size) < 0.5, rng.random(dots.size) < 0.5
    fast = _abbreviated(cp, _flags(), dots, digit_next, lower_next)
    with mock.patch.object(native, "_load", lambda: None):
        slow = _abbreviated(cp, _flags(), dots, digit_next, lower_next)
    assert fast.dtype == slow.dtype and fast.tolist() == slow.tolist(), text


_WIDE_PIECES = st.sampled_from(["The cat sat. ", "Dr. Who ", "e.g. this", "1. ", "2. ", "３．１４", "中文句子。", "“Why?” he asked. ",
                                "é", "😀", "…", "\n", "\n\n", "  ", "\t", "# Title\n", "```\n", "- item\n", "| a | b |\n",
                                "wrapped prose goes on\n", "in lower case\n", "::\n", "> quoted\n", "\u2028", "ok"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_WIDE_PIECES, max_size=60).map("".join))
def test_property_the_kernels_on_a_text_s_code_points_split_as_numpy_on_its_narrow_units(text):
    """Where the kernels are compiled, a text that is not ASCII is split on its uint32 code points (the layout's
    array, no narrowing passes), else on uint16 units where it has no character past the BMP: the same sentences
    and breaks."""
    from unittest import mock

    from logichunk import native
    from logichunk.text.end_candidates import _units
    from logichunk.text.sentences import _split_vector

    assert native.available(), native.status()
    fast = _split_vector(text)
    with mock.patch.object(native, "_load", lambda: None):
        slow = _split_vector(text)
        narrow = _units(text)
    assert fast[0].tolist() == slow[0].tolist() and fast[1].tolist() == slow[1].tolist(), text
    if not text.isascii():
        assert _units(text).dtype == np.uint32
        assert narrow.dtype == (np.uint16 if max(map(ord, text)) < 0x10000 else np.uint32)


@pytest.mark.parametrize("entry", [
    "3 Utilities . . . . . . . . . . . . . . . . 5",
    "asn1_copy_node ........................ 11",
    "Preface . . . . . . . . . . . . . . . iii",
    "Appendix A Copying Information . . . . . 24  ",
])
def test_a_dot_leader_keeps_its_entry_and_page_number_one_line(entry):
    # a table of contents' (or an index's) dot leader is no ellipsis or full stop: the page number stays on
    # its entry's sentence, and the entry is a line of its own, not a line of wrapped prose running on
    toc = f"Table of Contents\n1 Introduction . . . . . . . . . . 1\n{entry}\n2.1 ASN.1 syntax . . . . . . . . 2\n"
    s = check(toc)
    assert s.texts() == ["Table of Contents\n", "1 Introduction . . . . . . . . . . 1\n", entry + "\n",
                         "2.1 ASN.1 syntax . . . . . . . . 2\n"]


def test_an_ellipsis_before_a_number_in_prose_still_ends_its_sentence():
    # (the number goes on in the line: no page number)
    text = "He counted to three... 4 more came in. Then . . . 5 of them left."
    assert check(text).texts()[:3] == ["He counted to three... ", "4 more came in. ", "Then . . . "]


def test_a_name_broken_after_its_underscore_goes_on_over_the_line():
    # TeX breaks a long identifier after an underscore and a PDF's text layer keeps the break: the name goes on
    text = "Returns: ASN1_ELEMENT_NOT_FOUND if there is an identifier with more than ASN1_MAX_\nNAME_SIZE characters.\n"
    assert check(text).texts() == [text]
    # (an emphasis's closing "_", an indented line under the name, letters spelled out in a transcript, a speaker's
    # turn under the name keep their line breaks)
    for kept in ("This is _important_\nAnother line.\n", "the value of ASN1_\n    INDENTED is set.\n",
                 "User Interface: a friend has a P_D_A_\nProject Manager: Okay .\n",
                 "Designer: we have plastic and LCD_SCREEN_\nMarketing: Ah .\n"):
        assert len(check(kept)) == 2


@settings(max_examples=300, deadline=None)
@given(st.lists(_END_PIECES, max_size=80).map("".join), st.booleans(), st.sampled_from([0x0E, 0x80, 0x100, 0x2029]))
def test_property_the_compiled_end_search_reads_a_short_kind_table_checked(text, wide, size):
    """With a kind table shorter than the units' range (the compiled search reads a covering one unchecked, a
    shorter one only below its end), a unit past the table's end is no candidate: the offsets and kinds a
    plain reading of each unit gives."""
    from logichunk import native
    from logichunk.text.charclass import codepoints
    from logichunk.text.end_candidates import _K_CR, _K_NL, _kind_table, _units

    assert native.available(), native.status()
    cp = codepoints(text) if wide else _units(text)
    table = _kind_table(size)
    got = native.ends(cp, table, _K_NL, _K_CR)
    kinds = [int(table[c]) if c < size else 0 for c in cp.tolist()]
    nl = [i for i, k in enumerate(kinds) if k >= _K_NL and not (k == _K_CR and i + 1 < len(kinds) and cp[i + 1] == 0x0A)]
    term = [i for i, k in enumerate(kinds) if 0 < k < _K_NL]
    assert got is not None
    assert [a.tolist() for a in got] == [nl, [kinds[i] for i in nl], term, [kinds[i] for i in term]], text
