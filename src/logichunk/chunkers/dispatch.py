"""One entry point over every chunker, by method name — what the CLI, the HTTP service and the
settings file use, so a method means the same thing everywhere.

Each method takes the models it needs as objects or by the names the CLI takes (``embedder="e5"``,
``lm="default"``, ``llm="openai:URL#model"``: :mod:`logichunk.models.registry`) and fails with a
clear :class:`~logichunk.errors.InputError` when one is missing, never with a silent fallback: a tree cut by
an embedder names it in its stats (``embedder``, and ``embedder_fallback`` when ``"auto"`` fell back).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import InputError, UnknownChoice
from ..models.registry import embedder_of, fallback_note, llm_of, lm_of
from ..text.measure import Measure
from ..tree import ChunkTree

#: method name -> (what it is, which models it needs)
METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "logic-chain": ("four-tier cascade on the model-free entropy signal (tier 2 with an LLM, LM perplexity "
                    "in tier 3 with an LM)", ()),
    "cliff": ("the cascade with embedding semantic cliffs as its tier-1 signal", ("embedder",)),
    "fused": ("the cascade with entropy and semantic cliffs mixed as its tier-1 signal (each z-scored within "
              "the document; best segmentation with a real embedder)", ("embedder",)),
    "ppl": ("Meta-Chunking: perplexity minima of a causal LM, dynamic merge to the size", ("lm",)),
    "msp": ("Meta-Chunking: margin sampling of an instruct LM, dynamic merge to the size", ("lm",)),
    "parent-child": ("parents (blank-line blocks, split/merged to size); children by the global decision on "
                     "the embedder's sentence vectors, the layout and semantic cliffs",
                     ("embedder",)),
    "fixed": ("baseline: fixed size", ()),
    "recursive": ("baseline: recursive separators (paragraph, line, sentence, word)", ()),
}

#: each method's default maximum size, in characters (the parent size for parent-child)
DEFAULT_MAX = {"parent-child": 1500}


FLAT = frozenset({"ppl", "msp", "fixed", "recursive"})  # one level: ``sizes`` gives them its first limit

_CASCADE_READS = frozenset({"levels", "llm", "lm", "composite", "selection"})
#: the options of :func:`chunk_by` each method reads beyond the text, its sizes and unit: any other one
#: given is ignored, and a caller says so (a flag that changes nothing must not look as if it did)
READS: dict[str, frozenset[str]] = {
    "logic-chain": _CASCADE_READS,
    "cliff": _CASCADE_READS | {"embedder"},
    "fused": _CASCADE_READS | {"embedder"},
    "ppl": frozenset({"lm", "theta", "selection"}),
    "msp": frozenset({"lm", "selection"}),
    "parent-child": frozenset({"embedder"}),
    "fixed": frozenset(),
    "recursive": frozenset(),
}


def ignored_options(method: str, given: Iterable[str]) -> tuple[str, ...]:
    """The options in ``given`` (names as :data:`READS` spells them) that ``method`` does not read."""
    reads = READS.get(method)
    if reads is None:
        raise UnknownChoice("method", method, tuple(METHODS))  # (the service's and the MCP tools' words)
    return tuple(o for o in given if o not in reads)


def methods_reading(option: str) -> tuple[str, ...]:
    """The methods that read ``option``, in :data:`METHODS` order (for a note naming them)."""
    return tuple(m for m in METHODS if option in READS[m])


def max_size_for(method: str, max_size: int | None) -> int:
    """The maximum size a method runs with: the one given, else the method's default."""
    return int(max_size if max_size is not None else DEFAULT_MAX.get(method, 1000))


def needs(method: str) -> tuple[str, ...]:
    """The models a method needs: a subset of ``("embedder", "lm")``."""
    try:
        return METHODS[method][1]
    except KeyError:
        raise UnknownChoice("method", method, tuple(METHODS)) from None


