"""Texts read as code by their form (bench/QUALITY.md, thirty-sixth session): a JavaScript module that is one object,
a Python module of mostly its docstring, a brace language's text holding a reStructuredText title's ``~~~~``
underline (no Markdown fence); and prose of the same marks that stays prose."""

import pytest

from logichunk import chunk
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

#: a brace language's file whose usage text underlines a title with tildes
RST_JS = "const usage = `\nUsage\n~~~~~\n  npm thing <pkg>\n`\n\nfunction run (args) {\n  if (args.length === 0) {\n    throw new Error(usage)\n  }\n  for (const a of args) {\n    if (a.startsWith('-')) {\n      continue\n    }\n    console.log(a)\n  }\n  return args.length\n}\n\nmodule.exports = run\n"

#: a Python module that defines nothing at column 0: its docstring, imports and constants
DOC_PY = '"""Constants of the wire format.\n\nThe names below are what the protocol\'s messages carry; each is documented\nwhere it is used.\n\nUsage\n-----\nImport what you need::\n\n    from wire.constants import HEADER\n\n"""\nimport struct\nfrom .types import Kind\n\nHEADER = struct.Struct(">HH")\nKINDS = {\n    Kind.PING: 1,\n    Kind.PONG: 2,\n    Kind.DATA: 3,\n}\nLIMITS = [\n    1024,\n    65536,\n]\n'

#: a JavaScript module of one object
ONE_JS = "'use strict'\n\n// Symbols shared by the client's modules\nmodule.exports = {\n  kClose: Symbol('close'),\n  kDestroy: Symbol('destroy'),\n  kDispatch: Symbol('dispatch'),\n  kUrl: Symbol('url'),\n  kWriting: Symbol('writing'),\n  kResuming: Symbol('resuming'),\n  kQueue: Symbol('queue'),\n  kConnect: Symbol('connect'),\n  kConnecting: Symbol('connecting'),\n  kKeepAliveDefaultTimeout: Symbol('default keep alive timeout'),\n  kKeepAliveMaxTimeout: Symbol('max keep alive timeout')\n}\n"

#: prose with the same marks: a reStructuredText title over a fence-like underline, a quotation that opens with
#: three quotes, an object's lines in a Markdown paragraph
PROSE = [
    "Usage\n~~~~~\n\nRun the tool with a package name; it prints what it found.\nThen it exits.\n",
    '"""Well," she said, "that is all."\n\nimport duties rose that year, and the port was quiet.\n'
    "The harbour master kept his own count of the ships.\n",
    "The settings are kept in one object:\n\nmodule.exports = {\n  name: 'x',\n}\n\nand read at start.\n",
]


@pytest.mark.parametrize("text", [RST_JS, DOC_PY, ONE_JS], ids=["rst-underline", "docstring-module", "one-object"])
def test_read_as_code(text):
    assert layout(split_sentences(text)).depth is not None  # (its nesting read: code)
    for c in chunk(text, max_size=120):
        assert not text[c.span.start : c.span.end].lstrip().startswith(("}", "]"))  # (closing lines stay)


@pytest.mark.parametrize("text", PROSE, ids=["rst-title", "quoted-prose", "markdown-object"])
def test_prose_stays_prose(text):
    assert layout(split_sentences(text)).depth is None
