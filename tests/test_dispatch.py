"""Every chunking method behind one name (``chunk_by``), and the CLI verbs that use it: ``chunk
--method``, ``validate`` and ``compensate`` against a real loopback LLM server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logichunk.chunkers.dispatch import METHODS, chunk_by, ignored_options, needs
from logichunk.cli import main
from logichunk.errors import InputError, UnknownChoice
from logichunk.models import HashEmbedder
from logichunk.tree import check_tree

pytest_plugins = ["loopback_server"]

ROOT = Path(__file__).resolve().parents[1]
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_lm():
    pytest.importorskip("torch")
    from logichunk.models.lm import build_tiny_lm

    tmpl = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    return build_tiny_lm([EN[:3000], ZH[:1500]], window=64, max_context=256, chat_template=tmpl)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("text", [EN[:4000], ZH[:2500]], ids=["en", "zh"])
def test_every_method_tiles_the_text_and_keeps_its_limit(method, text, tiny_lm):
    models = {"embedder": HashEmbedder(256), "lm": tiny_lm}
    kw = {m: models[m] for m in needs(method)}
    tree = chunk_by(method, text, max_size=400, **kw)
    check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    forced = {tuple(b.context["span"]) for b in tree.bubbles}
    for c in tree.roots():
        assert c.meta.get("size", len(c.span)) <= 400 or any(a <= c.start and c.end <= b for a, b in forced), c
    if method in ("logic-chain", "cliff"):
        assert tree.depth() >= 2  # the cascade builds a hierarchy (400 / 200 / 80)


@pytest.mark.parametrize(("method", "tier1"), [("logic-chain", "entropy"), ("cliff", "semantic"), ("fused", "fused")])
def test_a_chunk_names_the_signal_that_cut_it(method, tier1):
    # tier 1 runs whichever signal the method chose: its chunks must not all say "entropy"
    kw = {"embedder": HashEmbedder(256)} if "embedder" in needs(method) else {}
    tree = chunk_by(method, EN[:4000], max_size=400, **kw)
    names = {c.method for c in tree}
    assert tier1 in names and names <= {tier1, "composite", "llm", "forced", "whole"}
    assert tree.stats["signal"] == tier1 and tree.stats["methods"].get(tier1, 0) > 0
    if tier1 != "entropy":
        assert "entropy" not in names


def test_methods_say_what_they_need():
    with pytest.raises(InputError, match="needs an embedder"):
        chunk_by("cliff", EN)
    with pytest.raises(InputError, match="needs an LM"):
        chunk_by("ppl", EN)
    # an unknown method in the service's and the MCP tools' words (errors.unknown_choice), all of them listed
    said = "unknown method 'magic': use one of logic-chain, cliff, fused, ppl, msp, parent-child, fixed, recursive"
    for call in (lambda: chunk_by("magic", EN), lambda: ignored_options("magic", ["lm"])):
        with pytest.raises(UnknownChoice) as err:
            call()
        assert str(err.value) == said and err.value.choices == tuple(METHODS)


def test_cliff_cuts_where_the_subject_changes():
    a = "Tomatoes need sun. Tomatoes need water. Tomato plants grow tall. Tomatoes ripen red. " * 3
    b = "The engine burns fuel. The engine turns the shaft. Engine oil cools it. The engine roars. " * 3
    tree = chunk_by("cliff", a + b, max_size=len(a) + 40, levels=1, embedder=HashEmbedder(512))
    assert len(a) in {c.end for c in tree.roots()}


def test_cli_chunk_method_parent_child_and_notes(capsys):
    code = main(["chunk", str(ROOT / "examples" / "zh_public_domain.txt"), "--method", "parent-child",
                 "--embedder", "hash", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0 and "embedder: hash" in err
    rows = [json.loads(x) for x in out.splitlines()]
    assert {r["level"] for r in rows} <= {1, 2} and max(r["size"] for r in rows if r["level"] == 1) <= 1500
    assert "".join(r["text"] for r in rows if r["level"] == 1) == ZH


def test_cli_chunk_method_fused(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (a bubbles log went to the working directory; none is written now)
    code = main(["chunk", str(ROOT / "examples" / "en_public_domain.md"), "--method", "fused",
                 "--embedder", "hash", "--max-size", "400", "--levels", "2", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0 and "embedder: hash" in err
    rows = [json.loads(x) for x in out.splitlines()]
    text = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
    assert "".join(r["text"] for r in rows if r["level"] == 1) == text
    assert max(r["size"] for r in rows) <= 400


def test_cli_llm_tier2_counts_calls(capsys, loopback, tmp_path):
    # identical sentences: entropy finds nothing inside, so the LLM (tier 2) is asked for breaks
    f = tmp_path / "same.txt"
    f.write_text("同样的句子在这里。" * 60, encoding="utf-8")
    loopback.chat = lambda body: "Breaks: [5, 10]"
    code = main(["chunk", str(f), "--max-size", "200", "--levels", "1", "--llm", f"openai:{loopback.base_url}#m",
                 "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0 and "llm: openai" in err and "llm calls:" in err
    methods = {json.loads(x)["method"] for x in out.splitlines()}
    assert "llm" in methods
    assert any(r.path.endswith("/chat/completions") for r in loopback.requests)


def test_cli_validate_reports_incomplete_chunks(capsys, loopback, tmp_path):
    f = tmp_path / "doc.txt"
    f.write_text("Plants store sugar. They grow.\n\nThis method is then repeated by every leaf, which", encoding="utf-8")

    def judge(body):
        chunk = body["messages"][-1]["content"].split("<<<\n", 1)[1].split("\n>>>", 1)[0]  # the judged chunk only
        return '{"complete": false, "reason": "cut off"}' if "every leaf, which" in chunk else '{"complete": true}'

    loopback.chat = judge
    bub = tmp_path / "b.jsonl"
    code = main(["validate", str(f), "--llm", f"openai:{loopback.base_url}#m", "--max-size", "60", "--levels", "1",
                 "--format", "jsonl", "--bubbles", str(bub), "--quiet"])
    out, _ = capsys.readouterr()
    assert code == 0
    recs = [json.loads(x) for x in out.splitlines()]  # a record per chunk judged, then a summary (issue 21)
    probs = [r["problem"] for r in recs if r["type"] == "chunk" and r["problem"]]
    assert [p["category"] for p in probs] == ["incomplete"] and probs[0]["context"]["reason"] == "cut off"
    assert recs[-1]["type"] == "summary" and recs[-1]["problems"] == 1 and recs[-1]["chunks"] == len(recs) - 1
    assert len(bub.read_text().splitlines()) == 1


def test_cli_validate_without_llm_is_a_clear_error(capsys, tmp_path):
    f = tmp_path / "doc.txt"
    f.write_text("Some text.", encoding="utf-8")
    assert main(["validate", str(f)]) == 2
    assert "needs an LLM" in capsys.readouterr().err


def test_cli_compensate_summary_keeps_spans(capsys, loopback, tmp_path):
    f = tmp_path / "doc.txt"
    text = "Alice founded the lab in 1990. It grew fast.\n\nShe retired in 2020. Her students run it now."
    f.write_text(text, encoding="utf-8")
    loopback.chat = lambda body: "a short summary"
    code = main(["compensate", str(f), "--mode", "summary", "--llm", f"openai:{loopback.base_url}#m",
                 "--max-size", "60", "--levels", "1", "--quiet"])
    out, _ = capsys.readouterr()
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and len(rows) >= 2
    assert "".join(r["text"] for r in rows) == text
    assert all(r["summary"] == "a short summary" for r in rows)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_takes_the_first_of_sizes_and_checks_its_arguments(method, tiny_lm):
    models = {"embedder": HashEmbedder(256), "lm": tiny_lm}
    kw = {m: models[m] for m in needs(method)}
    text = EN[:2500]
    tree = chunk_by(method, text, sizes=[300, 120] if method != "parent-child" else [300, 120], **kw)
    forced = {tuple(b.context["span"]) for b in tree.bubbles}
    assert all(c.meta["size"] <= 300 or any(a <= c.start and c.end <= b for a, b in forced) for c in tree.roots())
    for bad in ({"max_size": 2.7}, {"max_size": "300"}, {"max_size": float("nan")}, {"max_size": 0},
                {"sizes": "100"}, {"sizes": [100.7, 50]}, {"sizes": [0]}, {"sizes": [50, 100]}):
        with pytest.raises(InputError):
            chunk_by(method, text, **bad, **kw)
    for bad_text in (None, b"bytes", 123):
        with pytest.raises(InputError, match="text must be str"):
            chunk_by(method, bad_text, **kw)
    for theta in (-1.0, float("nan"), "x"):
        with pytest.raises(InputError, match="theta"):
            chunk_by(method, text, theta=theta, **kw)


def test_parent_child_bubbles_point_into_the_document():
    long_sentence = ", ".join(f"item number {i} of a list that never ends" for i in range(40)) + ".\n\n"
    text = "A short opening paragraph. It has two sentences.\n\n" + long_sentence + "A closing line.\n"
    tree = chunk_by("parent-child", text, sizes=(600, 200), embedder=HashEmbedder(256), source="doc.md")
    assert tree.bubbles
    start = text.index("item number 0")
    for b in tree.bubbles:
        a, e = b.context["span"]
        assert text[a:e].startswith("item number") and b.context["source"] == "doc.md"
        assert start <= a < e <= start + len(long_sentence)
    # the sentence over the parent limit is one bubble at level 1, not again for the children
    assert [b.context["level"] for b in tree.bubbles] == [1]
