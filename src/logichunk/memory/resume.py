"""Which earlier episode a finished one resumes: a conversation that returns to a subject after
something else opens a new episode, and the link says which earlier one it picks up again, so an
agent recalling the subject sees that the two belong together.

The rule (one for the perception, over its session's episodes, and for the archive, over the
conversation's stored topics, so a return is linked across sessions too; with a store, the archive's
link is the one the store and the episode both keep): an episode's **subject** is one embedding of
its content requests (the user's queries, fillers left out, one text: the
kernel mixes in the turn before each anchor, which for an episode's first turn is the topic it
left). The episode resumes the earlier episode of its conversation, other than the one just before
it (a boundary parted those two), whose subject has the highest cosine to its own, when that cosine
is at least the calibration's ``resume_threshold``: the 99th percentile of the subject cosines
between non-adjacent episodes of *different* gold topics on the calibration documents
(:func:`fit_threshold`), i.e. a false link for one pair in a hundred there. An embedder without one
uses the calibration's ``hi``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..models.embedding import l2_normalize
from .block import LogicalBlock, is_filler

__all__ = ["FALSE_LINK_RATE", "Link", "best_link", "fit_threshold", "resumed", "subject", "subject_text",
           "threshold_of"]

FALSE_LINK_RATE = 0.01  # the share of different-topic pairs of the calibration documents allowed to link


@dataclass(frozen=True)
class Link:
    """Topic number ``of`` resumes topic number ``topic`` (its ``document_id`` once archived), subject cosine
    ``similarity``; both numbers as the linker counts topics (the archive: the conversation's, as the store
    numbers them; a perception's own link: its session's, which it moves to the conversation's for
    :attr:`~.episode.Episode.resumes`), so ``of - topic`` is how many topics back the return reaches."""

    topic: int
    similarity: float
    document_id: str | None = None
    of: int | None = None


def subject_text(blocks: Sequence[LogicalBlock]) -> str:
    """What an episode is about, as one text: its content requests (all its requests if every one is a filler)."""
    qs = [b.query for b in blocks if not is_filler(b.query)[0]] or [b.query for b in blocks]
    return "\n".join(q.strip() for q in qs if q.strip())


def subject(blocks: Sequence[LogicalBlock], embedder: Any) -> np.ndarray | None:
    """The episode's subject vector (L2-normalised), or None when there is no text or the embedder fails
    (the episode is then linked to nothing: a conversation never stops for a link)."""
    text = subject_text(blocks)
    if not text:
        return None
    try:
        v = np.asarray(embedder.embed([text], kind="query"), np.float32).reshape(-1)
    except Exception:  # noqa: BLE001 - any embedder failure: no link
        return None
    n = float(np.linalg.norm(v))
    return v / n if n > 0 and np.isfinite(n) else None


def resumed(vec: np.ndarray | None, topic: int, earlier: Iterable[tuple[int, np.ndarray | None, str | None]],
            threshold: float) -> Link | None:
    """The earlier episode topic number ``topic`` resumes (see the module docstring), or None.
    ``earlier``: (topic number, subject vector or None, document id or None) of the conversation's
    episodes; those not before ``topic - 1`` are ignored, and so are vectors of another length (another
    embedder's: not comparable)."""
    if vec is None:
        return None
    k = np.asarray(vec, np.float32).reshape(-1)
    held = [(int(no), np.asarray(o, np.float32).reshape(-1), doc) for no, o, doc in earlier if o is not None]
    held = [h for h in held if h[1].shape == k.shape]
    if not held:
        return None
    return best_link(k, topic, np.asarray([h[0] for h in held], np.int64), np.stack([h[1] for h in held]),
                     [h[2] for h in held], threshold)


def best_link(vec: np.ndarray, topic: int, numbers: np.ndarray, subjects: np.ndarray,
              documents: Sequence[str | None], threshold: float) -> Link | None:
    """:func:`resumed` over subjects held as one matrix (row ``i``: topic ``numbers[i]``, document
    ``documents[i]``), one product for all of them: the highest cosine among the topics before
    ``topic - 1`` that reaches ``threshold``, the first such row on a tie; None when none does."""
    if not len(numbers):
        return None
    # (einsum, not BLAS: a matrix-vector product this small may start BLAS threads, whose spinning
    # costs several times its CPU time on a busy machine)
    sims = np.einsum("ij,j->i", np.asarray(subjects, np.float32), np.asarray(vec, np.float32).reshape(-1))
    ok = (np.asarray(numbers) < topic - 1) & (sims >= threshold)  # (a NaN cosine never reaches it)
    if not ok.any():
        return None
    i = int(np.argmax(np.where(ok, sims, -np.inf)))
    return Link(int(numbers[i]), float(sims[i]), documents[i], int(topic))


def threshold_of(calibration: Any) -> float:
    """The calibration's ``resume_threshold``, else its ``hi`` (an embedder calibrated before links)."""
    t = getattr(calibration, "resume_threshold", None)
    return float(calibration.hi if t is None else t)


def fit_threshold(convs: Iterable[Sequence[tuple[Sequence[LogicalBlock], Sequence[int]]]], embedder: Any) -> float | None:
    """``resume_threshold`` from labelled conversations segmented by the pipeline: each conversation
    a list of its episodes as (the episode's blocks, its turns' gold topic numbers). The
    (1 - FALSE_LINK_RATE) quantile of the subject cosines between non-adjacent episodes of one
    conversation whose majority gold topics differ; None without such a pair."""
    cos: list[float] = []
    for conv in convs:
        eps = list(conv)
        if len(eps) < 3:
            continue
        texts = [subject_text(b) or "." for b, _ in eps]
        v = l2_normalize(embedder.embed(texts, kind="query"))
        gold = [int(np.bincount(np.asarray(g, np.int64)).argmax()) for _, g in eps]
        for j in range(2, len(eps)):
            cos.extend(float(v[j] @ v[i]) for i in range(j - 1) if gold[i] != gold[j])
    if not cos:
        return None
    return round(float(np.quantile(np.asarray(cos), 1.0 - FALSE_LINK_RATE)), 4)
