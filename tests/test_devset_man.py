"""The man-page dev set builder (bench/devset_man.py): sections and gold boundaries come out of a
rendered page as the page's own headings say, and pages that are not long prose are left out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "devset_man.py"
_spec = importlib.util.spec_from_file_location("devset_man", _PATH)
dm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dm)

PAGE = """FOO(1)                     General Commands Manual                    FOO(1)

NAME
       foo - frobnicate the widgets

SYNOPSIS
       foo [-v] file...

DESCRIPTION
       The foo program reads every widget in the given files and
       frobnicates it in place. It keeps a backup of each file it changes.

       Widgets are read one line at a time. Blank widgets are skipped without a warning.
       A widget that cannot be parsed stops the run with an error message.

OPTIONS
       -v     Print the name of every widget as it is frobnicated. The names go to standard error.
              Nothing else changes in the output of the program at all.

EXIT STATUS
       The program exits with zero when every widget was frobnicated. It exits with one when a
       widget could not be parsed by the reader. Any other value means the program crashed badly.

SEE ALSO
       bar(1), baz(1)

GNU                                2024-01-01                             FOO(1)
"""


def test_sections_follow_the_pages_headings_and_drop_header_and_footer() -> None:
    secs = dm.sections(PAGE)
    assert [h for h, _ in secs] == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"]
    desc = dict(secs)["DESCRIPTION"]
    assert len(desc) == 2  # two paragraphs, each joined into one line
    assert desc[0].startswith("The foo program reads") and desc[0].endswith("each file it changes.")
    assert all("GNU" not in p for _, ps in secs for p in ps)  # the footer is not text of SEE ALSO


def test_page_doc_boundaries_fall_between_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dm, "render", lambda path: PAGE)
    assert dm.page_doc("foo.1.gz") is None  # under 30 sentences: not a long document
    long_page = PAGE.replace("frobnicates it in place.", "frobnicates it in place. " + " ".join(
        f"Widget number {i} is handled like the others." for i in range(30)))
    monkeypatch.setattr(dm, "render", lambda path: long_page)
    doc = dm.page_doc("foo.1.gz")
    assert doc is not None
    segs, units = doc["segments"], doc["units"]
    assert len(segs) == 3 and sum(segs) == len(units)  # DESCRIPTION, OPTIONS, EXIT STATUS; NAME etc. dropped
    assert doc["boundaries"] == [segs[0] - 1, segs[0] + segs[1] - 1]
    first = units[segs[0]]  # the first unit after the first boundary
    assert first.startswith("-v") and "Print the name of every widget" in first
    assert not any("bar(1)" in u for u in units)


def test_prose_units_keep_sentences_and_drop_fragments() -> None:
    units = dm.prose_units("Use -x. The program then reads standard input until the end. 0x1F 0x2A 0x3B 0x4C")
    assert units == ["The program then reads standard input until the end."]
