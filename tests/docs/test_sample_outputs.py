"""The sample outputs of the README and the getting-started guide are what their commands print.

A sample is a ``$ .venv/bin/treelab ...`` line in a ```sh block followed by its output lines. Every command of a
page's samples runs, in order, in an empty folder (a later one reads the file an earlier one wrote), through the
real command; the output (the progress bar's last state on stderr, then stdout) is compared with the page's
lines once what varies by machine is masked: times, rates and the progress bar's clock. A drift fails; run with
``TREELAB_REGOLD=1`` to write the new outputs into the pages (then read the diff before committing it).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

PAGES = [ROOT / "README.md", ROOT / "docs" / "guide" / "getting-started.md"]
REGOLD = os.environ.get("TREELAB_REGOLD") == "1"
PROMPT = "$ .venv/bin/treelab "

MASKS = [
    (re.compile(r"\[\d\d:\d\d<\d\d:\d\d,\s*[\d.]+\s*\w+/s"), "[T]"),  # tqdm's clock and rate
    (re.compile(r"[\d,]+ sims/s"), "N sims/s"),
    (re.compile(r"\b\d+(?:\.\d+)?(?: ms|s)\b"), "Ts"),  # 2.1s, 0.35s, 7.2 ms
    (re.compile(r"< 0\.01 ms"), "Ts"),
]


def mask(text: str) -> str:
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text.rstrip()


def samples(page: Path) -> list[tuple[str, list[str]]]:
    """``(command line, output lines)`` of every sample in the page's ```sh blocks, in order."""
    found: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text(), re.S):
        current: tuple[str, list[str]] | None = None
        for line in block.splitlines():
            if line.startswith("$ "):
                current = (line[2:], [])
                found.append(current)
            elif current is not None and line.strip():
                current[1].append(line)
    return [(cmd, out) for cmd, out in found if cmd.startswith(".venv/bin/treelab ")]


def printed(command: str, where: Path) -> list[str]:
    """What ``command`` shows a person: the progress bar's last state (stderr), then stdout."""
    words = shlex.split(command.removeprefix(".venv/bin/treelab "), comments=True)
    proc = subprocess.run([sys.executable, "-m", "treelab", *words], capture_output=True, text=True, cwd=where,
                          timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, (command, proc.stderr[-2000:])
    bars = [part.strip() for part in proc.stderr.replace("\n", "\r").split("\r") if part.strip().startswith("training")]
    return bars[-1:] + [line.rstrip() for line in proc.stdout.splitlines() if line.strip()]  # as samples() reads


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_sample_outputs_are_what_the_commands_print(page: Path, tmp_path: Path) -> None:
    shown = samples(page)
    with_output = [i for i, (_, out) in enumerate(shown) if out]
    assert with_output, f"{page.name} shows no sample output"
    text = page.read_text()
    for cmd, expected in shown[: with_output[-1] + 1]:
        got = printed(cmd, tmp_path)
        if not expected:
            continue
        if REGOLD:
            old = "\n".join([PROMPT + cmd.removeprefix(".venv/bin/treelab "), *expected])
            assert old in text
            text = text.replace(old, "\n".join([PROMPT + cmd.removeprefix(".venv/bin/treelab "), *got]), 1)
            continue
        assert [mask(x) for x in got] == [mask(x) for x in expected], f"{page.name}: `{cmd}` prints otherwise now"
    if REGOLD:
        page.write_text(text)


def test_masks_keep_what_matters() -> None:
    line = "trained 50 games of connect4 in 5.4s (50 distinct): tree won 50, drew 0, lost 0 against heuristic"
    assert mask(line) == line.replace("5.4s", "Ts")
    assert mask(line) != mask(line.replace("won 50", "won 47"))
    assert mask("2,000 simulations in 7.2 ms") == mask("2,000 simulations in 0.35s") == "2,000 simulations in Ts"
    bar = ("training connect4: 100%|██████████| 50/50 [00:05<00:00,  9.50game/s, W/D/L 50/0/0, 173,536 nodes, "
           "35,865 sims/s]")
    assert mask(bar) == "training connect4: 100%|██████████| 50/50 [T], W/D/L 50/0/0, 173,536 nodes, N sims/s]"


def test_the_learning_loop_example_says_what_it_costs() -> None:
    """The README's heaviest command is not run blind: its time, memory and file size are stated beside it."""
    readme = (ROOT / "README.md").read_text()
    loop = readme.index("--model c4.npz --refit-every 100")
    after = readme[loop:loop + 1200]
    assert re.search(r"\d+ minutes", after) and re.search(r"\d+(\.\d+)? GB of memory", after)
    assert re.search(r"\d+(-\d+)? MB", after)
