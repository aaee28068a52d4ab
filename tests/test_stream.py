"""A text read in windows (chunk_stream, read_blocks, ChunkTree.head, the CLI's --window): the parts tile
the text exactly, ids run on, offsets are the whole text's, and a text of one window is chunk()'s tree."""

from __future__ import annotations

import io
import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import check_tree, chunk, chunk_stream, read_blocks
from logichunk.chunkers import stream as stream_mod
from logichunk.chunkers.stream import CARRY, merge_stats
from logichunk.cli import main
from logichunk.errors import InputError
from logichunk.text.decode import read_text

ROOT = Path(__file__).resolve().parents[1]
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")

WORDS = ["The cat sat.", "Ships sail north!", "Why not?", "word", "词语", "你好。", "他来了，", "\n", "\n\n",
         "# Title\n", "## 小节\n", "- item\n", "| a | b |\n", "```\ncode()\n```\n", " ", "\r\n", "x" * 90, "\f"]
texts = st.lists(st.sampled_from(WORDS), max_size=160).map(" ".join)


def _records(parts):
    return [r for p in parts for r in p.records()]


def assert_parts(parts, text, max_size):
    """Parts tile the text, each part's tree is a tree whose level-1 ids run on from the last part's, and
    every record's offsets are the whole text's."""
    assert "".join(p.tree.text for p in parts) == text
    pos, first = 0, 1
    for p in parts:
        assert p.offset == pos and p.end == pos + len(p.tree.text)
        check_tree(p.tree, first=first)
        first += len(p.tree.roots())
        pos = p.end
    recs = _records(parts)
    assert all(text[r["start"] : r["end"]] == r["text"] for r in recs)
    top = [r for r in recs if r["level"] == 1]
    assert [r["id"] for r in top] == [str(k + 1) for k in range(len(top))]
    assert "".join(r["text"] for r in top) == text
    assert [(c.span.start, c.span.end) for p in parts for c in p.chunks()] == [(r["start"], r["end"]) for r in recs]
    bubbles = [b for p in parts for b in p.bubbles]
    for r in top:
        if r["size"] > max_size:  # over the limit only where a bubble says the text could not be cut
            assert any(b.context["span"][0] <= r["start"] and r["end"] <= b.context["span"][1] for b in bubbles)


# 100 cases (200 took ~60 s of the suite on two cores: a window of a few characters is a chunk() per window)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.integers(1, 700), st.sampled_from([40, 120, 400]), st.integers(0, 2**32 - 1))
def test_parts_tile_the_text_whatever_the_window_and_however_it_arrives(text, window, max_size, seed):
    parts = list(chunk_stream(text, window=window, max_size=max_size))
    assert_parts(parts, text, max_size)
    # the same parts from the text in pieces of any size: windows are fixed by the text alone
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 12))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    again = list(chunk_stream(iter(pieces), window=window, max_size=max_size))
    assert _records(again) == _records(parts)
    if len(text) <= window:  # one window: chunk()'s own tree, from one call
        calls = []
        alone = list(chunk_stream(text, window=window, chunker=lambda t: calls.append(t) or chunk(t, max_size=max_size)))
        assert calls == ([text] if text else []) and len(alone) == len(calls)
        assert _records(parts) == (chunk(text, max_size=max_size).records() if text else [])


def test_a_long_text_keeps_nearly_every_cut_of_the_whole_text():
    text = (EN + "\n\n" + ZH + "\n\n") * 12
    whole = chunk(text, max_size=300)
    parts = list(chunk_stream(text, window=20_000, max_size=300))
    assert len(parts) >= 3
    assert_parts(parts, text, 300)
    cuts_whole = {c.span.end for c in whole.roots()}
    cuts_parts = {r["end"] for r in _records(parts) if r["level"] == 1}
    # the windows see less text than the whole: a cut can move, but most stay where they were
    assert len(cuts_whole & cuts_parts) >= 0.9 * len(cuts_whole)


def test_a_window_that_holds_too_few_chunks_reads_on():
    text = " ".join(["Short sentence here."] * 200)
    seen = []

    def chunker(t):
        seen.append(len(t))
        return chunk(t, max_size=400, levels=1)

    parts = list(chunk_stream(text, window=100, chunker=chunker))
    assert_parts(parts, text, 400)
    # no part is cut before its window held more than CARRY level-1 chunks (the last excepted)
    assert all(len(p.tree.roots()) >= 1 for p in parts)
    assert max(seen) > 100 * CARRY // 2  # the window grew until a decision could be kept


