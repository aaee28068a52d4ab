"""``chunk --ext``: the endings a folder's files are read by, matched whatever their case; an empty item is
a typo said in one line (``--ext md,`` silently added the ending ".")."""

from __future__ import annotations

import pytest

from logichunk.cli import main


def run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("ext", "found"), [(".MD", True), ("MD,txt", True), ("md", True)])
def test_ext_matches_a_folder_s_names_whatever_their_case(tmp_path, capsys, ext, found):
    (tmp_path / "a.md").write_text("# A\n\nSome text here. And more.\n", encoding="utf-8")
    code, out, _ = run(["chunk", str(tmp_path), "--ext", ext, "--format", "jsonl"], capsys)
    assert code == 0 and (str(tmp_path / "a.md") in out) == found


@pytest.mark.parametrize("ext", [",", "md,", ".", " ", ""])  # ("": `--ext "$EXT"` unset, read as no --ext)
def test_an_empty_ext_item_is_one_line(tmp_path, capsys, ext):
    (tmp_path / "a.md").write_text("# A\n\nSome text here.\n", encoding="utf-8")
    code, out, err = run(["chunk", str(tmp_path), "--ext", ext], capsys)
    assert code == 2 and out == "" and "--ext wants comma-separated file endings" in err
    assert len(err.strip().splitlines()) == 1
