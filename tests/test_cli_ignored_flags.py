"""A chunk flag the chosen method does not read is said in one note and changes nothing (its model is not
loaded): a flag that looks as if it did something must not pass in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

from logichunk.chunkers.dispatch import METHODS, chunk_by
from logichunk.cli import main

ROOT = Path(__file__).resolve().parents[1]
EN = ROOT / "examples" / "en_public_domain.md"


def run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("method", "extra", "flag"), [
    ("logic-chain", ["--theta", "0.5"], "--theta"),
    ("logic-chain", ["--embedder", "hash"], "--embedder"),
    ("fixed", ["--fast"], "--fast"),
    ("fixed", ["--selection", "local"], "--selection"),
    ("recursive", ["--levels", "2"], "--levels"),
    ("parent-child", ["--embedder", "hash", "--selection", "global"], "--selection"),
    ("fixed", ["--llm", "openai:http://127.0.0.1:9/v1#nobody"], "--llm"),
])
def test_a_flag_the_method_ignores_is_said_and_changes_nothing(capsys, method, extra, flag):
    base = ["chunk", str(EN), "--method", method, "--max-size", "300", "--format", "jsonl"]
    if method == "parent-child" and "--embedder" not in extra:
        base += ["--embedder", "hash"]
    code, plain, _ = run(base, capsys)
    assert code == 0
    code, out, err = run(base + extra, capsys)
    assert code == 0 and out == plain
    assert f"note: {flag} is read by" in err and f"{method} ignores it" in err
    if flag == "--llm":  # not loaded either
        assert "llm: openai" not in err
    if flag == "--embedder":
        assert "embedder: hash" not in err


def test_quiet_keeps_the_note_back_but_still_ignores_the_flag(capsys):
    code, out, err = run(["chunk", str(EN), "--method", "fixed", "--llm", "openai:http://127.0.0.1:9/v1#x",
                          "--quiet", "--format", "jsonl"], capsys)
    assert code == 0 and out and err == ""


def test_lm_dtype_without_a_causal_lm_is_said(capsys):
    code, out, err = run(["chunk", str(EN), "--lm-dtype", "int8", "--format", "jsonl"], capsys)
    assert code == 0 and out
    assert "--lm-dtype sets how the causal LM runs; none runs here" in err


def test_flags_a_method_reads_are_not_noted(capsys):
    code, _, err = run(["chunk", str(EN), "--method", "cliff", "--embedder", "hash", "--fast", "--levels", "2",
                        "--selection", "local"], capsys)
    assert code == 0 and "ignores" not in err


def test_every_method_says_what_it_reads():
    from logichunk.chunkers.dispatch import READS, ignored_options

    assert ignored_options("logic-chain", ["embedder", "theta"]) == ("embedder", "theta")
    assert set(READS) == set(METHODS)  # every method says what it reads


_TEXT = ("# Title\n\nFirst paragraph about cats. Cats purr and sleep. They like warm places.\n\n"
         "## Dogs\n\nDogs bark. Dogs fetch sticks, and they run in the park every morning.\n\n") * 4


@pytest.mark.parametrize("method", ["logic-chain", "cliff", "parent-child", "fixed", "recursive"])
def test_what_a_method_does_not_read_leaves_its_chunks_as_they_are(method):
    """READS is the truth about chunk_by: an option outside a method's set, given a value other than its
    default, gives the very same tree."""
    from logichunk.chunkers.dispatch import READS
    from logichunk.models import resolve_embedder

    emb = resolve_embedder("hash").model
    base = {"max_size": 120, "embedder": emb if "embedder" in READS[method] else None}
    plain = chunk_by(method, _TEXT, **base).records()
    changed = {"theta": 0.5, "composite": False, "selection": "local", "levels": 2, "embedder": emb}
    for option, value in changed.items():
        if option in READS[method] or (option == "embedder" and base["embedder"] is not None):
            continue
        assert chunk_by(method, _TEXT, **{**base, option: value}).records() == plain, option


@pytest.mark.parametrize("fmt", ["tree", "markdown"])
def test_overlap_in_a_format_that_does_not_show_it_is_said(capsys, fmt):
    code, plain, _ = run(["chunk", str(EN), "--format", fmt], capsys)
    code, out, err = run(["chunk", str(EN), "--format", fmt, "--overlap", "20"], capsys)
    assert code == 0 and out == plain
    assert f"--format {fmt} ignores it" in err
    code, out, err = run(["chunk", str(EN), "--format", "jsonl", "--overlap", "20"], capsys)
    assert code == 0 and "overlap_start" in out and "ignores" not in err



@pytest.mark.parametrize(("method", "selection", "whose"), [
    ("logic-chain", "paper", "Meta-Chunking's rule, for methods ppl and msp; logic-chain takes global or local"),
    ("ppl", "local", "the cascade's earlier rule, for methods logic-chain, cliff and fused; ppl takes paper or global"),
])
def test_a_selection_of_the_other_family_names_whose_rule_it_is(capsys, method, selection, whose):
    # (ppl's LM is named but never loaded: the selection is refused first)
    code, out, err = run(["chunk", str(EN), "--method", method, "--selection", selection, "--lm", "default"], capsys)
    assert code != 0 and out == ""
    assert err.strip().splitlines() == [f"logichunk: error: selection {selection!r} is {whose}"]


def test_chunk_by_names_whose_rule_a_selection_is():
    from logichunk.errors import InputError

    with pytest.raises(InputError, match="Meta-Chunking's rule, for methods ppl and msp"):
        chunk_by("cliff", "One. Two.", embedder="hash", selection="paper")
    with pytest.raises(InputError, match="'nope' is not a selection; logic-chain takes global or local"):
        chunk_by("logic-chain", "One. Two.", selection="nope")


@pytest.mark.parametrize(("extra", "note"), [
    (["--levels", "2"], "note: --sizes 600,300,100 sets the depth (3 levels); --levels 2 is ignored"),
    (["--max-size", "400"], "note: --sizes 600,300,100 sets the top limit; --max-size 400 is ignored"),
])
def test_a_flag_sizes_overrides_is_said_and_changes_nothing(capsys, extra, note):
    base = ["chunk", str(EN), "--sizes", "600,300,100", "--format", "jsonl"]
    code, plain, _ = run(base, capsys)
    assert code == 0
    code, out, err = run(base + extra, capsys)
    assert code == 0 and out == plain
    assert err.strip().splitlines() == [f"logichunk: {note}"]
    code, _, err = run(base + ["--levels", "3"], capsys)  # (the count itself: nothing to say)
    assert code == 0 and err == ""
