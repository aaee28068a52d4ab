"""The README's Python examples as the tests run them, and the output the README shows for them checked against
what they print: an example whose shown output drifted taught the reader something untrue."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: a remark after a shown line (``'...'     <- up to 32 tokens of the text before``): not printed
_REMARK = re.compile(r"\s{2,}<-\s.*$")
#: a print line's own comment that shows its output, a Python value up to a `` — `` remark: ``# ('1.1', '1.2') — ids``
#: (``...`` in it: the printed line starts with what comes before)
_INLINE = re.compile(r"""print\(.*\)\s+#\s+([(\[{'"].*?)(?:\s+—\s.*)?$""")


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def run_block(code: str) -> str:
    """What an example prints, run as written (in the current folder)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    return out.getvalue()


def shown_output(code: str) -> list[tuple[str, bool]]:
    """The output an example shows, in order, as ``(text, whole)``: the ``# `` lines right after a ``print(`` line,
    one printed line each (``whole``: the line itself, a ``<-`` remark after it left off), and a print line's own
    comment that opens like a Python value (``# ('1.1', '1.2') — its children``: the line; ``('1.1', ...)``: what
    the line starts with, up to the ``...``). A comment after a print that is prose, not output (the store's and
    the memory's examples have some), would be read as output: run it on the examples that show output only."""
    shown: list[tuple[str, bool]] = []
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if (m := _INLINE.search(line)) is not None:
            value = m.group(1)
            shown.append((value.split("...")[0], False) if "..." in value else (value, True))
        if "print(" not in line or line.lstrip().startswith("#"):
            continue
        for after in lines[i + 1:]:
            if not after.startswith("# "):
                break
            shown.append((_REMARK.sub("", after[2:]), True))
    return shown


def check_shown(code: str, printed: str) -> int:
    """Each shown line is printed, in the order shown (exactly, or its shown opening); how many were checked."""
    out = printed.splitlines()
    at = 0
    for text, whole in shown_output(code):
        hit = next((k for k in range(at, len(out)) if (out[k] == text if whole else out[k].startswith(text))), None)
        assert hit is not None, f"README shows {text!r}{'' if whole else '...'}; printed:\n" + "\n".join(out[at:at + 8])
        at = hit + 1
    return len(shown_output(code))
