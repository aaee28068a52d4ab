"""Turn-by-turn topic continuity: :class:`Perception`.

One :meth:`Perception.observe` per turn, cheap (one anchor embedded, a few vector operations and the
lexical features of a sliding window), deciding whether the turn continues the current topic:

1. **Heuristic** — a filler turn (only stop phrases such as 继续 / 好的 / 报错了 / ok / go on, or under
   ``short_tokens`` content tokens none of which is new to the recent conversation) is FORCE_ADSORBed:
   it joins the topic and leaves the kernel alone. It is not even embedded. A short turn that names
   something new ("What is Kubernetes?" after cooking) is no filler: it may open a topic.
2. **Screen** — the anchor (``Context: …\\nQuery: …``) is embedded and compared with the topic kernel
   (a decayed or running mean of the topic's anchors): cosine ``>= hi`` ADSORBs (and updates the
   kernel), ``<= lo`` SPLITs (a new topic starts with this anchor as its kernel).
3. **Arbiter** — between the two, an :class:`~logichunk.memory.arbiter.Arbiter` decides (the calibrated
   rule by default; a reranker, an LM scorer or an LLM when configured), and its name is recorded.
4. **Review** (``lookahead`` > 0) — when ``lookahead`` more turns have arrived, the gap before a turn
   is judged again with what came after it (does the old topic's vocabulary come back? do the next
   anchors resemble the old topic?). A boundary may be confirmed, removed or added; each change is a
   :class:`Revision`. A boundary that would leave a topic shorter than ``min_topic_turns`` (a
   one-exchange aside before the next topic) does not simply push that topic forward into the next:
   the short topic stands alone when the boundaries on both of its sides are more likely than not,
   else it joins the side of the weaker boundary (:meth:`Perception._short_side`); so an episode
   closes only once the gaps of its successor's first ``min_topic_turns`` turns are final. Only then
   is a topic final: it closes as an :class:`Episode` (with the earlier episode it resumes, if it
   returns to one: :mod:`.resume`) and, with a store, is archived. ``lookahead=0`` makes every
   immediate decision final.

The features the rule and the review read (one dict per turn, in :attr:`Decision.features`):
``sim`` (cosine to the kernel), ``sim_prev`` (to the previous content turn's anchor), ``novelty`` and
``novelty_left`` (cache surprisal of the turn's words and of the words just before it, from
:mod:`logichunk.signals.novelty`), ``topic_turns`` (log of the topic's length so far), ``question`` /
``answers`` (the turn asks a question / the turn before it asked one: an answer belongs to its
question's topic); the review adds ``jump`` (the entropy gap score with the turns after the gap as
right context), ``window_sim`` (the anchors after the gap against those before it) and ``split_now``.
Why a review at all: strictly online, with nothing after the gap, the best rule we fitted reaches
Pk 0.35 on DialSeg711; a gap judged with three more turns reaches 0.28 (``bench/QUALITY.md``).

Nothing is lost: every turn belongs to exactly one episode, episodes are contiguous and in order, and
:meth:`Perception.flush` (end of the conversation) closes the rest, so the episodes' blocks
concatenated are the conversation. The first turn of a conversation is a SPLIT (it opens topic 0).
With a store, every turn is also written there before it is observed (:mod:`.journal`), so a process
that dies before its topics are archived loses none: the next Perception of the conversation observes
the stored turns again and carries on (:attr:`Perception.resumed`). Once a topic is archived its turns
leave that journal (they are in the archive), so it holds the open topics only, flushed or not, and the
perception's state of that moment is kept beside them (:meth:`Perception._state`): the next Perception takes
it and decides the open and later turns as this one would have, so a restart changes no topic.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError, LogichunkError, outside_stacklevel
from ..models.embedding import unit
from . import journal
from .arbiter import Arbiter, ArbiterQuery, RuleArbiter
from .block import LogicalBlock, anchor_text, check_count, is_filler, is_question
from .calibration import Calibration, default_calibration, fitted_for
from .episode import Action, Decision, Episode, Revision, Step, _short
from .lexical import LexicalWindow
from .resume import Link, resumed, subject, threshold_of

__all__ = ["Action", "Decision", "Episode", "Perception", "Revision", "Step", "UnnamedConversationWarning", "observe_many",
           "replay", "topic_summary"]


def topic_summary(blocks: Sequence[LogicalBlock], max_chars: int = 400) -> str:
    """A short text of the topic for an arbiter: its first content request and its latest exchange."""
    if not blocks:
        return ""
    first = next((b for b in blocks if not is_filler(b.query)[0]), blocks[0])
    parts = [f"First request: {_short(first.query, max_chars // 3)}"]
    last = blocks[-1]
    if last is not first:
        parts.append(f"Latest: {_short(last.query, max_chars // 4)}")
    if last.context_text is not last.query and last.context_text.strip():
        parts.append(f"Reply: {_short(last.context_text, max_chars // 3)}")
    return "\n".join(parts)


def _language(text: str) -> str:
    cjk = sum(1 for ch in text[:400] if "\u3400" <= ch <= "\u9fff")
    return "zh" if cjk * 4 >= max(1, len(text[:400].replace(" ", ""))) else "en"


@dataclass
class _Turn:
    """What the perception keeps about a recent turn."""

    block: LogicalBlock
    filler: bool
    vec: np.ndarray | None
    features: dict[str, float]
    split_now: bool  # the immediate decision was SPLIT
    items: int = 0  # content items of the turn (lexical window)


class UnnamedConversationWarning(UserWarning):
    """A Perception with a store and no ``conversation_id`` (see :meth:`Perception._unnamed`)."""


class Perception:
    """Online topic continuity for one conversation (see the module docstring).

    ``embedder`` follows the Embedder protocol (default: ``resolve_embedder("auto")``);
    ``calibration`` defaults to the shipped one for that embedder; ``arbiter`` defaults to the
    calibrated :class:`~logichunk.memory.arbiter.RuleArbiter`. With ``store`` (a
    :class:`logichunk.store.Store`), every closed episode is archived as a document
    (:class:`~logichunk.memory.archive.Archiver`); ``conversation_id`` names the conversation there, and
    every turn is written to the store before it is observed, so a conversation whose process died
    before :meth:`flush` carries on where it stopped: its stored open turns are carried on here
    (:attr:`resumed` says how many) and numbering continues after them. Without ``conversation_id`` the
    store keeps it under a new ``conv-XXXXXXXX`` that only this Perception knows, said in :attr:`note` and an
    :class:`UnnamedConversationWarning`.
    ``lookahead`` overrides the calibration's (0 = immediate decisions are final). Not thread-safe:
    one Perception per conversation. ``links=False`` skips the episodes' subjects and resume links
    (one embedding per episode; segmentation alone does not need them).
    """

    def __init__(self, store: Any = None, embedder: Any = None, arbiter: Arbiter | None = None, *,
                 calibration: Calibration | None = None, conversation_id: str | None = None,
                 lookahead: int | None = None, archiver: Any = None, keep_episodes: bool = True,
                 lexical_memo: dict[Any, Any] | None = None, links: bool = True) -> None:
        if store is not None and not hasattr(store, "embedder"):
            raise InputError(f"store must be a logichunk Store (Store.open(path)), got {type(store).__name__}")
        if embedder is None:
            if store is not None:
                embedder = store.embedder
            else:
                from ..models import resolve_embedder

                embedder = resolve_embedder("auto").model
        else:  # a name ("hash", "e5", ...) as everywhere else, a model as it is; anything else: one line now, not
            # an embedding that fails at every turn into lexical-only decisions
            from ..models.registry import embedder_of

            embedder = embedder_of(embedder)
        self.embedder = embedder
        from ..models.registry import fallback_note

        self.note = fallback_note(embedder)  # "auto" gave the hash embedder: said, never a silent change of model
        model_id = str(getattr(embedder, "model_id", ""))
        if calibration is None:
            calibration, note = default_calibration(model_id)
            self.note = "; ".join(n for n in (self.note, note) if n)
        elif calibration.embedder and model_id and not fitted_for(calibration.embedder, model_id):
            raise InputError(f"the calibration was fitted for embedder {calibration.embedder!r}, but this perception "
                             f"embeds with {model_id!r}: cosine thresholds do not carry over. Calibrate for it "
                             "(logichunk memory calibrate), or pass calibration.with_(embedder=...) to use it anyway")
        if lookahead is not None:
            check_count(lookahead, "lookahead")
            if lookahead and calibration.review is None:
                raise InputError("this calibration has no review model: lookahead must be 0")
            calibration = calibration.with_(lookahead=int(lookahead))
        self.calibration = calibration
        self.rule = RuleArbiter(calibration)
        self.arbiter: Arbiter = arbiter if arbiter is not None else self.rule
        self.conversation_id = conversation_id
        if archiver is None and store is not None:
            from .archive import Archiver

            archiver = Archiver(store, conversation_id=conversation_id,
                                kernel_model=str(getattr(embedder, "model_id", "")) or None,
                                resume_threshold=threshold_of(calibration))
        self.archiver = archiver
        if archiver is not None and self.conversation_id is None:
            self.conversation_id = getattr(archiver, "conversation_id", None)
            if store is not None and self.conversation_id is not None:  # an id made up here: said, never silent
                self._unnamed(self.conversation_id)
        self.keep_episodes = keep_episodes
        self.links = links  # each closed episode embeds its subject and links the one it resumes (:mod:`.resume`)
        self.episodes: list[Episode] = []
        self.flush_revisions: list[Revision] = []  # the review's changes made by the last flush()
        self.lexical = LexicalWindow(memo=lexical_memo)
        self.review_trace: list[tuple[int, dict[str, float], float]] | None = None  # calibration hook
        self.embed_failures = 0  # turns decided without their embedding (the embedder failed)
        self.archive_errors: list[str] = []  # episodes (and turns) the store could not take (see retry_archive)
        self._retry: list[tuple[Episode, tuple[int, int] | None]] = []  # unarchived, with their conversation numbers
        self._store = store
        # turns are written to the store before they are observed
        self._journal = store is not None and self.conversation_id is not None
        self._unwritten: list[tuple[int, LogicalBlock]] = []  # turns the store refused, written on the next try
        self._replaying = False  # the turns observed now are in the store already
        self._turn0 = 0  # the conversation's numbers of this session's first turn and first topic (with a store)
        self._topic0 = 0
        self.resumed = 0  # the stored open turns of the conversation carried on when it was opened (held in a saved state or observed again)
        self._reset_state()
        if self._journal:
            self._resume()

    def _unnamed(self, conv: str) -> None:
        """A store and no ``conversation_id``: the turns and topics are stored under ``conv``, a new id that only
        this Perception knows, so another process cannot carry the conversation on (its open turns stay in the
        store unread). Said in :attr:`note` and a warning, once per Perception."""
        import warnings

        said = (f"no conversation_id: this conversation is stored as {conv!r}, an id only this Perception knows; "
                "pass conversation_id=... to carry it on after a restart")
        self.note = "; ".join(n for n in (self.note, said) if n)
        warnings.warn(said, UnnamedConversationWarning, stacklevel=outside_stacklevel())

    def _reset_state(self) -> None:
        self._n = 0  # turns observed
        self._turns: dict[int, _Turn] = {}
        self._open = 0  # first turn of the oldest episode not yet closed
        self._bounds: list[int] = []  # topic starts after _open (sorted), tentative or final
        self._final_upto = 0  # gaps before turns <= this are final
        self._next_review = 1  # the oldest gap not reviewed yet
        self._pruned = 0  # turns before this are forgotten
        self._closed_count = 0
        self._subjects: list[tuple[int, np.ndarray | None, str | None]] = []  # the closed episodes' (:mod:`.resume`)
        self._kernel: np.ndarray | None = None  # unnormalised running state of the current topic
        self._kernel_n = 0
        self._prev_vec: np.ndarray | None = None
        self._review_p: dict[int, float] = {}  # the review's P(boundary) at each gap reviewed (recent ones)

    @property
    def unarchived(self) -> list[Episode]:
        """Closed episodes the store refused (archived by :meth:`retry_archive`)."""
        return [ep for ep, _ in self._retry]

    # ------------------------------------------------------------------ the stored open turns
    def _db(self) -> Any:
        """The store of the open turns: the archiver's (a caller may reconnect it there), else the one given."""
        return getattr(self.archiver, "store", None) or self._store

    def _resume(self) -> None:
        """Start a session of :attr:`conversation_id`: observe its stored open turns again (a process that
        observed them died before they were archived) and number on after them, else after its archived turns."""
        from .archive import topics

        db, conv = self._db(), self.conversation_id
        held = journal.rows(db, conv)
        done = topics(db, conv)
        if held:
            nos = [n for n, _ in held]
            if nos != list(range(nos[0], nos[0] + len(nos))):
                raise InputError(f"conversation {conv!r}: its stored open turns have a gap (turns {nos[0]}..{nos[-1]}, "
                                 f"{len(nos)} stored); the database was edited by hand")
            self._turn0 = nos[0]
        else:
            self._turn0 = max((t.end + 1 for t in done), default=0)
        self._topic0 = max((t.index + 1 for t in done if t.start < self._turn0), default=0)
        todo = [b for _, b in held]
        state = journal.load_state(db, conv) if held else None
        if state is not None and self._restore(state, held, max((t.end + 1 for t in done), default=0)):
            todo = [b for n, b in held if n >= self._turn0 + self._n]
        if todo:
            self._replaying = True
            try:
                observe_many(todo, self)
            finally:
                self._replaying = False
        self.resumed = len(held)

    def _fingerprint(self) -> dict[str, Any]:
        """What a saved state is only valid for: the embedder and the calibration that made it."""
        return json.loads(json.dumps({"model": str(getattr(self.embedder, "model_id", "")),
                                      "calibration": self.calibration.to_dict(),
                                      "arbiter": str(getattr(self.arbiter, "name", ""))}))

    def _state(self) -> dict[str, Any]:
        """Everything the next decisions read (the turns kept, the kernel, the lexical window, the review's
        progress), as JSON with the vectors' exact bits: saved when the archived turns leave the journal
        (:func:`.journal.save_state`), so a resumed perception decides as this one would (:meth:`_restore`)."""
        return {"v": 1, "of": self._fingerprint(), "turn0": self._turn0, "topic0": self._topic0, "n": self._n,
                "open": self._open, "bounds": list(self._bounds), "final_upto": self._final_upto,
                "next_review": self._next_review, "pruned": self._pruned, "closed": self._closed_count,
                "kernel": _bits(self._kernel), "kernel_n": self._kernel_n, "prev_vec": _bits(self._prev_vec),
                "review_p": [[g, p] for g, p in self._review_p.items()], "lexical": self.lexical.state(),
                "turns": [[i, r.block.to_dict(), r.filler, _bits(r.vec), r.features, r.split_now, r.items]
                          for i, r in sorted(self._turns.items())]}

    def _restore(self, st: dict[str, Any], held: list[tuple[int, LogicalBlock]], archived_upto: int) -> bool:
        """Take the saved state ``st`` when it is this conversation's as the store holds it now: made by this
        embedder and calibration, its open turns the first stored ones (the same turns) and its archived ones
        the store's. Else (another writer carried the conversation on since, or the calibration changed) False:
        the stored turns are observed again from the oldest open topic's start, as before the state was kept."""
        try:
            if st.get("v") != 1 or st.get("of") != self._fingerprint():
                return False
            turn0, n, open_ = int(st["turn0"]), int(st["n"]), int(st["open"])
            turns = {int(i): _Turn(LogicalBlock.from_dict(b), bool(f), _unbits(v),
                                   {str(k): float(x) for k, x in feats.items()}, bool(sn), int(it))
                     for i, b, f, v, feats, sn, it in st["turns"]}
            mine = [turns[i].block for i in range(open_, n)]
            if (turn0 + open_ != held[0][0] or archived_upto != held[0][0] or len(held) < n - open_
                    or [b for _, b in held[: n - open_]] != mine):
                return False
        except (KeyError, TypeError, ValueError):  # (a state this version cannot read: observed again instead)
            return False
        self._turn0, self._topic0, self._n, self._open = turn0, int(st["topic0"]), n, open_
        self._bounds, self._final_upto = [int(b) for b in st["bounds"]], int(st["final_upto"])
        self._next_review, self._pruned, self._closed_count = int(st["next_review"]), int(st["pruned"]), int(st["closed"])
        self._kernel, self._kernel_n = _unbits(st["kernel"]), int(st["kernel_n"])
        self._prev_vec = _unbits(st["prev_vec"])
        self._review_p = {int(g): float(p) for g, p in st["review_p"]}
        self._turns = turns
        self.lexical.restore(st["lexical"])
        return True

    def _write(self, turns: list[tuple[int, LogicalBlock]]) -> None:
        """Store the turns (and any the store refused before); on failure keep them for the next try."""
        todo = self._unwritten + turns
        if not todo:
            return
        try:
            journal.write(self._db(), self.conversation_id, todo)
            self._unwritten = []
        except journal.TurnTaken:  # (another writer numbered these turns: storing them later would lose them)
            raise
        except LogichunkError as e:  # the database is gone: the turn is observed, kept here until it is back
            self._unwritten = todo
            self.archive_errors.append(f"turn {todo[-1][0]}: not stored yet, kept in memory until the store takes "
                                       f"it (next turn, retry_archive or flush): {e}")

    # ------------------------------------------------------------------ views
    @property
    def first_turn(self) -> int:
        """The conversation's number of this session's first turn: with a store, after the turns it held of the
        conversation (archived, or open ones observed again: :attr:`resumed`); else after the sessions this
        perception flushed. A :class:`Decision`'s ``turn`` and an :class:`Episode`'s ``start`` count from the
        session's first turn, so add this to get the numbers the store, ``memory topics`` and MCP's tools show.
        Why: after a restart the session counts from 0 again, and only the store knew where it began."""
        return self._turn0

    @property
    def first_topic(self) -> int:
        """The conversation's number of this session's first topic (:attr:`first_turn`'s counterpart for a
        decision's ``topic`` and an episode's ``index``)."""
        return self._topic0

    @property
    def turns_observed(self) -> int:
        return self._n

    @property
    def topic_start(self) -> int:
        """First turn of the current topic."""
        return self._bounds[-1] if self._bounds else self._open

    @property
    def topic(self) -> tuple[LogicalBlock, ...]:
        """The blocks of the current topic (tentative while the review may still move its start)."""
        return tuple(self._turns[i].block for i in range(self.topic_start, self._n))

    @property
    def kernel(self) -> np.ndarray | None:
        """The current topic kernel, L2-normalised (None before the topic's first content turn)."""
        return None if self._kernel is None else unit(self._kernel)

    def boundaries(self) -> list[int]:
        """Turn indices that start a topic (0 excluded), closed and open episodes together."""
        starts = {e.start for e in self.episodes} | set(self._bounds) | {self._open}
        return sorted(s for s in starts if s > 0)

    # ------------------------------------------------------------------ the steps
    def observe(self, block: LogicalBlock | Mapping[str, Any] | str, *, vector: np.ndarray | None = None,
                _forced: bool | None = None) -> Decision:
        """Decide about the next turn. ``block`` may be a dict in the replay format or a plain user
        string. ``vector`` is the anchor's embedding if the caller batched it (see :meth:`anchor`).
        (``_forced``: calibration only — the turn starts a topic or not, whatever the steps say.)"""
        if isinstance(block, str):
            block = LogicalBlock(user=block)
        elif isinstance(block, Mapping):
            block = LogicalBlock.from_dict(block)
        elif not isinstance(block, LogicalBlock):
            raise InputError(f"observe() takes a LogicalBlock, a dict or a string, got {type(block).__name__}")
        t = self._n
        if self._journal and not self._replaying:
            self._write([(self._turn0 + t, block)])
        c = self.calibration
        filler, why = is_filler(block.query, c.short_tokens, known=self.lexical.known())
        anchor = self.anchor(block, t)
        vec = None
        embed_error = ""
        if not filler:
            if vector is not None:
                vec = unit(np.asarray(vector, np.float32).reshape(-1))
            else:
                try:
                    vec = self._embed(anchor)
                except Exception as e:  # noqa: BLE001 - any embedder failure: decide without it, and say so
                    self.embed_failures += 1
                    embed_error = f"embedding failed ({type(e).__name__}: {str(e)[:100]}); decided on lexical features"
        lex = self.lexical.add(t, block.lexical_text(), pin=self._next_review if c.lookahead else t)
        prev = self._turns.get(t - 1)
        feats: dict[str, float] = {"novelty": lex.novelty, "novelty_left": lex.novelty_left,
                                   "topic_turns": math.log1p(t - self.topic_start) if t else 0.0,
                                   "question": 1.0 if is_question(block.query) else 0.0,
                                   "answers": 1.0 if prev is not None and is_question(prev.block.context_text) else 0.0}
        rec = _Turn(block, filler, vec, feats, False, lex.items)
        self._turns[t] = rec
        self._n = t + 1

        if t == 0:
            d = Decision(0, Action.SPLIT, 0.0, Step.FIRST, 0, reason="the first turn opens a topic", features=feats)
            rec.split_now = True
            if vec is not None:
                self._seed_kernel(vec)
        elif filler:
            d = Decision(t, Action.FORCE_ADSORB, 1.0, Step.HEURISTIC, self._topic_no(), reason=why, features=feats)
        elif vec is None:  # the embedder failed: the rule decides on the lexical features alone
            v = self.rule.judge(ArbiterQuery("", block.query, anchor, float("nan"), dict(feats)))
            d = Decision(t, Action.ADSORB if v.same_topic else Action.SPLIT, v.score, Step.ARBITER,
                         self._topic_no() + (0 if v.same_topic else 1), arbiter=self.rule.name, features=feats,
                         reason=embed_error)
        elif self._kernel is None:
            self._seed_kernel(vec)
            d = Decision(t, Action.ADSORB, 1.0, Step.FIRST, self._topic_no(),
                         reason="first content turn of the topic seeds its kernel", features=feats)
        else:
            d = self._decide(t, rec, anchor)
        if _forced is not None and t > 0:
            d = replace(d, action=Action.SPLIT if _forced else (Action.FORCE_ADSORB if filler else Action.ADSORB),
                        step=Step.GUARD, reason="forced (calibration)")
        if d.action is Action.SPLIT and t > 0:
            rec.split_now = True
            self._bounds.append(t)
            self._seed_kernel(vec)
        elif d.action is Action.ADSORB and vec is not None and d.step is not Step.FIRST:
            self._update_kernel(vec)
        if vec is not None:
            self._prev_vec = vec
        revisions = self._review_due(t)
        closed = self._close_final()
        return replace(d, revisions=tuple(revisions), closed=tuple(closed))

    def anchor(self, block: LogicalBlock, index: int | None = None) -> str:
        """The anchor text of ``block`` as turn ``index`` (default: the next turn)."""
        i = self._n if index is None else index
        prev = self._turns.get(i - 1)
        return anchor_text(block, prev.block if prev is not None else None)

    def _embed(self, anchor: str) -> np.ndarray:
        v = np.asarray(self.embedder.embed([anchor], kind="query"), dtype=np.float32)
        if v.ndim != 2 or v.shape[0] != 1:
            raise InputError(f"the embedder returned shape {v.shape} for one text")
        return unit(v[0])

    def _topic_no(self) -> int:
        """Number of the current topic: episodes closed before it plus the open boundaries."""
        return self._closed_count + len(self._bounds)

    def _decide(self, t: int, rec: _Turn, anchor: str) -> Decision:
        c = self.calibration
        vec = rec.vec
        assert vec is not None and self._kernel is not None
        sim = float(vec @ unit(self._kernel))
        sim_prev = float(vec @ self._prev_vec) if self._prev_vec is not None else sim
        rec.features["sim"] = sim
        rec.features["sim_prev"] = sim_prev
        feats = rec.features
        topic = self._topic_no()
        if t - self.topic_start < c.min_topic_turns:
            return Decision(t, Action.ADSORB, sim, Step.GUARD, topic, similarity=sim, features=feats,
                            reason=f"topic has fewer than {c.min_topic_turns} turns")
        if sim >= c.hi:
            return Decision(t, Action.ADSORB, sim, Step.SCREEN, topic, similarity=sim, features=feats,
                            reason=f"cosine {sim:.3f} >= hi {c.hi:.3f}")
        if sim <= c.lo:
            return Decision(t, Action.SPLIT, sim, Step.SCREEN, topic + 1, similarity=sim, features=feats,
                            reason=f"cosine {sim:.3f} <= lo {c.lo:.3f}")
        if getattr(self.arbiter, "reads_text", True):
            blocks = [self._turns[i].block for i in range(self.topic_start, t)]
            summary = topic_summary(blocks)
            lang = _language(rec.block.query + " ".join(b.query for b in blocks[-2:]))
        else:  # the rule reads only the features: skip building texts it would ignore
            summary, lang = "", "en"
        q = ArbiterQuery(summary=summary, query=rec.block.query, anchor=anchor, similarity=sim,
                         features=dict(feats), language=lang)
        v = self.arbiter.judge(q)
        if v.same_topic:
            return Decision(t, Action.ADSORB, v.score, Step.ARBITER, topic, arbiter=v.arbiter, similarity=sim,
                            features=feats, reason=v.detail)
        return Decision(t, Action.SPLIT, v.score, Step.ARBITER, topic + 1, arbiter=v.arbiter, similarity=sim,
                        features=feats, reason=v.detail)

    # ------------------------------------------------------------------ kernel
    def _seed_kernel(self, vec: np.ndarray | None) -> None:
        if vec is None:
            self._kernel, self._kernel_n = None, 0
        else:
            self._kernel, self._kernel_n = vec.astype(np.float64).copy(), 1

    def _update_kernel(self, vec: np.ndarray) -> None:
        if self._kernel is None:
            self._seed_kernel(vec)
            return
        d = self.calibration.kernel_decay
        if d > 0:
            self._kernel = d * self._kernel + (1.0 - d) * vec
        else:
            self._kernel = self._kernel + vec  # running mean (the direction is what matters)
        self._kernel_n += 1

    def _rebuild_kernel(self) -> None:
        """The current topic's kernel recomputed from its turns (after the review moved its start)."""
        self._kernel, self._kernel_n = None, 0
        for i in range(self.topic_start, self._n):
            r = self._turns[i]
            if r.vec is not None:
                self._update_kernel(r.vec)

    # ------------------------------------------------------------------ review and closing
    def _review_due(self, t: int) -> list[Revision]:
        """Review every gap that has enough evidence after it: ``lookahead`` turns, or (with
        ``lookahead_items``) at least that many content items in the turns from the gap on."""
        c = self.calibration
        if c.lookahead == 0:
            self._final_upto = t
            return []
        out: list[Revision] = []
        while self._next_review <= t:
            g = self._next_review
            after = t - g
            if after < c.lookahead:
                if not c.lookahead_items or after < 1:
                    break
                if sum(self._turns[i].items for i in range(g, t + 1)) < c.lookahead_items:
                    break
            out.extend(self._review(g))
            self._final_upto = g
            self._next_review = g + 1
        return out

    def _window_sim(self, g: int) -> float:
        L = max(min(self.calibration.lookahead, self._n - 1 - g), 1)
        right = [self._turns[i].vec for i in range(g, min(self._n, g + L + 1))
                 if i in self._turns and self._turns[i].vec is not None]
        left = [self._turns[i].vec for i in range(max(0, g - L - 1), g)
                if i in self._turns and self._turns[i].vec is not None]
        if not right or not left:
            return float("nan")
        return float(unit(_sum(right)) @ unit(_sum(left)))

    def _review(self, g: int) -> list[Revision]:
        c = self.calibration
        rec = self._turns.get(g)
        if rec is None or rec.filler or c.review is None or g <= self._open:
            return []
        feats, p = self._review_prob(g, rec)
        if self.review_trace is not None:
            self.review_trace.append((g, feats, p))
        self._review_p[g] = p
        want = p >= c.review_threshold
        why = f"review P(boundary)={p:.2f} {'>=' if want else '<'} {c.review_threshold:.2f}"
        out: list[Revision] = []
        prev_start = max([b for b in self._bounds if b < g], default=self._open)
        if want and g - prev_start < c.min_topic_turns:
            side, why = self._short_side(prev_start, g, p)
            if side == "forward":
                want = False
            elif side == "back":
                self._bounds.remove(prev_start)
                out.append(Revision(prev_start, Action.ADSORB, self._review_p.get(prev_start, 1.0),
                                    f"{why}: turns {prev_start}..{g - 1} join the topic before"))
        has = g in self._bounds
        if want != has:
            if want:
                self._bounds.append(g)
                self._bounds.sort()
            else:
                self._bounds.remove(g)
            out.append(Revision(g, Action.SPLIT if want else Action.ADSORB, p, why))
        if out:
            self._rebuild_kernel()
        return out

    def _short_side(self, s: int, g: int, p: float) -> tuple[str, str]:
        """Where the topic ``s .. g-1``, shorter than ``min_topic_turns``, goes when the review finds a
        boundary before ``g`` with P(boundary) ``p``: "alone" (its own short episode) when the boundary
        on each side of it is more likely than not (both P >= max(0.5, review threshold)); else it
        joins the side of the weaker boundary: "back" (the topic before it, whose episode is still
        open) when the boundary before it scored lower, "forward" (it opens the next topic: the
        boundary before ``g`` is refused) otherwise. Why: an aside of one exchange is a topic of its
        own when both of its edges say so; a boundary misplaced by a turn leaves its turn on the side
        it resembles, not always on the later one."""
        c = self.calibration
        p_s = self._review_p.get(s, 1.0)  # (a gap never reviewed: the conversation's or session's start)
        level = max(0.5, c.review_threshold)
        if p_s >= level and p >= level:
            return "alone", f"short topic stands alone: P(boundary) {p_s:.2f} before it and {p:.2f} after it, both >= {level:.2f}"
        if s in self._bounds and p_s < p:
            return "back", f"short topic: P(boundary) before it {p_s:.2f} < {p:.2f} after it"
        return "forward", (f"short topic: P(boundary) after it {p:.2f} <= {p_s:.2f} before it"
                           if s in self._bounds or s == 0 else
                           f"short topic: the topic before it is closed; P(boundary) after it {p:.2f} < {level:.2f}")

    def _review_prob(self, g: int, rec: _Turn) -> tuple[dict[str, float], float]:
        assert self.calibration.review is not None
        feats = dict(rec.features)
        feats["jump"] = self.lexical.jump(g)
        feats["window_sim"] = self._window_sim(g)
        feats["split_now"] = 1.0 if rec.split_now else 0.0
        return feats, self.calibration.review.prob(feats)

    def _close_final(self) -> list[Episode]:
        """Close every episode that ends before the last final boundary."""
        # a topic may still join the one before it while it is shorter than min_topic_turns (see
        # _short_side): the episode before a boundary closes once that many gaps after it are final
        m = self.calibration.min_topic_turns if self.calibration.lookahead else 1
        final = [b for b in self._bounds if b + m - 1 <= self._final_upto]
        if not final:
            return []
        upto = final[-1]
        starts = [self._open] + [b for b in self._bounds if b <= upto]
        out = []
        for a, b in zip(starts[:-1], starts[1:], strict=True):
            out.append(self._emit(a, b))
        self._bounds = [b for b in self._bounds if b > upto]
        self._open = upto
        self._prune()
        self._compact()
        return out

    def _compact(self) -> None:
        """Forget the stored open turns before the oldest open episode once every closed one is archived:
        they are in the archive now (``memory_turns``), so the journal holds only the open topics' turns
        and a perception that never flushes keeps it bounded. This perception's state is saved with it
        (:meth:`_state`): a perception that resumes from the journal takes it and carries this session on."""
        if not self._journal or self._retry or self._unwritten:  # (kept until the store took everything)
            return
        try:  # (with the state that decides the open turns as this perception does: see _state)
            journal.save_state(self._db(), self.conversation_id, self._turn0 + self._open, self._state())
        except LogichunkError as e:  # kept: a later perception observes them again and archives nothing twice
            self.archive_errors.append(f"the stored open turns before turn {self._turn0 + self._open} stay "
                                       f"(archived all the same): {e}")

    def _emit(self, a: int, b: int) -> Episode:
        blocks = tuple(self._turns[i].block for i in range(a, b))
        kern = None
        k = None
        d = self.calibration.kernel_decay
        for i in range(a, b):
            v = self._turns[i].vec
            if v is None:
                continue
            if k is None:
                k = v.astype(np.float64).copy()
            else:
                k = d * k + (1 - d) * v if d > 0 else k + v
        if k is not None:
            kern = unit(k).astype(np.float32)
        subj = subject(blocks, self.embedder) if self.links else None
        ep = Episode(self._closed_count, a, blocks, kern, conversation_id=self.conversation_id, subject=subj)
        self._closed_count += 1
        ep = self._archive(ep)
        self._subjects.append((ep.index, subj, ep.document_id))
        if self.keep_episodes:
            self.episodes.append(ep)
        return ep

    def _archive(self, ep: Episode, at: tuple[int, int] | None = None, *, retry: bool = False) -> Episode:
        """Archive ``ep``, linked to the earlier topic it resumes: the archiver's link when it made one
        (over the conversation's stored topics: the link the store keeps), else the session's own
        (:meth:`_own_link`; an episode met again on a ``retry`` has it already). ``at``: its first turn's
        and its topic's numbers in the conversation (with a store, known here; else the archiver numbers
        on after what it found stored)."""
        if self.archiver is None:
            return self._own_link(ep)
        if at is None and self._journal:
            at = (self._turn0 + ep.start, self._topic0 + ep.index)
        try:
            doc = self.archiver.archive(ep) if at is None else self.archiver.archive(ep, start=at[0], index=at[1])
        except LogichunkError as e:  # the database is gone: keep the episode for retry_archive()
            self.archive_errors.append(f"episode {ep.index}: {e}")
            ep = ep if retry else self._own_link(ep)  # (until the store takes it, and links it)
            self._retry.append((ep, at))
            return ep
        ep = replace(ep, document_id=doc)
        links = getattr(self.archiver, "links", None)
        if isinstance(links, Mapping) and doc in links:
            return _linked(ep, links[doc])
        return ep if retry else self._own_link(ep)

    def _own_link(self, ep: Episode) -> Episode:
        """``ep`` linked over this session's closed episodes (:func:`.resume.resumed`): the link when no
        archiver links it over the store's topics (:meth:`.archive.Archiver._link`, the truth with a store)."""
        return _linked(ep, resumed(ep.subject, ep.index, self._subjects, threshold_of(self.calibration)),
                       self._topic0)

    def retry_archive(self) -> list[Episode]:
        """Store the turns and archive the episodes the store refused before (in order); returns the
        episodes that made it."""
        if self._journal:
            self._write([])
        todo, self._retry = self._retry, []
        done = []
        for ep, at in todo:
            out = self._archive(ep, at, retry=True)
            if out.document_id is not None:
                done.append(out)
                for i, e in enumerate(self.episodes):
                    if e.index == out.index and e.conversation_id == out.conversation_id:
                        self.episodes[i] = out
                self._subjects = [(k, v, out.document_id if k == out.index else d) for k, v, d in self._subjects]
        return done

    def _prune(self) -> None:
        keep_from = min(self._open, self._next_review - self.calibration.lookahead - 2)
        for i in range(self._pruned, keep_from):
            self._turns.pop(i, None)
        self._pruned = max(self._pruned, keep_from)
        for g in [g for g in self._review_p if g < self._open]:
            del self._review_p[g]

    def flush(self, next_conversation_id: str | None = None) -> list[Episode]:
        """End of a session: review the pending gaps with what is there, close every episode (the
        current one included) and reset. The next turns continue the same conversation (its id kept,
        numbers going on in the store), or ``next_conversation_id``'s (its stored open turns observed
        again, as a new Perception would). Returns the closed episodes; the review's changes made here
        are in :attr:`flush_revisions` (a decision carries the changes made while it was observed, so
        these would otherwise go unreported)."""
        if next_conversation_id is not None and self.archiver is not None:
            from .archive import check_conversation_id

            next_conversation_id = check_conversation_id(next_conversation_id)
        out: list[Episode] = []
        self.flush_revisions: list[Revision] = []
        if self.calibration.lookahead and self._n:
            for g in range(max(1, self._next_review), self._n):
                self.flush_revisions.extend(self._review(g))
        self._final_upto = self._n
        out.extend(self._close_final())
        if self._n > self._open:
            out.append(self._emit(self._open, self._n))
        n, topics_closed = self._n, self._closed_count
        if self._journal and not self._retry and not self._unwritten:  # all archived: the open turns are done
            try:
                journal.save_state(self._db(), self.conversation_id, self._turn0 + n, None)
            except LogichunkError as e:  # (kept: a later Perception observes them again, archives nothing twice)
                self.archive_errors.append(f"the stored open turns stay (archived all the same): {e}")
        self._reset_state()
        self.lexical.reset()
        self._turn0 += n
        self._topic0 += topics_closed
        if next_conversation_id is None or next_conversation_id == self.conversation_id:
            if self.archiver is not None and hasattr(self.archiver, "restart"):
                self.archiver.restart()  # numbers on after the topics archived now
            return out
        self.conversation_id = next_conversation_id
        if self.archiver is not None:
            self.archiver.conversation_id = next_conversation_id
            if hasattr(self.archiver, "restart"):
                self.archiver.restart()
        if self._journal:
            self._resume()
        else:
            self._turn0 = self._topic0 = 0
        return out

    def pending(self) -> tuple[int, int]:
        """``(first, last + 1)``: the turns not yet in a closed episode."""
        return self._open, self._n


