"""The memory server's conversations as the store holds them: the archive's links under the calibration
the server was given (``--calibration``, setting ``memory_calibration``), and the topic numbers and turns it
reports for an archived topic the ones stored, also when another writer took the number meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from logichunk.config import Settings  # noqa: E402
from logichunk.integrations import kb  # noqa: E402
from logichunk.integrations.conversations import Conversations  # noqa: E402
from logichunk.memory import LogicalBlock, topics  # noqa: E402
from logichunk.memory.archive import Archiver  # noqa: E402
from logichunk.memory.calibration import default_calibration  # noqa: E402
from logichunk.memory.episode import Episode  # noqa: E402
from mcp_helpers import TURNS  # noqa: E402

# pandas, dumplings, pandas again: the third topic returns to the first
RETURN = [*TURNS, ("Back to pandas: how do I read that CSV file into a DataFrame and sort it by date?",
                   "pandas.read_csv('file.csv').sort_values('date').")]


def _memory(db: Path, calibration: Any = None) -> tuple[Conversations, kb.Stores]:
    stores = kb.Stores(Settings(db=str(db), embedder="hash:128"))
    return Conversations(stores.get(None, create=True), kb.Limits(), calibration=calibration), stores


def _links(db: Path, calibration: Any = None) -> list[int | None]:
    memory, stores = _memory(db, calibration)
    try:
        for u, a in RETURN:
            memory.remember("c", u, a)
        memory.end("c")
        return [t.resumes_topic for t in topics(stores.get(None).store, "c")]
    finally:
        stores.close()


def test_the_links_take_the_servers_calibration(tmp_path):
    """The session's archiver linked with the shipped calibration's threshold whatever calibration the server
    was given: a calibration that allows no link (threshold 1: only a subject the same as an earlier one's)
    still linked the return."""
    shipped = _links(tmp_path / "a.db")
    assert any(x is not None for x in shipped), shipped  # (the return is linked under the shipped threshold)
    cal = default_calibration("hash-v2-d128")[0]
    assert _links(tmp_path / "b.db", cal) == shipped  # (the same calibration given: the same links)
    assert _links(tmp_path / "c.db", cal.with_(resume_threshold=1.0)) == [None] * len(shipped)


def test_the_server_says_which_calibration_its_memory_uses(tmp_path):
    from logichunk.integrations.mcp_server import build_server

    path = tmp_path / "cal.json"
    default_calibration("hash-v2-d128")[0].with_(resume_threshold=0.9125).save(path)
    shipped = default_calibration("hash-v2-d128")
    for given, said in ((str(path), f"calibration {path}, resume threshold 0.9125"),
                        ("", f"{shipped[1]}, resume threshold {shipped[0].resume_threshold:g}")):
        settings = Settings(db=str(tmp_path / "s.db"), embedder="hash:128", memory_calibration=given)
        stores = kb.Stores(settings)
        try:
            assert build_server(stores, settings).memory_calibration == said
        finally:
            stores.close()


def test_an_archived_topic_is_reported_with_its_stored_numbers(tmp_path):
    """Another writer archived a topic of the conversation meanwhile (number 7, turn 0): the server's topic
    over turns 0-2 is stored cut to turns 1-2 and numbered 8, but was reported as topic 0, turns 0-2."""
    memory, stores = _memory(tmp_path / "n.db")
    store = stores.get(None).store
    try:
        memory.remember("c", *RETURN[0])
        Archiver(store, "c", rechunk=False).archive(Episode(index=0, start=0, blocks=(LogicalBlock("elsewhere"),)),
                                                    start=0, index=7)
        said = [e for u, a in RETURN[1:] for e in memory.remember("c", u, a)["closed"]]
        said += memory.end("c")["archived"]
        stored = {t.document_id: t for t in topics(store, "c")}
        assert said and all(e["document_id"] in stored for e in said)
        assert [(e["topic"], [e["start"], e["end"]], e["resumes"]) for e in said] == \
            [(t.index, [t.start, t.end], t.resumes_topic) for t in (stored[e["document_id"]] for e in said)]
        assert said[0]["topic"] == 8  # (the number 7 the other writer took, bumped)
    finally:
        stores.close()


def test_the_open_topic_is_reported_with_the_number_it_is_stored_under(tmp_path):
    """``remember``'s ``topic`` (the open topic's number) was the session's first number plus the perception's
    count, while the archived topics said the store's: with number 7 taken by another writer, the open topic was
    reported as 0 on every turn and then archived as 8. Now each turn's topic is the number the topic holding
    that turn is stored under (no review moved a boundary in between here: the topics of these turns are
    decided by their first turns)."""
    memory, stores = _memory(tmp_path / "o.db")
    store = stores.get(None).store
    try:
        said = [memory.remember("c", *RETURN[0])]
        Archiver(store, "c", rechunk=False).archive(Episode(index=0, start=0, blocks=(LogicalBlock("elsewhere"),)),
                                                    start=0, index=7)
        said += [memory.remember("c", u, a) for u, a in RETURN[1:]]
        memory.end("c")
        stored = [t for t in topics(store, "c") if t.index != 7]
        holding = {turn: t.index for t in stored for turn in range(t.start, t.end + 1)}
        assert said[1]["topic"] == holding[said[1]["turn"]] == 8  # (the number 7 taken: bumped, as stored)
        assert all(r["topic"] >= 8 for r in said[1:])  # (never a number below the one taken meanwhile)
        assert [r["topic"] for r in said[1:]] == sorted(r["topic"] for r in said[1:])
    finally:
        stores.close()
