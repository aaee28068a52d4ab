"""Bad input anywhere a user hands us text or a setting: a clear one-line error or a recorded fallback, never a
traceback. Each test here failed before its fix (session 38's adversarial pass, issue 18)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk, level_sizes, segment
from logichunk.chunkers.baselines import _packed_cuts, recursive_spans
from logichunk.chunkers.logic_chain import MAX_LEVELS, SIZE_CAP
from logichunk.cli import main
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.store import Store, sha256
from logichunk.store.replace import document_sha256, replace_text
from logichunk.text.decode import read_blocks, read_text
from logichunk.text.end_candidates import _NL_CHARS
from logichunk.text.sentences import BREAK_LINE, BREAK_PARAGRAPH, split_lines

TEXT = "Hello world. 你好世界。\nSecond line here.\n"


def _read(how: str, data: bytes, codec: str) -> str:
    if how == "text":
        return read_text(data, source="f.txt", encoding=codec)
    return "".join(read_blocks(io.BytesIO(data), source="f.txt", encoding=codec, block=64))


# ------------------------------------------------------------------ a codec named that the bytes cannot answer


@pytest.mark.parametrize("how", ["text", "blocks"])
@pytest.mark.parametrize("codec", ["utf-16", "utf-32"])
@pytest.mark.parametrize("order", ["le", "be"])
def test_utf16_or_32_named_without_a_byte_order_mark_is_one_line(how, codec, order):
    # before: read_blocks (the CLI's reader) raised UnicodeError("UTF-16 stream does not start with BOM") as a
    # traceback; read_text read big-endian bytes in the machine's order: mojibake, silently
    data = TEXT.encode(f"{codec}-{order}")
    with pytest.raises(InputError, match=rf"^f\.txt: {codec.upper()} without a byte-order mark; .*{codec}-le or "
                                         rf"{codec}-be") as e:
        _read(how, data, codec)
    assert "\n" not in str(e.value)
    assert _read(how, data, f"{codec}-{order}") == TEXT  # its order named: read exactly
    bom = {"utf-16": {"le": b"\xff\xfe", "be": b"\xfe\xff"}, "utf-32": {"le": b"\xff\xfe\x00\x00",
                                                                       "be": b"\x00\x00\xfe\xff"}}[codec][order]
    assert _read(how, bom + data, codec) == TEXT  # with its mark: as before


@pytest.mark.parametrize("how", ["text", "blocks"])
@pytest.mark.parametrize("codec", ["punycode", "undefined"])
def test_a_codec_that_fails_without_an_offset_is_one_line(how, codec):
    # before: UnicodeError (not UnicodeDecodeError) escaped as a traceback
    with pytest.raises(InputError, match=rf"^f\.txt: cannot be read as {codec} \(.*\), the encoding named") as e:
        _read(how, b"plain text. more text.\n", codec)
    assert "\n" not in str(e.value)


def test_cli_chunk_of_utf16_named_without_a_mark_is_exit_2_and_one_line(tmp_path, capsys):
    f = tmp_path / "u16.txt"
    f.write_bytes(TEXT.encode("utf-16-be"))
    code = main(["chunk", str(f), "--encoding", "utf-16", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "UTF-16 without a byte-order mark" in err


# ------------------------------------------------------------------ levels


@pytest.mark.parametrize("levels", [1000, 10**5, 10**30])
def test_any_number_of_levels_is_read_as_the_deepest_that_can_differ(levels):
    # before: levels=10**5 raised OverflowError (a traceback in the CLI: --levels 100000); 1,000 levels took
    # 25x the time of 10 for the same tree
    text = "Hello world. This is a test. 你好世界。另一句话！\n\nNew para here. " * 8
    assert len(level_sizes(300, levels)) == MAX_LEVELS
    assert [(c.id, c.span) for c in chunk(text, max_size=300, levels=levels)] == \
           [(c.id, c.span) for c in chunk(text, max_size=300, levels=MAX_LEVELS)]


def test_the_deepest_level_has_a_limit_of_one_whatever_the_maximum():
    assert level_sizes(SIZE_CAP, MAX_LEVELS)[-2:] == (1, 1)  # so deeper levels would only repeat it


_ALPHABET = st.sampled_from(list("的一是在不了有和人这中大为上个国abcdefghij xyz。！？；…，.!?;:,\n\n\t#-|`>😀👍🏽\u200d\u0301\x00"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(_ALPHABET, max_size=400), st.sampled_from([(60, 30, 12, 1), (40, 1), (25, 10), (1,)]),
       st.sampled_from(["chars", "bytes"]))
def test_a_level_whose_limit_is_its_parents_cuts_nothing_more(text, sizes, unit):
    # why MAX_LEVELS may stand for any deeper count: the levels past it all repeat a limit of 1
    a = chunk(text, sizes=sizes, unit=unit)
    b = chunk(text, sizes=sizes + (sizes[-1],) * 2, unit=unit)
    assert [(c.id, c.span) for c in a] == [(c.id, c.span) for c in b]


# ------------------------------------------------------------------ a document's whole text replaced by blanks


@pytest.mark.parametrize("blanks", ["   ", "\n\u3000\t\n"])
def test_a_documents_text_replaced_by_only_whitespace_is_refused_as_adding_it_is(tmp_path, capsys, blanks):
    # before: the service's PUT /documents/ID and `logichunk edit --document` stored a document of blanks (adding
    # one is refused everywhere: "text is only whitespace"); only "" was refused
    db = str(tmp_path / "s.db")
    (tmp_path / "a.md").write_text(TEXT, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "a.md"), "--db", db, "--embedder", "hash:64", "--quiet"]) == 0
    store = Store.open(db, settings=Settings(db=db, embedder="hash:64"))
    try:
        [(doc, *_)] = store.documents()
        with pytest.raises(InputError, match=r"^the text is only whitespace: delete the document instead$"):
            replace_text(store, doc, blanks)
        with pytest.raises(InputError, match=r"^the text is empty: delete the document instead$"):
            replace_text(store, doc, "")
        assert document_sha256(store, doc) == sha256(TEXT)  # nothing written
    finally:
        store.close()
    capsys.readouterr()
    code = main(["edit", "--document", doc, "--text", blanks, "--db", db, "--embedder", "hash:64"])
    err = capsys.readouterr().err
    assert code == 2 and "the text is only whitespace" in err and "Traceback" not in err


# ------------------------------------------------------------------ lines ended otherwise than by LF

_EN = ["How do I read a CSV file into a pandas DataFrame?", "Use pandas.read_csv and it returns a DataFrame.",
       "Can I filter rows where price is above 100?", "Filter with a boolean mask on the price column."]
_ZH = ["饺子馅怎么调才好吃？猪肉白菜馅的比例是多少？", "猪肉和白菜大约三比二，白菜要先挤干水分。",
       "饺子皮用什么面粉？水要放多少？", "用中筋面粉，和好后醒面半小时。"]


@pytest.mark.parametrize("sep", ["\r", "\u2028", "\x85", "\x0b"])
def test_segment_by_lines_reads_every_line_ending_the_splitter_reads(sep):
    # before: split_lines read only LF, so a transcript with classic-Mac CR endings (or LS, NEL) was one unit: one topic
    lf = segment("\n".join(_EN + _ZH) + "\n", units="lines")
    other = segment(sep.join(_EN + _ZH) + sep, units="lines")
    assert len(other.roots()) > 1
    assert [c.span for c in other.roots()] == [c.span for c in lf.roots()]


_LINE_CHARS = st.sampled_from(list("ab 你。\t\u3000") + ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"])


@settings(max_examples=100, deadline=None)
@given(st.lists(_LINE_CHARS, max_size=60).map("".join))
def test_split_lines_units_are_one_line_each_and_tile_the_text(text):
    s = split_lines(text)
    assert "".join(text[a:b] for a, b in zip(s.starts, s.ends, strict=True)) == text
    for a, b in zip(s.starts, s.ends, strict=True):
        unit = text[a:b].lstrip()  # (the first unit holds the blank lines before it too)
        first = min((i for i, ch in enumerate(unit) if ch in _NL_CHARS and unit[i:i + 2] != "\r\n"), default=len(unit))
        assert not unit[first + 1:].strip(), repr(unit)  # after its line: only blank lines


@settings(max_examples=100, deadline=None)
@given(st.lists(_LINE_CHARS, max_size=60).map("".join))
def test_split_lines_reads_a_form_feed_or_u2029_as_a_paragraph_break(text):
    """The gap after a unit is a paragraph break when a blank line follows its line, or a line ends in a form
    feed or U+2029, as split_sentences and the layout read them (before: a blank line only)."""
    s = split_lines(text)
    for k in range(1, s.starts.size):
        unit = text[int(s.starts[k - 1]) : int(s.starts[k])]
        tail = unit.lstrip()  # (the first unit holds the blank lines before it too)
        ends = [ch for i, ch in enumerate(tail) if ch in _NL_CHARS and tail[i:i + 2] != "\r\n"]
        para = len(ends) >= 2 or "\x0c" in ends or "\u2029" in ends
        assert s.breaks[k - 1] == (BREAK_PARAGRAPH if para else BREAK_LINE), (repr(text), k)


def test_segment_by_lines_parts_a_transcript_at_form_feeds_only_as_at_blank_lines():
    """A transcript whose parts are set apart by form feeds reads as one set apart by blank lines."""
    assert split_lines("a\fb\u2029c\nd").breaks.tolist() == [BREAK_PARAGRAPH, BREAK_PARAGRAPH, BREAK_LINE]
    blank = segment("\n".join(_EN) + "\n\n" + "\n".join(_ZH) + "\n", units="lines")
    ff = segment("\n".join(_EN) + "\n\x0c" + "\n".join(_ZH) + "\n", units="lines")
    assert [c.span for c in ff.roots()] == [c.span for c in blank.roots()]


# ------------------------------------------------------------------ the recursive baseline on many long words


class _Reads(np.ndarray):
    """A prefix array that records how many elements each fancy-index read takes."""

    reads: list[int]

    def __getitem__(self, key):
        if isinstance(key, np.ndarray) and key.ndim == 1 and key.dtype.kind in "iu":
            self.reads.append(int(key.size))
        return np.asarray(super().__getitem__(key))


def test_packed_cuts_read_only_the_allowed_offsets_inside_their_piece():
    # before: every call read p[allowed] over the whole text, once per piece without a separator: the recursive
    # baseline on 1,000-deep '>' quote lines took 0.5 s at 0.5 MB, 10.6 s at 2 MB, over 10 minutes at 10 MB
    text = "".join(">" * 700 + " quoted.\n" for _ in range(40))
    p = np.arange(len(text) + 1, dtype=np.int64).view(_Reads)
    p.reads = []
    allowed = np.arange(1, len(text), dtype=np.int64)
    a, b = 709 * 10, 709 * 10 + 700
    assert _packed_cuts(p, allowed, a, b, 300) == [a + 300, a + 600]
    assert max(p.reads) <= b - a
    spans = recursive_spans(text, 512)  # the piece-by-piece caller: the same tiling
    assert spans[0, 0] == 0 and spans[-1, 1] == len(text) and (spans[1:, 0] == spans[:-1, 1]).all()
    assert (spans[:, 1] - spans[:, 0]).max() <= 512
