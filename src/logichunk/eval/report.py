"""Results on disk, markdown tables and matplotlib plots.

Every ``logichunk eval`` run stores its rows in ``OUT/results.jsonl`` (one JSON object per
(task, dataset, method); a re-run replaces the rows it produces) and, for gap signals, one sample
document's gap-score curve in ``OUT/curves/``. ``logichunk eval report --out OUT`` turns them into
``OUT/REPORT.md`` and PNG plots.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["RESULTS", "load_rows", "markdown", "plot_curve", "plot_metric", "save_curve", "save_rows",
           "write_report"]

RESULTS = "results.jsonl"
KEY = ("task", "dataset", "method")
PEER_MARK = "†"
ORACLE_MARK = "*"


# --------------------------------------------------------------------------- storage


def load_rows(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    # the shared decoder: a binary or non-UTF-8 file is one clear error
    from ..text.decode import read_path, speaking_as

    rows: list[dict[str, Any]] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            continue
        with speaking_as(None):  # (results this tool writes in UTF-8: no encoding to name, `eval` takes none)
            text = read_path(p)
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return rows


def save_rows(out_dir: str | Path, new: Sequence[dict[str, Any]]) -> Path:
    """Merge ``new`` into ``OUT/results.jsonl`` (same task/dataset/method: the new row wins)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULTS
    keep: dict[tuple, dict[str, Any]] = {}
    for r in load_rows([path]) + list(new):
        keep[tuple(r.get(k) for k in KEY)] = r
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep.values()), encoding="utf-8")
    tmp.replace(path)
    return path


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")


def save_curve(out_dir: str | Path, curve: dict[str, Any]) -> Path:
    d = Path(out_dir) / "curves"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{_slug(curve['dataset'])}__{_slug(curve['method'])}.json"
    p.write_text(json.dumps(curve, ensure_ascii=False), encoding="utf-8")
    return p


# --------------------------------------------------------------------------- markdown


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.{digits}f}"
    return str(v)


def _label(r: dict[str, Any]) -> str:
    name = str(r["method"])
    if r.get("peer"):
        name += PEER_MARK
    if r.get("oracle"):
        name += ORACLE_MARK
    return name


def _table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def _datasets(rows: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["dataset"] for r in rows))


