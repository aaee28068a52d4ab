"""The MCP tools in-process (the SDK's client connected to the server object; no subprocess): the
conversation memory rebuilt after a restart decides exactly as one that never stopped, a topic
archived mid-conversation, ``add_file`` confinement, chunk trees that tile their text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from logichunk.config import Settings  # noqa: E402
from logichunk.errors import InputError  # noqa: E402
from logichunk.integrations import kb  # noqa: E402
from logichunk.integrations.mcp_server import build_server  # noqa: E402
from logichunk.store.refs import make_ref  # noqa: E402
from mcp_helpers import TURNS, call, refused, run_in_process  # noqa: E402

MORE = ("饺子煮好以后蘸什么酱料好？", "醋加蒜泥和一点辣椒油，也可以加些香菜。")
LATER = [("What is the capital of Australia?", "Canberra, not Sydney."),
         ("When did it become the capital?", "Canberra was chosen in 1908 and Parliament moved there in 1927."),
         ("ok", "")]


def _run(db: Path, fn: Any, allow: tuple[str, ...] = ()) -> Any:
    """One server "lifetime": its own stores over ``db``, closed afterwards (a restart in between)."""
    return run_in_process(db, fn, allow)


def _remember(turns: list[tuple[str, str]], conv: str = "c1") -> Any:
    async def fn(c: Client) -> list[dict[str, Any]]:
        return [await call(c, "remember", conversation_id=conv, user=u, assistant=a) for u, a in turns]

    return fn


async def _end(c: Client) -> dict[str, Any]:
    return await call(c, "end_conversation", conversation_id="c1")


def _key(d: dict[str, Any]) -> tuple:
    return d["turn"], d["action"], d["step"], d["arbiter"], d["score"], d["topic"], [[e["start"], e["end"]] for e in d["closed"]]


@pytest.mark.parametrize("cut", [1, 3, 5, 7, 8])
def test_a_restart_between_turns_changes_no_decision(tmp_path, cut):
    turns = [*TURNS, MORE, *LATER]
    straight = _run(tmp_path / "a.db", _remember(turns))
    end_a = _run(tmp_path / "a.db", _end)
    before = _run(tmp_path / "b.db", _remember(turns[:cut]))
    after = _run(tmp_path / "b.db", _remember(turns[cut:]))  # a new server: the open turns come from the store
    end_b = _run(tmp_path / "b.db", _end)
    assert [_key(d) for d in before + after] == [_key(d) for d in straight]
    assert [([e["start"], e["end"]], e["title"]) for e in end_b["archived"]] == [([e["start"], e["end"]], e["title"]) for e in end_a["archived"]]


def test_a_topic_is_archived_once_final_and_recall_shows_the_open_turns(tmp_path):
    db = tmp_path / "m.db"
    out = _run(db, _remember([*TURNS, MORE, LATER[0]]))
    archived = [(d["turn"], e) for d in out for e in d["closed"]]
    # the review confirms the pandas -> dumplings boundary once three turns follow it, and topic 0 is final
    # once the gap after the new topic's first turn is judged too (min_topic_turns=2: a one-turn topic may
    # still join the one before it)
    assert [(t, e["topic"], [e["start"], e["end"]]) for t, e in archived] == [(7, 0, [0, 2])]
    assert out[-1]["open"] == {"start": 3, "end": 7, "turns": 5}

    async def recall(c: Client) -> dict[str, Any]:
        return await call(c, "recall", query="pandas DataFrame", conversation_id="c1", top_k=3)

    res = _run(db, recall)
    assert [[e["start"], e["end"]] for e in res["episodes"]] == [[0, 2]]  # the open topic is not archived yet...
    assert [(t["user"], t["assistant"]) for t in res["open_turns"]] == [*TURNS[3:], MORE, LATER[0]]  # ...but readable


def test_a_conversation_continued_after_its_end_numbers_on(tmp_path):
    db = tmp_path / "n.db"
    _run(db, _remember(TURNS[:3]))
    first = _run(db, _end)
    assert [[e["start"], e["end"]] for e in first["archived"]] == [[0, 2]]
    again = _run(db, _remember(TURNS[3:]))  # a new session of the same conversation
    assert [d["turn"] for d in again] == [3, 4, 5] and again[0]["topic"] == 1
    second = _run(db, _end)
    assert [(e["topic"], [e["start"], e["end"]]) for e in second["archived"]] == [(1, [3, 5])] and second["topics"] == 2

    async def recall(c: Client) -> dict[str, Any]:
        return await call(c, "recall", query="饺子皮用什么面粉", conversation_id="c1", top_k=1)

    top = _run(db, recall)["episodes"][0]
    assert [(e["turn"], e["user"]) for e in top["exchanges"]] == [(3 + i, u) for i, (u, _) in enumerate(TURNS[3:])]


def test_add_file_reads_only_inside_the_allowed_folders(tmp_path):
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    (allowed / "sub" / "ok.txt").write_text("内容。Some content here.\n", encoding="utf-8")
    (tmp_path / "allowed-not").mkdir()  # a sibling whose name starts like the allowed one
    (tmp_path / "allowed-not" / "x.txt").write_text("secret", encoding="utf-8")
    (allowed / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    from pdf_helpers import make_pdf

    (allowed / "manual.pdf").write_bytes(make_pdf([["Page one says hello."], ["Page two says goodbye."]]))
    folders = kb.Folders([str(allowed)])
    assert folders.check("sub/ok.txt") == (allowed / "sub" / "ok.txt").resolve()
    for bad, why in (("../allowed-not/x.txt", "outside"), (str(tmp_path / "allowed-not" / "x.txt"), "outside"),
                     ("sub/../../allowed-not/x.txt", "outside"), ("sub", "no such file"), ("", "empty")):
        with pytest.raises(InputError, match=why):
            folders.check(bad)

    async def fn(c: Client) -> None:
        doc = await call(c, "add_file", path="sub/ok.txt")
        assert doc["title"] == "ok" and doc["chars"] == len("内容。Some content here.\n")
        assert "binary" in await refused(c, "add_file", path="bin.txt")
        pdf = await call(c, "add_file", path="manual.pdf")  # its text layer, pages joined by a form feed
        assert pdf["title"] == "manual" and pdf["chars"] == len("Page one says hello.\n\fPage two says goodbye.\n")
        res = await call(c, "search", query="Page two says goodbye", mode="basic", top_k=5)
        mine = [h for h in res["hits"] if h["document_id"] == pdf["id"]]
        text = "Page one says hello.\n\fPage two says goodbye.\n"
        for h in mine:  # (two pages, no furniture: the pages of its first and last characters but whitespace)
            a, b = h["span"]
            body = [p for p in range(a, b) if not text[p].isspace()]
            assert h["pages"] == [text[: body[0]].count("\f") + 1, text[: body[-1]].count("\f") + 1], h
        assert mine and mine[0]["pages"][-1] == 2
        assert all("pages" not in h for h in res["hits"] if h["document_id"] != pdf["id"])  # no pages, none named

    _run(tmp_path / "f.db", fn, allow=(str(allowed),))


def test_add_file_refuses_a_compressed_file_once_it_unpacks_past_the_bound(tmp_path):
    """A few kilobytes of gzip may hold gigabytes: the file's size on disk says nothing, so reading stops at the
    bound (4 bytes per character of the text limit), before the rest is in memory."""
    import gzip

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "bomb.txt.gz").write_bytes(gzip.compress(b"hello world. " * 400_000))  # 5.2 MB in ~15 KB
    (allowed / "small.txt.gz").write_bytes(gzip.compress("小文件。A small file.\n".encode()))

    async def fn(c: Client) -> None:
        why = await refused(c, "add_file", path="bomb.txt.gz")
        assert "decompresses to more than 4,000,000 bytes" in why and "\n" not in why
        doc = await call(c, "add_file", path="small.txt.gz")
        assert doc["title"] == "small" and doc["chars"] == len("小文件。A small file.\n")

    _run(tmp_path / "b.db", fn, allow=(str(allowed),))


def test_add_document_twice_stores_the_text_once(tmp_path):
    """An agent that retries a call (or adds what is there) gets the stored document back, as the HTTP API
    answers, not a second copy that every search would then return twice."""
    text = "# 企鹅\n\n帝企鹅在南极的冬天孵蛋。\n\nEmperor penguins huddle for warmth.\n"

    async def fn(c: Client) -> None:
        first = await call(c, "add_document", title="penguins", text=text)
        again = await call(c, "add_document", title="penguins again", text=text)
        other = await call(c, "add_document", title="penguins", text=text + "More.\n")
        assert first["existing"] is False and again["existing"] is True and other["existing"] is False
        assert again["id"] == first["id"] and again["title"] == "penguins" and other["id"] != first["id"]
        docs = (await call(c, "list_documents"))["documents"]
        assert sorted(d["id"] for d in docs) == sorted([first["id"], other["id"]])

    _run(tmp_path / "d.db", fn)


@pytest.mark.parametrize("mode", ["hybrid", "parent", "basic", "hierarchical", "graph-ssg", "graph-tri", "graph-hybrid"])
def test_every_search_mode_gives_spans_into_the_document(tmp_path, mode):
    text = (Path(__file__).resolve().parents[1] / "examples" / "en_public_domain.md").read_text(encoding="utf-8")

    async def fn(c: Client) -> None:
        doc = await call(c, "add_document", title="en", text=text)
        res = await call(c, "search", query="naturalist on board the Beagle", mode=mode, top_k=3)
        assert res["hits"] and res["mode"] == mode
        for h in res["hits"]:
            assert h["document_id"] == doc["id"] and h["ref"] == make_ref(doc["id"], h["id"], h["text"])
            assert (await call(c, "get_chunk", id=h["ref"]))["text"] == h["text"]  # the ref reads the hit's text
            a, b = h["span"]
            assert text[a:b] == h["text"]
            for part in ("context", "matched_child", "sentence"):
                if part in h:
                    a2, b2 = h[part]["span"]
                    assert text[a2:b2] == h[part]["text"] and a <= a2 <= b2 <= b, (part, h)
        if mode.startswith("graph-"):
            assert all("sentence" in h for h in res["hits"]) and res["path"]["path"]
            assert "Beagle" in res["hits"][0]["sentence"]["text"]
        if mode == "parent":
            assert all("matched_child" in h for h in res["hits"])

    _run(tmp_path / "s.db", fn)


def test_get_chunk_walks_the_whole_tree(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "examples" / "en_public_domain.md").read_text(encoding="utf-8")

    async def fn(c: Client) -> None:
        doc = await call(c, "add_document", title="en", text=text)
        seen: list[str] = []

        async def walk(ref: str) -> str:
            node = await call(c, "get_chunk", id=ref)
            seen.append(node["id"])
            a, b = node["span"]
            assert text[a:b] == node["text"]
            if not node["children"]:
                return node["text"]
            parts = [await walk(k["ref"]) for k in node["children"]]
            assert "".join(parts) == node["text"]  # children tile their parent
            return node["text"]

        first = await call(c, "get_chunk", id="1", document_id=doc["id"])
        chapters = [first["ref"]] + [s["ref"] for s in first["siblings"]]
        assert "".join([await walk(r) for r in chapters]) == text
        assert len(seen) == doc["chapters"] + doc["parents"] + doc["children"]

    _run(tmp_path / "t.db", fn)


def test_get_chunk_on_a_ref_kept_across_an_edit(tmp_path):
    """An agent's saved refs after the document is edited: the same text renumbered comes with
    ``moved_from``; a changed chunk is a one-line tool error; a malformed tag too."""
    s = Settings(db=str(tmp_path / "e.db"), embedder="hash:128", max_parent_size=300, min_parent_size=60,
                 child_min_size=20, child_target_size=50, child_max_size=80)
    stores = kb.Stores(s)
    server = build_server(stores, s)
    blocks = ["".join(f"Paragraph {b}, sentence {k}: the river runs past the tea market in winter. "
                      for k in range(4)) + "\n\n" for b in range(5)]

    async def main() -> None:
        async with Client(server) as c:
            doc = await call(c, "add_document", title="river", text="".join(blocks))
            first = await call(c, "get_chunk", id="1", document_id=doc["id"])
            saved = {k["ref"]: (await call(c, "get_chunk", id=k["ref"]))["text"]
                     for p in first["children"] for k in (await call(c, "get_chunk", id=p["ref"]))["children"]}
            store = stores.get(None).store
            b0, *_rest, last = store.blocks(store.chapters(doc["id"])[0][0])
            store.edit_block(b0.id, b0.content.rstrip() + " " + blocks[4] * 2)  # longer: the rest renumbered
            store.edit_block(last.id, "Nothing of the old words.\n\n")  # the last chunks changed
            store.rechunk_block(b0.id)
            moved = changed = 0
            for ref, text in saved.items():
                r = await c.call_tool("get_chunk", {"id": ref})
                if r.is_error:
                    assert r.content[0].text.endswith("changed since that ref was made (re-chunked after an edit); "
                                                      "search again") and "\n" not in r.content[0].text
                    changed += 1
                else:
                    assert r.structured_content["text"] == text
                    moved += r.structured_content.get("moved_from") == ref
            assert moved >= 3 and changed >= 1, (moved, changed)
            why = await refused(c, "get_chunk", id=next(iter(saved))[:-2] + "zz")
            assert "tag after '@'" in why and "\n" not in why

    try:
        anyio.run(main)
    finally:
        stores.close()


_SETTINGS = Settings(embedder="hash:64")
_LIMITS = kb.Limits()
_pieces = st.sampled_from(["这是第一句。", "然后呢？", "A sentence here. ", "Another one!\n", "\n\n", "# Title\n",
                           "很长的一句话，没有结束", "  ", "x"])


@settings(max_examples=40, deadline=None)
@given(st.lists(_pieces, min_size=1, max_size=60).map("".join).filter(str.strip),
       st.sampled_from(["logic-chain", "fixed", "recursive"]), st.integers(20, 400))
def test_chunk_tool_tree_tiles_the_text(text, method, max_size):
    out = kb.chunk_text(text, _LIMITS, _SETTINGS, lambda: None, method, max_size)
    chunks = out["chunks"]
    by_parent: dict[str | None, list[dict[str, Any]]] = {}
    for ch in chunks:
        assert text[ch["span"][0]:ch["span"][1]] == ch["text"] and ch["text"]
        by_parent.setdefault(ch["parent"], []).append(ch)
    assert "".join(ch["text"] for ch in by_parent[None]) == text
    for ch in chunks:
        kids = by_parent.get(ch["id"], [])
        if kids:
            assert "".join(k["text"] for k in kids) == ch["text"]
            assert all(k["id"].startswith(ch["id"] + ".") for k in kids)


def test_segment_tool_topics_tile_the_text(tmp_path):
    text = ("## Cats\n\nCats purr softly. A cat sleeps all day.\n\n## Rockets\n\nRockets burn fuel. A rocket "
            "stage drops away.\n")

    async def fn(c: Client) -> Any:
        return (await call(c, "segment", text=text), await call(c, "segment", text="a\nb\n", units="lines"),
                await refused(c, "segment", text=""), await call(c, "segment", text=text, topics=1))

    out, lines, err, one = _run(tmp_path / "kb.db", fn)
    assert len(one["topics"]) == 2  # a heading still opens its topic
    assert [t["span"][0] for t in out["topics"]] == [0, text.index("## Rockets")]
    assert "".join(t["text"] for t in out["topics"]) == text and out["vectors"] == "lexical"
    assert lines["units"] == "lines" and "".join(t["text"] for t in lines["topics"]) == "a\nb\n"
    assert "empty" in err


def test_readme_mcp_examples(monkeypatch, tmp_path):
    """The README's MCP section: the client snippets are valid JSON whose arguments the CLI accepts,
    and the Python example runs as written."""
    import contextlib
    import io
    import json
    import re

    from logichunk.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Agents over MCP", 1)[1].split("\n## ", 1)[0]
    configs = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", section, re.S)]
    stdio = [c["mcpServers"]["logichunk"] for c in configs if "command" in c["mcpServers"]["logichunk"]]
    http = [c["mcpServers"]["logichunk"] for c in configs if "url" in c["mcpServers"]["logichunk"]]
    assert stdio and http and http[0]["url"].endswith("/mcp") and "X-API-Key" in http[0]["headers"]
    args = build_parser().parse_args(stdio[0]["args"])
    assert args.verb == "mcp" and args.allow == ["/home/me/notes"]
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "build_server" in b]
    (tmp_path / "examples").symlink_to(Path(__file__).resolve().parents[1] / "examples")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    ref, rest = out.getvalue().split(" ", 1)
    assert re.fullmatch(r"[0-9a-f]+#\d+\.\d+\.\d+@[0-9a-f]{8}", ref) and "桃花" in rest


def test_readme_mcp_transcript_shows_what_the_tools_answer(tmp_path):
    """The README's MCP transcript (``--embedder hash``) shows the numbers the tools give for its calls: it showed
    4 parents and 5 children for 桃花源记, a hit over [0, 186] and scores the tools no longer gave (3 and 3,
    [0, 328]), stale since the store's cuts changed, with nothing to tell."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r"```text\n(→ add_document.*?)```", readme, re.S)
    text = (Path(__file__).resolve().parents[1] / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")

    async def fn(c: Client) -> Any:
        added = await call(c, "add_document", title="桃花源记", text=text)
        hit = (await call(c, "search", query="渔人沿着溪水进入桃花林", top_k=1))["hits"][0]
        said = [await call(c, "remember", conversation_id="chat-1", user=u, assistant=a) for u, a in TURNS]
        return added, hit, said, await call(c, "end_conversation", conversation_id="chat-1")

    added, hit, said, ended = run_in_process(tmp_path / "t.db", fn, embedder="hash")

    def shown_number(before: str) -> float:  # a score as shown (to 4 places; the last float bits may vary by CPU)
        (value,) = re.findall(re.escape(before) + r"(-?[0-9.]+)", shown)
        return float(value)

    assert '"chars": {chars}, "chapters": {chapters}, "parents": {parents}, "children": {children}'.format(**added) in shown
    tag = hit["ref"].split("#", 1)[1]
    assert f'#{tag}", "id": "{hit["id"]}", "score": ' in shown and f'"kind": "{hit["kind"]}", "span": {hit["span"]}' in shown
    assert shown_number(f'#{tag}", "id": "{hit["id"]}", "score": ') == pytest.approx(hit["score"], abs=1e-4)
    turn = said[2]
    assert f'"turn": 2, "topic": {turn["topic"]}, "action": "{turn["action"]}", "step": "{turn["step"]}", ' \
           f'"arbiter": "{turn["arbiter"]}", "score": ' in shown
    assert shown_number('"arbiter": "rule", "score": ') == pytest.approx(turn["score"], abs=1e-3)
    assert shown_number('"similarity": ') == pytest.approx(turn["similarity"], abs=1e-3)
    assert [(e["start"], e["end"]) for e in ended["archived"]] == [(0, 2), (3, 5)]
    (rev,) = ended["revisions"]
    assert f'"revisions": [{{"turn": {rev["turn"]}, "action": "{rev["action"]}", "score": ' in shown
    assert shown_number('"action": "split", "score": ') == pytest.approx(rev["score"], abs=1e-3)


def test_arguments_that_fail_a_tool_s_schema_are_one_line(tmp_path):
    """The SDK reported pydantic's text: a line per field and a URL under each. Now one line: each field, what
    it should be, what it was."""
    async def fn(c: Client) -> None:
        why = await refused(c, "search", query=5, top_k="many")
        assert "\n" not in why and "pydantic" not in why and why.startswith("search: ")
        assert "query: Input should be a valid string (got 5)" in why and "top_k:" in why and "(got 'many')" in why
        assert await refused(c, "search") == "search: query: Field required"

    _run(tmp_path / "v.db", fn)


def _memory(db: Path) -> Any:
    """A server's conversation memory over ``db`` (its own store and connection, as another process has)."""
    from logichunk.integrations.conversations import Conversations

    stores = kb.Stores(Settings(db=str(db), embedder="hash:128"))
    return Conversations(stores.get(None, create=True), kb.Limits()), stores


def test_a_topic_left_pending_by_another_embedder_is_indexed_by_the_next_server(tmp_path):
    """A server started with another embedder than the project's archives a topic it cannot index: it stayed
    pending for good (only that session's topics were ever chunked). Its error says how to fix it, and the
    next server with the project's embedder indexes it before its first recall."""
    from logichunk.integrations.conversations import Conversations

    db = tmp_path / "p.db"
    first, stores = _memory(db)  # the project: embedded with hash:128
    try:
        first.remember("k", "Owls hunt at night in the forest.", "They do.")
        first.end("k")
    finally:
        stores.close()
    wrong = kb.Stores(Settings(db=str(db), embedder="hash:64"))
    try:
        memory = Conversations(wrong.get(None, create=True), kb.Limits())
        for u, a in TURNS[:3]:
            memory.remember("m", u, a)
        errors = memory.end("m").get("archive_errors", [])
        assert errors and all("indexed when a memory server" in e for e in errors)
    finally:
        wrong.close()
    memory, stores = _memory(db)
    try:
        hits = memory.recall(TURNS[0][0], conversation_id="m")["episodes"]
        assert hits and hits[0]["conversation_id"] == "m"
    finally:
        stores.close()


def test_two_servers_on_one_database_keep_one_conversation(tmp_path):
    """Two `logichunk mcp` on one database: a raw UNIQUE constraint error and a lost turn, end_conversation
    deleting the other's open turns, a topic archived twice, and every recall of it `exchanges: null` after."""
    from logichunk.memory import load_conversation, topics

    a, sa = _memory(tmp_path / "two.db")
    b, sb = _memory(tmp_path / "two.db")
    try:
        said = [a.remember("shared", u, x) for u, x in TURNS[:2]]
        said.append(b.remember("shared", *TURNS[2]))  # B rebuilds from the store: turn 2
        said.append(a.remember("shared", *TURNS[3]))  # A's view is stale: it numbers on from the store
        assert [d["turn"] for d in said] == [0, 1, 2, 3]
        ended = a.end("shared")
        assert [[e["start"], e["end"]] for e in ended["archived"]][-1][-1] == 3
        again = b.end("shared")
        assert again["archived"] == [] and "nothing was pending" in again["note"]
        assert b.remember("shared", *TURNS[4])["turn"] == 4  # the conversation goes on after both ended it
        b.end("shared")
        store = sa.get(None).store
        assert [(x.user, x.assistant) for x in load_conversation(store, "shared")] == TURNS[:5]
        starts = [t.start for t in topics(store, "shared")]
        assert starts == sorted(set(starts))  # no topic twice
        found = a.recall("饺子", conversation_id="shared", top_k=5)
        assert found["episodes"] and all(e["exchanges"] is not None for e in found["episodes"])
    finally:
        sa.close()
        sb.close()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(["remember", "remember", "remember", "end"])),
                min_size=1, max_size=10))
