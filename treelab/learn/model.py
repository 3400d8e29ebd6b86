"""A fitted policy/value model: its file, its checks, and inference in plain numpy.

The file is an ``.npz`` archive (read with ``allow_pickle=False``: no code is
ever loaded) holding the layers' weights ``W0, b0, W1, b1, ...`` and one JSON
text ``meta``: the format, the game and its input encoding, the network's
shape, and the training record (examples, source database, treelab version,
metrics) :func:`treelab.fit` wrote. The network is a multilayer perceptron
(ReLU hidden layers, linear output) whose outputs are the policy, one place
per move (``move - game.first_move``), then the value of the player to move
in [-1, 1].

One position through a small network is a few microseconds of numpy:
faster than scikit-learn's ``predict``, which checks its input on every call.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import speedups
from ..errors import ModelFileError, ModelMismatchError, StoreError
from ..games import Game, State
from ..store.files import special_kind, whole

__all__ = ["FORMAT", "FORMAT_VERSION", "Model", "load_model"]

FORMAT = "treelab-model"
"""The ``format`` of every model file's ``meta``."""
FORMAT_VERSION = 1
"""The version of the file layout this treelab writes and reads."""
MAX_MODEL_BYTES = 1 << 30
"""The most a model file may unpack to (its arrays are read whole): a crafted archive cannot fill memory."""
PRIOR_FLOOR = 1e-3
"""The smallest prior a legal move gets before normalising (a linear output can be negative)."""

Floats = npt.NDArray[np.float32]

_FORWARD = getattr(speedups.compiled, "mlp_forward", None)
"""``treelab._speedups.mlp_forward`` when built: one position's forward pass in C, the numbers
``treelab._speedups.puct_batch`` reads (skipping zero features, a sum per output in input order)."""


