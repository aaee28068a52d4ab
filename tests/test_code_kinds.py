"""Which texts are read as source code (text/code_text.py), on the kinds the first reading passed by: a brace
language's file whose comment or string holds a Markdown fence, a C header of macros continued with ``\\``, an ES
module of only import lines, a Python module that imports nothing at column 0; and texts that look like code but
are not (Markdown, LaTeX, prose, minified one-liners) keep prose's reading."""

from __future__ import annotations

import numpy as np

from logichunk import chunk
from logichunk.text.sentences import _split_scalar, _split_vector, split_sentences
from logichunk.text.structure import layout

# (a comment shows an example between Markdown fences; a string holds one: neither is a Markdown document)
JS_FENCED = """'use strict'

function place (dep, edge) {
  // Given a tree like this:
  // ```
  // root -> (a@1)
  // ```
  // the new dep goes under root.
  if (!edge) {
    return null
  }
  const lines = ['```bash', dep.name, '```']
  for (const line of lines) {
    out.push(line)
  }
  return lines
}

module.exports = place
"""

# (a C header of macros, each continued with "\\": the continued lines end with "\\", not as code does)
C_MACROS = """#ifndef LHASH_H
# define LHASH_H

# define DEFINE_LHASH_OF(type) \\
    LHASH_OF(type) { \\
        union lh_##type##_dummy { \\
            void* d1; \\
            unsigned long d2; \\
        } dummy; \\
    }; \\
    static int lh_##type##_insert(LHASH_OF(type) *lh, type *d) \\
    { \\
        return OPENSSL_LH_insert((OPENSSL_LHASH *)lh, d); \\
    } \\
    LHASH_OF(type)

# define IMPLEMENT_LHASH_DOALL_ARG(type, argtype) \\
    int_implement_lhash_doall(type, argtype, type)

#endif
"""

# (an ES module of only imports and re-exports: no block, one line ends with ";" of every kind)
ESM = """import Diff from './diff/base.js';
import { diffChars, characterDiff } from './diff/character.js';
import { diffWords, wordDiff } from './diff/word.js';
import { diffLines, lineDiff } from './diff/line.js';
export * from './options.js';
export { Diff, diffChars, diffWords, diffLines };
"""

# (a Python module that imports nothing at column 0: a docstring, then definitions)
PY_NO_IMPORT = '''"""
Convert a user's name into a file name that is safe on every file system.
"""

# the characters no file system takes
illegal = '" * + / : < > ? [ \\\\ ] | \\0'.split(" ")


class NameTranslationError(Exception):
    pass


def user_name_to_file_name(name, existing=(), prefix="", suffix=""):
    # a name that opens with a period is hidden
    if name[:1] == ".":
        name = "_" + name[1:]
    parts = []
    for character in name:
        parts.append(character)
    return prefix + "".join(parts) + suffix
'''

NOT_CODE = {
    # a README whose example imports sit in a fence, and whose prose names them
    "markdown": "# Usage\n\nImport what you need:\n\n```js\nimport Diff from './diff/base.js';\n"
                "import { diffChars } from './diff/character.js';\nexport * from './options.js';\n```\n\n"
                "Then call `diffChars(a, b)`; it returns a list of {value, added, removed} parts.\n",
    # LaTeX rows end with "\\\\", braces balance, one line opens with "#"
    "latex": "\\begin{tabular}{ll}\n\\# & name \\\\\n1 & {alpha} \\\\\n2 & {beta} \\\\\n3 & {gamma} \\\\\n"
             "\\end{tabular}\n",
    # prose that opens with quotes and names a class and a def
    "prose": '"""Well," she said, "the class meets at noon."\nclass is where they learn; def is slang for\n'
             "definitely, and nobody there would say so. They import # signs from {elsewhere}.\n",
    # a list of shell commands in a plain text note
    "notes": "Steps to import the data:\nimport the file from 'data.csv' first\nexport the table as "
             "'out.json' when done\n# then check the log\nThat is all {for now}.\n",
}


def _opens_sentence(text: str, line: str) -> bool:
    return text.index(line) in set(split_sentences(text).starts.tolist())


def test_a_fence_in_a_comment_or_a_string_is_no_markdown():
    assert layout(split_sentences(JS_FENCED)).depth is not None
    assert _opens_sentence(JS_FENCED, "return null")  # (a line of code is a sentence)


def test_a_macros_continued_lines_are_its_own():
    assert layout(split_sentences(C_MACROS)).depth is not None


def test_an_es_module_of_imports_is_code():
    for line in ESM.splitlines():
        assert _opens_sentence(ESM, line), line


def test_a_python_module_that_imports_nothing_is_code():
    lay = layout(split_sentences(PY_NO_IMPORT))
    assert lay.depth is not None
    assert _opens_sentence(PY_NO_IMPORT, "parts = []")


def test_code_like_prose_markdown_and_latex_keep_prose_reading():
    for name, text in NOT_CODE.items():
        assert layout(split_sentences(text)).depth is None, name
        a, b = _split_scalar(text, None), _split_vector(text)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), name
    # (the prose that opens with quotes keeps its wrapped lines in one sentence)
    prose = NOT_CODE["prose"]
    sents = split_sentences(prose)
    assert int(np.searchsorted(sents.starts, prose.index("definitely"), side="right")) == 1


def test_a_minified_one_liner_is_no_code_and_tiles():
    body = "".join(f"function f{k}(a,b){{if(a>b){{return a-b}}else{{return b-a}}}};var v{k}=f{k}(1,2);"
                   for k in range(300))
    text = "!function(){" + body + "}();\n"
    assert layout(split_sentences(text)).depth is None
    for m in (200, 512):
        tree = chunk(text, max_size=m)
        assert "".join(text[c.span.start : c.span.end] for c in tree if c.level == 1) == text
