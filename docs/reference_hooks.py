"""MkDocs hooks that write the reference pages at build time, from the code itself.

- ``docs/cli.md``: the marker ``<!-- cli-reference -->`` becomes ``treelab --help`` and every
  command's ``--help``, exactly as the installed ``treelab`` prints them in an 80-column terminal
  (``tests/docs/test_site.py`` checks the built page against the real command).
- ``docs/api.md``: the marker ``<!-- api-reference -->`` becomes one section per module of the front
  door's export table (``treelab._EXPORTS``) and one for ``treelab.errors``: a line saying which of
  its names ``treelab.__all__`` advertises, then a mkdocstrings block of every name the front door
  resolves from it (advertised or not), so the page follows the code when a name is added, dropped
  from ``__all__`` or a module renamed.
"""

from __future__ import annotations

from typing import Any

CLI_MARKER = "<!-- cli-reference -->"
API_MARKER = "<!-- api-reference -->"
COLUMNS = 80
"""The terminal width the help is formatted for (click wraps at min(width, 80) - 2)."""


def command_help(words: list[str]) -> str:
    """What ``treelab WORDS... --help`` prints, in a terminal of :data:`COLUMNS` columns.

    It runs the installed ``treelab`` command (the one beside this Python) rather than click's
    test runner: a fresh process lists the commands as a user sees them (the group loads each
    command lazily, and a command already imported can shorten its help differently).
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    command = Path(sys.executable).with_name("treelab")
    env = {**os.environ, "COLUMNS": str(COLUMNS)}
    done = subprocess.run([str(command), *words, "--help"], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"treelab {' '.join(words)} --help failed: {done.stderr.strip()}")
    return done.stdout


def commands() -> list[str]:
    """The names of treelab's commands, sorted."""
    from treelab.cli import cli

    return sorted(cli.list_commands(None))  # type: ignore[arg-type]


def cli_reference() -> str:
    parts = ["## treelab\n", "```text\n" + command_help([]) + "```\n"]
    for name in commands():
        parts += [f"## treelab {name}\n", "```text\n" + command_help([name]) + "```\n"]
    return "\n".join(parts)


def api_modules() -> dict[str, list[str]]:
    """Each module of the front door's exports -> the names it gives ``treelab`` (as the module spells them).

    The export table (``treelab._EXPORTS``) gives the lazily loaded names, whether ``treelab.__all__``
    advertises them or not; ``treelab.errors`` gives every name of its ``__all__`` (the exceptions).
    """
    import treelab

    modules: dict[str, list[str]] = {}
    for module, items in treelab._EXPORTS.items():
        modules[module] = sorted(item if isinstance(item, str) else item[1] for item in items)
    modules["errors"] = sorted(treelab.errors.__all__)
    return dict(sorted(modules.items()))


def advertised(module: str) -> list[str]:
    """The names ``treelab.__all__`` takes from ``module``, as ``treelab`` spells them."""
    import treelab

    if module == "errors":
        return sorted(n for n in treelab.__all__ if n in treelab.errors.__all__)
    return sorted(n for n in treelab.__all__ if treelab._LAZY.get(n, ("", ""))[0] == module)


def api_reference() -> str:
    parts = []
    for module, members in api_modules().items():
        parts.append(f"## `treelab.{module}`\n")
        front = ", ".join(f"`treelab.{n}`" for n in advertised(module))
        if module == "errors":
            parts.append("Import these from `treelab.errors` (`treelab.errors.IllegalMoveError`); "
                         f"their base is also {front}.\n")
        else:
            parts.append(f"At the front door: {front}.\n" if front else
                         f"Nothing here is in `treelab.__all__`; import from `treelab.{module}`.\n")
        parts.append(f"::: treelab.{module}\n    options:\n      members:\n"
                     + "".join(f"        - {m}\n" for m in members))
    return "\n".join(parts)


def on_config(config: Any, **_: Any) -> Any:
    """Pages in ``docs/notes/`` join the navigation under "Notes", each titled by its first heading."""
    from pathlib import Path

    notes = sorted(Path(config["docs_dir"], "notes").glob("*.md"))
    listed = {str(item) for item in _flatten(config["nav"] or [])}
    extra = [f"notes/{p.name}" for p in notes if f"notes/{p.name}" not in listed]
    if extra and config["nav"] is not None:
        config["nav"].append({"Notes": extra})
    return config


def _flatten(nav: Any) -> list[Any]:
    if isinstance(nav, list):
        return [leaf for item in nav for leaf in _flatten(item)]
    if isinstance(nav, dict):
        return [leaf for value in nav.values() for leaf in _flatten(value)]
    return [nav]


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if API_MARKER in markdown:
        markdown = markdown.replace(API_MARKER, api_reference())
    return markdown

