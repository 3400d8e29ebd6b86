"""The explorer's page in a real browser: Debian's chromium driven by Playwright, against a real server.

``make setup`` installs chromium (``make chromium``); Playwright's own browser downloads are never
used. The test clicks two levels down, checks the table against the database, walks back and
forward through the history, clicks the diagram, moves the growth slider, opens the compare view,
watches the numbers follow a training run, and takes the README's screenshot.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_helpers import ROOT, SAMPLE_C4, Server, children_in_db, copy_db, serving

import treelab

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x id="inj" onerror="window.pwned=1">'
SCREENSHOT = ROOT / "docs" / "img" / "explorer.png"



@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("browser")
    a = copy_db(SAMPLE_C4, folder / 'c4 <b id="inj2">x.db')  # a file name is shown on the page, as text
    conn = sqlite3.connect(a)
    conn.execute(  # a move label no treelab wrote: shown as text, never run
        "INSERT INTO nodes (parent_id, move, depth, nb_visit, nb_win, nb_draw) "
        "SELECT id, ?, 1, 0, 0, 0 FROM nodes WHERE parent_id IS NULL", (HOSTILE,))
    conn.commit()
    conn.close()
    b = folder / "b.db"
    treelab.train("connect4", b, games=6, iterations=100, opponent="heuristic", seed=5, progress=False)
    return a, b


@pytest.fixture(scope="module")
def server(trees: tuple[Path, Path]) -> Iterator[Server]:
    with serving(str(trees[0]), "--compare", str(trees[1])) as srv:
        yield srv


def _ready(page: Any, path: str, game: str = "") -> None:
    page.wait_for_function(
        "([p, g]) => (document.body.dataset.ready || '').startsWith(p + '|' + g + '|')", arg=[path, game],
        timeout=20000,
    )
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()


def _table(page: Any, selector: str = "#children") -> dict[str, int]:
    rows = page.locator(f"{selector} tbody tr")
    out = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        out[row.get_attribute("data-move")] = int(row.locator(".visits").inner_text().replace(",", ""))
    return out


def _expected(db: Path, moves: list[str]) -> dict[str, int]:
    return {m: n for m, (n, _, _) in children_in_db(db, moves).items()}


def test_click_two_levels_down_and_back(browser: Any, server: Server, trees: tuple[Path, Path]) -> None:
    a, _ = trees
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url)
    _ready(page, "")
    assert _table(page) == _expected(a, [])
    assert page.locator("#inj, #inj2").count() == 0 and not page.evaluate("window.pwned")
    assert HOSTILE in page.locator("#children").inner_text()
    assert 'id="inj2"' in page.locator("#source").inner_text()

    page.locator('#children tr[data-move="5"] td.move a').click()
    _ready(page, "5")
    page.locator('#children tr[data-move="3"] td.move a').click()
    _ready(page, "53")
    assert page.url.endswith("/?path=53")
    assert _table(page) == _expected(a, ["5", "3"])
    assert [c.strip() for c in page.locator("#crumbs a").all_inner_texts()] == ["start", "5", "3"]
    first = page.locator("#children tbody tr").first  # the move-choice rule's first move: proofs, then most selected
    assert first.get_attribute("data-move") == server.json("/api/node?path=53")[1]["children"][0]["move"]
    # the heat map: one spot per stored legal move, each a link one level down
    spots = page.locator("#board a.heat")
    assert {s.get_attribute("data-move") for s in spots.all()} == set(_expected(a, ["5", "3"]))

    page.go_back()
    _ready(page, "5")
    assert _table(page) == _expected(a, ["5"])
    page.go_forward()
    _ready(page, "53")

    # sorting by move puts the columns in order, and the URL keeps it
    page.locator('#children th[data-key="move"]').click()
    moves = page.locator("#children tbody tr").evaluate_all("rows => rows.map(r => r.dataset.move)")
    assert moves == sorted(moves, key=int) and "sort=move" in page.url

    # a diagram node is a link to its own page
    page.wait_for_selector("#diagram svg g.node.link")
    target = page.locator("#diagram svg g.node.link").nth(1)
    node_id = target.get_attribute("id")
    target.click()
    _ready(page, node_id.replace("/", ""))
    assert not errors, errors


def test_growth_slider_and_compare(browser: Any, server: Server, trees: tuple[Path, Path]) -> None:
    a, b = trees
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server.url)
    _ready(page, "")
    page.locator("#replay-slider").evaluate("(s) => { s.value = '3'; s.dispatchEvent(new Event('input')); }")
    _ready(page, "", "3")
    conn = sqlite3.connect(f"{a.resolve().as_uri()}?mode=ro", uri=True)
    try:
        root = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]
        then = {m for (m,) in conn.execute(
            "SELECT move FROM nodes WHERE parent_id = ? AND (created_game IS NULL OR created_game <= 3)", (root,))}
    finally:
        conn.close()
    assert set(_table(page)) == then
    assert "after game 3" in page.locator("#replay-label").inner_text()
    page.locator("#replay-slider").evaluate("(s) => { s.value = s.max; s.dispatchEvent(new Event('input')); }")
    _ready(page, "")
    assert "latest" in page.locator("#replay-label").inner_text()

    page.locator("#compare-toggle").check()
    page.wait_for_selector("#compare-table tbody tr")
    _ready(page, "")
    expected = treelab.diff(a, b, "", count_nodes=False)
    rows = page.locator("#compare-table tbody tr")
    assert rows.count() == len(expected.children)
    for i, move in enumerate(expected.children):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[0] == move.move
        assert int(cells[1].replace(",", "")) == move.nb_visit_a and int(cells[2].replace(",", "")) == move.nb_visit_b
        assert cells[-1] == ("both" if move.in_a and move.in_b else "A only" if move.in_a else "B only")
    assert "compare=1" in page.url


def test_live_numbers_follow_training(browser: Any, tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    treelab.train("connect4", db, games=1, iterations=50, seed=7, progress=False)
    with serving(str(db)) as srv:
        page = browser.new_page()
        page.goto(srv.url)
        _ready(page, "")
        before = page.locator("#summary").inner_text()
        done = subprocess.run([sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--games", "4",
                               "--iterations", "50", "--seed", "8"], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        visits = treelab.load(db).root.nb_visit
        page.wait_for_function("(n) => document.querySelector('#summary').textContent.startsWith(n)",
                               arg=f"{visits:,}", timeout=15000)
        assert page.locator("#summary").inner_text() != before
        assert page.locator("#error").is_hidden()


@pytest.mark.openspiel
def test_an_imported_search_shows_its_value_sums_and_priors(browser: Any, tmp_path: Path) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 5), 2.0, 200, 10**6, True, 7, False)
    tree = treelab.from_openspiel(bot.mcts_search(state), state)
    db = tmp_path / "openspiel.db"
    tree.save(db)
    with serving(str(db)) as srv:
        page = browser.new_page()
        page.goto(srv.url)
        _ready(page, "")
        best = max(tree.root.children_view, key=lambda k: k.nb_visit)
        shown = page.locator(f'#children tbody tr[data-move="{best.name}"] .valued').inner_text()
        assert f"prior {tree.priors[best]:.3f}" in shown and f"value sum {best.value_sum:+.3f}" in shown


def test_readme_screenshot(browser: Any, tmp_path: Path) -> None:
    """The README's picture: taken every run; written to docs/img when missing or with TREELAB_REGOLD=1.

    (Rewriting it on every run would leave every developer's work tree changed whenever a font
    or a style moves a pixel; the same switch rewrites the diagrams' golden files.)
    """
    shot = tmp_path / "explorer.png"
    with serving("data/connect4.db", cwd=ROOT) as srv:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(srv.url + "?path=5&depth=2&top=3")
        _ready(page, "5")
        page.wait_for_selector("#diagram svg")
        assert page.locator("#board a.heat").count() == 7 and page.locator("#children tbody tr").count() == 7
        page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    if os.environ.get("TREELAB_REGOLD") == "1" or not SCREENSHOT.exists():
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)


def test_the_table_lists_moves_in_the_order_the_principal_variation_is_chosen_by(browser: Any, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server.url.rstrip("/") + "/?path=4")
    _ready(page, "4")
    shown = [page.locator("#children tbody tr").nth(i).get_attribute("data-move")
             for i in range(page.locator("#children tbody tr").count())]
    answer = server.json("/api/node?path=4")[1]
    assert shown == [k["move"] for k in answer["children"]]  # the server's order: proofs first, most selected
    assert shown[0] == answer["principal_variation"][0]
    assert "most selected" in page.locator("#moves-note").inner_text()
    page.close()


def test_growth_replay_below_the_start_shows_no_number_it_cannot_know(browser: Any, server: Server) -> None:
    """At ?path=4 after game 5 the position's moves had no counts logged: the page shows none (it once showed
    today's counts against that game's total: shares of 264%)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url.rstrip("/") + "/?path=4&game=5&since=4")
    _ready(page, "4", "5")
    shares = [float(s[:-1]) for s in re.findall(r"\d+(?:\.\d+)?%", page.locator("main").inner_text())]
    assert all(s <= 100 for s in shares), shares
    visits = {page.locator("#children tbody tr .visits").nth(i).inner_text()
              for i in range(page.locator("#children tbody tr").count())}
    assert visits == {"\u2013"}  # an en dash: not known
    assert "not known" in page.locator("#pv").inner_text()
    assert page.locator("#diagram .replay-note").is_visible()
    assert "not logged per game" in page.locator("#replay-label").inner_text()
    assert not errors, errors
    page.close()


def test_a_bad_path_shows_a_banner_with_a_way_back(browser: Any, server: Server) -> None:
    page = browser.new_page()
    page.goto(server.url.rstrip("/") + "/?path=4x")
    page.wait_for_function("() => document.body.dataset.ready === 'error'", timeout=20000)
    banner = page.locator("#error")
    assert banner.is_visible() and "4x" in banner.locator(".message").inner_text()
    page.locator("#error-back").click()
    _ready(page, "")
    assert page.locator("#children tbody tr").count() > 0
    page.close()
