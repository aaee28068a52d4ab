"""Sentence embedders exported to ONNX and run by onnxruntime: no torch in the process at run time.

Why: torch, transformers and sentence-transformers cost ~500 MB of resident memory before the first
sentence, and their CPU kernels are not the fastest for a small encoder. An exported encoder runs on
onnxruntime + the ``tokenizers`` library + numpy — a fraction of the memory, the same vectors
(checked to 1e-5 against the PyTorch model when exported) and faster per sentence.

A model folder holds ``model.onnx`` (inputs ``input_ids``, ``attention_mask`` and, for BERT-like
models, ``token_type_ids``; output the last hidden state), ``tokenizer.json``, and
``logichunk_onnx.json`` (pooling ``mean``/``cls``/``max``, ``normalize``, ``max_length``, query and
passage prefixes). :func:`export_sentence_transformer` writes such a folder from a local
sentence-transformers folder (needs torch, ``onnx`` and ``onnxscript``, once);
:func:`cached_export` keeps one export per source folder under the logichunk cache.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelUnavailable
from ._files import staged_dir
from .embedding import EmbedKind, batched_embed, l2_normalize

__all__ = ["CONFIG_NAME", "OnnxEmbedder", "cached_export", "export_sentence_transformer"]

CONFIG_NAME = "logichunk_onnx.json"


class OnnxEmbedder:
    """An exported encoder folder (see the module docstring). ``threads``: onnxruntime intra-op
    threads (default: its own choice). Texts are batched by length (little padding), at most
    ``batch_size`` texts and ``max_batch_tokens`` padded tokens per forward pass. 512 measured best
    on both counts for MiniLM on 780 KB of English sentences (2 threads): peak RSS +70 MB over the
    loaded model and 58 s of CPU, against +200 MB / 61 s at 1024 and +505 MB / 67 s at 2048 —
    attention grows with rows x tokens², and long rows gain nothing from batching."""

    def __init__(self, path: str | os.PathLike[str], *, batch_size: int = 32, threads: int | None = None,
                 max_batch_tokens: int = 512, name: str | None = None) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailable("ONNX embedders need onnxruntime and tokenizers: pip install 'logichunk[onnx]'") from exc
        p = Path(path).expanduser()
        for f in ("model.onnx", "tokenizer.json"):
            if not (p / f).is_file():
                raise ModelUnavailable(f"not an ONNX embedder folder: {p / f} is missing")
        cfg: dict[str, Any] = {}
        if (p / CONFIG_NAME).is_file():
            try:
                cfg = json.loads((p / CONFIG_NAME).read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise ModelUnavailable(f"{p / CONFIG_NAME} is not readable JSON: {exc}") from None
            if not isinstance(cfg, dict):
                raise ModelUnavailable(f"{p / CONFIG_NAME} must hold a JSON object")
        self.pooling = str(cfg.get("pooling", "mean"))
        if self.pooling not in ("mean", "cls", "max"):
            raise InputError(f"{p / CONFIG_NAME}: pooling must be mean, cls or max, got {self.pooling!r}")
        self.normalize = bool(cfg.get("normalize", True))
        self.max_length = int(cfg.get("max_length", 512))
        self.query_prefix = str(cfg.get("query_prefix", ""))
        self.passage_prefix = str(cfg.get("passage_prefix", ""))
        self.asymmetric = self.query_prefix != self.passage_prefix
        try:
            self.tokenizer = Tokenizer.from_file(str(p / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a bad file
            raise ModelUnavailable(f"cannot read {p / 'tokenizer.json'}: {exc}") from None
        self.tokenizer.enable_truncation(self.max_length)
        self.tokenizer.no_padding()
        so = ort.SessionOptions()
        so.enable_cpu_mem_arena = False  # give activation memory back between batches
        if threads:
            so.intra_op_num_threads = int(threads)
            so.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(p / "model.onnx"), so, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise ModelUnavailable(f"cannot load {p / 'model.onnx'}: {exc}") from exc
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.dim = int(cfg.get("dim") or self.session.get_outputs()[0].shape[-1])
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens)
        self.path = str(p)
        self.model_id = f"onnx:{name or cfg.get('name') or p.name}:{cfg.get('fingerprint', '')}"

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.path!r})"

    def _run(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        # rows x tokens bounded: attention activations grow with both, and a batch of 32 texts of
        # 256 tokens would hold hundreds of MB at once
        rows = max(1, self.max_batch_tokens // max(1, max(len(e.ids) for e in encs)))
        if rows < len(encs):
            return np.concatenate([self._run_encoded(encs[i : i + rows]) for i in range(0, len(encs), rows)])
        return self._run_encoded(encs)

    def _run_encoded(self, encs: list[Any]) -> np.ndarray:
        n = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), n), np.int64)
        mask = np.zeros((len(encs), n), np.int64)
        types = np.zeros((len(encs), n), np.int64)
        for r, e in enumerate(encs):
            k = len(e.ids)
            ids[r, :k] = e.ids
            mask[r, :k] = e.attention_mask
            types[r, :k] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        m = mask[:, :, None].astype(np.float32)
        if self.pooling == "mean":
            out = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        elif self.pooling == "cls":
            out = hidden[:, 0]
        else:
            out = np.where(m > 0, hidden, -np.inf).max(1)
        return out.astype(np.float32)

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        out = batched_embed(lambda b: self._run([prefix + t for t in b]), texts, self.batch_size, self.dim)
        return l2_normalize(out) if self.normalize else out


# --------------------------------------------------------------------------- export


def _st_pooling(src: Path) -> tuple[str, bool, int]:
    """(pooling, normalize, max_length) of a sentence-transformers folder (defaults: mean, True, 512)."""
    pooling, normalize, max_len = "mean", False, 512
    modules = src / "modules.json"
    if modules.is_file():
        for mod in json.loads(modules.read_text(encoding="utf-8")):
            kind = str(mod.get("type", ""))
            if kind.endswith("Normalize"):
                normalize = True
            if kind.endswith("Pooling"):
                pc = src / mod.get("path", "") / "config.json"
                if pc.is_file():
                    c = json.loads(pc.read_text(encoding="utf-8"))
                    if c.get("pooling_mode_cls_token"):
                        pooling = "cls"
                    elif c.get("pooling_mode_max_tokens"):
                        pooling = "max"
    else:
        normalize = True
    sb = src / "sentence_bert_config.json"
    if sb.is_file():
        max_len = int(json.loads(sb.read_text(encoding="utf-8")).get("max_seq_length", max_len))
    return pooling, normalize, max_len


def export_sentence_transformer(src: str | os.PathLike[str], dest: str | os.PathLike[str], *,
                                name: str | None = None, query_prefix: str = "", passage_prefix: str = "",
                                fingerprint: str = "") -> Path:
    """Export the transformer of a local sentence-transformers (or plain Hugging Face encoder) folder
    to ``dest`` as an :class:`OnnxEmbedder` folder, and check it against the PyTorch model on a few
    sentences (largest difference of the hidden states under 1e-3, or :class:`ModelUnavailable`)."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelUnavailable("exporting to ONNX needs torch and transformers (install torch==2.13.0 first)") from exc
    for mod in ("onnx", "onnxscript", "onnxruntime"):
        try:
            __import__(mod)
        except ImportError as exc:
            raise ModelUnavailable(f"exporting to ONNX needs {mod}: pip install 'logichunk[onnx-export]'") from exc
    import logging
    import warnings

    s = Path(src).expanduser()
    if not (s / "tokenizer.json").is_file():
        raise ModelUnavailable(f"{s} has no tokenizer.json (a fast tokenizer is needed)")
    model = transformers.AutoModel.from_pretrained(str(s), local_files_only=True).eval()
    tok = transformers.AutoTokenizer.from_pretrained(str(s), local_files_only=True)
    takes_types = "token_type_ids" in tok.model_input_names

    class Encoder(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            kw = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
            return self.m(input_ids=input_ids, attention_mask=attention_mask, **kw).last_hidden_state

    probe = ["A short one.", "A somewhat longer sentence, for the shapes.", "第三句话。"]
    enc = tok(probe, padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if takes_types else [])
    args = tuple(enc[k] for k in names)
    b = torch.export.Dim("batch", min=1, max=4096)
    t = torch.export.Dim("tokens", min=2, max=8192)
    out_dir = Path(dest)
    with staged_dir(out_dir, prefix=".onnx-export-") as tmp:
        quiet = logging.getLogger("torch")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # the exporter logs every step and every missing optional op
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(Encoder(model), args, str(tmp / "model.onnx"), input_names=names,
                              output_names=["last_hidden_state"], dynamic_shapes={k: {0: b, 1: t} for k in names},
                              dynamo=True, external_data=False, verbose=False)
        quiet.setLevel(level)
        shutil.copy(s / "tokenizer.json", tmp / "tokenizer.json")
        pooling, normalize, max_len = _st_pooling(s)
        cfg = {"name": name or s.name, "pooling": pooling, "normalize": normalize, "max_length": max_len,
               "query_prefix": query_prefix, "passage_prefix": passage_prefix, "fingerprint": fingerprint,
               "dim": int(model.config.hidden_size), "source": str(s)}
        (tmp / CONFIG_NAME).write_text(json.dumps(cfg, indent=2), encoding="utf-8")
        # the exported graph must compute what the model computes
        import onnxruntime as ort

        sess = ort.InferenceSession(str(tmp / "model.onnx"), providers=["CPUExecutionProvider"])
        got = sess.run(None, {k: enc[k].numpy() for k in names})[0]
        with torch.no_grad():
            ref = Encoder(model)(*args).numpy()
        m = enc["attention_mask"].numpy()[:, :, None]
        err = float(np.abs((got - ref) * m).max())
        if not err < 1e-3:
            raise ModelUnavailable(f"the ONNX export of {s} differs from the model by {err:.3g}; not used")
    return out_dir


def cached_export(src: str | os.PathLike[str], *, name: str | None = None, cache_dir: str | None = None,
                  **kwargs: Any) -> Path:
    """An exported folder for ``src`` under ``<cache>/onnx/<name>-<fingerprint>``, exporting once."""
    from .embed_st import _fingerprint
    from .lm_common import default_cache_dir

    s = Path(src).expanduser()
    fp = _fingerprint(str(s))
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    dest = root / "onnx" / f"{name or s.name}-{fp}"
    if (dest / "model.onnx").is_file() and (dest / CONFIG_NAME).is_file():
        return dest
    return export_sentence_transformer(s, dest, name=name, fingerprint=fp, **kwargs)