def test_any_interleaving_of_two_writers_stores_each_turn_once_in_order(tmp_path_factory, steps):
    from logichunk.memory import load_conversation

    db = tmp_path_factory.mktemp("w") / "w.db"
    servers = {"a": _memory(db), "b": _memory(db)}
    sent: list[tuple[str, str]] = []
    try:
        for who, what in steps:
            memory = servers[who][0]
            if what == "end":
                if sent:
                    memory.end("c")
                continue
            u, x = (TURNS + [MORE] + LATER[:2])[len(sent) % 9]
            turn = memory.remember("c", f"{u} ({len(sent)})", x)["turn"]
            assert turn == len(sent)  # each call's reply names the turn it was stored as
            sent.append((f"{u} ({len(sent)})", x))
        if sent:
            servers["b"][0].end("c")
            store = servers["a"][1].get(None).store
            assert [(t.user, t.assistant) for t in load_conversation(store, "c")] == sent
    finally:
        for _m, stores in servers.values():
            stores.close()


def test_recall_is_bounded_and_says_what_it_left_out(tmp_path):
    """A topic with a 200,000-character reply came back whole (twice: text and structured), and an open
    topic of 3,000 turns gave all 3,000."""
    big = "数据库索引可以加快查询。Indexes speed up database queries. " * 400
    memory, stores = _memory(tmp_path / "h.db")
    try:
        memory.remember("h", "How do database indexes work?", big)
        memory.remember("h", "And a composite index over two columns?", "It serves queries on its leading columns.")
        memory.end("h")
        ep = memory.recall("database index", top_k=1)["episodes"][0]
        shown = sum(len(x["user"]) + len(x["assistant"]) for x in ep["exchanges"])
        # the texts holding the query's rarer terms come first ("index" is only in turn 1's question)
        second = "And a composite index over two columns?"
        assert ep["exchanges"][1]["user"] == second and ep["exchanges"][1]["cut"] == {"assistant": 41}
        assert shown == 8000 and ep["exchanges"][0]["cut"] == {"assistant": len(big) - 8000 + 29 + len(second)}
        kept = 8000 - 29 - len(second)
        assert ep["exchanges"][0]["assistant"] == big[:kept]  # a piece of the text, never altered
        assert ep["exchanges"][0]["excerpt"] == {"assistant": [0, kept]}
        assert "left out" in ep["truncated"] and f"get_chunk id '{ep['document_id']}#1'" in ep["truncated"]
        whole = memory.recall("database index", top_k=1, max_chars=100_000)["episodes"][0]
        assert whole["exchanges"][0]["assistant"] == big and "truncated" not in whole
        for i in range(40):
            memory.remember("o", f"open turn {i} about the history of tea in China and Japan", "x" * 300)
        got = memory.recall("tea", conversation_id="o", max_chars=1000)
        assert [x["turn"] for x in got["open_turns"]][-1] == 39 and len(got["open_turns"]) <= 4 + 5
        assert len([x for x in got["open_turns"] if "match" not in x]) <= 4  # the latest, besides the matches
        assert "earliest first" in got["open_turns_truncated"]
        with pytest.raises(InputError, match="max_chars"):
            memory.recall("tea", max_chars=0)
    finally:
        stores.close()


