"""How the learning loop makes a model version: between its steps of games, or beside them in a process of its own.

A refit fits version N of the loop's model from the tree database (:func:`treelab.fit`, starting from
version N - 1's weights when there is one) and writes it whole: first ``NAME.vN.npz``, then the current file
``NAME.npz`` (:func:`install`), so Ctrl-C or ``kill -9`` leaves the model at a whole version.

- :func:`refit_between` makes it in this process while the games wait. The loop's first fit (no model to play
  with yet) and the last of a run of ``games`` games are always made so.
- :class:`BesideRefit` makes it in a child process while the next step of games plays on with the version
  before it (AlphaZero's asynchronous training, Silver et al. 2018: self-play always uses the latest model the
  trainer has finished). The child reads the database in one read transaction, and the loop waits until that
  transaction holds its snapshot (the file as the last step left it) before it plays on: what the child learns
  from is fixed, whatever the games write meanwhile, so a run with a seed replays exactly. At the end of the next
  step the loop waits for the child (:meth:`BesideRefit.finish`), if it is not done yet, and installs its model.

:class:`Refit` records either: how long the fit took (``seconds``) and how long the games waited for it
(``waited``: all of it between steps, only what was not hidden behind the games beside them). Which of the two
the loop makes is :attr:`TrainingConfig.refits <treelab.play.training.config.TrainingConfig.refits>`.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import TreelabError, WorkerError
from ..learn.fitting import FitConfig, fit
from ..learn.model import Model, load_model
from ..store.writer import spawn

__all__ = ["BesideRefit", "Refit", "install", "refit_between", "versioned"]


@dataclass(frozen=True)
class Refit:
    """One model fitted by the loop."""

    version: int
    """The model's version (1 for the first)."""
    games: int
    """Games logged in the database when it was fitted (the snapshot it learned from)."""
    positions: int
    """Positions it learned from."""
    value_sign_accuracy: float | None
    """Held-out share of positions whose value has the sign of the target."""
    policy_top1: float | None
    """Held-out share of positions whose most likely move is the target's."""
    seconds: float
    """How long the fit took."""
    waited: float = 0.0
    """How long the games waited for it: all of :attr:`seconds` between steps; beside them, the start of the child
    process until its snapshot, and the rest of the fit that the next step's games did not hide."""
    beside: bool = False
    """Made in a child process while the games played on (:class:`BesideRefit`)."""


def versioned(model: str | os.PathLike[str], version: int) -> Path:
    """The file that keeps version ``version`` of ``model`` beside it (``c4.npz`` -> ``c4.v3.npz``)."""
    path = Path(model)
    return path.with_name(f"{path.stem}.v{version}{path.suffix}")


def install(path: Path, version: int) -> Model:
    """Make the kept version ``version`` (``NAME.vN.npz``) the current model file ``path`` (written whole)."""
    return load_model(versioned(path, version)).save(path)


def refit_between(db: str | os.PathLike[str], path: Path, game: str, fitting: FitConfig, *, version: int,
                  logged: int, since: int | None, current: Model | None, progress: bool) -> Refit:
    """Fit version ``version`` in this process (from ``current``'s weights, if any) and install it."""
    bar = _FitBar(version) if progress else None
    try:
        refit = _fit_version(db, path, game, fitting, version=version, logged=logged, since=since, current=current,
                             progress=bar)
    finally:
        if bar is not None:
            bar.close()
    install(path, version)
    return replace(refit, waited=refit.seconds)


