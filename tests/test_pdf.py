"""A PDF is read as its text layer, pages joined by form feeds, so its page furniture is read as such: from
the decoder to the CLI and the store. The PDFs are written by the test (tests/pdf_helpers.py)."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from pypdf import PdfWriter

from logichunk import chunk
from logichunk.cli import main
from logichunk.errors import InputError
from logichunk.text.decode import read_path, read_text
from logichunk.text.pages import chunk_pages, furniture_lines
from pdf_helpers import make_pdf

LINES = [
    "The valve opens when the pressure in the {w} chamber rises above the set point.",
    "Each spring of the {w} unit is checked by hand before the housing is closed.",
    "Operators log every {w} reading in the book kept beside the panel.",
]
WHO = ["north", "south", "east", "west", "upper", "lower"]


def manual(pages: int = 6, over_the_page: bool = False) -> list[list[str]]:
    """A manual's pages: a running header from page 2 on, a page number at the foot of each."""
    out = []
    for k in range(pages):
        lines = (["Acme Valve Manual"] if k else []) + [t.format(w=WHO[k % len(WHO)]) for t in LINES]
        if over_the_page and k == 1:
            lines = lines[:1] + ["directory earlier in the list, so later folders win."] + lines[1:]
        if over_the_page and k == 0:
            lines.append("Information found in each of these folders is added to the information found in a")
        out.append(lines + [str(k + 1)])
    return out


def test_a_pdf_reads_as_its_pages_joined_by_form_feeds():
    pages = manual()
    text = read_text(make_pdf(pages), source="manual.pdf")
    assert text.count("\f") == len(pages) - 1
    for k, page in enumerate(text.split("\f")):
        assert [line for line in page.splitlines() if line] == pages[k]


def test_its_furniture_is_found_and_no_chunk_starts_with_it():
    text = read_text(make_pdf(manual(over_the_page=True)), source="manual.pdf")
    found = [text[s:e] for s, e in furniture_lines(text)]
    assert found.count("Acme Valve Manual") == 5 and [f for f in found if f.isdigit()] == ["1", "2", "3", "4", "5"]
    starts = {s for s, _ in furniture_lines(text)}
    over = text.index("directory earlier")
    for max_size in (200, 300, 500):
        tree = chunk(text, max_size=max_size, levels=2)
        assert "".join(tree.text_of(c) for c in tree.level(1)) == text
        for c in tree:
            assert c.span.start not in starts and c.span.start != over  # the sentence over the page is whole