def test_recall_says_its_bound_in_words():
    """"at most 1 characters" read wrong; the bound is said as a count of characters, one or many."""
    from logichunk.integrations.conversations import _chars

    assert _chars(1) == "1 character" and _chars(8000) == "8,000 characters" and _chars(0) == "0 characters"


@given(st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30)), max_size=6), st.integers(1, 100))
def test_bounded_exchanges_are_a_prefix_and_count_what_is_cut(texts, max_chars):
    from logichunk.integrations.conversations import _bounded

    full = [{"turn": i, "user": u, "assistant": a} for i, (u, a) in enumerate(texts)]
    shown, said = _bounded(full, max_chars)
    whole = "".join(x["user"] + x["assistant"] for x in full)
    seen = "".join(x["user"] + x["assistant"] for x in shown)
    assert len(seen) <= max_chars and whole.startswith(seen)
    assert (said == "") == (seen == whole)
    if said:
        assert said.startswith(f"{len(whole) - len(seen):,} characters")


def test_arguments_are_checked_strictly(tmp_path):
    """top_k "3", true and 3.0 were coerced; a NUL in a conversation id was stored; an unknown argument (a
    misspelt `assistant`) was dropped without a word."""
    async def fn(c: Client) -> None:
        for bad in ("3", True, 3.0):
            why = await refused(c, "recall", query="x", top_k=bad)
            assert why.startswith("recall: top_k:") and "\n" not in why
        assert "top_k" in await refused(c, "search", query="x", top_k="3")
        assert "control character" in await refused(c, "remember", conversation_id="n\x00id", user="hello there")
        why = await refused(c, "remember", conversation_id="c", user="hello there", asistant="hi")
        assert "unknown argument 'asistant'" in why and "assistant" in why
        first = await call(c, "remember", conversation_id="c", user="Write a snake game in Python with pygame")
        assert first["turn"] == 0  # nothing was stored by the refused calls

    _run(tmp_path / "t.db", fn)


def test_the_calibration_note_is_said_once_and_reasons_name_no_wrong_topic(tmp_path):
    """The calibration note came back on every remember; a continued conversation's first turn said "first turn
    opens topic 0" beside "topic": 2."""
    s = Settings(db=str(tmp_path / "n.db"), embedder="hash:128")
    stores = kb.Stores(s)
    try:
        from logichunk.integrations.conversations import Conversations

        memory = Conversations(stores.get(None, create=True), kb.Limits())
        out = [memory.remember("c", u, a) for u, a in TURNS[:3]]
        assert "calibration" in out[0]["note"] and all("note" not in d for d in out[1:])
        memory.end("c")
        d = memory.remember("c", *TURNS[3])
        assert d["topic"] == 1 and "topic 0" not in d["reason"]
    finally:
        stores.close()