def check_models(method: str, embedder: object, lm: object) -> None:
    """One line for a method given without a model it needs (:func:`needs`): what :func:`chunk_by` checks at a
    call, and the framework adapters when a splitter is built (not at its first document)."""
    for model in needs(method):
        if (embedder if model == "embedder" else lm) is None:
            raise InputError(f"method {method!r} needs {'an embedder' if model == 'embedder' else 'an LM'}: "
                             f"pass {model}=")


def check_selection(method: str, selection: str | None) -> None:
    """One line for a selection ``method`` does not take, naming the methods whose rule it is: the cascade's
    (global, local) and Meta-Chunking's (paper, global) are different lists, and a bare "must be one of"
    sends a user who asked for ``paper`` looking for a typo."""
    from .logic_chain import SELECTIONS as CASCADE_SELECTIONS
    from .meta import SELECTIONS as META_SELECTIONS

    if selection is None or "selection" not in READS.get(method, frozenset()):
        return
    takes = META_SELECTIONS if method in ("ppl", "msp") else CASCADE_SELECTIONS
    if selection in takes:
        return
    whose = {"paper": "Meta-Chunking's rule, for methods ppl and msp",
             "local": "the cascade's earlier rule, for methods logic-chain, cliff and fused"}.get(selection)
    raise InputError(f"selection {selection!r} is " + (whose or "not a selection")
                     + f"; {method} takes {' or '.join(takes)}")


