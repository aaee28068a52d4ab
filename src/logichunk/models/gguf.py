"""GGUF model files → a folder transformers loads (float32 safetensors), converted once and cached.

Why convert: transformers reads a GGUF by dequantising every tensor, which for the default 0.5B LM
takes about a minute and ~2 GB; saving the result once makes every later load a plain safetensors
load (seconds, memory-mapped). The packaged default LM and any GGUF file a user names go through the
same conversion. A GGUF file too large to convert is run as it is (quantised) by llama.cpp when
``llama-cpp-python`` is installed: :mod:`logichunk.models.lm_llamacpp`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import ModelUnavailable
from ._files import staged_dir
from .lm_common import default_cache_dir, require_torch

__all__ = ["available_memory", "convert_gguf", "float32_bytes", "float32_fits", "gguf_folder", "is_gguf_file"]

STAMP = "SOURCE_SHA256"  # the converted folder names the file it came from (a content hash or a key)


def is_gguf_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file that starts with the GGUF magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:  # missing, a folder, unreadable
        return False


def _file_key(path: Path) -> str:
    """A cheap identity for a user's GGUF (path, size, modification time): hashing a multi-GB model
    on every load would cost seconds; a changed file gets a new key and is converted again."""
    st = path.stat()
    return hashlib.sha256(f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()


def float32_bytes(path: str | os.PathLike[str]) -> int:
    """The size of the file's tensors once dequantised to float32 (read from its tensor table)."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
        return 4 * sum(int(t.n_elements) for t in reader.tensors)
    except Exception as e:  # noqa: BLE001 - a damaged file fails anywhere in the reader
        raise ModelUnavailable(f"cannot read {path} as GGUF ({type(e).__name__}: {e})") from e


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable``), None where the kernel does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def float32_fits(path: str | os.PathLike[str]) -> bool:
    """Whether converting the file to float32 fits in the memory available now: the dequantised
    model plus its copy while saving, twice its float32 size (True where the kernel does not say)."""
    have = available_memory()
    return have is None or 2 * float32_bytes(path) <= have


def convert_gguf(gguf: str | os.PathLike[str], dest: str | os.PathLike[str], *, stamp: str) -> Path:
    """Dequantise ``gguf`` through transformers and save model + tokenizer to ``dest`` (staged: the
    folder appears whole or not at all), with ``stamp`` written beside them. Returns ``dest``."""

    torch, transformers = require_torch()  # the one clear error when they are missing
    try:
        import gguf as _gguf  # noqa: F401  (transformers needs it to read the file)
    except ImportError as e:
        raise ModelUnavailable("reading a GGUF file needs the gguf package: pip install 'logichunk[lm]'") from e
    src = Path(gguf)
    try:
        tok = transformers.AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(src.parent), gguf_file=src.name, local_files_only=True, dtype=torch.float32)
    except Exception as e:  # noqa: BLE001 - a damaged or unsupported file fails anywhere in the reader
        raise ModelUnavailable(f"cannot read {src} as a causal LM through transformers "
                               f"({type(e).__name__}: {e})") from e
    # the weights are dequantised already: save them as a plain model
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        delattr(model.config, "quantization_config")
    with staged_dir(dest, prefix="hf-") as tmp:
        model.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        (tmp / STAMP).write_text(stamp + "\n")
    return Path(dest)


def gguf_folder(path: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The converted folder for the GGUF file ``path`` under ``<cache>/models/gguf/``, converting it
    the first time (the packaged default keeps its own folder, keyed by its known content hash:
    :func:`logichunk.models.lm.prepare_default_model`)."""

    src = Path(path).expanduser()
    if not is_gguf_file(src):
        raise ModelUnavailable(f"not a GGUF file: {src}")
    key = _file_key(src)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    dest = root / "models" / "gguf" / f"{src.stem}-{key[:16]}"
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().strip() == key:
        return dest
    if not float32_fits(src):
        raise ModelUnavailable(
            f"converting {src.name} to float32 needs about {2 * float32_bytes(src) / 2**30:.1f} GiB of memory, "
            f"{(available_memory() or 0) / 2**30:.1f} GiB are available: run the file as it is with llama.cpp "
            "(pip install 'logichunk[llamacpp]', --lm-backend llama.cpp), or use a smaller model")
    return convert_gguf(src, dest, stamp=key)
