"""Write (or check) the traditional-to-simplified table the package ships, ``src/logichunk/text/han_fold_t2s.txt``,
from the installed OpenCC (the ``zh`` extra, ``opencc==1.4.2``): each Han character read alone by its ``t2s``
(:func:`logichunk.text.han_fold.opencc_table`). The file is the hash embedder's fold (``hash-v2``): a new table
is a new embedder version, so this is run only with one.

    python bench/han_fold_table.py [--check]
"""

import argparse
import importlib.metadata
import sys
from pathlib import Path

from logichunk.text import han_fold

OUT = Path(__file__).resolve().parents[1] / "src" / "logichunk" / "text" / han_fold.TABLE_FILE


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether the file is OpenCC's table")
    args = ap.parse_args()
    table = han_fold.opencc_table()
    version = importlib.metadata.version("opencc")
    if args.check:
        same = han_fold.han_fold_table() == table
        print(f"{OUT.name}: {'the same as' if same else 'NOT the same as'} opencc {version}'s t2s ({len(table)} pairs)")
        return 0 if same else 1
    head = [f"# Traditional Han characters and the simplified ones they fold to, one pair a line: OpenCC {version}'s",
            "# t2s read one character at a time (https://github.com/BYVoid/OpenCC, Apache License 2.0; its",
            "# TSCharacters dictionaries and the compatibility ideographs). Made by bench/han_fold_table.py.",
            "# The hash embedder's hash-v2 folds by this file: changing it is a new embedder version."]
    body = [chr(k) + chr(v) for k, v in sorted(table.items())]
    OUT.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(body)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