def chunk_by(
    method: str,
    text: str,
    *,
    max_size: int | None = None,
    sizes: Sequence[int] | None = None,
    levels: int = 3,
    unit: str | Measure = "chars",
    embedder: Any = None,
    llm: Any = None,
    lm: Any = None,
    theta: float = 0.0,
    composite: bool = True,
    selection: str | None = None,
    settings: Any = None,
    source: str = "<text>",
    tokenizer: Any = None,
    overlap: int = 0,
) -> ChunkTree:
    """Chunk ``text`` with ``method`` (see :data:`METHODS`). ``max_size`` defaults per method (1000,
    or 1500 for parent-child parents); ``sizes``/``levels`` shape the logic-chain, cliff and fused trees;
    the Meta-Chunking and baseline methods are flat; parent-child takes ``sizes=(parent, child)``
    limits (or ``max_size`` for its parents) and the rest of its parameters — its parent limit too when
    no size is given — from ``settings`` (a :class:`logichunk.config.Settings`, default: the defaults),
    as the store's ingestion does. ``llm`` is tier 2 of the cascade; ``lm`` scores PPL/MSP, and adds LM
    perplexity to the cascade's tier 3 when given to logic-chain, cliff or fused; ``composite=False`` skips
    the cascade's tier 3 (fastest); ``selection="local"`` gives the cascade the earlier local rule instead
    of the global decision (default ``"global"``); for ppl and msp, ``selection`` is ``"paper"``
    (Meta-Chunking's per-point rules) or ``"global"`` (the LM's signal as rewards of the global
    decision), each one's default in :data:`logichunk.chunkers.meta.DEFAULT_SELECTION`. ``tokenizer`` sizes in its exact tokens (``"embedder"``: the
    ``embedder``'s own; see :func:`logichunk.text.tokens.resolve_tokenizer`). ``overlap`` (in the unit)
    gives every chunk ``meta["overlap_span"]``, a context window around its span
    (:mod:`logichunk.chunkers.overlap`)."""
    from ..text.tokens import fit_limit, measure_for
    from .logic_chain import check_size, check_sizes
    from .overlap import add_overlap, check_overlap
    from .snap import snap_tree

    check_selection(method, selection)
    embedder, llm, lm = embedder_of(embedder), llm_of(llm), lm_of(lm)
    unit = measure_for(unit, tokenizer, embedder=embedder)
    check_overlap(overlap)

    def done(tree: ChunkTree) -> ChunkTree:  # whole tokens only, then the context windows
        # parent-child snaps its own cuts inside each block, and a block's edges are the user's: moving
        # them to the whole text's token starts would grow a parent past its limit
        tree = add_overlap(tree if method == "parent-child" else snap_tree(tree, unit), overlap, unit)
        return _with_embedder(tree, embedder) if uses_embedder else tree

    check_models(method, embedder, lm)
    uses_embedder = embedder is not None and ("embedder" in needs(method) or tokenizer == "embedder")
    if not isinstance(text, str):
        raise InputError(f"text must be str, got {type(text).__name__}; decode bytes with logichunk.text.decode.read_text")
    if max_size is not None:
        max_size = check_size(max_size)
    if sizes is not None:
        sizes = check_sizes(sizes)
    if isinstance(theta, bool) or not isinstance(theta, int | float) or not 0 <= theta < float("inf"):
        raise InputError(f"theta (the minimum drop of a perplexity minimum) must be a number >= 0, got {theta!r}")
    size = max_size_for(method, max_size)
    if sizes and method in FLAT:  # one level: the first of ``sizes`` (the top level's limit) is their size
        size = sizes[0]
    if method in ("logic-chain", "cliff", "fused"):
        from ..signals.entropy import EntropySignal
        from ..signals.semantic import SemanticSignal, fused_signal
        from .logic_chain import chunk

        signal: Any
        if method == "cliff":
            signal = SemanticSignal(embedder)
        elif method == "fused":
            signal = fused_signal(embedder)
        else:
            signal = EntropySignal()
        lm_signal = None
        if lm is not None:
            from ..signals.lm import PerplexitySignal

            lm_signal = PerplexitySignal(lm)
        return done(chunk(text, max_size=size, sizes=sizes, levels=levels, unit=unit, llm=llm, lm_signal=lm_signal,
                          signal=signal, composite=composite, selection=selection or "global", source=source))
    if method not in ("logic-chain", "cliff", "fused", "parent-child"):
        size = fit_limit(size, unit)
    if method in ("ppl", "msp"):
        from .meta import chunk_msp, chunk_ppl

        if method == "ppl":
            return done(chunk_ppl(text, lm, max_size=size, unit=unit, theta=theta, selection=selection, source=source))
        return done(chunk_msp(text, lm, max_size=size, unit=unit, selection=selection, source=source))
    if method == "parent-child":
        from .parent_child import PCParams, chunk_parent_child

        base = PCParams.from_settings(settings) if settings is not None else PCParams()
        # the settings' parent limit unless the call names one: the store ingests with that limit too
        pmax = int(sizes[0]) if sizes else size if max_size is not None else base.max_parent_size
        cmax = int(sizes[1]) if sizes is not None and len(sizes) > 1 else min(base.child_max_size, pmax)
        target = min(base.child_target_size, cmax)
        p = PCParams(pmax, min(base.min_parent_size, pmax // 2), min(base.child_min_size, target), cmax, target,
                     base.similarity_threshold, base.cliff_drop, *_pc_unit(unit))
        return done(chunk_parent_child(text, embedder, p, source=source))
    from .baselines import fixed, recursive

    return done((fixed if method == "fixed" else recursive)(text, size, unit=unit))


def _with_embedder(tree: ChunkTree, embedder: Any) -> ChunkTree:
    """``tree`` with ``stats["embedder"]``, the model id its cuts were measured with, and, when ``"auto"`` fell
    back to another model, ``stats["embedder_fallback"]`` saying why: never a silent change of model."""
    from dataclasses import replace
    from types import MappingProxyType

    stats = dict(tree.stats)
    stats["embedder"] = str(getattr(embedder, "model_id", "") or type(embedder).__name__)
    note = fallback_note(embedder)
    if note:
        stats["embedder_fallback"] = note
    return replace(tree, stats=MappingProxyType(stats))


def _pc_unit(unit: str | Measure) -> tuple[str | Measure, Any]:
    """``(unit, tokenizer)`` for :class:`~.parent_child.PCParams`: a resolved tokenizer travels as
    its tokenizer, so the parent-child chunker lowers its limits by the tokenizer's overhead too."""
    from ..text.tokens import TokenMeasure

    return ("tokens", unit) if isinstance(unit, TokenMeasure) else (unit, None)
