"""Dotted ids and the tree's relations."""

from __future__ import annotations

import pytest

from logichunk import chunk, ids
from logichunk.errors import InputError
from logichunk.tree import build_tree, check_tree


def test_parse_and_relations():
    assert ids.parse_id("1.2.3") == (1, 2, 3)
    assert ids.depth("1.2.3") == 3
    assert ids.parent_of("1.2.3") == "1.2" and ids.parent_of("4") is None
    assert ids.ancestors_of("1.2.3") == ["1.2", "1"]
    assert ids.is_ancestor("1", "1.2.3") and not ids.is_ancestor("1.2", "1.3.1") and not ids.is_ancestor("1", "1")
    assert ids.make_id(None, 3) == "3" and ids.make_id("2.1", 4) == "2.1.4"
    assert sorted(["2", "1.10", "1.2", "1"], key=ids.sort_key) == ["1", "1.2", "1.10", "2"]


def test_child_ids_are_make_id_for_many_children():
    import numpy as np

    parents = np.array(["1", "2.3", "10.1.12"], dtype=object)
    piece = np.array([0, 0, 1, 2, 2, 2, 1])
    ordinal = np.array([1, 2, 1, 1, 10, 11, 2])
    assert ids.child_ids(parents, piece, ordinal).tolist() == [ids.make_id(parents[p], int(o))
                                                             for p, o in zip(piece, ordinal, strict=True)]
    assert ids.child_ids(None, piece, ordinal).tolist() == [ids.make_id(None, int(o)) for o in ordinal]
    assert ids.child_ids(parents, piece[:0], ordinal[:0]).tolist() == []


@pytest.mark.parametrize("bad", ["", "0", "1..2", "a", "1.-1", "1.0", 1, None, (1, 2)])  # (not a str: one line too)
def test_bad_ids_are_rejected(bad):
    with pytest.raises(InputError):
        ids.parse_id(bad)


def _tree():
    text = "aaaa bbbb cccc dddd"
    rows = [
        ("1", 0, 10, "entropy", {}),
        ("1.1", 0, 5, "entropy", {}),
        ("1.2", 5, 10, "composite", {}),
        ("2", 10, 19, "entropy", {}),
        ("2.1", 10, 15, "entropy", {}),
        ("2.1.1", 10, 12, "forced", {}),
        ("2.1.2", 12, 15, "forced", {}),
        ("2.2", 15, 19, "entropy", {}),
    ]
    return build_tree(text, rows)


def test_navigation():
    t = _tree()
    check_tree(t)
    assert [c.id for c in t.roots()] == ["1", "2"]
    assert [c.id for c in t.leaves()] == ["1.1", "1.2", "2.1.1", "2.1.2", "2.2"]
    assert t.get("2.1").children == ("2.1.1", "2.1.2")
    assert [c.id for c in t.ancestors("2.1.2")] == ["2.1", "2"]
    assert [c.id for c in t.siblings("1.2")] == ["1.1"]
    assert [c.id for c in t.siblings("1")] == ["2"]
    assert [c.id for c in t.descendants("2")] == ["2.1", "2.1.1", "2.1.2", "2.2"]
    assert t.parent("2.1.1").id == "2.1" and t.parent("1") is None
    assert [c.id for c in t.level(2)] == ["1.1", "1.2", "2.1", "2.2"]
    assert "".join(t.text_of(c) for c in t.level(3)) == t.text
    with pytest.raises(InputError):
        t.get("3")


def test_check_tree_catches_a_gap():
    text = "abcdef"
    bad = build_tree(text, [("1", 0, 3, "x", {}), ("2", 4, 6, "x", {})])
    with pytest.raises(AssertionError):
        check_tree(bad)


def test_api_example_from_issue():
    text = ("First topic sentence one. First topic sentence two.\n\n" * 20) + ("第二个话题。" * 200)
    tree = chunk(text, max_size=300)
    check_tree(tree)
    leaf = tree.leaves()[0]
    assert tree.text_of(leaf) == text[leaf.span.start : leaf.span.end]
    deep = [c for c in tree if c.level >= 2]
    assert deep, "a 2,000-char text at max 300 must produce a second level"
    c = deep[0]
    assert tree.get(c.parent).children and c.id in tree.get(c.parent).children


def test_json_lines_are_the_records_as_json():
    """The CLI's hand-written JSONL is byte for byte the generic encoder's output of records()."""
    import json

    text = ('He said "stop"\\now.\t第一段。\n\n' * 40) + ("Ünïcode 😀 and \u2028 control \x01 chars. " * 30) + ("第二个话题，很长。" * 120)
    tree = chunk(text, max_size=200, levels=3)
    enc = json.JSONEncoder(ensure_ascii=False, check_circular=False)
    extra = {"source": 'dir/"odd" name.txt'}
    lines = tree.json_lines(extra)
    assert len(lines) == len(tree) and any("." in json.loads(x)["id"] for x in lines)
    assert lines == [enc.encode(r | extra) for r in tree.records()]
    flat = build_tree("ab", [("1", 0, 1, "x", {"size": None}), ("2", 1, 2, "x", {})])
    assert [json.loads(x) for x in flat.json_lines()] == flat.records()


def test_json_lines_of_a_text_with_a_lone_surrogate_can_be_written_as_utf8():
    """Python strings (and chunk()) allow a lone surrogate; UTF-8 cannot hold one, and the raw JSON lines
    could not be saved. They are escaped to ASCII then, and read back to the very text."""
    import json

    text = "Hello \ud800 world. Next one here. 😀 and 中文。 " * 5 + "\f" + "Page two. \udc00 end."
    tree = chunk(text, max_size=40, levels=2)
    for lines in (tree.json_lines(), tree.json_lines({"source": "x"}), tree.json_lines({"text": "replaced"})):
        "\n".join(lines).encode("utf-8")  # (raised UnicodeEncodeError)
    lines = tree.json_lines({"source": "x"})
    assert [json.loads(x) for x in lines] == [r | {"source": "x"} for r in tree.records()]
    assert "".join(json.loads(x)["text"] for x in lines if json.loads(x)["level"] == 1) == text


def test_tree_from_columns_reads_like_rows():
    """The logic chain hands the tree columns; rows, records and Chunk objects all read the same."""
    from logichunk.tree import build_tree_columns

    text = "abcdef"
    cols = build_tree_columns(text, ["1", "1.1", "1.2", "2"], [0, 0, 2, 4], [4, 2, 4, 6], ["a", "b", "b", "a"],
                              {"size": [4, 2, 2, 2], "cut_score": [0.5, None, 0.1, None]})
    rows = build_tree(text, [("1", 0, 4, "a", {"size": 4, "cut_score": 0.5}), ("1.1", 0, 2, "b", {"size": 2, "cut_score": None}),
                             ("1.2", 2, 4, "b", {"size": 2, "cut_score": 0.1}), ("2", 4, 6, "a", {"size": 2, "cut_score": None})])
    check_tree(cols)
    assert cols.records() == rows.records() and cols.json_lines() == rows.json_lines()
    assert [(c.id, c.span, c.parent, c.children, dict(c.meta)) for c in cols] == \
           [(c.id, c.span, c.parent, c.children, dict(c.meta)) for c in rows]
    assert [c.id for c in cols.leaves()] == ["1.1", "1.2", "2"] and "1.2" in cols.chunks
    with pytest.raises(ValueError):
        build_tree_columns(text, ["1"], [0], [6], ["a"], {"size": []})
