"""``logichunk eval`` on bad input: a misspelt method or mode is an error even where no data is found (it was
passed over with a "no benchmark data, skipping" note and exit status 0), and a data file with no document in it
is one line, not a row of n=0 per method and success."""

from __future__ import annotations

import pytest

from logichunk.cli import main


def _run(argv, capsys):
    code = main(["eval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [["segmentation", "--methods", "glbal"], ["chunking", "--methods", "glbal"],
                                  ["retrieval", "--methods", "glbal"], ["retrieval", "--modes", "hybird"]])
def test_a_typo_is_an_error_without_data_too(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setenv("LOGICHUNK_DATA", str(tmp_path / "absent"))
    code, out, err = _run([*argv, "--no-save"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and ("unknown method 'glbal'" in err or "'hybird'" in err)


def test_no_data_is_still_a_note_and_nothing_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOGICHUNK_DATA", str(tmp_path / "absent"))
    code, out, err = _run(["segmentation", "--methods", "global", "--no-save"], capsys)
    assert code == 0 and out == "" and "no benchmark data" in err


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_segmentation_file_is_one_line(tmp_path, capsys, content):
    f = tmp_path / "empty.jsonl"
    f.write_text(content, encoding="utf-8")
    code, out, err = _run(["segmentation", "--data", str(f), "--methods", "global", "--no-save"], capsys)
    assert code == 2 and out == ""
    assert "no documents in it (the file is empty or only blank lines)" in err and len(err.strip().splitlines()) == 1
