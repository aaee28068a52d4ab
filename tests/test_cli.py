"""The CLI as a user meets it: every verb and format, stdin, folders, and bad input as one line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from logichunk.cli import main

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "examples" / "zh_public_domain.txt"
EN = ROOT / "examples" / "en_public_domain.md"


def run(args, capsys, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_chunk_jsonl_spans_reproduce_the_file(capsys):
    code, out, _ = run(["chunk", str(ZH), "--max-size", "300", "--format", "jsonl"], capsys)
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    text = ZH.read_text(encoding="utf-8")
    assert {"id", "level", "parent", "start", "end", "text", "method", "source"} <= set(rows[0])
    top = [r for r in rows if r["level"] == 1]
    assert "".join(r["text"] for r in top) == text
    assert all(text[r["start"] : r["end"]] == r["text"] for r in rows)
    assert max(r["size"] for r in top) <= 300


def test_selection_global_keeps_titles_with_their_text_and_local_is_the_old_rule(capsys):
    """The quick start's example: the global decision never ends a chunk with the next text's
    title; --selection local (the earlier rule, kept for comparison) does, at this size."""
    titles = ("桃花源记（陶渊明）", "论语·学而（节选）", "故乡（鲁迅，1921，节选）")

    def ends_in_title(sel: str) -> list[str]:
        code, out, _ = run(["chunk", str(ZH), "--max-size", "300", "--format", "jsonl", "--selection", sel], capsys)
        assert code == 0
        return [r["id"] for r in map(json.loads, out.splitlines()) if r["text"].rstrip().endswith(titles)]

    assert ends_in_title("global") == []
    assert ends_in_title("local") != []


def test_chunk_tree_format_shows_ids_and_sizes(capsys):
    code, out, _ = run(["chunk", str(EN), "--max-size", "800", "--levels", "2"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("1 ")
    assert any(line.startswith("  1.1 ") for line in lines)
    assert "chars" in lines[0]


def test_chunk_json_and_markdown(capsys):
    code, out, _ = run(["chunk", str(EN), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["unit"] == "chars" and doc["chunks"] and doc["bubbles"] == []
    code, out, _ = run(["chunk", str(EN), "--format", "markdown", "--max-size", "600"], capsys)
    assert code == 0 and out.startswith("# ") and "\n## 1 · " in out and "\n> " in out


def test_stdin_with_token_unit(capsys, monkeypatch):
    data = ("The river rose overnight. Farmers moved cattle to higher ground. " * 30).encode()
    code, out, _ = run(["chunk", "-", "--unit", "tokens", "--max-size", "64", "--format", "jsonl"], capsys, data, monkeypatch)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows and rows[0]["source"] == "<stdin>"
    assert all(r["size"] <= 64 for r in rows if r["level"] == 1)


def test_folder_recursive(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("第一篇。内容在此。", encoding="utf-8")
    (tmp_path / "two.md").write_text("# Two\n\nSecond file.", encoding="utf-8")
    (tmp_path / "skip.bin").write_bytes(b"\x00\x01")
    code, out, _ = run(["chunk", str(tmp_path), "--format", "jsonl"], capsys)
    sources = {json.loads(line)["source"] for line in out.splitlines()}
    assert code == 0 and sources == {str(tmp_path / "a" / "one.txt"), str(tmp_path / "two.md")}


def test_a_folder_of_short_files_gives_what_each_file_alone_gives(tmp_path, capsys):
    """Many files through the model-free cascade share one pass (chunk_many): same lines, same order."""
    texts = ["Cats purr softly at night. Dogs bark loudly in the yard.\n\nMarkets fell today. " * 3,
             "猫在夜里轻轻地叫。股市今天大幅下跌！投资者卖出了债券。" * 8, "One line.", "x" * 700]
    for i, t in enumerate(texts):
        (tmp_path / f"f{i}.txt").write_text(t, encoding="utf-8")
    args = ["--max-size", "120", "--format", "jsonl", "--quiet", "--bubbles", str(tmp_path / "b.jsonl")]
    code, out, _ = run(["chunk", str(tmp_path), *args], capsys)
    alone = []
    for i in range(len(texts)):
        c, o, _ = run(["chunk", str(tmp_path / f"f{i}.txt"), *args], capsys)
        assert c == 0
        alone.extend(o.splitlines())
    assert code == 0 and out.splitlines() == alone and len(alone) > len(texts)


def test_folder_with_a_bad_file_goes_on_and_reports(tmp_path, capsys):
    (tmp_path / "good.txt").write_text("Fine text.", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 au lait")
    code, out, err = run(["chunk", str(tmp_path), "--format", "jsonl"], capsys)
    assert code == 1
    assert "bad.txt" in err and "Traceback" not in err
    assert json.loads(out.splitlines()[0])["text"] == "Fine text."


def test_empty_input_is_an_error_alone_and_a_note_in_a_folder(tmp_path, capsys):
    # README: bad input, empty included, is one line on stderr and a non-zero exit code
    f = tmp_path / "empty.txt"
    f.write_bytes(b"")
    code, out, err = run(["chunk", str(f)], capsys)
    assert code != 0 and out == "" and "empty" in err and "Traceback" not in err
    # in a folder, the other files are still chunked: the empty one is a note
    (tmp_path / "full.txt").write_text("Some text. More text.", encoding="utf-8")
    code, out, err = run(["chunk", str(tmp_path), "--format", "jsonl"], capsys)
    assert code == 0 and f"skipped {f}: empty input" in err
    assert [json.loads(x)["text"] for x in out.splitlines()] == ["Some text. More text."]
    # segment reads a folder alike: the empty file noted, no failure; alone, an error
    code, out, err = run(["segment", str(tmp_path), "--format", "jsonl"], capsys)
    assert code == 0 and f"skipped {f}: empty input" in err and json.loads(out.splitlines()[0])["text"]
    code, out, err = run(["segment", str(f)], capsys)
    assert code != 0 and out == "" and "empty" in err


@pytest.mark.parametrize(
    "content, needle",
    [(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"), (b"ok then \xff\xfe\xfa bad", "UTF-8")],
)
def test_bad_bytes_are_one_clear_line(tmp_path, content, needle):
    f = tmp_path / "input.txt"
    f.write_bytes(content)
    p = subprocess.run([sys.executable, "-m", "logichunk.cli", "chunk", str(f)], capture_output=True, text=True)
    assert p.returncode == 2
    assert needle in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_missing_file_and_bad_flags(capsys):
    code, _, err = run(["chunk", "/no/such/file.txt"], capsys)
    assert code == 2 and "file.txt" in err
    code, _, err = run(["chunk", str(ZH), "--sizes", "100,abc"], capsys)
    assert code == 2 and "--sizes" in err
    code, _, err = run(["chunk", str(ZH), "--sizes", "100,200"], capsys)
    assert code == 2 and "grow" in err
    for typo in ("300,,100", "", "300,100,"):  # a typo is no request for the defaults (it was read as one)
        code, out, err = run(["chunk", str(ZH), "--sizes", typo], capsys)
        assert code == 2 and "--sizes" in err and out == ""


def test_bubbles_are_recorded_next_to_output_and_listed(tmp_path, capsys):
    src = tmp_path / "line.txt"
    src.write_text("无标点" * 400, encoding="utf-8")
    out = tmp_path / "chunks.jsonl"
    code, _, err = run(["chunk", str(src), "--max-size", "200", "--format", "jsonl", "--out", str(out)], capsys)
    bubbles = Path(f"{out}.bubbles.jsonl")
    assert code == 0 and bubbles.exists() and "bubble" in err
    code, listing, _ = run(["bubbles", str(bubbles)], capsys)
    assert code == 0 and "forced_split" in listing and listing.strip().endswith("1 bubble(s)")
    code, listing, _ = run(["bubbles", str(bubbles), "--format", "jsonl"], capsys)
    row = json.loads(listing.splitlines()[0])
    assert row["context"]["final_method"] == "forced" and row["context"]["source"] == str(src)


def test_a_bubbles_file_that_cannot_be_written_fails_before_any_chunk(tmp_path, capsys):
    """--bubbles is written after the chunks: a path in no folder used to fail at the very end, its chunks
    printed; now it is refused first, as --out is."""
    src = tmp_path / "line.txt"
    src.write_text("无标点" * 400, encoding="utf-8")
    code, out, err = run(["chunk", str(src), "--max-size", "200", "--bubbles", str(tmp_path / "no" / "b.jsonl")],
                         capsys)
    assert code == 2 and out == "" and "--bubbles" in err and "not a file in an existing folder" in err
    code, out, err = run(["chunk", str(src), "--max-size", "200", "--bubbles", str(src)], capsys)
    assert code == 2 and out == "" and "is also an input" in err and src.read_text(encoding="utf-8") == "无标点" * 400


def test_the_tree_view_escapes_control_characters(tmp_path, capsys):
    """The table views print the start of each chunk: an ESC or BEL from the file must not reach the terminal
    as itself (it coloured or beeped the user's terminal); the chunks themselves are the file's text."""
    f = tmp_path / "esc.txt"
    f.write_text("Red \x1b[31mtext\x07 here. Next sentence.\n", encoding="utf-8")
    code, out, _ = run(["chunk", str(f)], capsys)  # (--format tree is the default)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\\x1b[31mtext\\x07" in out
    code, out, _ = run(["chunk", str(f), "--format", "jsonl"], capsys)
    assert json.loads(out.splitlines()[0])["text"] == f.read_text(encoding="utf-8")


@pytest.mark.parametrize("window", [[], ["--window", "1000"]])
def test_the_markdown_view_escapes_control_characters(tmp_path, capsys, window):
    """--format markdown is for reading (each leaf quoted line by line): an ESC, BEL or C1 CSI from the file is
    written as an escape, not as itself, which drove the reader's terminal; tabs and line breaks stay."""
    f = tmp_path / "esc.txt"
    f.write_text("Red \x1b[31mtext\x07 here.\tNext \x9b2J sentence.\n\nA second paragraph.\n", encoding="utf-8")
    code, out, _ = run(["chunk", str(f), "--format", "markdown", *window], capsys)
    assert code == 0 and not set(out) & {"\x1b", "\x07", "\x9b"}
    assert "> Red \\x1b[31mtext\\x07 here.\tNext \\x9b2J sentence.\n" in out and "> A second paragraph.\n" in out


@pytest.mark.parametrize("argv, needle", [
    (["chunk", "x.txt", "--max-size", "abc"], "logichunk chunk: error: argument --max-size: invalid int value"),
    (["nope"], "invalid choice: 'nope'"),
    (["search"], "logichunk search: error: the following arguments are required: query"),
    (["eval", "segmentation", "--limit", "x"], "logichunk eval segmentation: error: argument --limit"),
])
def test_a_bad_argument_is_one_line(argv, needle, capsys):
    """argparse printed the verb's whole usage block (some fourteen lines) over the error: now the error alone,
    naming where to read more, and exit status 2."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and needle in err and "--help)" in err


def test_version_verb(capsys):
    code, out, _ = run(["version", "--format", "jsonl"], capsys)
    assert code == 0 and json.loads(out)["logichunk"]


def test_entry_point_runs_as_installed_script():
    p = subprocess.run(["logichunk", "chunk", str(ZH), "--max-size", "300", "--format", "jsonl"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.count("\n") > 5


def test_core_verbs_do_not_import_the_extension_packages():
    """`logichunk chunk` should not pay for the store, eval, service, graph and memory imports; the
    full help still lists their verbs."""
    code = ("import sys, contextlib, io; from logichunk.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['version'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[1:2] in (['store'], ['eval'], ['service'], ['memory'])))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    r = subprocess.run([sys.executable, "-m", "logichunk.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert all(v in r.stdout for v in ("chunk", "ingest", "serve", "memory", "eval", "graph"))


def test_out_is_replaced_only_when_the_run_succeeds_and_is_never_an_input(tmp_path, capsys):
    keep = tmp_path / "keep.jsonl"
    keep.write_text("earlier results\n", encoding="utf-8")
    code, _, err = run(["chunk", str(tmp_path / "missing.txt"), "--out", str(keep)], capsys)
    assert code == 2 and keep.read_text(encoding="utf-8") == "earlier results\n"
    (tmp_path / "bad.txt").write_bytes(b"ok \xff bad")
    assert run(["chunk", str(tmp_path / "bad.txt"), "--out", str(keep)], capsys)[0] == 2
    assert keep.read_text(encoding="utf-8") == "earlier results\n"
    src = tmp_path / "self.txt"
    src.write_text("A text. Another sentence.", encoding="utf-8")
    code, _, err = run(["chunk", str(src), "--out", str(src)], capsys)
    assert code == 2 and "also an input" in err and src.read_text(encoding="utf-8") == "A text. Another sentence."
    assert run(["chunk", str(src), "--out", str(keep), "--format", "jsonl", "--quiet"], capsys)[0] == 0
    assert json.loads(keep.read_text(encoding="utf-8").splitlines()[0])["text"] == "A text. Another sentence."
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")] == []  # no temporary left


@pytest.mark.parametrize("content, needle", [(bytes(range(256)) * 4, "binary"), (b'[1, 2]\n', "not a bubble"),
                                             (b'{"context": "x"}\n', "not a bubble"), (b"ok \xff\n", "UTF-8")])
def test_bubbles_of_a_bad_file_is_one_line(tmp_path, capsys, content, needle):
    f = tmp_path / "b.jsonl"
    f.write_bytes(content)
    code, out, err = run(["bubbles", str(f)], capsys)
    assert code == 2 and needle in err and "Traceback" not in err and out == ""


def test_arguments_that_are_not_utf8_are_one_line(capsys):
    bad = b"abc\xffdef".decode("utf-8", "surrogateescape")  # what Python makes of such a shell argument
    code, _, err = run(["chunk", "-", "--bubbles", bad], capsys)
    assert code == 2 and "--bubbles: not valid UTF-8" in err


@pytest.mark.parametrize("argv, needle", [
    (["chunk", str(EN), "--method", "cliff", "--embedder", "hash:7"], "must be >= 8"),
    (["serve", "--port", "99999", "--embedder", "hash"], "0-65535"),
])
def test_bad_numbers_in_options_are_one_line(argv, needle, capsys, tmp_path):
    code, _, err = run([*argv, *(["--db", str(tmp_path / "s.db")] if argv[0] == "serve" else [])], capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_flat_methods_take_the_first_of_sizes(capsys):
    code, out, _ = run(["chunk", str(EN), "--method", "fixed", "--sizes", "400,150,60", "--format", "jsonl",
                        "--quiet"], capsys)
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and max(r["size"] for r in rows) == 400 and {r["level"] for r in rows} == {1}


def test_parent_child_takes_its_limits_from_the_settings_like_ingest(capsys, tmp_path):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("max_parent_size = 300\nmin_parent_size = 50\nchild_max_size = 120\nchild_target_size = 80\n"
                   "child_min_size = 20\n", encoding="utf-8")
    one_block = tmp_path / "one.txt"  # one paragraph of 2,235 characters: the limit decides the parents
    one_block.write_text("".join(ZH.read_text(encoding="utf-8").split()) * 3, encoding="utf-8")
    args = ["chunk", str(one_block), "--method", "parent-child", "--embedder", "hash", "--format", "jsonl"]
    code, out, _ = run(args + ["--config", str(cfg)], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows
    assert max(r["size"] for r in rows if r["level"] == 1) <= 300
    assert max(r["size"] for r in rows if r["level"] == 2) <= 120
    code, out, _ = run(args, capsys)  # without the file: the defaults (1500 / 400) make larger parents
    default_top = [json.loads(line)["size"] for line in out.splitlines() if json.loads(line)["level"] == 1]
    assert max(default_top) > 300
    # a size on the command line still wins over the settings
    code, out, _ = run(args + ["--config", str(cfg), "--max-size", "600"], capsys)
    assert max(json.loads(line)["size"] for line in out.splitlines() if json.loads(line)["level"] == 1) > 300


@pytest.mark.parametrize("method", ["fixed", "parent-child"])
def test_levels_with_a_method_that_ignores_them_says_so(capsys, method):
    model = ["--embedder", "hash"] if method == "parent-child" else []  # (fixed reads no embedder: said too)
    code, out, err = run(["chunk", str(EN), "--method", method, *model, "--levels", "2"], capsys)
    assert code == 0 and out
    assert f"{method} ignores it" in err
    code, _, err = run(["chunk", str(EN), "--method", method, *model], capsys)
    assert "ignores" not in err


# ----------------------------------------------------------------------------- issue 21: validate --format jsonl


def _scripted_llm(monkeypatch, answers):
    from logichunk.models import registry
    from logichunk.models.llm import ScriptedLLM

    llm = ScriptedLLM(answers, cycle=True)

    class Resolved:
        model = llm
        description = "scripted (test)"

    monkeypatch.setattr(registry, "resolve_llm", lambda spec: Resolved())
    return llm


def test_validate_jsonl_writes_a_record_per_chunk_even_when_nothing_is_wrong(tmp_path, capsys, monkeypatch):
    llm = _scripted_llm(monkeypatch, ['{"complete": true, "reason": ""}'])
    args = ["validate", str(EN), "--llm", "local", "--method", "fixed", "--max-size", "400", "--format", "jsonl",
            "--quiet", "--bubbles", str(tmp_path / "b.jsonl")]
    code, out, _ = run(args, capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    chunks = [r for r in recs if r["type"] == "chunk"]
    assert code == 0 and len(chunks) == len(llm.prompts) > 1  # one record per chunk the LLM judged
    assert all(r["complete"] is True and r["problem"] is None for r in chunks)
    assert recs[-1] == {"type": "summary", "source": str(EN), "chunks": len(chunks), "problems": 0}
    _scripted_llm(monkeypatch, ['{"complete": false, "reason": "cut mid-argument"}', "perhaps, hard to say"])
    code, out, _ = run(args, capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert [r["complete"] for r in recs if r["type"] == "chunk"][:2] == [False, None]
    assert recs[0]["problem"]["category"] == "incomplete" and recs[-1]["problems"] == len(recs) - 1


def test_validate_shows_progress_on_a_terminal(tmp_path, capsys, monkeypatch):
    _scripted_llm(monkeypatch, ['{"complete": true}'])
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(["validate", str(EN), "--llm", "local", "--method", "fixed", "--max-size", "400",
                        "--format", "jsonl", "--bubbles", str(tmp_path / "b.jsonl")], capsys)
    assert code == 0 and "\r[" in err and "/" in err  # a one-line counter, redrawn per chunk