def test_the_cli_chunks_a_pdf_and_its_spans_point_into_its_text(tmp_path, capsys):
    f = tmp_path / "manual.pdf"
    f.write_bytes(make_pdf(manual()))
    assert main(["chunk", str(f), "--max-size", "200", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    text = read_path(f)
    assert rows and all(text[r["start"] : r["end"]] == r["text"] for r in rows)
    assert "".join(r["text"] for r in rows if r["level"] == 1) == text
    folder = tmp_path / "docs"  # a folder's PDFs are read with its text files
    folder.mkdir()
    (folder / "a.pdf").write_bytes(make_pdf(manual(3)))
    (folder / "b.md").write_text("# Notes\n\nOne line.\n", encoding="utf-8")
    assert main(["chunk", str(folder), "--format", "jsonl"]) == 0
    assert {json.loads(line)["source"] for line in capsys.readouterr().out.splitlines()} == {
        str(folder / "a.pdf"), str(folder / "b.md")}


def test_each_chunk_names_the_pages_its_text_lies_on(tmp_path, capsys):
    """For a citation: a chunk's first and last page, its whitespace and the pages' furniture aside (a
    chunk that ends with the next page's running header still ends on its own page)."""
    pages = manual(over_the_page=True)
    text = read_text(make_pdf(pages))
    f = tmp_path / "manual.pdf"
    f.write_bytes(make_pdf(pages))
    assert main(["chunk", str(f), "--max-size", "300", "--levels", "2", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    feeds = [i for i, ch in enumerate(text) if ch == "\f"]
    furniture = furniture_lines(text)
    for r in rows:
        body = [p for p in range(r["start"], r["end"]) if not text[p].isspace()
                and not any(s <= p < e for s, e in furniture)]
        on = sorted({sum(x < p for x in feeds) + 1 for p in body})
        assert r["pages"] == [on[0], on[-1]], r
    assert any(r["pages"][0] < r["pages"][1] for r in rows)  # a chunk over a page break names both
    assert any(r["text"].rstrip().endswith("Acme Valve Manual") and r["pages"][0] == r["pages"][1] for r in rows)
    # a span of furniture alone gets the pages of its ends; a text without pages names none
    s, e = furniture_lines(text)[1]
    assert chunk_pages(text, [s], [e]) == [(2, 2)]
    assert chunk_pages("no pages here", [0], [5]) is None
    assert all("pages" not in r for r in chunk("One page. No form feed.\n" * 20, max_size=100).records())


def test_the_store_ingests_a_pdf(tmp_path, capsys):
    from logichunk.config import Settings
    from logichunk.store import Store
    from logichunk.store.ingest import list_files, read_text_file

    (tmp_path / "manual.pdf").write_bytes(make_pdf(manual()))
    files = list_files([str(tmp_path)])
    assert [p.name for p in files] == ["manual.pdf"]
    assert read_text_file(files[0]) == read_path(files[0])
    code = main(["ingest", str(tmp_path), "--db", str(tmp_path / "p.db"), "--embedder", "hash:64", "--quiet"])
    assert code == 0
    text = read_path(files[0])
    with Store.open(str(tmp_path / "p.db"), settings=Settings(embedder="hash:64")) as s:
        assert "".join(b.content for b in s.blocks()) == text
    # a search hit names the pages its text lies on (whitespace and the pages' furniture aside)
    capsys.readouterr()
    assert main(["search", "west reading in the book", "--db", str(tmp_path / "p.db"), "--embedder", "hash:64",
                 "--mode", "basic", "--top-k", "3", "--format", "jsonl"]) == 0
    hits = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    feeds = [i for i, ch in enumerate(text) if ch == "\f"]
    furniture = furniture_lines(text)
    assert hits and all("pages" in h for h in hits)
    for h in hits:
        a = text.index(h["text"])  # (each chunk's text is unique here: every page names its own unit)
        body = [p for p in range(a, a + len(h["text"])) if not text[p].isspace()
                and not any(s <= p < e for s, e in furniture)]
        assert h["pages"] == [sum(x < body[0] for x in feeds) + 1, sum(x < body[-1] for x in feeds) + 1], h


def _encrypted(password: str) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(make_pdf(manual(2))))
    writer.encrypt(user_password=password, owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_an_encrypted_pdf_is_refused_in_one_line_unless_its_user_password_is_empty():
    with pytest.raises(InputError, match=r"^locked\.pdf: the PDF is encrypted with a password") as e:
        read_text(_encrypted("secret"), source="locked.pdf")
    assert "\n" not in str(e.value)
    assert "Acme Valve Manual" in read_text(_encrypted(""), source="open.pdf")


@pytest.mark.parametrize(("data", "message"), [
    (make_pdf([[], []]), r"^scan\.pdf: the PDF has no text layer \(2 page\(s\)"),
    (b"%PDF-1.4\n" + bytes(range(256)) * 4, r"^scan\.pdf: not a readable PDF \("),
    (make_pdf(manual(2))[:200], r"^scan\.pdf: not a readable PDF \("),
])
def test_a_pdf_without_text_or_broken_is_one_line(data, message, capsys, caplog):
    with pytest.raises(InputError, match=message) as e:
        read_text(data, source="scan.pdf")
    assert "\n" not in str(e.value)
    # and the reader's own warnings ("EOF marker not found") stay out of the user's terminal: ours is the line
    err = capsys.readouterr().err
    assert "EOF marker" not in err and not [r for r in caplog.records if r.name.startswith("pypdf")]


def test_a_text_that_mentions_the_pdf_header_stays_text():
    data = b"Every PDF starts with %PDF-1.7 on its first line.\n"
    assert read_text(data) == data.decode()
    assert read_text(b"  \n" + make_pdf(manual(2))).count("\f") == 1  # whitespace before the header


def _entry(title: str, page: int, width: int = 100) -> str:
    """A table of contents' line as a PDF's text layer gives it: the leader's dots run to the page number."""
    return title + " " + ". " * ((width - len(title)) // 2) + str(page)


def test_a_table_of_contents_is_cut_between_its_entries_only():
    # a cut between an entry's leader and its page number (the leader's last dot read as a sentence's end) or
    # inside an entry (the entries read as one wrapped sentence, split where full) parts an entry
    toc = ["Table of Contents"]
    for k in range(1, 7):
        toc.append(_entry(f"{k} The {WHO[k % 6]} chamber", k + 1))
        toc += [_entry(f"{k}.{j} Checking the {w} valve", k + 1) for j, w in enumerate(WHO[:4], start=1)]
    text = read_text(make_pdf([toc, *manual(3)]), source="manual.pdf")
    end = text.index("\f")
    entries = {0} | {i + 1 for i, ch in enumerate(text[:end]) if ch == "\n"}
    for max_size in (300, 512, 1000):
        tree = chunk(text, max_size=max_size, levels=3)
        assert "".join(tree.text_of(c) for c in tree.level(1)) == text
        assert {c.span.start for c in tree if c.span.start < end} <= entries


def test_a_definitions_title_stays_with_its_definition_line():
    # Texinfo sets a function's title over "[Function]" and its signature (the category at the right margin, which
    # a PDF's text layer gives first): the title is the definition's, not the end of the one before it
    names = [f"{verb} {what}" for verb in ("read", "write", "copy", "delete") for what in ("node", "value", "tag")]
    lines = []
    for name in names:
        fn = name.replace(" ", "_")
        lines += [f"asn {name}", f"[Function]int asn_{fn} (asn_node root, const char * name, void * ivalue, int len)",
                  "root: pointer to a structure.", "name: the name of the element inside the structure that you want",
                  f"to {name.split()[0]}.", f"Returns the {name.split()[1]} of the element, or NULL if it is not found."]
    text = read_text(make_pdf([lines[k : k + 40] for k in range(0, len(lines), 40)]), source="ref.pdf")
    for max_size in (200, 300, 512):
        tree = chunk(text, max_size=max_size, levels=3)
        assert "".join(tree.text_of(c) for c in tree.level(1)) == text
        assert not [c.id for c in tree if text.startswith("[Function]", c.span.start)]


LIBTASN1 = "/usr/share/doc/libtasn1-doc/libtasn1.pdf"  # a Texinfo manual, written by others: read where installed


def test_a_real_texinfo_manual_keeps_its_entries_definitions_and_names_whole():
    if not os.path.exists(LIBTASN1):
        pytest.skip(f"{LIBTASN1} is not installed here (Debian's libtasn1-doc)")
    text = read_path(LIBTASN1)
    leader = re.compile(r"(?:\. ?){2}\.[ \t]*\d{1,4}[ \t]*$")
    entries, at = [], 0
    for line in text.splitlines(keepends=True):
        if leader.search(line.rstrip()):
            entries.append((at, at + len(line.rstrip())))
        at += len(line)
    assert len(entries) > 20 and text.count("[Function]") > 20
    tree = chunk(text, max_size=512, levels=3)
    assert "".join(tree.text_of(c) for c in tree.level(1)) == text
    starts = {c.span.start for c in tree} - {0}
    assert not [s for s in starts if any(a < s < b for a, b in entries)]  # in a contents' or an index's entry
    assert not [s for s in starts if text.startswith("[Function]", s)]  # under a definition's title
    assert not [s for s in starts if text[s - 2 : s] == "_\n"]  # inside a name broken over a line
