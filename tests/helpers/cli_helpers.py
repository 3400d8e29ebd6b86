"""Helpers shared by the command-line tests."""

from __future__ import annotations

from click.testing import CliRunner, Result

from treelab.cli import cli


def run(*args: str, input: str | None = None) -> Result:
    """Invoke ``treelab ARGS`` in-process (exceptions propagate, so a traceback fails the test)."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def assert_clean_error(result: Result, *needles: str) -> None:
    """A failed command printed exactly one ``Error: ...`` line naming each of ``needles``."""
    assert result.exit_code != 0
    lines = [line for line in result.output.strip().splitlines() if line]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
