"""Decoding input bytes: UTF-8 (with or without BOM), UTF-16/32 with BOM, refusal of binary data and
invalid UTF-8 with a useful one-line message, file errors from read_path."""

from __future__ import annotations

import codecs
import io
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError, LogichunkError
from logichunk.text.decode import SNIFF_BYTES, read_blocks, read_path, read_text


def test_utf8_plain_and_empty():
    assert read_text("Hello, 世界. Ünïcödé ✓ 👋🏽".encode()) == "Hello, 世界. Ünïcödé ✓ 👋🏽"
    assert read_text(b"") == ""
    assert read_text(bytearray(b"abc")) == "abc"
    assert read_text(memoryview(b"abc")) == "abc"


def test_text_is_never_altered_except_the_bom():
    raw = "a\r\nb\rc\u2028d\ufeffe\u00a0f\x1b[31mred\x1b[0m\t\x0c".encode()
    assert read_text(raw) == raw.decode("utf-8")
    # only a *leading* BOM is dropped; one inside the text stays
    assert read_text(codecs.BOM_UTF8 + "x\ufeffy".encode()) == "x\ufeffy"


def test_utf8_bom_is_dropped():
    assert read_text(codecs.BOM_UTF8 + "你好".encode()) == "你好"
    assert read_text(codecs.BOM_UTF8) == ""


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_bom(codec):
    text = "Hello 世界 👋 \n second line"
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
           "utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}.get(codec, b"")
    data = bom + text.encode(codec)
    assert read_text(data) == text


def test_invalid_utf8_names_the_byte_offset():
    with pytest.raises(InputError, match=r"^doc\.txt: not valid UTF-8 at byte 3 \(0xff\)"):
        read_text(b"abc\xffdef", source="doc.txt")
    # truncated multi-byte sequence at the end; the BOM counts in the offset
    with pytest.raises(InputError, match=r"at byte 5 \(0xe4\)"):
        read_text(codecs.BOM_UTF8 + b"ab\xe4\xb8")
    # Latin-1 text is not silently accepted
    with pytest.raises(InputError, match=r"at byte 3 \(0xe9\)"):
        read_text("café au lait".encode("latin-1"))
    # a lone surrogate encoded in UTF-8 is invalid too
    with pytest.raises(InputError, match=r"at byte 1 \(0xed\)"):
        read_text(b"a\xed\xa0\x80b")


def test_invalid_utf8_message_is_one_line_and_default_source():
    with pytest.raises(InputError) as info:
        read_text(b"ok \xc3\x28")
    msg = str(info.value)
    assert msg.startswith("<input>: ") and "\n" not in msg and "byte 3" in msg


def test_invalid_utf16_after_bom():
    with pytest.raises(InputError, match=r"invalid UTF-16 at byte 2"):
        read_text(codecs.BOM_UTF16_LE + b"a")  # odd length
    with pytest.raises(InputError, match=r"invalid UTF-16 at byte 2"):
        read_text(codecs.BOM_UTF16_LE + b"\x00\xdc")  # lone low surrogate


