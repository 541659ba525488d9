"""Errors that end a run with one clear message instead of a traceback."""


class GraphbenchError(Exception):
    """Base class: the message says what was wrong and how to fix it."""


class ConfigError(GraphbenchError):
    """A config value has the wrong type or an invalid value."""


class DataError(GraphbenchError):
    """Raw data is missing, corrupted or inconsistent."""
