"""Argument and output helpers every verb's module shares (``logichunk.cli`` and the store, eval, memory,
retrieve and scale verbs it loads by name): below all of them, so none imports the command's own module."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .errors import InputError

__all__ = ["check_out_path", "encoding_option", "int_at_least", "one_line"]


def int_at_least(lowest: int):
    """An argparse type: an integer of at least ``lowest`` (a negative --skip or a --k of 0 is a typo,
    not a run). Every verb's numeric flags use it."""

    def parse(v: str) -> int:
        try:
            n = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {v!r}") from None
        if n < lowest:
            raise argparse.ArgumentTypeError(f"must be at least {lowest}, got {n}")
        return n

    return parse


def encoding_option(p: argparse.ArgumentParser) -> None:
    """``--encoding NAME`` for a verb that reads files: the codec their bytes are read with (an unknown name is
    the parser's one-line error); default UTF-8, UTF-16/32 by their mark, GB18030 read as Chinese (said)."""

    def codec(v: str) -> str:
        from .text.decode import check_encoding

        try:
            return check_encoding(v) or v
        except InputError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    p.add_argument("--encoding", type=codec, default=None, metavar="NAME",
                   help="read the files' bytes as this encoding (any Python codec: gbk, gb18030, big5, shift_jis, "
                        "euc-kr, cp1252, latin-1...); a byte it cannot read is an error, never replaced. Default: "
                        "UTF-8 (UTF-16/32 with a byte-order mark); bytes that are not UTF-8 but read as Chinese in "
                        "GB18030 are read so, with a note")


def check_out_path(target: str, inputs: Sequence[str], what: str = "the chunks", option: str = "--out") -> None:
    """``--out`` (or another ``option`` naming a file to write) must be a file in an existing folder and not
    one of the inputs (it would be replaced by ``what``): checked before any work, so a long run does not fail
    at its very end."""
    t = Path(target)
    if t.is_dir() or not t.resolve().parent.is_dir():
        raise InputError(f"{option} {target}: not a file in an existing folder")
    if t.exists() and any(i != "<stdin>" and Path(i).exists() and Path(i).resolve() == t.resolve() for i in inputs):
        raise InputError(f"{option} {target} is also an input: write {what} somewhere else")


#: control characters shown as escapes in a preview line (an ESC or BEL in a file must not colour or beep the
#: user's terminal): C0 and C1 but the whitespace that ``split`` folds away, and DEL
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if not chr(c).isspace()}


def visible(text: str) -> str:
    """``text`` for a reader's terminal: its control characters but whitespace written as escapes (``\\x1b``),
    what the table views and ``--format markdown`` print (``jsonl`` and ``json`` keep the exact text)."""
    return text.translate(_CONTROLS)


def one_line(text: str, n: int = 60) -> str:
    """The start of ``text`` on one line for a table, at most ``n`` characters: whitespace folded, control
    characters escaped (every verb's table previews a file's text with it)."""
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= n else flat[: n - 1] + "…"