def test_binary_with_nul_is_refused():
    with pytest.raises(InputError, match=r"^img\.png: looks like a binary file$"):
        read_text(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", source="img.png")


def test_utf16_without_bom_gets_a_hint():
    with pytest.raises(InputError, match=r"looks like a binary file \(or UTF-16 without a byte-order mark\)"):
        read_text("hello world".encode("utf-16-le"))


def test_many_control_characters_are_binary():
    with pytest.raises(InputError, match="looks like a binary file"):
        read_text(bytes(range(1, 32)) * 20)
    # a few controls in normal text are fine (<= 10 %)
    text = "a" * 95 + "\x01\x02\x03\x04\x05"
    assert read_text(text.encode()) == text
    with pytest.raises(InputError, match="looks like a binary file"):
        read_text(("a" * 80 + "\x01" * 20).encode())


def test_only_the_first_8k_are_sniffed():
    late_nul = b"a" * SNIFF_BYTES + b"\x00tail"
    assert read_text(late_nul) == late_nul.decode()
    with pytest.raises(InputError, match="binary"):
        read_text(b"a" * (SNIFF_BYTES - 1) + b"\x00")


def test_binary_after_a_utf16_bom_is_refused():
    with pytest.raises(InputError, match="looks like a binary file"):
        read_text(codecs.BOM_UTF16_LE + "\x00\x01\x02".encode("utf-16-le") * 50)


def test_input_error_is_a_value_error_and_a_logichunk_error():
    with pytest.raises(ValueError):
        read_text(b"\x00")
    with pytest.raises(LogichunkError):
        read_text(b"\x00")


def test_read_text_rejects_str():
    with pytest.raises(TypeError):
        read_text("already text")  # type: ignore[arg-type]



def test_read_blocks_given_no_binary_file_says_what_it_takes(tmp_path):
    """A file opened in text mode (``open(path)``, ``sys.stdin``) failed deep in the sniffing with "startswith first
    arg must be str or a tuple of str, not bytes", and None with "'NoneType' object has no attribute 'read'"."""
    import io

    from logichunk import read_blocks

    p = tmp_path / "t.txt"
    p.write_text("First. Second.\n", encoding="utf-8")
    with open(p, encoding="utf-8") as text_file:
        for bad in (text_file, io.StringIO("First."), None, 5):
            with pytest.raises(TypeError, match=r"^read_blocks expects a path or a file opened in binary mode "
                                                r"\(open\(path, 'rb'\), sys.stdin.buffer\), got \w+$"):
                list(read_blocks(bad))  # type: ignore[arg-type]
    with open(p, "rb") as binary:
        assert "".join(read_blocks(binary)) == "First. Second.\n" == "".join(read_blocks(p))


# --------------------------------------------------------------------------- read_path


def test_read_path_reads_and_decodes(tmp_path):
    p = tmp_path / "doc.md"
    p.write_bytes(codecs.BOM_UTF8 + "# 标题\n正文。".encode())
    assert read_path(p) == "# 标题\n正文。"
    assert read_path(str(p)) == "# 标题\n正文。"


def test_read_path_missing_file(tmp_path):
    p = tmp_path / "nope.txt"
    with pytest.raises(InputError, match=r"nope\.txt: no such file$"):
        read_path(p)


def test_read_path_directory(tmp_path):
    with pytest.raises(InputError, match=r"is a directory, not a file$"):
        read_path(tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads anything")
def test_read_path_permission_denied(tmp_path):
    p = tmp_path / "secret.txt"
    p.write_text("x")
    p.chmod(0)
    try:
        with pytest.raises(InputError, match=r"secret\.txt: permission denied$"):
            read_path(p)
    finally:
        p.chmod(0o600)


def test_read_path_bad_content_names_the_file(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("naïve".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1\.txt: not valid UTF-8 at byte 2"):
        read_path(p)


def test_read_path_other_os_errors_are_one_line(tmp_path):
    p = tmp_path / ("x" * 300)  # name too long for the file system
    with pytest.raises(InputError) as info:
        read_path(p)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(p))


# --------------------------------------------------------------------------- properties

_TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=300)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_property_utf8_round_trip(text):
    assert read_text(text.encode()) == text
    assert read_text(codecs.BOM_UTF8 + text.encode()) == text


# unassigned and private-use code points are what 8-bit bytes behind a stray mark decode to: refused
_ASSIGNED_TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn", "Co")), max_size=300)


@settings(max_examples=80, deadline=None)
@given(_ASSIGNED_TEXT, st.sampled_from(["utf-16", "utf-32"]))
def test_property_bom_encodings_round_trip(text, codec):
    # a line break, as text files have: without any character below U+0100, a few short texts
    # (U+4141 "䅁" is the bytes "AA") are indistinguishable from ASCII behind a stray mark, refused
    text += "\n"
    assert read_text(text.encode(codec)) == text


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_property_any_bytes_decode_or_raise_input_error(data):
    try:
        out = read_text(data)
    except InputError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(out, str)


# --------------------------------------------------------------------------- issue 21: FF FE in front of non-UTF-16


@pytest.mark.parametrize("body", [
    b"Hello world, this is plain ASCII text.\n",
    "Caf\u00e9 cr\u00e8me, na\u00efve r\u00e9sum\u00e9 \u2014 UTF-8 after a stray mark.\n".encode(),
    "\u4e3b\u89d2\u7b2c\u4e00\u6b21\u89c1\u5230\u5e08\u7236\u3002\n".encode(),  # Chinese in UTF-8
    "D\u00e9j\u00e0 vu: caf\u00e9, \u00e9t\u00e9, pi\u00f1ata, \u00fcber, \u00e5ngstr\u00f6m.\n".encode("latin-1"),
])
@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_a_utf16_mark_before_bytes_that_are_not_utf16_is_refused(bom, body):
    data = bom + body + (b"\n" if len(body) % 2 else b"")
    with pytest.raises(InputError, match=r"^f\.txt: .*(not UTF-16 text|invalid UTF-16)") as e:
        read_text(data, source="f.txt")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text", ["\u4e3b\u89d2\u7b2c\u4e00\u6b21\u89c1\u5230\u5e08\u7236\u3002",  # no ASCII at all
                                  "Plain English.\n", "\u0394\u03b5\u03bb\u03c4\u03b1 \u05e9\u05dc\u05d5\u05dd\n"])
