"""Imports run one way: no cycle among the modules of ``src/logichunk`` (house rule; issue 21).

What counts as an import of module B by module A (read from the source with ``ast``, nothing is
imported):

* every ``import B`` and ``from ... import ...`` statement anywhere in A: at module level, inside
  functions and methods, under ``if TYPE_CHECKING:`` and in ``try:`` blocks alike. A function-level
  import still ties the two files together, so it is no way around a cycle;
* ``from P import x`` is an import of ``P.x`` when that is a module of the package, else of ``P``;
  relative imports are resolved against A's package;
* a module loaded by name: a string naming a module of the package given to ``__import__`` or
  ``importlib.import_module``, or listed in a tuple or list of such names (the CLI's table of its
  verbs' modules, ``EXTENSIONS``, which it ``__import__``s in a loop). Other strings that happen to
  name a module (a logger's name, ``importlib.resources.files("logichunk.memory")`` for package
  data) are not imports of another file's code.

Not counted: the implicit import of parent packages (importing ``logichunk.store.base`` runs
``logichunk/store/__init__.py`` first). Counting it would make every package whose ``__init__``
re-exports its submodules a cycle with each of them by construction (``logichunk/__init__.py``
exports ``chunk`` from ``chunkers``, which imports ``logichunk.errors``), which says nothing about
whether two files can be understood apart. Imports of other packages (numpy, torch) are ignored.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "logichunk"


def modules(src: Path = SRC, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``)."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def _call_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def imports_of(name: str, path: Path, is_pkg: bool, known: set[str]) -> set[str]:
    """The package's modules that module ``name`` imports (see the module docstring)."""
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:  # ``import a.b.c`` of a name inside a module
                    target = target.rpartition(".")[0]
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                if sub in known:
                    found.add(sub)
                elif mod in known:
                    found.add(mod)
        elif isinstance(node, ast.Call) and _call_name(node.func) in ("__import__", "import_module"):
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in known:
                found.add(node.args[0].value)
        elif isinstance(node, (ast.Tuple, ast.List)) and node.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in known for e in node.elts):
            found.update(e.value for e in node.elts)  # a table of modules loaded by name
    found.discard(name)
    return found


def graph(src: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    mods = modules(src, package)
    known = set(mods)
    return {name: imports_of(name, path, is_pkg, known) for name, (path, is_pkg) in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _path(edges: dict[str, set[str]], comp: list[str]) -> str:
    """One cycle through the component, for the failure message: a -> b -> ... -> a."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v] & members):
                if w == start:
                    seq = [v]
                    while seq[-1] != start:
                        seq.append(prev[seq[-1]])
                    return " -> ".join([start, *reversed(seq[:-1]), start]) if v != start else f"{start} -> {start}"
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return ", ".join(comp)  # pragma: no cover - a component always has a cycle through its first member


def test_no_import_cycle_among_the_package_modules():
    edges = graph()
    assert len(edges) > 100 and sum(map(len, edges.values())) > 200  # the walk saw the package
    found = cycles(edges)
    assert not found, "import cycles:\n" + "\n".join(_path(edges, c) for c in found)


# --------------------------------------------------------------------------- the walker itself


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        p = tmp_path / "pkg" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return graph(tmp_path, "pkg")


@pytest.mark.parametrize("b_text", [
    "from .a import f\n",  # module level
    "def g():\n    from .a import f\n",  # inside a function: still a cycle
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n",  # for types only
    "import pkg.a\n",
    "from . import a\n",
    "def load():\n    return __import__('pkg.a')\n",  # by name
    "import importlib\nMODS = ('pkg.a',)\ndef load():\n    return [importlib.import_module(m) for m in MODS]\n",
])
def test_the_walker_sees_every_kind_of_import(tmp_path, b_text):
    edges = _package(tmp_path, {"__init__.py": "", "a.py": "from .b import g\ndef f(): pass\n", "b.py": b_text})
    assert edges["pkg.b"] == {"pkg.a"}
    assert cycles(edges) == [["pkg.a", "pkg.b"]]


def test_the_walker_finds_longer_cycles_and_ignores_parents_and_other_packages(tmp_path):
    edges = _package(tmp_path, {
        "__init__.py": "from .sub.x import X\n",  # a package re-exporting its submodule: no cycle
        "sub/__init__.py": "",
        "sub/x.py": "import numpy\nfrom ..c import C\nX = 1\n",
        "c.py": "import os\nfrom .sub import y\nC = 1\n",
        "sub/y.py": "from pkg.sub.x import X\n",
    })
    assert edges["pkg"] == {"pkg.sub.x"} and edges["pkg.c"] == {"pkg.sub.y"}
    assert cycles(edges) == [["pkg.c", "pkg.sub.x", "pkg.sub.y"]]
    assert _path(edges, cycles(edges)[0]) == "pkg.c -> pkg.sub.y -> pkg.sub.x -> pkg.c"