@dataclass(frozen=True, eq=False)
class Model:
    """A policy/value network for one game and encoding, with the record of how it was fitted."""

    game: str
    """The registry name of the game it was fitted for (``"connect4"``)."""
    encoding: str
    """The game's input encoding it reads (:attr:`treelab.games.Game.encoding`)."""
    feature_shape: tuple[int, ...]
    """The shape of one position's features."""
    first_move: int
    """The move id of the policy's first place."""
    num_moves: int
    """Places in the policy (the game's ``num_moves``)."""
    weights: tuple[Floats, ...]
    """Each layer's weight matrix, ``(inputs, outputs)``."""
    biases: tuple[Floats, ...]
    """Each layer's bias vector."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """The training record: ``examples``, ``positions``, ``source_db``, ``treelab_version``, ``metrics``, ..."""
    path: str | None = None
    """The file it was loaded from or saved to, if any."""

    def __post_init__(self) -> None:
        # float32 in C order, whatever made them (a fit's float64 coefficients, a transposed view): numpy and
        # the compiled forward pass read the same numbers
        for name in ("weights", "biases"):
            arrays = tuple(np.ascontiguousarray(a, dtype=np.float32) for a in getattr(self, name))
            object.__setattr__(self, name, arrays)

    @property
    def hidden(self) -> tuple[int, ...]:
        """The hidden layers' sizes (``FitConfig.hidden`` of the fit that made it)."""
        return tuple(int(w.shape[1]) for w in self.weights[:-1])

    def check_game(self, game: Game) -> None:
        """Raise :class:`ModelMismatchError` unless this model reads ``game``'s encoding."""
        where = f"model {self.path!r}" if self.path else "the model"
        if game.name != self.game:
            raise ModelMismatchError(
                f"{where} was fitted for {self.game!r}, not {game.name!r}: fit one from a {game.name} tree "
                f"(treelab fit DB -o MODEL)"
            )
        if game.encoding != self.encoding or tuple(game.feature_shape) != self.feature_shape:
            raise ModelMismatchError(
                f"{where} reads encoding {self.encoding!r} {list(self.feature_shape)}, but {game.name} now encodes "
                f"{game.encoding!r} {list(game.feature_shape)}: fit the model again"
            )

    def forward(self, features: npt.ArrayLike) -> tuple[Floats, Floats]:
        """The raw policy outputs ``(n, num_moves)`` and values in [0, 1] ``(n,)`` of a batch of flat features."""
        x = np.asarray(features, dtype=np.float32).reshape(-1, self.weights[0].shape[0])
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w + b
            if i < last:
                np.maximum(x, 0.0, out=x)
        value = np.clip((x[:, self.num_moves] + 1.0) * 0.5, 0.0, 1.0)
        return x[:, : self.num_moves], value

    def priors(self, raw: Floats, legal: Sequence[int]) -> dict[int, float]:
        """The prior of every legal move from one row of raw policy outputs (floored, normalised)."""
        first = self.first_move
        picked = np.maximum(raw[[m - first for m in legal]], PRIOR_FLOOR)
        picked /= picked.sum()
        return dict(zip(legal, picked.tolist(), strict=True))

    def predict(self, state: State) -> tuple[dict[int, float], float]:
        """``(priors of the legal moves, value for the player to move in [0, 1])`` of one position.

        The same numbers as :meth:`forward` and :meth:`priors`, on one row with plain lists for the few
        moves (a search calls it once per simulation: numpy's overhead on tiny arrays would dominate).
        """
        x = state.features().reshape(-1)
        if _FORWARD is not None and x.dtype == np.float32:  # the very pass the compiled PUCT batch runs
            out = _FORWARD(x, self.weights, self.biases)
        else:
            last = len(self.weights) - 1
            for i in range(last):
                x = x @ self.weights[i]
                x += self.biases[i]
                np.maximum(x, 0.0, out=x)
            out = (x @ self.weights[last] + self.biases[last]).tolist()
        first, floor = self.first_move, PRIOR_FLOOR
        legal = state.legal_moves()
        picked = [max(out[m - first], floor) for m in legal]
        total = 0.0
        for p in picked:  # added in order, as _puct.c does (sum() compensates since Python 3.12)
            total += p
        value = min(1.0, max(0.0, (out[self.num_moves] + 1.0) * 0.5))
        return {m: p / total for m, p in zip(legal, picked, strict=True)}, value

    def predict_many(self, states: Sequence[State]) -> list[tuple[dict[int, float], float]]:
        """:meth:`predict` for many positions in one batch through the network."""
        if not states:
            return []
        raw, values = self.forward(np.stack([s.features().reshape(-1) for s in states]))
        first, floor = self.first_move, PRIOR_FLOOR
        found = []
        for row, value, state in zip(raw.tolist(), values.tolist(), states, strict=True):
            legal = state.legal_moves()
            picked = [max(row[m - first], floor) for m in legal]
            total = sum(picked)
            found.append(({m: p / total for m, p in zip(legal, picked, strict=True)}, value))
        return found

    def meta(self) -> dict[str, Any]:
        """The JSON ``meta`` written in the file."""
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "game": self.game, "encoding": self.encoding,
            "feature_shape": list(self.feature_shape), "first_move": self.first_move, "num_moves": self.num_moves,
            "layers": [int(w.shape[1]) for w in self.weights], "activation": "relu", "value_range": [-1, 1],
            **{k: v for k, v in self.info.items() if k not in _STRUCTURE},
        }

    def save(self, path: str | os.PathLike[str]) -> Model:
        """Write the model to ``path`` atomically (a whole new file or the old one untouched; ``-``: standard
        output; a device, FIFO or socket refused, :mod:`treelab.store.files`); the saved model."""
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {"meta": np.array(json.dumps(self.meta(), sort_keys=True))}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"W{i}"], arrays[f"b{i}"] = w.astype(np.float32), b.astype(np.float32)
        np.savez(buffer, **arrays)
        try:
            with whole(path) as temp:
                temp.write_bytes(buffer.getvalue())
        except StoreError as exc:
            raise ModelFileError(str(exc)) from None
        return Model(self.game, self.encoding, self.feature_shape, self.first_move, self.num_moves,
                     self.weights, self.biases, self.info, str(path))


_STRUCTURE = frozenset({"format", "format_version", "game", "encoding", "feature_shape", "first_move", "num_moves",
                        "layers", "activation", "value_range"})

_CACHE: dict[str, tuple[tuple[int, int], Model]] = {}


