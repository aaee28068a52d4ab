"""The window of whole sentences shown around a match inside a large parent or block."""

from __future__ import annotations

from ..text.sentences import split_sentences


def context_window(text: str, start: int, end: int, size: int) -> tuple[int, int] | None:
    """A window of at most ``size`` characters of ``text`` containing ``[start, end)``, grown from it
    by whole sentences on both sides; ``None`` when the whole text fits."""
    if len(text) <= size:
        return None
    if end - start >= size:
        return (start, end)
    ss = split_sentences(text)
    starts = ss.starts.tolist()
    ends = ss.ends.tolist()
    left = [s for s in reversed(starts) if s < start]
    right = [e for e in ends if e > end]
    s, e = start, end
    grew = True
    while grew:
        grew = False
        if right and right[0] - s <= size:
            e = right.pop(0)
            grew = True
        if left and e - left[0] <= size:
            s = left.pop(0)
            grew = True
    return (s, e)
