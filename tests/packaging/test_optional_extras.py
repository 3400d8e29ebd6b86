"""The install is sized to the job: the command line needs no extra, and a feature whose extra is missing says
in one line which to install.

A missing package is simulated in a subprocess by ``sys.modules[NAME] = None`` (Python then refuses the
import), so these run in the full development venv; ``tests/packaging/test_wheel.py`` installs the real wheel
without extras into a new venv.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib
from paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _without(modules: list[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where ``modules`` cannot be imported."""
    hide = "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    program = f"import sys\n{hide}" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=cwd, timeout=120)


def _cli(args: list[str]) -> str:
    return f"import sys\nsys.argv = ['treelab', *{args!r}]\nfrom treelab.cli import main\nmain()\n"


def _one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1, lines
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def test_the_plain_install_pulls_no_notebook_or_learning_library() -> None:
    needs = " ".join(PYPROJECT["project"]["dependencies"]).lower()
    for heavy in ("anywidget", "ipython", "ipywidgets", "scikit-learn", "jupyter", "open-spiel", "ray"):
        assert heavy not in needs, heavy
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert any(d.startswith("anywidget") for d in extras["notebook"])
    assert any(d.startswith("scikit-learn") for d in extras["learn"])
    assert "treelab[notebook,learn]" in extras["notebooks"]  # the old name keeps working, and brings the widget
    assert {"openspiel", "ray"} <= set(extras)


def test_every_extra_is_described_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for extra in PYPROJECT["project"]["optional-dependencies"]:
        assert re.search(rf"treelab\[{extra}\]", readme), f"the README does not say what the {extra!r} extra adds"


def test_make_demo_installs_no_extra_no_dev_group_and_no_browser() -> None:
    makefile = (ROOT / "Makefile").read_text()
    demo = re.search(r"^demo:(.*)$", makefile, re.M)
    assert demo and "setup" not in demo.group(1).split() and "chromium" not in demo.group(1)
    demo_setup = re.search(r"^demo-setup:(.*)$", makefile, re.M)
    assert demo_setup and "chromium" not in demo_setup.group(1) and "dot" in demo_setup.group(1).split()
    recipe = makefile.split("\n$(DEMO_STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "pip install -q -e .\n" in recipe + "\n" and "--group" not in recipe
    full = makefile.split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "--group dev" in full and "learn" in full and "notebooks" in full  # make test: everything the suite needs


def test_the_command_line_imports_no_ipython(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import atexit, sys\nsys.argv = ['treelab', '--help']\nfrom treelab.cli import main\n"
         "atexit.register(lambda: print(sorted(m for m in ('IPython', 'anywidget', 'ipywidgets', 'sklearn')\n"
         "                                      if m in sys.modules)))\nmain()\n"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.fixture(scope="module")
def small_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("extras")
    proc = subprocess.run([sys.executable, "-m", "treelab", "train", "tictactoe", "--db", "t.db", "--games", "6",
                           "--iterations", "100", "--seed", "1", "--quiet"],
                          capture_output=True, text=True, cwd=where, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return where


def test_fit_without_scikit_learn_names_the_learn_extra(small_tree: Path) -> None:
    proc = _without(["sklearn"], _cli(["fit", "t.db", "-o", "m.npz"]), small_tree)
    _one_error_line(proc, "scikit-learn", "pip install 'treelab[learn]'")
    assert not (small_tree / "m.npz").exists()


def test_the_learning_loop_without_scikit_learn_refuses_before_any_game(small_tree: Path) -> None:
    before = (small_tree / "t.db").stat().st_size
    proc = _without(["sklearn"], _cli(["train", "tictactoe", "--db", "t.db", "--games", "2", "--iterations", "20",
                                       "--model", "m.npz", "--refit-every", "1"]), small_tree)
    _one_error_line(proc, "pip install 'treelab[learn]'")
    assert (small_tree / "t.db").stat().st_size == before


def test_a_fitted_model_plays_without_scikit_learn(small_tree: Path) -> None:
    fitted = subprocess.run([sys.executable, "-m", "treelab", "fit", "t.db", "-o", "m.npz", "--min-visits", "2"],
                            capture_output=True, text=True, cwd=small_tree, timeout=300)
    assert fitted.returncode == 0, fitted.stderr
    proc = _without(["sklearn"], _cli(["arena", "tictactoe", "--a", "puct:iterations=20,model=m.npz", "--b", "random",
                                       "--games", "2", "--seed", "1", "--json"]), small_tree)
    assert proc.returncode == 0, proc.stderr
    assert '"games": 2' in proc.stdout


def test_the_stepper_without_anywidget_names_the_notebook_extra(tmp_path: Path) -> None:
    proc = _without(["anywidget"], """
        import treelab
        try:
            treelab.trace("tictactoe", "15", iterations=5, seed=1).stepper()
        except treelab.errors.MissingExtraError as exc:
            print("refused:", exc)
        """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("refused: ") and "pip install 'treelab[notebook]'" in proc.stdout
    assert len(proc.stdout.strip().splitlines()) == 1


def test_the_explorers_step_data_needs_no_anywidget(tmp_path: Path) -> None:
    proc = _without(["anywidget", "IPython"], """
        import treelab
        from treelab.view.step_widget import stepper_data
        data = stepper_data(treelab.trace("tictactoe", "15", iterations=5, seed=1))
        print(len(data["frames"]))
        """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "5"
