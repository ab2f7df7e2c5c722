"""Exception and warning classes of the library (one class per kind of rule broken).

The library never prints and never configures logging: problems with the input raise one
of these exceptions; recoverable surprises are warnings.
"""
from __future__ import annotations

__all__ = ["MaxEntError", "InputError", "TopicMismatchError", "MeasureNameError", "ParameterError",
           "MaxEntWarning", "InputWarning", "TopicWarning", "ConvergenceWarning"]


class MaxEntError(Exception):
    """Base class of every error raised by this library."""


class InputError(MaxEntError, ValueError):
    """A run, qrels or ranking file cannot be used as it is: ``path``, 1-based ``line`` (None
    for the whole file) and ``reason``, printed as ``path:line: reason``."""

    def __init__(self, path, line: int | None, reason: str):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = reason
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {reason}")


class TopicMismatchError(InputError):
    """The run(s) and the qrels share no topic, so nothing can be evaluated."""


class MeasureNameError(MaxEntError, ValueError):
    """A measure name that cannot be parsed or names no known measure."""


class ParameterError(MaxEntError, ValueError, TypeError):
    """A parameter outside its allowed values or of the wrong type, named in the message; both
    a ValueError and a TypeError (as scikit-learn's ``InvalidParameterError``)."""


class MaxEntWarning(UserWarning):
    """Base class of the library's warnings."""


class InputWarning(MaxEntWarning):
    """An input read in a way trec_eval would not read it (e.g. through a byte-order mark)."""


class TopicWarning(MaxEntWarning):
    """Qrels topics missing from a run, or run topics missing from the qrels."""


class ConvergenceWarning(MaxEntWarning):
    """Some maximum-entropy problems ended ``not_converged``."""
