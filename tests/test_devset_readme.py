"""The README dev set builder (bench/devset_readme.py): sections come from the document's own
Markdown headings, what is not prose is dropped, gold boundaries fall where sections end."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "bench" / "devset_readme.py"
_spec = importlib.util.spec_from_file_location("devset_readme", _PATH)
dr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dr)

_PROSE = ("The widget reader takes one file at a time and parses it. It keeps every widget it finds in a list. "
          "Widgets that cannot be parsed are reported on standard error. ")
DOC = f"""Intro text before any heading is dropped because no section holds it yet.

# Widgets

{_PROSE}

```python
import widgets  # code is not prose
```

- a list item is dropped even when it is long enough to be a sentence
| a | table |

Setext section
--------------

{_PROSE.replace("widget", "gadget")}

    indented code is dropped as well, whatever it says here

## Licence

{_PROSE.replace("widget", "licence")}
"""


def test_sections_and_gold():
    secs = dr.sections(DOC)
    assert len(secs) == 3
    doc = dr.document("test", DOC * 4)  # 12 sections: kept; each copy's intro joins the section before it
    segs = [3, 3, 4] * 3 + [3, 3, 3]
    assert doc is not None and doc["segments"] == segs
    assert doc["boundaries"] == [sum(segs[: k + 1]) - 1 for k in range(11)]
    assert not any("import" in u or "list item" in u or "indented" in u for u in doc["units"])
    assert dr.document("short", DOC) is None  # 9 sentences: too short


def test_own_readme_is_left_out():
    assert "logichunk" in dr._OWN
    assert all(not name.startswith("pypi:logichunk") for name, _ in dr.sources())
