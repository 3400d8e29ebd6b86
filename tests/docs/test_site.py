"""The documentation site builds with warnings as errors, and its generated pages say what the code does.

The build (``mkdocs build --strict``, as ``make docs`` runs it) fails on a broken link or anchor, a
page missing from the navigation, and a docstring that names a parameter its function does not
have. Its command-line page must be exactly what ``treelab X --help`` prints, and its API page must
document every public name.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from paths import ROOT

import treelab
from treelab.cli import cli

TREELAB = Path(sys.executable).with_name("treelab")


def load_hooks():
    """docs/reference_hooks.py, the module MkDocs loads from mkdocs.yml's ``hooks``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference_hooks", ROOT / "docs" / "reference_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def cli_page_blocks(site: Path) -> dict[str, str]:
    """The built command-line page: each ``treelab ...`` heading -> the text of the code block under it."""
    page = (site / "cli" / "index.html").read_text()
    blocks = {}
    for heading, body in re.findall(r"<h2[^>]*>(.*?)</h2>\s*<div[^>]*>\s*<pre>(.*?)</pre>", page, re.S):
        title = text_of(heading).replace("¶", "").strip()
        blocks[title] = text_of(body)
    return blocks


def real_help(*words: str) -> str:
    """What the installed command prints, in a terminal 80 columns wide."""
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([str(TREELAB), *words, "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_cli_page_is_every_commands_help_exactly(site: Path) -> None:
    blocks = cli_page_blocks(site)
    assert sorted(blocks) == sorted(["treelab", *(f"treelab {name}" for name in cli.list_commands(click.Context(cli)))])
    for title, shown in blocks.items():
        words = title.split()[1:]
        assert shown.rstrip("\n") == real_help(*words).rstrip("\n"), f"docs/cli.md: {title} --help differs"
        assert "Example" in shown, title  # every --help ends with an example


def test_the_api_page_documents_every_public_name(site: Path) -> None:
    """Every name the front door resolves (advertised in `treelab.__all__` or not) and every name of
    `treelab.errors`, each in its module's section."""
    page = (site / "api" / "index.html").read_text()
    documented = set(re.findall(r'id="treelab\.([\w.]+)"', page))
    wanted = dict(treelab._LAZY)
    wanted |= {f"errors.{name}": ("errors", name) for name in treelab.errors.__all__}
    assert set(treelab.__all__) - {"__version__", "TreelabError"} <= set(wanted)
    missing = [f"{name} (treelab.{module}.{attribute})" for name, (module, attribute) in wanted.items()
               if f"{module}.{attribute}" not in documented]
    assert missing == []
    assert "Save to the SQLite file" in page  # the docstrings themselves are rendered (Tree.save's)


def test_notes_pages_join_the_navigation(tmp_path: Path) -> None:
    """A page written to docs/notes/ appears under "Notes" without editing mkdocs.yml; listed pages stay once."""
    hooks = load_hooks()
    (tmp_path / "notes").mkdir()
    for name in ("store.md", "model.md", "oracle.md"):
        (tmp_path / "notes" / name).write_text("# A note\n")
    nav = [{"Home": "index.md"}, {"Guide": ["guide/python.md", "notes/oracle.md"]}]
    config = hooks.on_config({"docs_dir": str(tmp_path), "nav": nav})
    assert config["nav"][-1] == {"Notes": ["notes/model.md", "notes/store.md"]}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert hooks.on_config({"docs_dir": str(empty), "nav": [{"Home": "index.md"}]})["nav"] == [{"Home": "index.md"}]


def test_the_readme_links_into_the_docs() -> None:
    """Every relative link and picture of the README names a file of the repository; every page is linked."""
    readme = (ROOT / "README.md").read_text()
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md") if "notes" not in p.parts}
    assert sorted(pages - set(targets)) == [], "link these pages from the README"
    assert len(readme.splitlines()) <= 200, "the README is a front door: move detail into docs/"
