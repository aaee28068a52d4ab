"""What a store cuts its parents and children by (``Settings.cut_vectors``): by default the embedder's sentence
vectors; ``"lexical"``, the texts' own words (the hash embedder's vectors), whatever model embeds the stored chunks."""

from __future__ import annotations

import dataclasses

import pytest

from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.models import HashEmbedder
from logichunk.models.embedding import LRUMapping
from logichunk.store import Store
from logichunk.store.ingest import chapter_blocks
from logichunk.store.plan import cut_vectors, plan_chapter
from pg_fixture import TableEmbedder

SIZES = dict(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)
TEXT = ("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together through the winter. The males keep "
        "the eggs warm for two months. A storm can last a week.\n\nThey eat fish, squid and krill. A dive can last "
        "twenty minutes. Seals hunt them near the ice. The chicks wait on land.\n\n# 第二章 山门\n\n主角第一次见到师父"
        "是在山脚下的小镇。那天下着大雨，茶馆里挤满了躲雨的商人。商人们在谈论粮价。少年在山上练剑三年。冬天来了，"
        "雪封住了山路。\n\n")


class Model(TableEmbedder):
    """A model's vectors (seeded, unlike any hash embedder's), recording every text it is asked to embed."""

    model_id = "table-model"

    def __init__(self, dim: int = 16) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    def embed(self, texts, *, kind="passage"):
        self.texts.extend(texts)
        return super().embed(texts, kind=kind)


def rows(store: Store) -> list[tuple[str, str, str]]:
    return sorted((c.level, c.dotted_id, c.content) for c in store.chunks())


def test_a_model_store_cuts_by_the_words_and_embeds_only_its_chunks(tmp_path):
    model = Model()
    with Store.open(str(tmp_path / "m.db"), settings=Settings(**SIZES, cut_vectors="lexical"), embedder=model) as m, \
            Store.open(str(tmp_path / "h.db"), settings=Settings(**SIZES), embedder=HashEmbedder()) as h:
        for s in (m, h):
            s.add_document("d", chapter_blocks(TEXT))
            s.rechunk_dirty()
        assert rows(m) == rows(h)  # the hash embedder's cuts, though the chunks are the model's vectors
        children = [c for c in m.chunks(level="child")]
        assert len(children) > 2
        assert set(model.texts) == {c.content for c in children}  # no sentence embedded only to cut
        assert m.stored_embedders() == {m.model_id: len(m.chunks())}  # every chunk stored with the model's vectors


def test_by_default_a_store_cuts_by_the_model_s_sentence_vectors(tmp_path):
    model = Model()
    settings = Settings(**SIZES)
    with Store.open(str(tmp_path / "m.db"), settings=settings, embedder=model) as m:
        m.add_document("d", chapter_blocks(TEXT))
        m.rechunk_dirty()
        contents = {c.content for c in m.chunks(level="child")}
        asked = set(model.texts)
        assert contents <= asked and asked - contents  # the sentences it cut by, as well as the children
        assert "".join(c.content for c in sorted(m.chunks(level="parent"), key=lambda c: c.pk)) == TEXT


def test_a_plan_made_away_from_the_store_cuts_as_the_store_cuts(tmp_path):
    # what a Ray worker does (scale/workers.py): the same cut vectors, so the same plan
    settings = Settings(**SIZES, cut_vectors="lexical")
    with Store.open(str(tmp_path / "a.db"), settings=settings, embedder=Model()) as a, \
            Store.open(str(tmp_path / "b.db"), settings=settings, embedder=Model()) as b:
        chapters = chapter_blocks(TEXT)
        a.add_document("d", chapters)
        did = b.add_document("d", chapters)
        a.rechunk_dirty()
        from logichunk.scale.workers import RecordingEmbed

        model = Model()
        for rank, ((cid, _o, _t), (_title, blocks)) in enumerate(zip(b.chapters(did), chapters, strict=True), 1):
            rec = RecordingEmbed(model, settings.embedding_batch_size, LRUMapping(100))
            cut = cut_vectors(settings.cut_vectors, model, rec, settings.embedding_batch_size)
            plan = dataclasses.replace(plan_chapter(blocks, rank, rec, b.params, cut=cut), model_id=b.model_id,
                                       vectors=rec.used)
            assert b.rechunk_chapter(cid, plan=plan).status == "rechunked"
        assert rows(a) == rows(b)
        assert set(model.texts) == {c.content for c in b.chunks(level="child")}
        # and a Ray worker's own planning (the actor's class, run here without Ray) gives those children
        from logichunk.scale.workers import IngestWorker
        from logichunk.store.plan import sha256

        path = tmp_path / "t.md"
        path.write_text(TEXT, encoding="utf-8")
        own = Model()
        worker = IngestWorker(own, "table-model", b.params, settings.embedding_batch_size, settings.cut_vectors)
        planned = worker._plan(path, sha256(TEXT))
        kids = sorted(c[2] for ch in planned.chapters for par in ch.new for c in par.children)
        assert kids == sorted(c.content for c in b.chunks(level="child")) and set(own.texts) == set(kids)


def test_the_setting_is_checked_and_read_from_the_environment():
    with pytest.raises(InputError, match="cut_vectors must be lexical or embedder, got 'words'"):
        Settings(cut_vectors="words")
    assert Settings.load(env={"LOGICHUNK_CUT_VECTORS": "lexical"}).cut_vectors == "lexical"
    assert Settings().cut_vectors == "embedder"