def _linked(ep: Episode, link: Link | None, first_topic: int = 0) -> Episode:
    """``ep`` resuming ``link``'s topic (none: no link) under the conversation's number of that topic: the
    link's own number plus ``first_topic``, the conversation's number of the link's topic 0 (0 for the
    archive's links, which number the whole conversation; the session's first topic for its own)."""
    if link is None:
        return replace(ep, resumes=None, resumes_similarity=None, resumes_document=None)
    return replace(ep, resumes=first_topic + link.topic, resumes_similarity=link.similarity,
                   resumes_document=link.document_id)


def _bits(v: np.ndarray | None) -> list[str] | None:
    """A vector's exact bits and dtype as text (a saved state gives the decisions the same floats)."""
    if v is None:
        return None
    a = np.ascontiguousarray(v)
    return [a.dtype.str, base64.b64encode(a.tobytes()).decode("ascii")]


def _unbits(held: list[str] | None) -> np.ndarray | None:
    return None if held is None else np.frombuffer(base64.b64decode(held[1]), np.dtype(held[0])).copy()


def _sum(vecs: list[np.ndarray]) -> np.ndarray:
    acc = vecs[0].astype(np.float64)
    for v in vecs[1:]:
        acc = acc + v
    return acc


def replay(blocks: Iterable[LogicalBlock | Mapping[str, Any] | str], perception: Perception) -> tuple[list[Decision], list[Episode]]:
    """Observe every block (anchors embedded in one batch first), then flush. Returns the decisions
    and the episodes closed along the way and at the end."""
    if isinstance(blocks, str | bytes) or not isinstance(blocks, Iterable):
        raise InputError(f"replay takes the turns in order (a list of str, dicts or LogicalBlocks), got "
                         f"{type(blocks).__name__}")
    decisions = observe_many(list(blocks), perception)
    episodes = [e for d in decisions for e in d.closed] + perception.flush()
    return decisions, episodes


