"""Errors users can act on. The CLI prints them as one line and exits non-zero."""


class LogichunkError(Exception):
    """Base class: anything raised on purpose by logichunk."""


class InputError(LogichunkError, ValueError):
    """The input cannot be chunked as given (binary, invalid encoding, bad size settings...)."""


class ModelUnavailable(LogichunkError):
    """A model-backed part was asked for but its model or package is missing."""
