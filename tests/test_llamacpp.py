"""The llama.cpp backend for GGUF files (extra [llamacpp], not in CI: its source build was seen to
crash on machines other than the builder's): the same scores as transformers on the same file, the
rolling cache, options, chat, the CLI; and, without it, when `auto` picks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("gguf")

from gguf_helpers import TEXT, tiny_gguf  # noqa: E402
from logichunk.errors import ModelUnavailable  # noqa: E402
from logichunk.models import lm_llamacpp  # noqa: E402
from logichunk.models.lm import TransformersLM, load_lm  # noqa: E402
from logichunk.models.lm_llamacpp import byte_spans_to_chars  # noqa: E402

needs_llamacpp = pytest.mark.skipif(not lm_llamacpp.llama_cpp_available(),
                                    reason="llama-cpp-python is not installed (extra [llamacpp], built from source)")



@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    model, tok, path = tiny_gguf(tmp_path_factory.mktemp("llamacpp"))
    return TransformersLM(model, tok), path


# -- byte pieces → character spans (no llama.cpp needed) -------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=40), st.data())
def test_byte_pieces_map_to_the_characters_they_touch(text, data) -> None:
    raw = text.encode("utf-8")
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(raw) - 1), max_size=12)) if len(raw) > 1 else []))
    bounds = [0, *cuts, len(raw)]
    pieces = [raw[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    starts, ends = byte_spans_to_chars(text, pieces)
    for (a, b), s, e in zip(zip(bounds[:-1], bounds[1:], strict=True), starts, ends, strict=True):
        # the characters whose bytes the piece touches, no more, no fewer
        touched = [i for i, ch in enumerate(text)
                   if len(text[:i].encode()) < b and len(text[: i + 1].encode()) > a]
        assert (s, e) == (touched[0], touched[-1] + 1)
    assert starts[0] == 0 and ends[-1] == len(text)


def test_pieces_that_do_not_spell_the_text_are_refused() -> None:
    with pytest.raises(ModelUnavailable, match="byte for byte"):
        byte_spans_to_chars("hello", [b" hel", b"lo"])  # a tokenizer that adds a space


def test_llamacpp_backend_asked_for_but_missing_is_a_clear_error(tiny, monkeypatch) -> None:
    _, path = tiny
    monkeypatch.setattr(lm_llamacpp, "llama_cpp_available", lambda: False)
    with pytest.raises(ModelUnavailable, match="llama-cpp-python"):
        load_lm(str(path), backend="llama.cpp")


def test_auto_takes_llamacpp_only_when_the_conversion_would_not_fit(tiny, monkeypatch, tmp_path) -> None:
    from logichunk.models import gguf as gguf_mod

    _, path = tiny
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    chosen: list[str] = []
    monkeypatch.setattr(lm_llamacpp, "LlamaCppLM", lambda p, **k: chosen.append(str(p)) or "llama.cpp model")
    monkeypatch.setattr(lm_llamacpp, "llama_cpp_available", lambda: True)
    assert isinstance(load_lm(str(path)), TransformersLM) and not chosen  # it fits: transformers, faster here
    monkeypatch.setattr(gguf_mod, "available_memory", lambda: 1024)  # now it does not
    assert load_lm(str(path)) == "llama.cpp model" and chosen == [str(path)]
    assert isinstance(load_lm(str(path), dtype="int8"), TransformersLM)  # a dtype asks for transformers
    monkeypatch.setattr(lm_llamacpp, "llama_cpp_available", lambda: False)
    with pytest.raises(ModelUnavailable, match=r"llamacpp"):  # too large and no llama.cpp: the advice
        load_lm(str(_copy(path, tmp_path)))


def _copy(path, folder):
    """The file under another name (a key not converted yet)."""
    dest = folder / "other.gguf"
    dest.write_bytes(path.read_bytes())
    return dest


# -- the backend itself ---------------------------------------------------------------------------


@needs_llamacpp
def test_llamacpp_scores_the_file_like_transformers(tiny) -> None:
    ref, path = tiny
    lm = load_lm(str(path), backend="llama.cpp")
    assert isinstance(lm, lm_llamacpp.LlamaCppLM) and lm.model_id == "tiny-qwen/llama.cpp"
    want, got = ref.token_logprobs(TEXT), lm.token_logprobs(TEXT)
    np.testing.assert_array_equal(got.starts, want.starts)
    np.testing.assert_array_equal(got.ends, want.ends)
    np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-3, equal_nan=True)
    assert np.isnan(got.logprobs[0]) and np.isfinite(got.logprobs[1:]).all()


@needs_llamacpp
def test_an_explicit_dtype_picks_transformers_and_llamacpp_refuses_one(tiny, monkeypatch, tmp_path) -> None:
    _, path = tiny
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    lm = load_lm(str(path), dtype="int8")  # dtypes exist on the transformers path only
    assert isinstance(lm, TransformersLM) and lm.model_id == "tiny-qwen/int8"
    from logichunk.errors import InputError

    with pytest.raises(InputError, match="transformers backend"):
        load_lm(str(path), dtype="float32", backend="llama.cpp")


@needs_llamacpp
def test_llamacpp_windows_equal_one_pass_and_the_cache_rolls(tiny) -> None:
    _, path = tiny
    text = TEXT * 8
    one = lm_llamacpp.LlamaCppLM(path, window=4096, max_context=8192).token_logprobs(text)
    win = lm_llamacpp.LlamaCppLM(path, window=16, max_context=8192).token_logprobs(text)
    np.testing.assert_array_equal(win.logprobs, one.logprobs)  # exact: the same cache, batch by batch
    roll = lm_llamacpp.LlamaCppLM(path, window=16, max_context=64, sinks=4).token_logprobs(text)
    assert len(roll) == len(one) > 200 and np.isfinite(roll.logprobs[1:]).all()
    np.testing.assert_array_equal(roll.logprobs[:64], one.logprobs[:64])  # before the first shift
    assert not np.allclose(roll.logprobs, one.logprobs)  # after it, the context really is shorter


@needs_llamacpp
def test_llamacpp_rolls_by_decoding_again_where_the_cache_cannot_shift(tiny, monkeypatch) -> None:
    import llama_cpp

    _, path = tiny
    text = TEXT * 8
    shifted = lm_llamacpp.LlamaCppLM(path, window=16, max_context=64, sinks=4).token_logprobs(text)
    monkeypatch.setattr(llama_cpp, "llama_memory_can_shift", lambda mem: False)
    lm = lm_llamacpp.LlamaCppLM(path, window=16, max_context=64, sinks=4)
    again: list[int] = []
    real = lm._decode
    monkeypatch.setattr(lm, "_decode", lambda ids, pos, **k: (again.append(int(ids.size)) if not k["logits"] else None)
                        or real(ids, pos, **k))
    redecoded = lm.token_logprobs(text)
    assert again and sum(again) > 64  # the kept context was decoded again, more than once
    np.testing.assert_array_equal(redecoded.logprobs[:64], shifted.logprobs[:64])
    assert np.isfinite(redecoded.logprobs[1:]).all()
    # the same tokens in the window's context, computed afresh: close to the shifted cache, not equal
    assert np.nanmean(np.abs(redecoded.logprobs - shifted.logprobs)) < 0.5


@needs_llamacpp
def test_llamacpp_options_match_transformers(tiny) -> None:
    ref, path = tiny
    lm = lm_llamacpp.LlamaCppLM(path)
    for prompt in ("Is this a cat?", [{"role": "user", "content": "Is this a cat?"}]):
        for options in (["yes", "no"], ["yes sir", "no way at all"]):
            np.testing.assert_allclose(lm.option_logprobs(prompt, options), ref.option_logprobs(prompt, options),
                                       atol=1e-3)
    # scoring options leaves the pass intact (the cache is cleared and Llama's bookkeeping reset)
    np.testing.assert_allclose(lm.token_logprobs(TEXT).logprobs, ref.token_logprobs(TEXT).logprobs,
                               atol=1e-3, equal_nan=True)


@needs_llamacpp
def test_llamacpp_reuses_a_shared_prompt_prefix_exactly(tiny, monkeypatch) -> None:
    ref, path = tiny
    lm = lm_llamacpp.LlamaCppLM(path, window=8)
    calls: list[tuple[int, int]] = []  # (tokens, position) of every decode
    real = lm._decode
    monkeypatch.setattr(lm, "_decode", lambda ids, pos, **k: calls.append((int(ids.size), int(pos))) or real(ids, pos, **k))
    head = "Decide whether the next sentence continues the chunk. Chunk: The cat sat on the mat."
    prompts = [head, head + " Dogs bark at night.", head + " Dogs bark at night. Owls answer!",
               head + " Dogs bark at night. Owls answer! The mat is red."]

    def prompt_tokens_decoded(prompt: str) -> tuple[int, int]:
        calls.clear()
        got = lm.option_logprobs(prompt, ["yes", "no"])
        np.testing.assert_allclose(got, ref.option_logprobs(prompt, ["yes", "no"]), atol=1e-3)
        n = len(lm._llm.tokenize(prompt.encode(), add_bos=True, special=True))
        return sum(t for t, pos in calls if pos < n), n  # option tokens are decoded at position n

    done, n = prompt_tokens_decoded(prompts[0])
    assert done == n  # the first prompt: decoded whole
    assert prompt_tokens_decoded(prompts[0])[0] == 1  # the same again: only its last token (for its logits)
    for prompt in prompts[1:3]:  # a grown prompt: only its new end is decoded
        done, n = prompt_tokens_decoded(prompt)
        assert 0 < done < n / 2, (done, n)
    done, n = prompt_tokens_decoded(head + " Cats purr softly.")  # diverges after the head: decoded from there
    assert 0 < done < n / 2, (done, n)
    lm.token_logprobs(TEXT)  # the pass empties the cache: the next prompt is decoded whole
    done, n = prompt_tokens_decoded(prompts[3])
    assert done == n


@needs_llamacpp
def test_local_llm_on_a_gguf_file_generates_and_counts(tiny, monkeypatch, tmp_path) -> None:
    from logichunk.models.registry import resolve_llm

    _, path = tiny
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    assert type(resolve_llm(f"local:{path}").model).__name__ == "LocalChatLLM"  # auto: it fits, transformers
    llm = lm_llamacpp.LlamaCppChatLLM(lm_llamacpp.LlamaCppLM(path))
    msgs = [{"role": "user", "content": "Say something about cats."}]
    a = llm.complete(msgs, max_tokens=6)
    b = llm.complete(msgs, max_tokens=6)
    assert a.text == b.text  # greedy
    assert a.usage.completion_tokens == 6 and a.usage.prompt_tokens > 5 and a.finish_reason == "length"
    assert llm.usage.calls == 2
    # generation leaves scoring intact
    lm = llm.lm
    np.testing.assert_allclose(lm.token_logprobs(TEXT).logprobs, tiny[0].token_logprobs(TEXT).logprobs,
                               atol=1e-3, equal_nan=True)


@needs_llamacpp
def test_cli_chunks_with_llamacpp(tiny, tmp_path) -> None:
    _, path = tiny
    doc = tmp_path / "doc.txt"
    doc.write_text(TEXT * 3, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "logichunk", "chunk", str(doc), "--method", "ppl", "--lm", str(path),
                        "--lm-backend", "llama.cpp", "--max-size", "80", "--format", "jsonl"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "LOGICHUNK_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    deepest = max(x["level"] for x in rows)
    assert "".join(x["text"] for x in rows if x["level"] == deepest) == TEXT * 3
    assert "lm: tiny-qwen/llama.cpp" in r.stderr
    assert not (tmp_path / "cache").exists()  # nothing converted: llama.cpp reads the file as it is
