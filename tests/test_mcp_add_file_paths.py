"""MCP ``add_file`` reads a relative path from the first allowed folder, not from the server's working
folder: a path typed as the user sees it (``notes/a.md`` beside ``--allow notes``) must say where it was
looked for, not a bare "no such file" for a file that is there."""

from __future__ import annotations

import pytest

from logichunk.errors import InputError
from logichunk.integrations import kb


def test_a_relative_path_not_found_names_the_folder_it_was_read_from(tmp_path, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    folders = kb.Folders(["notes"])
    assert folders.check("a.md") == (notes / "a.md").resolve()
    with pytest.raises(InputError) as e:
        folders.check("notes/a.md")  # read as notes/notes/a.md
    msg = str(e.value)
    assert "no such file" in msg and str(notes.resolve()) in msg and "relative path" in msg
    assert "\n" not in msg


def test_an_absolute_path_not_found_says_only_that(tmp_path):
    folders = kb.Folders([str(tmp_path)])
    with pytest.raises(InputError, match=r"no such file$"):
        folders.check(str(tmp_path / "gone.md"))
