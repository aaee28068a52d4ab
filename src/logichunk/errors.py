"""Errors users can act on. The CLI prints them as one line and exits non-zero."""


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
