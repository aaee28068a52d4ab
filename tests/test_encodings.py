"""Legacy encodings: GB18030/GBK read as Chinese when the bytes are not UTF-8 (said, never silent), any Python
codec when named (``encoding=``, ``--encoding``), strictly: a byte the codec cannot read is a one-line error with
its offset, never a replacement character. Latin-1/cp1252 text is never taken for GB18030."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.integrations import kb
from logichunk.scale.workers import IngestWorker
from logichunk.store import Store
from logichunk.store.ingest import ingest
from logichunk.text.decode import (
    DETECT_BYTES,
    check_encoding,
    plausibly_chinese,
    read_blocks,
    read_path,
    read_text,
)

ZH = ("# 长城\n\n长城是中国古代的军事防御工程。它东起山海关，西至嘉峪关，全长两万多公里。\n\n"
      "## 历史\n\n春秋战国时期，各国为了防御，开始修筑长城。秦始皇统一中国后，把各段长城连接起来。\n")
ZH_TW = "長城是中國古代的軍事防禦工程。它東起山海關，西至嘉峪關。\n"
JA = "日本語のテキストです。これは試験の文章です。\n"
HASH = ["--embedder", "hash:64"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def decoded(data: bytes, **kw) -> tuple[str, list[str]]:
    how: list[str] = []
    return read_text(data, source="f.txt", on_decoding=how.append, **kw), how


# ----------------------------------------------------------------------------- the automatic reading


@pytest.mark.parametrize("codec", ["gbk", "gb18030", "gb2312"])
def test_chinese_not_utf8_is_read_as_gb18030_and_said(codec):
    text, how = decoded(ZH.encode(codec))
    assert text == ZH and how == ["gb18030"]
    seen: list[str] = []
    assert "".join(read_blocks(io.BytesIO(ZH.encode(codec)), on_decoding=seen.append)) == ZH and seen == ["gb18030"]


def test_utf8_is_still_utf8_and_says_nothing():
    assert decoded(ZH.encode("utf-8")) == (ZH, [""])


@pytest.mark.parametrize(("text", "codec"), [
    ("naïve résumé", "latin-1"), ("Größe", "latin-1"), ("Füße und Größe", "cp1252"), ("Café crème.", "cp1252"),
    ("“smart quotes” – dash", "cp1252"), ("Привет", "cp1251"), (ZH_TW, "big5"), (JA, "shift_jis"),
])
def test_other_encodings_are_refused_not_misread(text, codec):
    """Each of these decodes as GB18030 or fails to: none reads as Chinese ("Größe" would be "Gr鲞e")."""
    data = text.encode(codec)
    with pytest.raises(InputError, match=r"^f\.txt: not valid UTF-8 at byte \d+ \(0x..\); .*`encoding=`") as e:
        read_text(data, source="f.txt")
    assert "\n" not in str(e.value)
    assert read_text(data, encoding=codec) == text  # named, read exactly


def test_plausibility_rule_on_its_own():
    assert plausibly_chinese("长城是中国古代的军事防御工程。")
    assert not plausibly_chinese("Gr鲞e")  # Latin-1 "Größe": a level-2 hanzi between letters
    assert not plausibly_chinese("abc")  # nothing but ASCII: nothing to go by
    assert not plausibly_chinese("（）、。")  # punctuation alone, no hanzi


def test_a_bad_byte_after_chinese_names_the_byte():
    data = ZH.encode("gbk") + b"\xff\xfe tail"
    at = len(ZH.encode("gbk"))
    for read in (lambda: read_text(data, source="f.txt"), lambda: "".join(read_blocks(io.BytesIO(data), source="f.txt"))):
        with pytest.raises(InputError, match=rf"^f\.txt: not UTF-8, and read as GB18030 .* at byte {at} \(0xff\)"):
            read()


# ----------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("codec", [None, "big5", "shift_jis", "utf-16-le"])
def test_a_character_split_between_blocks_is_joined(codec):
    text = "x" + ((ZH_TW if codec == "big5" else JA if codec == "shift_jis" else ZH) * 2000)
    data = text.encode(codec or "gb18030")
    assert len(data) > DETECT_BYTES + 3 * 4095
    cut = [b for b in range(DETECT_BYTES, len(data), 4095)]  # where the blocks end (the first: the window)
    assert any(not _whole(data[:b], codec or "gb18030") for b in cut)  # some boundary falls inside a character
    seen: list[str] = []
    pieces = list(read_blocks(io.BytesIO(data), block=4095, encoding=codec, on_decoding=seen.append))
    assert len(pieces) > 3 and "".join(pieces) == text == read_text(data, encoding=codec)
    assert seen == [codec or "gb18030"]


def _whole(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return False
    return True


def test_a_bad_byte_far_into_a_huge_file_is_one_line_with_its_offset(tmp_path):
    good = (ZH * 800).encode("gbk")
    p = tmp_path / "big.txt"
    p.write_bytes(good + b"\x80 tail\n")
    pieces = read_blocks(p, block=8191)
    assert next(pieces).startswith("# 长城")  # the text before the bad byte comes first ...
    with pytest.raises(InputError) as e:
        list(pieces)  # ... and the error names the byte when it is reached
    assert f"not valid GB18030 at byte {len(good)} (0x80)" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match=f"at byte {len(good)} "):
        read_path(p)


# ----------------------------------------------------------------------------- a codec named


def test_a_wrong_codec_named_is_one_line_with_the_offset():
    with pytest.raises(InputError, match=r"^f\.txt: not valid big5 at byte \d+ \(0x..\), the encoding named") as e:
        read_text(ZH.encode("gbk"), source="f.txt", encoding="big5")
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match=r"^f\.txt: not valid ascii at byte 2 \(0xb3\)"):  # (after "# ")
        "".join(read_blocks(io.BytesIO(ZH.encode("gbk")), source="f.txt", encoding="ascii"))


def test_codec_names():
    assert check_encoding("CP936") == "gbk" and check_encoding("latin-1") == "iso8859-1" and check_encoding(None) is None
    for bad, said in (("x-nope", "unknown encoding 'x-nope'"), ("base64", "not a text encoding"), ("", "codec name")):
        with pytest.raises(InputError, match=said):
            read_text(b"text", encoding=bad)
    # a codec that is not ASCII-compatible still refuses binary bytes (checked on the text it decodes to)
    with pytest.raises(InputError, match="binary"):
        read_text("\x00\x01\x02\x03".encode("utf-16-le") * 50, encoding="utf-16-le")


_LEVEL1 = [c for lead in range(0xB0, 0xD8) for trail in range(0xA1, 0xFF)
           for c in [bytes([lead, trail]).decode("gb2312", "ignore")] if c][::7]  # (every 7th: 537 hanzi)
_RUN = st.lists(st.sampled_from(_LEVEL1), min_size=2, max_size=12).map("".join)
_SENTENCE = st.tuples(_RUN, st.sampled_from(["", "，", "。", "、", "；", "！", "？", "“", "”", "（", "）"]),
                      st.sampled_from(["", " ", "\n", "\n\n", "Python", " 2024 ", "AI"])).map("".join)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SENTENCE, min_size=1, max_size=12).map("".join))
def test_random_chinese_in_gb18030_reads_back_exactly(text):
    """Sentences of common hanzi (GB2312 level 1: runs of 2-12, as words and phrases run), each ended by a
    punctuation mark or not, between ASCII words, digits, spaces and newlines."""
    raw = text.encode("gb18030")
    assume(not _whole(raw, "utf-8"))  # (bytes that are UTF-8 too are read as UTF-8)
    assert decoded(raw) == (text, ["gb18030"])


# ----------------------------------------------------------------------------- the interfaces


def test_cli_chunk_reads_gbk_says_so_and_names_other_codecs(tmp_path, capsys):
    gbk, big5 = tmp_path / "gbk.txt", tmp_path / "big5.txt"
    gbk.write_bytes(ZH.encode("gbk"))
    big5.write_bytes(ZH_TW.encode("big5"))
    code, out, err = cli(capsys, "chunk", str(gbk), "--format", "jsonl", "--max-size", "60")
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and all(r["decoded"] == "gb18030" and ZH[r["start"]:r["end"]] == r["text"] for r in rows)
    assert err.count("read as GB18030") == 1 and str(gbk) in err
    _, _, err = cli(capsys, "chunk", str(gbk), "--quiet")
    assert "GB18030" not in err
    code, _, err = cli(capsys, "chunk", str(big5))
    assert code == 2 and err.count("\n") == 1 and "not valid UTF-8" in err and "--encoding" in err
    code, out, err = cli(capsys, "chunk", str(big5), "--encoding", "big5", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and "".join(r["text"] for r in rows if r["level"] == 1) == ZH_TW and rows[0]["decoded"] == "big5"
    assert "GB18030" not in err  # (named: nothing guessed, nothing to say)
    with pytest.raises(SystemExit) as e:  # (the parser's one line)
        main(["segment", str(big5), "--encoding", "x-nope"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "unknown encoding 'x-nope'" in err


def test_cli_ingest_of_a_gbk_file_says_it_and_again_is_a_no_op(tmp_path, capsys):
    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes(ZH.encode("gbk"))
    db = str(tmp_path / "kb.db")
    code, out, err = cli(capsys, "ingest", str(gbk), "--db", db, *HASH, "--format", "jsonl")
    rep = json.loads(out)
    assert code == 0 and rep["documents"] == 1 and rep["decoded"] == [f"{gbk}: gb18030"] and "read as GB18030" in err
    code, out, _ = cli(capsys, "ingest", str(gbk), "--db", db, *HASH, "--format", "jsonl")
    rep = json.loads(out)
    assert code == 0 and rep["documents"] == 0 and rep["unchanged"] == [str(gbk)]
    code, out, _ = cli(capsys, "search", "长城", "--db", db, *HASH, "--format", "jsonl")
    assert code == 0 and "长城" in out
    gbk.write_bytes((ZH + "\n## 今天\n\n长城是世界文化遗产。\n").encode("gbk"))  # changed: merged in place
    code, out, _ = cli(capsys, "ingest", str(gbk), "--db", db, *HASH, "--format", "jsonl")
    rep = json.loads(out)
    assert code == 0 and rep["updated"] == [str(gbk)] and rep["added"] and rep["documents"] == 0
    code, _, err = cli(capsys, "ingest", str(gbk), "--db", db, *HASH, "--encoding", "big5")  # another reading: refused
    assert code == 2 and "not valid big5" in err and err.count("\n") == 1


def test_a_refusal_names_the_encoding_as_each_reader_takes_it(tmp_path, capsys):
    """A Python caller is told the keyword it can pass (``encoding=``), never the CLI's flag; the CLI, whose verbs
    read through the same functions, says ``--encoding NAME``, for the one file and for one of several skipped."""
    bad, good = tmp_path / "tw.txt", tmp_path / "ok.txt"
    bad.write_bytes(ZH_TW.encode("big5"))
    good.write_text("Fine text here.\n", encoding="utf-8")
    db = str(tmp_path / "py.db")
    store = Store.open(db, settings=Settings(db=db, embedder="hash:64"))
    for read in (lambda: read_path(bad), lambda: "".join(read_blocks(bad)), lambda: read_text(bad.read_bytes()),
                 lambda: ingest(store, [str(bad)])):
        with pytest.raises(InputError, match="not valid UTF-8") as e:
            read()
        assert "(the `encoding=` argument: gbk" in str(e.value) and "--encoding" not in str(e.value)
    assert any("`encoding=`" in r for r in ingest(store, [str(bad), str(good)]).refused)
    code, _, err = cli(capsys, "chunk", str(bad))
    assert code == 2 and "(--encoding NAME: gbk" in err and "encoding=" not in err
    code, _, err = cli(capsys, "chunk", str(tmp_path), "--quiet")  # one of several: skipped, said in the CLI's words
    assert code == 1 and "skipped" in err and "--encoding NAME" in err and "encoding=" not in err
    code, out, _ = cli(capsys, "ingest", str(tmp_path), "--db", str(tmp_path / "cli.db"), *HASH, "--format", "jsonl")
    assert code == 1 and any("--encoding NAME" in r for r in json.loads(out)["refused"])
    with pytest.raises(InputError, match="`encoding=`"):  # (the CLI's words end with its run)
        read_path(bad)
    [(_, _, err, _)] = IngestWorker(None, "", None, 1, speaker="cli").check([(0, str(bad))])  # (a Ray ingest's)
    assert "--encoding NAME" in err
    bubbles = tmp_path / "log.jsonl"  # a log logichunk writes, in UTF-8: no encoding to name
    bubbles.write_bytes(b'{"context": {}}\n{"text": "caf\xe9"}\n')
    code, _, err = cli(capsys, "bubbles", str(bubbles))
    assert code == 2 and err.rstrip().endswith("convert the file to UTF-8") and "encoding" not in err


def test_ray_workers_read_and_report_as_the_serial_ingest(tmp_path):
    p = tmp_path / "tw.txt"
    p.write_bytes(ZH_TW.encode("big5"))
    [(i, h, err, how)] = IngestWorker(None, "", None, 1, encoding="big5").check([(0, str(p))])
    assert (i, err, how) == (0, "", "big5") and h
    [(_, h, err, how)] = IngestWorker(None, "", None, 1).check([(0, str(p))])
    assert not h and "not valid UTF-8" in err


def test_mcp_add_file_reads_a_codec_named(tmp_path):
    (tmp_path / "ja.txt").write_bytes(JA.encode("shift_jis"))
    (tmp_path / "zh.txt").write_bytes(ZH.encode("gb18030"))
    stores = kb.Stores(Settings(db=str(tmp_path / "kb.db"), embedder="hash:64"))
    folders, project = kb.Folders([str(tmp_path)]), stores.get(None, create=True)
    out = kb.add_file(project, "ja.txt", folders, kb.Limits(), encoding="shift_jis")
    assert out["decoded"] == "shift_jis" and out["chars"] == len(JA)
    assert kb.add_file(project, "zh.txt", folders, kb.Limits())["decoded"] == "gb18030"
    with pytest.raises(InputError, match="not valid UTF-8") as e:
        kb.add_file(project, "ja.txt", folders, kb.Limits())
    # what to do in the tool's words: its argument, not the CLI's flag
    assert "add_file's `encoding` argument" in str(e.value) and "--encoding" not in str(e.value)
    with pytest.raises(InputError, match="unknown encoding"):
        kb.add_file(project, "ja.txt", folders, kb.Limits(), encoding="nope")


def test_eval_results_a_log_logichunk_writes_name_no_encoding(tmp_path):
    """``eval report`` takes no --encoding: its results log is refused only with "convert the file to UTF-8"."""
    from logichunk.eval.report import load_rows
    from logichunk.text.decode import speaking_as

    bad = tmp_path / "results.jsonl"
    bad.write_bytes(b'{"task": "caf\xe9"}\n')
    with speaking_as("cli"), pytest.raises(InputError, match="not valid UTF-8") as e:  # (as `logichunk eval` reads it)
        load_rows([bad])
    assert str(e.value).endswith("convert the file to UTF-8") and "encoding" not in str(e.value)


def test_a_refusal_pickles_as_it_was_said():
    """A process pool or Ray sends an exception pickled: it read the message as ``what`` and said what to do twice."""
    import pickle

    from logichunk.text.decode import Undecoded

    for interface in ("cli", "service", None):
        e = Undecoded("f.txt: not valid UTF-8 at byte 0 (0xaa)", interface)
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is Undecoded and str(back) == str(e) and back.what == e.what
