"""Hub ids on a machine that cannot reach the hub (logichunk.hub): one connection attempt, then the
cache or a one-line error at once, never the libraries' retries (24 s for a tokenizer, 78 s for an
embedder before). No network: the hub's address is a socket of the test's own, or a closed port."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from logichunk import hub
from logichunk.errors import ModelUnavailable
from logichunk.text import tokens as T


def test_the_probe_tells_a_listening_hub_from_a_closed_port(monkeypatch) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
        assert hub.reachable()
    finally:
        server.close()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}/mirror")  # (the same port, closed now)
    assert not hub.reachable()


def test_an_uncached_hub_id_fails_at_once_where_the_hub_cannot_be_reached(monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    asked: list[str] = []
    monkeypatch.setattr(hub, "reachable", lambda: asked.append("probe") or False)
    monkeypatch.setattr(hub, "cached", lambda repo, filename=None: None)
    T._resolve_name.cache_clear()
    try:
        with pytest.raises(ModelUnavailable, match=r"'some-org/some-model' .* not in the local hub cache .* cannot be reached"):
            T.resolve_tokenizer("some-org/some-model")
    finally:
        T._resolve_name.cache_clear()
    assert asked == ["probe"]
    from logichunk.models._files import model_source

    with pytest.raises(ModelUnavailable, match="cannot be reached"):
        model_source("some-org/some-model")
    # a reachable hub is asked as before (the libraries' own loading); HF_HUB_OFFLINE means the cache only
    monkeypatch.setattr(hub, "reachable", lambda: True)
    assert model_source("some-org/some-model") == ("some-org/some-model", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the cache alone: an id it lacks is said at once, one it holds loads
    with pytest.raises(ModelUnavailable, match="not in the local hub cache, and HF_HUB_OFFLINE=1"):
        model_source("some-org/some-model")
    monkeypatch.setattr(hub, "cached", lambda repo, filename=None: "/cache/snapshot")
    assert model_source("some-org/some-model") == ("some-org/some-model", True)


def test_a_cached_tokenizer_loads_from_the_cache_without_the_hub(tmp_path) -> None:
    """HF_HUB_OFFLINE unset, the hub a closed port: the tokenizer in the hub cache is used as it is online."""
    tokenizers = pytest.importorskip("tokenizers")
    pytest.importorskip("huggingface_hub")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tok = tokenizers.Tokenizer(WordLevel({"the": 0, "cat": 1, "sat": 2, "[UNK]": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    commit = "0123456789abcdef0123456789abcdef01234567"
    root = tmp_path / "hub" / "models--testorg--tok"
    (root / "snapshots" / commit).mkdir(parents=True)
    tok.save(str(root / "snapshots" / commit / "tokenizer.json"))
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("HF_HUB_OFFLINE", None)
    code = ("import json; from logichunk.text.tokens import resolve_tokenizer as r; m = r('testorg/tok');"
            "s = m.spans('the cat sat down'); print(json.dumps([s.starts.tolist(), s.ends.tolist()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[0, 4, 8, 12], [3, 7, 11, 16]]