def _methods(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One representative row per method, in order: logichunk, baselines, peers, oracles last."""
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        seen.setdefault(r["method"], r)
    return sorted(seen.values(), key=lambda r: (bool(r.get("oracle")), bool(r.get("peer"))))


def pivot(rows: Sequence[dict[str, Any]], metric: str, *, lower_is_better: bool, digits: int = 3) -> str:
    """Methods × data sets for one metric; the best non-oracle value of each column in bold; the
    first row gives n (documents or queries) per data set, the last column the total seconds."""
    ds = _datasets(rows)
    by = {(r["method"], r["dataset"]): r for r in rows}
    best: dict[str, float] = {}
    for d in ds:
        vals = [r[metric] for r in rows if r["dataset"] == d and not r.get("oracle")
                and isinstance(r.get(metric), int | float) and not math.isnan(r[metric])]
        if vals:
            best[d] = min(vals) if lower_is_better else max(vals)
    body = [["*n*", *[str(next((r["n"] for r in rows if r["dataset"] == d), "")) for d in ds], ""]]
    for m in _methods(rows):
        cells = []
        total = 0.0
        for d in ds:
            r = by.get((m["method"], d))
            if r is None:
                cells.append("")
                continue
            v = r.get(metric)
            total += float(r.get("seconds") or 0)
            s = _fmt(v, digits)
            if not r.get("oracle") and isinstance(v, int | float) and d in best and v == best[d]:
                s = f"**{s}**"
            cells.append(s)
        body.append([_label(m), *cells, f"{total:.0f}"])
    return _table(["method", *ds, "seconds"], body)


SEG_COLS = [("pk", "Pk ↓"), ("windowdiff", "WD ↓"), ("f1", "F1±1 ↑"), ("hyp_per_doc", "cuts/doc"),
            ("gold_per_doc", "gold/doc"), ("seconds", "s")]
CH_COLS = [("recall", "recall"), ("precision", "precision"), ("iou", "IoU"),
           ("evidence_recall_at_k", "evidence R"), ("recall_at_k", "doc R"), ("mrr", "MRR"),
           ("chunks", "chunks"), ("mean_tokens", "tokens/chunk"), ("k_mean", "chunks/query"),
           ("unlocated", "unlocated"), ("seconds", "s")]
RET_COLS = [("recall_at_k", "doc R@k"), ("evidence_recall_at_k", "evidence R@k"), ("mrr", "MRR"),
            ("recall", "span recall"), ("precision", "precision"), ("support_recall_at_k", "supp. R@k"),
            ("all_docs_at_k", "all docs@k"), ("items_per_query", "items/query"), ("p50_ms", "p50 ms"),
            ("seconds", "s")]


_DIGITS = {"chunks": 0, "unlocated": 0, "seconds": 1, "mean_tokens": 1, "k_mean": 1, "hyp_per_doc": 1,
           "gold_per_doc": 1, "precision": 4, "iou": 4}


def per_dataset(rows: Sequence[dict[str, Any]], cols: Sequence[tuple[str, str]], sort_key: str | None,
                lower_is_better: bool = False) -> str:
    parts = []
    for d in _datasets(rows):
        rs = [r for r in rows if r["dataset"] == d]
        if sort_key:
            rs.sort(key=lambda r: (bool(r.get("oracle")),
                                   (1 if lower_is_better else -1) * float(r.get(sort_key) or 0)))
        n = rs[0].get("n", "")
        extra = ""
        if rs and "budget_tokens" in rs[0]:
            extra = (f", budget {rs[0]['budget_tokens']} tokens, target size {rs[0].get('size')} "
                     f"{rs[0].get('unit')}, embedder {rs[0].get('embedder')}, {rs[0].get('docs')} documents")
        elif rs and "k" in rs[0]:
            extra = f", k = {rs[0]['k']}, embedder {rs[0].get('embedder')}"
        body = [[_label(r), *[_fmt(r.get(c), _DIGITS.get(c, 3)) for c, _ in cols]] for r in rs]
        parts.append(f"**{d}** (n = {n}{extra})\n\n" + _table(["method", *[h for _, h in cols]], body))
    return "\n\n".join(parts)


def markdown(rows: Sequence[dict[str, Any]], images: Sequence[str] = ()) -> str:
    out = ["# logichunk evaluation report", "",
           f"{PEER_MARK} peer library · {ORACLE_MARK} oracle (uses the gold number of boundaries: not a "
           "fair comparison, shown for the signal's ranking quality) · bold: best non-oracle value", ""]
    seg = [r for r in rows if r.get("task") == "segmentation"]
    ch = [r for r in rows if r.get("task") == "chunking"]
    ret = [r for r in rows if r.get("task") == "retrieval"]
    if seg:
        out += ["## Segmentation", "", "### Pk (lower is better)", "", pivot(seg, "pk", lower_is_better=True), "",
                "### WindowDiff (lower is better)", "", pivot(seg, "windowdiff", lower_is_better=True), "",
                "### Boundary F1, ±1 unit (higher is better)", "", pivot(seg, "f1", lower_is_better=False), "",
                "### Per data set", "", per_dataset(seg, SEG_COLS, "pk", lower_is_better=True), ""]
    if ch:
        out += ["## Chunking (span retrieval at a fixed token budget)", "",
                "### IoU (higher is better)", "", pivot(ch, "iou", lower_is_better=False, digits=4), "",
                "### Token recall (higher is better)", "", pivot(ch, "recall", lower_is_better=False), "",
                "### Per data set", "", per_dataset(ch, CH_COLS, "iou"), ""]
    if ret:
        out += ["## Retrieval", "", per_dataset(ret, RET_COLS, "recall_at_k"), ""]
    if images:
        out += ["## Plots", ""] + [f"![{Path(i).stem}]({Path(i).name})" for i in images] + [""]
    return "\n".join(out)


# --------------------------------------------------------------------------- plots


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_metric(rows: Sequence[dict[str, Any]], metric: str, title: str, path: Path,
                lower_is_better: bool) -> Path:
    """Grouped bars: one group per data set, one bar per method (peers hatched, oracles faded)."""
    plt = _plt()
    ds = _datasets(rows)
    methods = _methods(rows)
    by = {(r["method"], r["dataset"]): r for r in rows}
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(ds) + 0.25 * len(methods) * len(ds)), 4.8))
    cmap = plt.get_cmap("tab20")
    for j, m in enumerate(methods):
        xs, ys = [], []
        for i, d in enumerate(ds):
            r = by.get((m["method"], d))
            if r is not None and isinstance(r.get(metric), int | float) and not math.isnan(r[metric]):
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(r[metric])
        ax.bar(xs, ys, width, label=_label(m), color=cmap(j % 20), hatch="//" if m.get("peer") else None,
               alpha=0.45 if m.get("oracle") else 1.0, edgecolor="black", linewidth=0.3)
    ax.set_xticks(range(len(ds)))
    ax.set_xticklabels([d.split("/")[-1] for d in ds], rotation=15)
    ax.set_ylabel(metric + (" (lower is better)" if lower_is_better else " (higher is better)"))
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_curve(curves: Sequence[dict[str, Any]], path: Path) -> Path:
    """Gap-score curves of one document (one panel per method), gold boundaries as grey bands and
    predicted ones as red ticks."""
    plt = _plt()
    import numpy as np

    fig, axes = plt.subplots(len(curves), 1, figsize=(11, 2.2 * len(curves) + 0.6), sharex=True, squeeze=False)
    for ax, c in zip(axes[:, 0], curves, strict=True):
        s = np.asarray(c["scores"], dtype=float)
        x = np.arange(s.size)
        ax.plot(x, s, lw=1.2, color="tab:blue", label="gap score")
        for g in c["gold"]:
            ax.axvspan(g - 0.5, g + 0.5, color="0.6", alpha=0.45, lw=0)
        pred = np.asarray(c["predicted"], dtype=int)
        if pred.size and s.size:
            ax.plot(pred, s[np.clip(pred, 0, s.size - 1)], "v", color="tab:red", ms=6, label="predicted")
        ax.set_ylabel(c["method"], fontsize=9)
        ax.grid(alpha=0.25)
    axes[0, 0].set_title(f"{curves[0]['dataset']} · document {curves[0]['doc_id']} · grey: gold boundaries, "
                         "red: predicted")
    axes[-1, 0].set_xlabel("gap (after unit i)")
    axes[0, 0].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(out_dir: str | Path, results: Sequence[str | Path] | None = None) -> tuple[Path, list[str]]:
    """Write ``OUT/REPORT.md`` and the plots; returns (report path, notes)."""
    from ..errors import LogichunkError

    out = Path(out_dir)
    paths = list(results) if results else [out / RESULTS]
    rows = load_rows(paths)
    if not rows:
        raise LogichunkError(f"no results in {', '.join(map(str, paths))}: run `logichunk eval segmentation|"
                             f"chunking|retrieval --out {out}` first")
    out.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    images: list[str] = []
    try:
        _plt()
    except ImportError:
        notes.append("matplotlib is not installed: no plots (pip install 'logichunk[eval]')")
    else:
        seg = [r for r in rows if r.get("task") == "segmentation"]
        ch = [r for r in rows if r.get("task") == "chunking"]
        if seg:
            images.append(str(plot_metric(seg, "pk", "Pk per method and data set", out / "pk.png", True)))
        if ch:
            images.append(str(plot_metric(ch, "iou", "Chunking: IoU at a fixed token budget",
                                          out / "chunking_iou.png", False)))
            images.append(str(plot_metric(ch, "recall", "Chunking: token recall at a fixed token budget",
                                          out / "chunking_recall.png", False)))
        by_ds: dict[str, list[dict[str, Any]]] = {}
        for f in sorted((out / "curves").glob("*.json")):
            try:
                c = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            by_ds.setdefault(c["dataset"], []).append(c)
        for d, cs in by_ds.items():
            images.append(str(plot_curve(cs, out / f"curve_{_slug(d)}.png")))
    report = out / "REPORT.md"
    report.write_text(markdown(rows, images), encoding="utf-8")
    return report, notes
