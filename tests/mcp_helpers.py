"""Shared pieces of the MCP tests: the server as a subprocess over stdio (the SDK's own client), or in this
process for one "lifetime" (:func:`run_in_process`), tool calls that return the structured answer or the tool error's text, and a conversation with a topic
change (three English turns about pandas, then three Chinese turns about dumplings)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]

TOOLS = {"search", "add_document", "add_file", "list_documents", "get_chunk", "chunk", "segment", "remember", "recall",
         "end_conversation", "forget_conversation"}

TURNS = [
    ("How do I read a CSV file into a pandas DataFrame?", "Use pandas.read_csv('file.csv'); it returns a DataFrame."),
    ("And how do I select only the rows where the price column is above 100?", "Filter with df[df['price'] > 100]."),
    ("Can I sort that DataFrame by date afterwards?", "Yes: df.sort_values('date') sorts the rows by the date column."),
    ("饺子馅怎么调才好吃？猪肉白菜馅的比例是多少？", "猪肉和白菜大约三比二，白菜要先挤干水分，再加姜末、葱花和香油。"),
    ("饺子皮用什么面粉？水要放多少？", "用中筋面粉，水和面的比例大约一比二，和好后醒面半小时。"),
    ("煮饺子的时候要点几次凉水？", "一般点三次凉水，饺子浮起来鼓肚就熟了。"),
]


def run_in_process(db: str | Path, fn: Any, allow: tuple[str, ...] = (), embedder: str = "hash:128") -> Any:
    """``await fn(client)`` against a server built in this process over ``db``: its own stores, closed afterwards
    (one server "lifetime"; a second call is a restart)."""
    import anyio
    from mcp import Client

    from logichunk.config import Settings
    from logichunk.integrations import kb
    from logichunk.integrations.mcp_server import build_server

    s = Settings(db=str(db), embedder=embedder)
    stores = kb.Stores(s)
    try:
        server = build_server(stores, s, allow=kb.Folders(allow))

        async def go() -> Any:
            async with Client(server) as c:
                return await fn(c)

        return anyio.run(go)
    finally:
        stores.close()


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("LOGICHUNK_")}
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")
    return e


@asynccontextmanager
async def stdio_server(db: Path, *extra: str, embedder: str | None = "hash:128") -> AsyncIterator[ClientSession]:
    """``logichunk mcp --db DB`` started as a subprocess, driven by the SDK's stdio client
    (``embedder=None``: the default setting, ``auto``)."""
    flags = ["--embedder", embedder] if embedder else []
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "logichunk", "mcp", "--db", str(db), *flags, *extra],
                                   env=env(), cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    """The tool's structured answer; fails the test on a tool error."""
    r = await session.call_tool(tool, args)
    assert not r.is_error, f"{tool}: {r.content[0].text if r.content else r}"
    assert r.structured_content is not None
    return r.structured_content


async def refused(session: ClientSession, tool: str, **args: Any) -> str:
    """The tool error's text; fails the test when the call succeeds."""
    r = await session.call_tool(tool, args)
    assert r.is_error, f"{tool} should have failed: {r.structured_content}"
    text = r.content[0].text
    assert "Traceback" not in text and "\n  File " not in text
    return text
