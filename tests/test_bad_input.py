"""Bad input anywhere a user hands us text or a setting: a clear one-line error or a recorded fallback, never a
traceback. Each test here failed before its fix (session 38's adversarial pass, issue 18)."""

from __future__ import annotations

import io

import pytest

from logichunk.cli import main
from logichunk.errors import InputError
from logichunk.text.decode import read_blocks, read_text

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