def test_bubbles_name_the_whole_texts_span():
    run = "没有标点的长文本" * 400  # no break anywhere: forced, with a bubble
    text = "A first sentence. " * 300 + run + " And the end."
    parts = list(chunk_stream(text, window=3000, max_size=500))
    assert_parts(parts, text, 500)
    bubbles = [b for p in parts for b in p.bubbles]
    assert bubbles
    for b in bubbles:
        a, e = b.context["span"]
        assert text[a:e].startswith(b.content.rstrip("…"))
        assert run in text[a - 200 : e + 200] or text[a:e] in run


def test_head_keeps_a_prefix_and_renumbers():
    tree = chunk(ZH, max_size=120)
    roots = tree.roots()
    k = len(roots) // 2
    part = tree.head(k, number_from=7)
    check_tree(part, first=7)
    assert part.text == ZH[: roots[k - 1].span.end]
    want = [r for r in tree.records() if int(r["id"].split(".")[0]) <= k]
    got = part.records()
    assert [(r["start"], r["end"], r["method"], r["text"]) for r in got] == \
        [(r["start"], r["end"], r["method"], r["text"]) for r in want]
    assert [r["id"].split(".", 1)[-1] for r in got if r["level"] > 1] == \
        [r["id"].split(".", 1)[-1] for r in want if r["level"] > 1]
    assert sum(part.stats["methods"].values()) == len(part)
    assert part.head(0).text == "" and len(part.head(0)) == 0
    with pytest.raises(ValueError):
        tree.head(len(roots) + 1)


def test_merge_stats_sums_counts_and_keeps_names():
    total: dict = {}
    merge_stats(total, {"methods": {"entropy": 2}, "bubbles": 1, "signal": "entropy"})
    merge_stats(total, {"methods": {"entropy": 1, "forced": 3}, "bubbles": 0, "signal": "other"})
    assert total == {"methods": {"entropy": 3, "forced": 3}, "bubbles": 1, "signal": "entropy"}


@pytest.mark.parametrize("kwargs, needle", [
    ({"window": 0}, "window must be"), ({"window": -3}, "window must be"), ({"window": 1.5}, "window must be"),
    ({"window": 10, "overlap": 5}, "overlap"), ({"window": 10, "chunker": chunk, "max_size": 9}, "not both"),
])
def test_bad_options_are_one_line(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        list(chunk_stream("Some text. More text.", **kwargs))


def test_pieces_that_are_not_text_are_refused():
    with pytest.raises(InputError, match="takes strings"):
        list(chunk_stream([b"bytes"], window=10))
    for source in (None, b"bytes are not text", bytearray(b"x"), 42):  # named as given, not as a piece of it
        with pytest.raises(InputError, match=f"str or an iterable of str.*got {type(source).__name__}$"):
            list(chunk_stream(source, window=10))


# ----------------------------------------------------------------------------- read_blocks


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "中", "😀", "\r\n", "\n", " ", "\t"]), min_size=0, max_size=6000).map("".join),
       st.booleans(), st.integers(-1, 10**6), st.sampled_from([0x80, 0xFF, 0xC3, 0xE4]), st.integers(1, 3000),
       st.booleans())
def test_read_blocks_is_read_text_in_pieces(s, bom, bad_at, bad, block, truncate):
    data = (b"\xef\xbb\xbf" if bom else b"") + s.encode()
    if bad_at >= 0 and data:
        i = bad_at % len(data)
        data = data[:i] + bytes([bad]) + data[i + 1 :]
    if truncate:
        data = data[:-1]

    def outcome(f):
        try:
            return f()
        except InputError as e:
            return ("error", str(e))

    want = outcome(lambda: read_text(data, source="x"))
    got = outcome(lambda: "".join(read_blocks(io.BytesIO(data), block=block, source="x")))
    assert got == want


