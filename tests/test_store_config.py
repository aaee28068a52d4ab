"""Settings: defaults, TOML file, environment, explicit overrides, and errors."""

from __future__ import annotations

import pytest

from logichunk.config import Settings
from logichunk.errors import InputError


def test_defaults_match_the_seed():
    s = Settings()
    assert (s.max_parent_size, s.min_parent_size) == (1500, 150)
    assert (s.child_min_size, s.child_target_size, s.child_max_size) == (100, 250, 400)
    assert s.similarity_threshold == 0.3 and s.embedding_batch_size == 32 and s.debounce_delay_ms == 3000
    assert s.context_window_size == 1000 and s.size_normalization is False  # measured: see config.py
    assert s.chunk_sizes == (1000, 500, 200) and s.unit == "chars"


def test_layers_in_order(tmp_path):
    f = tmp_path / "lc.toml"
    f.write_text('[logichunk]\ntop_k = 7\nmax_parent_size = 2000\nchunk_sizes = [800, 400]\n')
    env = {"LOGICHUNK_TOP_K": "9", "LOGICHUNK_SIZE_NORMALIZATION": "on", "OTHER": "x"}
    s = Settings.load(f, env=env, max_parent_size=None, retrieve_mode="hybrid")
    assert s.top_k == 9 and s.max_parent_size == 2000 and s.size_normalization is True
    assert s.chunk_sizes == (800, 400) and s.retrieve_mode == "hybrid"
    assert Settings.load(f, env=env, top_k=3).top_k == 3
    assert Settings.load(env={"LOGICHUNK_CONFIG": str(f)}).top_k == 7


@pytest.mark.parametrize("bad", [{"top_k": 0}, {"nope": 1}, {"top_k": "x"}, {"retrieve_mode": "x"},
                                 {"min_parent_size": 5000}, {"child_target_size": 500}, {"size_normalization": "maybe"}])
def test_bad_values(bad):
    with pytest.raises(InputError):
        Settings().with_overrides(bad)


def test_bad_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        Settings.from_toml(tmp_path / "missing.toml")
    (tmp_path / "b.toml").write_text("top_k = [")
    with pytest.raises(InputError, match="TOML"):
        Settings.from_toml(tmp_path / "b.toml")
