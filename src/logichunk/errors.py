"""Errors users can act on. The CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence


class LogichunkError(Exception):
    """Base class: anything raised on purpose by logichunk."""


class InputError(LogichunkError, ValueError):
    """The input cannot be chunked as given (binary, invalid encoding, bad size settings...)."""


class ModelUnavailable(LogichunkError):
    """A model-backed part was asked for but its model or package is missing."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none): a foreign library's
    error read into one of ours, which the CLI prints as one line (transformers adds a paragraph of advice
    under its own)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside logichunk, seen from its caller: a warning names the
    user's own line, however deep in the library it was raised (``warnings.warn(..., stacklevel=...)``)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class UnknownChoice(InputError):
    """A field given a value outside the ones it takes (a retrieval ``mode``, a chunking ``method``, a
    ``tokenizer`` the service serves...): the service answers it 422 ``invalid_request``, as any body field
    it cannot take, and every interface says it in the words of :func:`unknown_choice`."""

    def __init__(self, field: str, value: object, choices: Sequence[str]) -> None:
        super().__init__(unknown_choice(field, value, choices))
        self.field = field
        self.value = value
        self.choices = tuple(choices)


def unknown_choice(field: str, value: object, choices: Sequence[str]) -> str:
    """One sentence for a value a field does not take, whichever interface refuses it (the HTTP service, the
    MCP tools): ``unknown mode 'nope': use one of basic, parent, ...``."""
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:59] + "…"
    return f"unknown {field} {shown}: use one of {', '.join(choices)}"


def check_choice(value: object, choices: Sequence[str], field: str) -> str:
    """``value`` when it is one of ``choices``, else :class:`UnknownChoice`."""
    if not isinstance(value, str) or value not in choices:
        raise UnknownChoice(field, value, choices)
    return value


def literal_choices(expected: str) -> list[str]:
    """The values of pydantic's ``literal_error`` (its ``ctx["expected"]``, ``'a', 'b' or 'c'``), so that a
    refusal by a schema's ``Literal`` reads as :func:`unknown_choice` does."""
    return [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", expected)]
