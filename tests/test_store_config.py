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


def test_top_level_keys_and_a_logichunk_table_both_count(tmp_path):
    f = tmp_path / "lc.toml"
    f.write_text('top_k = 1\n[logichunk]\nproject = "p"\n')
    s = Settings.from_toml(f)
    assert s.top_k == 1 and s.project == "p"
    f.write_text('top_k = 1\nbogus = 5\n[logichunk]\nproject = "p"\n')
    with pytest.raises(InputError, match="bogus"):  # an unknown key is an error wherever it sits
        Settings.from_toml(f)
    f.write_text('top_k = 1\n[logichunk]\ntop_k = 2\n')
    with pytest.raises(InputError, match="both"):
        Settings.from_toml(f)
    f.write_text('[other]\ntop_k = 2\n')
    with pytest.raises(InputError, match="other"):
        Settings.from_toml(f)


@pytest.mark.parametrize("bad, needle", [
    ({"size_normalization_power": "nan"}, "size_normalization_power"),
    ({"size_normalization_max_boost": -1}, "size_normalization_max_boost"),
    ({"cliff_drop": "inf"}, "cliff_drop"),
    ({"top_k": 50, "service_max_top_k": 10}, "service_max_top_k"),
    ({"child_min_size": 2000, "child_target_size": 2500, "child_max_size": 3000, "max_parent_size": 300,
      "min_parent_size": 10}, "max_parent_size"),
    ({"chunk_sizes": "1000,1000,5000"}, "not grow"),
])
def test_settings_that_contradict_themselves_are_errors(bad, needle):
    with pytest.raises(InputError, match=needle):
        Settings().with_overrides(bad)


def test_chunk_takes_its_default_sizes_and_unit_from_the_settings(tmp_path, capsys, monkeypatch):
    import json

    from logichunk.cli import main

    text = tmp_path / "t.txt"
    text.write_text("A sentence about rivers and the sea. " * 60, encoding="utf-8")
    monkeypatch.setenv("LOGICHUNK_CHUNK_SIZES", "300,100")
    monkeypatch.setenv("LOGICHUNK_UNIT", "bytes")
    assert main(["chunk", str(text), "--format", "jsonl", "--quiet"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    top = [r for r in rows if r["level"] == 1]
    assert max(r["size"] for r in top) <= 300 and max(r["level"] for r in rows) == 2
    assert all(r["size"] == len(r["text"].encode()) for r in rows)  # bytes, from LOGICHUNK_UNIT
    assert main(["chunk", str(text), "--format", "jsonl", "--quiet", "--max-size", "1000"]) == 0  # a flag wins
    assert max(json.loads(x)["size"] for x in capsys.readouterr().out.splitlines()) > 300


def test_an_empty_variable_sets_nothing(tmp_path):
    """``LOGICHUNK_EMBEDDER=`` (a variable a script cleared, not unset) left the settings file's embedder for the
    default model: an empty or blank variable sets nothing, a set one still wins over the file."""
    conf = tmp_path / "logichunk.toml"
    conf.write_text('embedder = "hash:64"\ntop_k = 7\n', encoding="utf-8")
    s = Settings.load(conf, env={"LOGICHUNK_EMBEDDER": "", "LOGICHUNK_TOP_K": "  "})
    assert s.embedder == "hash:64" and s.top_k == 7
    assert Settings.load(env={"LOGICHUNK_EMBEDDER": ""}).embedder == Settings().embedder
    assert Settings.load(conf, env={"LOGICHUNK_EMBEDDER": "hash:128"}).embedder == "hash:128"


@pytest.mark.parametrize("line", ['unit = "words"', "top_k = 0", 'retrieve_mode = "x"', "min_parent_size = 5000",
                                  "chunk_sizes = [100, 200]", "nope = 1", 'top_k = "x"'])
def test_every_bad_value_in_a_settings_file_names_the_file(tmp_path, capsys, line):
    """A value refused by the settings' own checks (a bad unit) named no file, while one of the wrong type or an
    unknown key did: the user could not tell the file from the environment."""
    from logichunk.cli import main

    conf = tmp_path / "mine.toml"
    conf.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="mine.toml"):
        Settings.load(conf, env={})
    code = main(["chunk", "--config", str(conf), str(tmp_path / "mine.toml")])
    out, err = capsys.readouterr()
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1 and str(conf) in err


def test_a_bad_value_from_the_environment_says_so():
    with pytest.raises(InputError, match=r"got 'words' \(from environment\)"):
        Settings.load(env={"LOGICHUNK_UNIT": "words"})