class BesideRefit:
    """A refit made in a child process while the games play on; returns once its read holds its snapshot.

    Args:
        db: the tree's database (only read, by the child).
        path: the model file; the child writes ``NAME.vN.npz``, :meth:`finish` makes it the current file.
        game: the game's name.
        fitting: the fit to make (the replay plan already applied).
        version: the version it makes.
        logged: games logged in ``db`` now (the snapshot's).
        since: the games logged when ``current`` was fitted (its new positions come first).
        current: the model it starts from.

    Raises:
        WorkerError: the child could not start, or died before its snapshot.
        TreelabError: the fit failed before its snapshot (the database cannot be read, holds another game).
    """

    def __init__(self, db: str | os.PathLike[str], path: Path, game: str, fitting: FitConfig, *, version: int,
                 logged: int, since: int | None, current: Model) -> None:
        self.version, self.logged, self.path = version, logged, path
        began = time.perf_counter()
        try:
            self._proc, self._conn = spawn(_fit_beside, (os.fspath(db), os.fspath(path), game, fitting, version,
                                                         logged, since, current), f"treelab-refit-v{version}")
        except (AssertionError, OSError, RuntimeError, ValueError) as exc:
            raise WorkerError(f"cannot start the refit process ({exc}): run with --refits between") from None
        try:
            self._answer("snapshot")
        except BaseException:
            self.cancel()
            raise
        self.started = time.perf_counter() - began
        """Seconds the games waited for the child's snapshot."""

    def finish(self) -> Refit:
        """Wait for the fit (if it is not done yet), install its model and return what it did.

        Raises:
            FitError: too few well-visited positions (the model stays as it was).
            WorkerError: the child died (the model stays as it was).
        """
        began = time.perf_counter()
        try:
            refit: Refit = self._answer("done")
        finally:
            self.cancel()
        install(self.path, self.version)
        return replace(refit, waited=self.started + time.perf_counter() - began, beside=True)

    def cancel(self) -> None:
        """Stop the child, whatever it is doing (its version is left unmade; the model file is untouched)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=10)
        with suppress(OSError):
            self._conn.close()

    def _answer(self, expected: str) -> Any:
        """The child's next message, ``(expected, payload)``; its error raised here."""
        try:
            kind, payload = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise WorkerError(f"the refit process of version {self.version} died ({how}); the model stays at version "
                              f"{self.version - 1}: run the same command again to resume") from None
        if kind == "error":
            raise payload
        assert kind == expected, (kind, expected)
        return payload


def _fit_beside(db: str, path: str, game: str, fitting: FitConfig, version: int, logged: int, since: int | None,
                current: Model, conn: Any) -> None:
    """The child of :class:`BesideRefit`: one BLAS thread (the games keep the other core), the fit, its messages;
    it ends at once if the loop's process does (``kill -9``: no fit goes on to write a version nobody waits for)."""
    threading.Thread(target=_end_with_parent, args=(conn,), name="treelab-refit-watch", daemon=True).start()
    try:
        with suppress(ImportError):  # scikit-learn's own dependency; without it the fit still runs
            from threadpoolctl import threadpool_limits

            threadpool_limits(1)
        refit = _fit_version(db, Path(path), game, fitting, version=version, logged=logged, since=since,
                             current=current, on_snapshot=lambda: conn.send(("snapshot", None)))
        conn.send(("done", refit))
    except BaseException as exc:  # the parent raises it (a FitError: too few positions yet)
        error = exc if isinstance(exc, TreelabError) else WorkerError(
            f"the refit of version {version} failed: {type(exc).__name__}: {exc}")
        with suppress(OSError):
            conn.send(("error", error))
    finally:
        conn.close()


def _end_with_parent(conn: Any) -> None:
    """End this process when the parent's end of ``conn`` closes: the parent never writes to it, so a read returns
    only then (the parent died, or stopped this child)."""
    with suppress(BaseException):
        conn.recv()
    os._exit(0)


def _fit_version(db: str | os.PathLike[str], path: Path, game: str, fitting: FitConfig, *, version: int, logged: int,
                 since: int | None, current: Model | None, progress: Any = None,
                 on_snapshot: Any = None) -> Refit:
    """Fit version ``version`` from ``db`` and keep it as ``NAME.vN.npz`` (not yet the current file)."""
    began = time.perf_counter()
    fitted = fit(db, None, fitting=fitting, game=game, progress=progress, warm_start=current, since=since,
                 on_snapshot=on_snapshot)
    fitted = Model(fitted.game, fitted.encoding, fitted.feature_shape, fitted.first_move, fitted.num_moves,
                   fitted.weights, fitted.biases, {**fitted.info, "version": version, "games_logged": logged})
    fitted.save(versioned(path, version))
    held = fitted.info.get("metrics", {}).get("heldout") or {}
    return Refit(version=version, games=logged, positions=int(fitted.info.get("positions", 0)),
                 value_sign_accuracy=held.get("value_sign_accuracy"), policy_top1=held.get("policy_top1"),
                 seconds=time.perf_counter() - began)


class _FitBar:
    """A progress bar over a fit's epochs (the fit's ``progress`` callback)."""

    def __init__(self, version: int) -> None:
        from .console import bar

        self.bar = bar(None, f"refit v{version}", "epoch")

    def __call__(self, epoch: int, total: int, loss: float) -> None:
        self.bar.total = total
        self.bar.set_postfix_str(f"loss {loss:.5f}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
