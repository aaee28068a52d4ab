"""GGUF files as language models: converted once through transformers (always available with the
[lm] extra), or run by llama.cpp when llama-cpp-python is installed (tests/test_llamacpp.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")

from gguf_helpers import TEXT, tiny_gguf  # noqa: E402
from logichunk.errors import ModelUnavailable  # noqa: E402
from logichunk.models import gguf as gguf_mod  # noqa: E402
from logichunk.models import lm_llamacpp  # noqa: E402
from logichunk.models.lm import TransformersLM, load_lm, resolve_dtype  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_gguf(tmp_path_factory.mktemp("gguf"))


@pytest.fixture()
def no_llamacpp(monkeypatch, tmp_path):
    """The transformers path, whatever is installed, with a private model cache."""
    monkeypatch.setattr(lm_llamacpp, "llama_cpp_available", lambda: False)
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_gguf_file_scores_like_the_model_it_was_written_from(tiny, no_llamacpp) -> None:
    model, tok, path = tiny
    # (auto loads bfloat16 on a CPU with AMX tiles: float32 asked for, to compare with the model's own scores)
    assert load_lm(str(path)).model_id == f"tiny-qwen/{resolve_dtype('auto')}"
    lm = load_lm(str(path), dtype="float32")
    assert isinstance(lm, TransformersLM) and lm.model_id == "tiny-qwen/float32"
    want = TransformersLM(model, tok).token_logprobs(TEXT)
    got = lm.token_logprobs(TEXT)
    np.testing.assert_array_equal(got.starts, want.starts)
    np.testing.assert_array_equal(got.ends, want.ends)
    np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-5, equal_nan=True)
    assert np.isfinite(got.logprobs[1:]).all()
    # the biases made it through (a file without them scores differently)
    assert lm.model.model.layers[0].self_attn.q_proj.bias.abs().sum() > 0


def test_gguf_is_converted_once_and_again_when_the_file_changes(tiny, no_llamacpp, monkeypatch, tmp_path) -> None:
    _, _, src = tiny
    path = tmp_path / "model.gguf"
    path.write_bytes(src.read_bytes())
    calls = []
    real = gguf_mod.convert_gguf
    monkeypatch.setattr(gguf_mod, "convert_gguf", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = gguf_mod.gguf_folder(path)
    assert gguf_mod.gguf_folder(path) == first and len(calls) == 1  # the cached folder
    assert (first / "config.json").is_file() and (first / gguf_mod.STAMP).is_file()
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # the file changed
    second = gguf_mod.gguf_folder(path)
    assert len(calls) == 2 and second != first and (second / "config.json").is_file()


@pytest.mark.parametrize("damage", ["truncated", "magic only", "text"])
def test_damaged_gguf_is_a_clear_error_and_leaves_no_folder(tiny, no_llamacpp, tmp_path, damage) -> None:
    _, _, src = tiny
    bad = tmp_path / "bad.gguf"
    data = {"truncated": src.read_bytes()[:5000], "magic only": b"GGUFxxxx", "text": b"not a model at all\n"}[damage]
    bad.write_bytes(data)
    with pytest.raises(ModelUnavailable) as ei:
        gguf_mod.gguf_folder(bad)
    assert str(bad) in str(ei.value)
    folder = no_llamacpp / "models" / "gguf"
    assert not folder.exists() or not any(p.name.startswith("bad-") for p in folder.iterdir())


def test_cli_chunks_with_a_gguf_lm(tiny, tmp_path, monkeypatch, capsys) -> None:
    """The CLI's main() in this process (torch and transformers are loaded already: two interpreters that
    import them again cost ~10 s of CPU and prove nothing more; an exception main() let out fails here)."""
    import json

    from logichunk.cli import main

    _, _, path = tiny
    doc = tmp_path / "doc.txt"
    doc.write_text(TEXT * 3, encoding="utf-8")
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    code = main(["chunk", str(doc), "--method", "ppl", "--lm", str(path), "--lm-backend", "transformers",
                 "--max-size", "80", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    leaves = [x for x in rows if x["level"] == max(y["level"] for y in rows)]
    assert "".join(x["text"] for x in leaves) == TEXT * 3
    assert f"lm: tiny-qwen/{resolve_dtype('auto')}" in err
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 10)
    code = main(["chunk", str(doc), "--method", "ppl", "--lm", str(bad), "--lm-backend", "transformers"])
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in err and "bad.gguf" in err


def test_a_model_too_large_to_convert_asks_for_llamacpp(tiny, no_llamacpp, monkeypatch) -> None:
    _, _, path = tiny
    assert gguf_mod.float32_bytes(path) > 4 * 32 * 32  # the tensor table is read, not guessed
    monkeypatch.setattr(gguf_mod, "available_memory", lambda: 1024)
    with pytest.raises(ModelUnavailable, match=r"llamacpp"):
        load_lm(str(path))
    assert not (no_llamacpp / "models" / "gguf").exists()  # nothing half-converted


def test_a_folder_that_is_not_a_model_is_still_a_clear_error(tmp_path, no_llamacpp) -> None:
    with pytest.raises(ModelUnavailable):
        load_lm(str(tmp_path / "nowhere"))
    (tmp_path / "notes.gguf").write_text("hello")  # named .gguf, not one
    with pytest.raises(ModelUnavailable):
        load_lm(str(tmp_path / "notes.gguf"))
    with pytest.raises(ModelUnavailable, match="not one"):
        load_lm(str(tmp_path), backend="llama.cpp")  # a folder is not a GGUF file


def test_gguf_helper_writes_what_gguf_reads(tiny) -> None:
    import gguf

    _, _, path = tiny
    r = gguf.GGUFReader(str(path))
    assert bytes(r.fields["general.architecture"].parts[-1]).decode() == "qwen2"
    assert {t.name for t in r.tensors} >= {"token_embd.weight", "blk.0.attn_q.bias", "output_norm.weight"}
    assert Path(path).read_bytes()[:4] == b"GGUF"


def test_local_llm_needs_a_local_model(monkeypatch) -> None:
    from logichunk.errors import LogichunkError
    from logichunk.models import registry

    class Remote:  # what load_lm gives for an http(s) completions endpoint
        model_id = "remote-endpoint"

    monkeypatch.setattr("logichunk.models.lm.load_lm", lambda spec=None, **k: Remote())
    with pytest.raises(LogichunkError, match="remote-endpoint is not a local model"):
        registry.resolve_llm("local:http://127.0.0.1:9/v1")
