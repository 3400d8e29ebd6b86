"""The ``treelab`` command line: a thin click group; every command calls the library.

Commands live in small modules, most named for their command (``train_cmd.py``, ``analyse_cmd.py``,
``play_cmd.py``, ``info_cmd.py``, ``compact_cmd.py``, ``merge_cmd.py``: no module may share a public
name such as ``treelab.train``; ``view.py``: render, stats, growth, shape;
``match.py``: arena; ``explorer.py``: serve, diff). The
group imports a command's module only when that command runs (click's "lazy
group" pattern), so ``treelab analyse`` never loads the drawing code.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
from typing import Any

import click

from ..speedups import describe
from .options import ExampleLast

__version__ = sys.modules["treelab"].__version__  # the front door: loaded before its modules, and above them

__all__ = ["cli", "main"]


_VERSION = f"%(prog)s %(version)s; hot paths: {describe()}"


_COMMANDS = {
    "train": "train_cmd", "analyse": "analyse_cmd", "play": "play_cmd", "info": "info_cmd", "compact": "compact_cmd",
    "render": "view", "stats": "view", "growth": "view", "shape": "view",
    "arena": "match",
    "serve": "explorer", "diff": "explorer",
    "merge": "merge_cmd",
    "fit": "fit_cmd",
    "converge": "converge_cmd",
    "import": "interop_cmd", "export": "interop_cmd",
}
"""Each command's module in :mod:`treelab.cli` (imported when the command is looked up)."""


class _Group(ExampleLast, click.Group):
    """A group whose errors are always one line: ``Error: <what>`` and a non-zero exit.

    Its commands load on demand from the modules named in :data:`_COMMANDS`.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module = importlib.import_module(f".{_COMMANDS[cmd_name]}", __name__)
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


# Every option shows its default one way: click's `[default: ...]` (a described one through options.Option).
_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100, "show_default": True}


@click.group(cls=_Group, context_settings=_SETTINGS)
@click.version_option(__version__, prog_name="treelab", message=_VERSION)
def cli() -> None:
    """Grow, keep, draw and measure Monte Carlo Tree Search trees.

    \b
    Example:
      treelab train connect4 --db c4.db --games 50 --iterations 400
      treelab analyse connect4 --moves 4453 --db c4.db --json
    """


def main() -> None:
    """Entry point of the ``treelab`` script and ``python -m treelab``.

    The process then ends without tearing its objects down one by one: a trained tree of millions of nodes
    takes minutes to free (26.7M nodes: about 3 minutes after ``train`` printed its report), for nothing,
    as the process is ending. Everything a command writes is committed and closed before it returns; the
    exit handlers still run (temporary folders, child processes) and the output is flushed first.
    """
    try:
        cli(prog_name="treelab")
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is not None and not isinstance(code, int):  # sys.exit("message"): printed, status 1, as Python does
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (| head) or stream: nothing more to say
            stream.flush()
    os._exit(code or 0)