def load_model(path: str | os.PathLike[str], game: Game | str | None = None) -> Model:
    """The model in ``path``, checked; with ``game``, also checked to be that game's model.

    A file already read and unchanged since (same size and modification time)
    is not read again, so players and searches may load a model per game cheaply.

    Raises:
        ModelFileError: no such file, or not a model file treelab wrote (damaged, unknown format or version).
        ModelMismatchError: a model of another game or encoding than ``game``.
    """
    name = str(path)
    try:
        stat = os.stat(path)
    except OSError:
        raise ModelFileError(
            f"no such model file {name!r}: check the path, or fit one (treelab fit DB -o MODEL)"
        ) from None
    kind = special_kind(stat.st_mode)
    if kind is not None:  # never opened: a FIFO would block, /dev/zero never ends
        raise ModelFileError(f"model {name!r} is {kind}, not a model file: give the path of a .npz model file "
                             "(treelab fit DB -o MODEL)")
    stamp = (stat.st_size, stat.st_mtime_ns)
    key = os.path.abspath(name)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        model = cached[1]
    else:
        model = _read(name)
        _CACHE[key] = (stamp, model)
    if game is not None:
        from ..games import find_game

        the_game = find_game(game) if isinstance(game, str) else game
        model.check_game(the_game)
        if (model.first_move, model.num_moves) != (the_game.first_move, the_game.num_moves):
            raise ModelFileError(
                f"{name!r} is not a treelab model file (its moves {model.first_move} to "
                f"{model.first_move + model.num_moves - 1} are not {the_game.name}'s {the_game.first_move} to "
                f"{the_game.first_move + the_game.num_moves - 1}): fit one with treelab fit DB -o MODEL")
    return model


def _read(name: str) -> Model:
    def bad(reason: str) -> ModelFileError:
        return ModelFileError(f"{name!r} is not a treelab model file ({reason}): fit one with treelab fit DB -o MODEL")

    try:
        with zipfile.ZipFile(name) as packed:  # what it unpacks to, before unpacking it (a zip bomb)
            size = sum(info.file_size for info in packed.infolist())
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise bad(str(exc).split("\n")[0] or type(exc).__name__) from None
    if size > MAX_MODEL_BYTES:
        raise bad(f"it unpacks to {size:,} bytes, more than the {MAX_MODEL_BYTES:,} a model may hold")
    try:
        with np.load(name, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except (OSError, ValueError, EOFError) as exc:
        raise bad(str(exc).split("\n")[0] or type(exc).__name__) from None
    except Exception as exc:  # zipfile.BadZipFile, zlib.error... from a damaged archive
        raise bad(f"{type(exc).__name__}: {exc}") from None
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except (KeyError, ValueError):
        raise bad("no readable meta") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise bad("no treelab model meta")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{name!r} is a model of format version {meta.get('format_version')!r}; this treelab "
                             f"reads version {FORMAT_VERSION}: upgrade treelab, or fit the model again")
    try:
        shape = tuple(int(n) for n in meta["feature_shape"])
        num_moves, first, layers = int(meta["num_moves"]), int(meta["first_move"]), len(meta["layers"])
        game, encoding = str(meta["game"]), str(meta["encoding"])
        weights = tuple(arrays.pop(f"W{i}").astype(np.float32) for i in range(layers))
        biases = tuple(arrays.pop(f"b{i}").astype(np.float32) for i in range(layers))
    except (KeyError, TypeError, ValueError) as exc:
        raise bad(f"missing or bad {exc}") from None
    if first < 0 or num_moves < 1:
        raise bad(f"first_move {first} and num_moves {num_moves} name no moves")
    inputs = int(np.prod(shape))
    for w, b in zip(weights, biases, strict=True):
        if w.ndim != 2 or b.shape != (w.shape[1],) or w.shape[0] != inputs or not np.isfinite(w).all():
            raise bad("layer shapes do not chain, or weights are not finite")
        inputs = w.shape[1]
    if not weights or inputs != num_moves + 1 or arrays:
        raise bad("the output layer does not match the game's moves")
    info = {k: v for k, v in meta.items() if k not in _STRUCTURE}
    return Model(game, encoding, shape, first, num_moves, weights, biases, info, name)
