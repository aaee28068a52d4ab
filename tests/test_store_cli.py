"""The store's CLI verbs through argparse: ingest a folder, search it, edit a block."""

from __future__ import annotations

import argparse
import json

import pytest

from logichunk.errors import LogichunkError
from logichunk.store.cli import add_parser


def run(argv, capsys):
    p = argparse.ArgumentParser(prog="logichunk")
    sub = p.add_subparsers(dest="verb")
    add_parser(sub)
    args = p.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_ingest_search_edit(tmp_path, capsys):
    (tmp_path / "novel").mkdir()
    (tmp_path / "novel" / "book.md").write_text(
        "# 第一章\n\n主角第一次见到师父是在山脚下的小镇。那天下着大雨。\n\n商人囤积粮食。\n\n"
        "# 第二章\n\n少年在山上练剑三年。冬天来了，雪封住了山路。\n\n", encoding="utf-8")
    db = str(tmp_path / "p.db")
    common = ["--db", db, "--embedder", "hash:128"]
    code, out = run(["ingest", str(tmp_path / "novel"), *common, "--quiet"], capsys)
    assert code == 0 and "1 document(s), 2 chapter(s)" in out
    code, out = run(["search", "主角第一次见到师父是在哪里", *common, "--mode", "parent", "--top-k", "2",
                     "--format", "jsonl"], capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and recs and "师父" in recs[0]["text"] and recs[0]["level"] == "parent"
    code, out = run(["search", "练剑", *common, "--mode", "hybrid"], capsys)
    assert code == 0 and "练剑" in out
    code, out = run(["blocks", *common, "--format", "jsonl"], capsys)
    blocks = [json.loads(line) for line in out.splitlines()]
    target = blocks[-1]["id"]
    new = tmp_path / "new.txt"
    new.write_text("少年下山去城里卖剑。\n\n", encoding="utf-8")
    code, out = run(["edit", "--block", target, "--file", str(new), *common], capsys)
    assert code == 0 and "rechunked" in out
    code, out = run(["search", "卖剑", *common, "--mode", "basic", "--format", "jsonl"], capsys)
    assert "卖剑" in json.loads(out.splitlines()[0])["text"]
    with pytest.raises(LogichunkError, match="unknown block id"):
        run(["edit", "--block", "nope", "--text", "x", *common], capsys)
    with pytest.raises(LogichunkError, match="empty"):
        run(["search", " ", *common], capsys)
