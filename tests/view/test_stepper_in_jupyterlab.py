"""The notebook stepper in the front end users open: a real JupyterLab (the `notebooks` extra, which
`make test` installs) serving a notebook that makes ``treelab.trace(...).stepper()``, run and driven in Debian's
chromium through Playwright (never a downloaded browser).

The cell runs in JupyterLab's own kernel; the widget renders through anywidget's JupyterLab extension; step and
back change the view and reach the kernel (a second cell reads ``w.step``); the explorer embedded in the
notebook (``treelab.explore``) loads its page in the output; the page logs no console error.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = [pytest.mark.notebook, pytest.mark.browser]

CELLS = [
    'import treelab\nw = treelab.trace("tictactoe", "15", iterations=50, seed=1).stepper()\nw',
    "print('step', w.step)",
    'treelab.train("tictactoe", "t.db", games=3, iterations=50, seed=1, progress=False)\n'
    'treelab.explore("t.db", path="5")',
]


def _notebook(cells: list[str]) -> dict[str, Any]:
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                       "source": source} for i, source in enumerate(cells)],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on a free loopback port, its own config and runtime folders; yields the notebook's URL."""
    import jupyterlab  # noqa: F401  # the notebooks extra, installed by `make test`: missing is a failure, not a skip

    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    (root / "stepper.ipynb").write_text(json.dumps(_notebook(CELLS)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(base / "config"), "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
           "IPYTHONDIR": str(base / "ipython"), "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces")}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}", "--allow-root",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None"]
    log = (base / "server.log").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (base / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/stepper.ipynb?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _answer_dialog(page: Any) -> None:
    """Accept a dialog JupyterLab opened on a busy machine (the kernel to start with: its default, python3);
    one that reports an error fails the test with its text."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        text = dialog.first.inner_text()
        assert "error" not in text.lower(), text
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").click()
        dialog.first.wait_for(state="detached", timeout=20000)


def _run_cell(page: Any, index: int) -> None:
    """Run cell ``index`` (Shift+Enter in its editor), again if the kernel was not connected yet to take it."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    for _ in range(6):
        _answer_dialog(page)
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        try:  # "[*]:" while it runs, "[1]:" once run; "[ ]:" if the request was dropped
            page.wait_for_function("(c) => c.querySelector('.jp-InputPrompt').innerText.trim() !== '[ ]:'",
                                   arg=cell.element_handle(), timeout=20000)
            return
        except Exception:  # Playwright's TimeoutError
            continue
    pytest.fail(f"cell {index} never ran")


def test_the_stepper_renders_steps_and_goes_back_in_jupyterlab(browser: Any, lab: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(lab)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120000)
    _run_cell(page, 0)
    widget = page.locator(".jp-OutputArea .tl-stepper")
    widget.wait_for(timeout=120000)
    assert widget.get_attribute("data-step") == "1"
    first = widget.inner_text()
    assert "simulation 1 of 50" in first

    widget.locator("button[data-act=step]").click()
    page.wait_for_function("() => document.querySelector('.tl-stepper').dataset.step === '2'", timeout=20000)
    assert "simulation 2 of 50" in widget.inner_text() and widget.inner_text() != first
    _run_cell(page, 1)  # the step reached the kernel's widget
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(o => o.innerText.includes('step 2'))",
        timeout=60000)

    widget.locator("button[data-act=back]").click()
    page.wait_for_function("() => document.querySelector('.tl-stepper').dataset.step === '1'", timeout=20000)
    assert "simulation 1 of 50" in widget.inner_text()

    _run_cell(page, 2)  # the explorer embedded in the notebook: its page in an iframe, served from the kernel
    frame = page.frame_locator(".jp-OutputArea iframe[title='treelab explorer']")
    frame.locator("#children tbody tr").first.wait_for(timeout=120000)
    assert frame.locator("#position-title").inner_text() == "position 5"
    assert not errors, errors
    page.close()
