"""The exceptions graphloom raises.

Each carries graphloom's message, which names the file, argument or id that was wrong and what
was expected. Each also derives from the built-in exception a Python program would catch for
that kind of failure, so ``except ValueError`` or ``except FileNotFoundError`` work as usual.
"""

__all__ = ["Error", "OptionError", "IdError", "MissingFileError"]


class Error(RuntimeError):
    """Base class of graphloom's exceptions; raised as is for failures of the engine itself
    (a malformed file, a failed batch, a server that does not answer)."""


class OptionError(Error, ValueError):
    """A bad argument: wrong type, dtype, shape or value. ``field`` names the argument when the
    engine knows it (it is the keyword argument's name)."""

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field


class IdError(Error, IndexError):
    """A node or edge id outside the graph's range."""


class MissingFileError(Error, FileNotFoundError):
    """A file or directory that does not exist."""