@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-16-le"])
def test_real_utf16_with_a_mark_is_still_read(text, codec):
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(codec, b"")
    assert read_text(bom + text.encode(codec)) == text


@pytest.mark.parametrize("pack, what", [
    (lambda b: __import__("gzip").compress(b), "gzip"),
    (lambda b: __import__("bz2").compress(b), "bzip2"),
    (lambda b: __import__("lzma").compress(b), "xz"),
])
def test_a_compressed_file_is_read_as_the_text_it_holds(pack, what, tmp_path):
    # a docs folder's README.md.gz: read as the text it holds, its offsets those of that text
    text = "# Title\r\n\n第一段。Some text.\n" * 500
    data = pack(text.encode())
    assert read_text(data, source="README.md.gz") == text
    for block in (1, 777, 1 << 20):
        assert "".join(read_blocks(io.BytesIO(data), block=block, source="README.md.gz")) == text
    (tmp_path / "README.md.gz").write_bytes(data)
    assert read_path(tmp_path / "README.md.gz") == "".join(read_blocks(tmp_path / "README.md.gz")) == text
    # bad bytes inside are counted in the decompressed text, and said so
    bad = pack(b"fine\n" * 10 + b"\xff")
    for read in (lambda: read_text(bad, source="b.gz"), lambda: "".join(read_blocks(io.BytesIO(bad), source="b.gz"))):
        with pytest.raises(InputError, match=rf"^b\.gz: not valid UTF-8 at byte 50 of the decompressed text \({what}\)"):
            read()
    # a cut-off file is damaged, in one line
    cut = data[: len(data) // 2]
    for read in (lambda: read_text(cut, source="c.gz"), lambda: "".join(read_blocks(io.BytesIO(cut), source="c.gz"))):
        with pytest.raises(InputError, match=rf"^c\.gz: a damaged {what} file"):
            read()
    # a compressed file inside is not opened again: named, with what to do
    with pytest.raises(InputError, match=r"looks like a binary file: gzip-compressed; decompress it first"):
        read_text(pack(__import__("gzip").compress(b"text\n" * 50)), source="d.gz.gz")
    # text that merely starts with the same letters is text
    assert read_text(b"BZh is how a bzip2 stream begins.\n", source="x.txt").startswith("BZh")
    assert "".join(read_blocks(io.BytesIO(b"BZh9 is a bzip2 stream's opening.\n"))).startswith("BZh9")


def test_a_zstd_file_is_named_as_one_in_its_one_line_error():
    with pytest.raises(InputError, match=r"^n\.zst: looks like a binary file: zstd-compressed; decompress it first"):
        read_text(b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 4, source="n.zst")


def test_a_zip_archive_says_to_extract_its_text():
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", "<w:document/>" * 20)
    with pytest.raises(InputError, match=r"zip archive \(or a \.docx, \.xlsx, \.epub\); extract its text first"):
        read_text(buf.getvalue(), source="report.docx")