def observe_many(blocks: Sequence[LogicalBlock | Mapping[str, Any] | str], perception: Perception) -> list[Decision]:
    """Observe the turns in order, their anchors embedded in one batch first (the texts the perception
    would embed one at a time; a model may differ in the last float bits between a batch and single
    texts, the hash embedder not at all), and with a store written there first in one transaction (a
    commit per turn would double the time of a long replay). Returns the decisions."""
    items = [b if isinstance(b, LogicalBlock) else (LogicalBlock(user=b) if isinstance(b, str) else LogicalBlock.from_dict(b))
             for b in blocks]
    base = perception.turns_observed
    anchors: list[str] = []
    need: list[int] = []
    prev: LogicalBlock | None = None
    if base:
        last = perception._turns.get(base - 1)
        prev = last.block if last is not None else None
    for i, b in enumerate(items):
        if not is_filler(b.query, 0)[0]:  # (a short turn may carry new words: embedded ahead too)
            need.append(i)
            anchors.append(anchor_text(b, prev))
        prev = b
    vecs: dict[int, np.ndarray] = {}
    if anchors:
        arr = np.asarray(perception.embedder.embed(anchors, kind="query"), dtype=np.float32)
        vecs = dict(zip(need, arr, strict=True))
    if perception._journal and not perception._replaying:
        perception._write([(perception._turn0 + base + i, b) for i, b in enumerate(items)])
    was, perception._replaying = perception._replaying, True
    try:
        return [perception.observe(b, vector=vecs.get(i)) for i, b in enumerate(items)]
    finally:
        perception._replaying = was