def test_read_blocks_of_files(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(("第一行\r\n" * 5000).encode())
    assert "".join(read_blocks(f, block=999)) == f.read_bytes().decode()
    u16 = tmp_path / "u16.txt"
    u16.write_bytes("\ufeffHello, 世界\n".encode("utf-16-le"))  # read whole, as read_text reads it
    assert "".join(read_blocks(u16)) == "Hello, 世界\n"
    with pytest.raises(InputError, match="no such file"):
        list(read_blocks(tmp_path / "missing.txt"))
    with pytest.raises(InputError, match="is a directory"):
        list(read_blocks(tmp_path))
    with pytest.raises(ValueError):
        list(read_blocks(f, block=0))
    late = tmp_path / "late.txt"
    late.write_bytes(b"fine text. " * 20000 + b"\xff bad")
    pieces = read_blocks(late, block=4096)
    assert next(pieces).startswith("fine text.")  # text before the bad byte comes first ...
    with pytest.raises(InputError, match=f"not valid UTF-8 at byte {11 * 20000}"):
        list(pieces)  # ... and the error names the byte when it is reached


# ----------------------------------------------------------------------------- the CLI


def run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def long_file(tmp_path):
    p = tmp_path / "long.md"
    p.write_text((EN + "\n\n" + ZH + "\n\n") * 4, encoding="utf-8")
    return p


def test_cli_window_formats_agree_and_reproduce_the_file(long_file, capsys):
    text = long_file.read_text(encoding="utf-8")
    args = ["chunk", str(long_file), "--max-size", "300", "--window", "9000", "--quiet"]
    code, out, _ = run([*args, "--format", "jsonl"], capsys)
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    want = _records(chunk_stream(text, window=9000, max_size=300))
    # (the CLI's records add the bubble each forced piece is part of)
    assert [{k: v for k, v in r.items() if k not in ("source", "bubble")} for r in rows] == want
    code, out, _ = run([*args, "--format", "json"], capsys)
    doc = json.loads(out)
    assert [{k: v for k, v in r.items() if k != "bubble"} for r in doc["chunks"]] == want
    assert [r.get("bubble") for r in doc["chunks"]] == [r.get("bubble") for r in rows]
    assert doc["source"] == str(long_file) and doc["unit"] == "chars"
    assert doc["stats"]["windows"] > 1 and doc["stats"]["window"] == 9000
    assert sum(doc["stats"]["methods"].values()) == len(want)
    code, out, _ = run([*args, "--format", "tree"], capsys)
    assert len(out.splitlines()) == len(want) and out.splitlines()[-1].lstrip().startswith(want[-1]["id"])
    code, out, _ = run([*args, "--format", "markdown"], capsys)
    assert out.count(f"# {long_file}\n") == 1


def test_cli_reads_a_long_text_in_windows_with_a_note_and_whole_when_told(long_file, capsys, monkeypatch):
    text = long_file.read_text(encoding="utf-8")
    monkeypatch.setattr(stream_mod, "WHOLE_UP_TO", 5000)
    monkeypatch.setattr(stream_mod, "DEFAULT_WINDOW", 7000)
    code, out, err = run(["chunk", str(long_file), "--max-size", "300", "--format", "jsonl"], capsys)
    assert code == 0 and "chunked in windows of 7,000" in err and "--window 0" in err
    assert [json.loads(x)["end"] for x in out.splitlines()] == \
        [r["end"] for r in _records(chunk_stream(text, window=7000, max_size=300))]
    code, out, err = run(["chunk", str(long_file), "--max-size", "300", "--format", "jsonl", "--window", "0"], capsys)
    assert "windows" not in err
    assert [json.loads(x)["end"] for x in out.splitlines()] == [r["end"] for r in chunk(text, max_size=300).records()]
    # --overlap needs the whole text: read whole by default, refused with an explicit window
    code, out, err = run(["chunk", str(long_file), "--max-size", "300", "--format", "jsonl", "--overlap", "20"], capsys)
    assert code == 0 and "windows" not in err and "overlap_start" in out
    code, out, err = run(["chunk", str(long_file), "--max-size", "300", "--overlap", "20", "--window", "3000",
                          "--format", "jsonl"], capsys)  # (--format tree writes no overlap: said, and ignored)
    assert code != 0 and "overlap" in err and len(err.strip().splitlines()) == 1


def test_cli_many_inputs_in_json_are_the_list_json_dump_writes(tmp_path, capsys, long_file):
    (tmp_path / "d").mkdir()
    for k, body in enumerate([ZH, EN, "One line."]):
        (tmp_path / "d" / f"{k}.txt").write_text(body, encoding="utf-8")
    code, out, _ = run(["chunk", str(tmp_path / "d"), "--max-size", "200", "--format", "json", "--quiet"], capsys)
    docs = json.loads(out)
    assert out == json.dumps(docs, ensure_ascii=False, indent=2) + "\n"
    # a windowed input among whole ones: still one valid list, in input order
    code, out, _ = run(["chunk", str(tmp_path / "d" / "0.txt"), str(long_file), str(tmp_path / "d" / "2.txt"),
                        "--max-size", "200", "--format", "json", "--window", "6000", "--quiet"], capsys)
    docs = json.loads(out)
    assert [d["source"] for d in docs] == [str(tmp_path / "d" / "0.txt"), str(long_file), str(tmp_path / "d" / "2.txt")]
    assert docs[1]["stats"]["windows"] > 1 and "windows" not in docs[0]["stats"]


def test_cli_bad_bytes_far_into_a_windowed_file(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Plain sentence here. " * 60000 + b"\xfe tail")  # past the first block read
    good = tmp_path / "good.txt"
    good.write_text("Fine. Also fine.", encoding="utf-8")
    code, out, err = run(["chunk", str(bad), "--window", "200000", "--format", "json", "--quiet"], capsys)
    assert code != 0 and "not valid UTF-8 at byte 1260000" in err
    doc = json.loads(out)  # the document written so far is closed, with the error in it
    assert "not valid UTF-8" in doc["error"] and doc["chunks"]
    code, out, err = run(["chunk", str(bad), str(good), "--window", "200000", "--format", "json", "--quiet"], capsys)
    docs = json.loads(out)
    assert code == 1 and "error" in docs[0] and docs[1]["source"] == str(good)


def test_cli_window_from_stdin(capsys, monkeypatch):
    text = (ZH + "\n") * 6
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8"))
    code, out, _ = run(["chunk", "-", "--window", "4000", "--max-size", "200", "--format", "jsonl"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and "".join(r["text"] for r in rows if r["level"] == 1) == text
    assert all(r["source"] == "<stdin>" for r in rows)


@pytest.mark.parametrize("value", ["-1", "abc"])
def test_cli_bad_window_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit):
        main(["chunk", "-", "--window", value])
    assert "window" in capsys.readouterr().err


def test_cli_segment_reads_a_long_text_in_windows(long_file, capsys, monkeypatch):
    from logichunk import segment

    text = long_file.read_text(encoding="utf-8")
    code, out, _ = run(["segment", str(long_file), "--window", "9000", "--format", "jsonl", "--quiet"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    want = _records(chunk_stream(text, window=9000, chunker=segment))
    assert code == 0 and [{k: v for k, v in r.items() if k != "source"} for r in rows] == want
    assert [r["id"] for r in rows] == [str(k + 1) for k in range(len(rows))] and "".join(r["text"] for r in rows) == text
    code, out, _ = run(["segment", str(long_file), "--window", "9000", "--format", "json", "--quiet"], capsys)
    assert json.loads(out)["chunks"] == want
    monkeypatch.setattr(stream_mod, "WHOLE_UP_TO", 5000)
    code, out, err = run(["segment", str(long_file), "--format", "jsonl"], capsys)
    assert "divided in windows of 1,048,576" in err
    # --topics counts the whole text's topics: read whole by default, refused with a window
    code, out, err = run(["segment", str(long_file), "--format", "jsonl", "--topics", "3"], capsys)
    assert code == 0 and "windows" not in err
    assert [json.loads(x)["end"] for x in out.splitlines()] == [r["end"] for r in segment(text, topics=3).records()]
    code, out, err = run(["segment", str(long_file), "--topics", "3", "--window", "9000"], capsys)
    assert code != 0 and "--topics" in err and len(err.strip().splitlines()) == 1


def test_page_numbers_run_on_through_the_parts():
    """A text of pages (form feeds, as a PDF is read): each part's records name the whole text's pages."""
    pages = [f"Page {k} text. The valve on page {k} is checked by hand. " * 8 + f"\n{k}\n" for k in range(1, 40)]
    text = "\f".join(pages)
    whole = {(r["start"], r["end"]): r["pages"] for r in chunk(text, max_size=200).records()}
    parts = list(chunk_stream(text, window=3000, max_size=200))
    assert len(parts) > 3 and parts[-1].pages_before == text[: parts[-1].offset].count("\f")
    recs = [r for p in parts for r in p.records()]
    shared = [r for r in recs if (r["start"], r["end"]) in whole]
    assert len(shared) > 0.9 * len(recs)
    assert all(r["pages"] == whole[(r["start"], r["end"])] for r in shared)
    assert max(r["pages"][1] for r in recs) == 39
