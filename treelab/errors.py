"""Every error treelab raises, in one hierarchy.

Each class subclasses the builtin that fits, so callers can catch either the
treelab class or the builtin. Messages are lowercase, show the bad value with
``!r`` and say what to do, like graphviz's hint to put ``dot`` on PATH.
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "DamagedDatabaseError",
    "DatabaseBusyError",
    "ExecutableNotFoundError",
    "FitError",
    "GameMismatchError",
    "GameOverError",
    "IllegalMoveError",
    "ImportFormatError",
    "MissingExtraError",
    "ModelFileError",
    "ModelMismatchError",
    "NoEncodingError",
    "NotATreelabDatabaseError",
    "NotationError",
    "PathNotFoundError",
    "ProofConflictError",
    "QueryError",
    "RenderError",
    "SchemaVersionError",
    "ServeError",
    "SpecError",
    "StoreError",
    "TooLargeError",
    "TraceError",
    "TreelabError",
    "UnknownGameError",
    "UnknownOptionError",
    "UnsupportedGameError",
    "WorkerError",
    "require_extra",
]


class TreelabError(Exception):
    """Base class of every error treelab raises on purpose."""


class UnknownGameError(TreelabError, KeyError):
    """A game name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnsupportedGameError(TreelabError, ValueError):
    """A game treelab cannot play (imperfect information, chance, scores, players), or whose package is missing."""


class NoEncodingError(UnsupportedGameError):
    """A game without an input encoding (``State.features``): no model can be fitted or used for it."""


class FitError(TreelabError, ValueError):
    """A tree a model cannot be fitted from (too few well-visited positions)."""


class ModelFileError(TreelabError, ValueError):
    """A model file that cannot be read: missing, damaged, or not written by ``treelab fit``."""


class ModelMismatchError(ModelFileError):
    """A model fitted for another game or input encoding than the one it is used with."""


class NotationError(TreelabError, ValueError):
    """A move label or move sequence that cannot be parsed."""


class IllegalMoveError(TreelabError, ValueError):
    """A well-formed move that the rules forbid in this position."""


class GameOverError(IllegalMoveError):
    """A move played after the game has ended."""


class ImportFormatError(TreelabError, ValueError):
    """A foreign tree or rows file that cannot be imported: a malformed row, an illegal path, another game."""


class PathNotFoundError(TreelabError, KeyError):
    """A move path that is not stored in the tree."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ProofConflictError(TreelabError, ValueError):
    """Two proofs of one node that disagree (trees being added, one of them wrong)."""


class BudgetError(TreelabError, ValueError):
    """A search budget or tuning constant that is out of range."""


class UnknownOptionError(TreelabError, ValueError):
    """A name from a closed set (algorithm, playout, evaluator, move choice, opponent) that is not in it."""


class StoreError(TreelabError, OSError):
    """A database that cannot be opened, read or written."""


class DatabaseBusyError(StoreError):
    """Another process holds the database's write lock now (raised only to a writer that asked not to wait)."""


class NotATreelabDatabaseError(StoreError):
    """A file that is not a treelab database."""


class DamagedDatabaseError(NotATreelabDatabaseError):
    """A treelab database whose contents no treelab wrote (damaged, or crafted)."""

    db: str | None = None
    """The database's name once known (the message then names it)."""


class GameMismatchError(StoreError):
    """A database that holds a tree of another game."""


class SchemaVersionError(StoreError):
    """A database written by a newer treelab."""


class RenderError(TreelabError, RuntimeError):
    """A diagram that cannot be drawn."""


class TooLargeError(RenderError, ValueError):
    """A diagram asked for more nodes than the size guard allows."""


class ExecutableNotFoundError(RenderError, FileNotFoundError):
    """The Graphviz ``dot`` program is not on PATH."""


class SpecError(TreelabError, ValueError):
    """A player specification (``uct:iterations=200``) that cannot be parsed."""


class QueryError(TreelabError, ValueError):
    """A query string value the explorer's API cannot use (answered with HTTP 400)."""


class ServeError(TreelabError, OSError):
    """A host or port the explorer cannot listen on."""


class WorkerError(TreelabError, RuntimeError):
    """Parallel training that cannot go on: a worker died, or Ray is missing or unreachable."""


class TraceError(TreelabError, ValueError):
    """A search trace that cannot be read or used: cut, damaged, of another game or position, or a step past its end."""


class MissingExtraError(TreelabError, ImportError):
    """A feature whose optional dependencies (an extra of the package, ``pip install 'treelab[EXTRA]'``) are missing."""


def require_extra(module: str, extra: str, what: str, package: str | None = None) -> object:
    """Import ``module``, or raise :class:`MissingExtraError` saying in one line which extra to install.

    ``what`` names the feature for the message (``"treelab fit"``), ``package`` the distribution when
    its name differs from the module's (``"scikit-learn"``). Every extra's contents are listed
    in the getting-started guide's *Installing* section.

    Raises:
        MissingExtraError: ``module`` cannot be imported.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        name = package or module.partition(".")[0]
        hint = f"pip install 'treelab[{extra}]'"
        raise MissingExtraError(f"{what} needs {name}, which is not installed: {hint}") from None
