"""The stepper: the notebook widget's Python state, its front end in real chromium (the ES module
rendered in a page with a stub of anywidget's model, clicked), and the explorer's step mode through a real
server and browser. Both screenshots of docs/guide/tracing.md are taken here."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_helpers import ROOT, SAMPLE_C4, Server, serving

import treelab
from treelab.errors import TraceError
from treelab.view.step_widget import ESM, stepper_data

IMG = ROOT / "docs" / "img"

# anywidget's model as the module sees it: get, set (firing change:KEY, as Backbone does), on, off, save_changes
HOST = """async ([src, data, step]) => {
  const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
  const mod = await import(url);
  const listeners = {}; const state = {data, step};
  window.saved = 0;
  window.model = {get: (k) => state[k],
    set: (k, v) => { state[k] = v; (listeners["change:" + k] || []).forEach((f) => f()); },
    on: (e, f) => (listeners[e] = listeners[e] || []).push(f), off: (e, f) => {},
    save_changes: () => { window.saved += 1; }};
  mod.default.render({model: window.model, el: document.getElementById("host")});
}"""



@pytest.fixture(scope="module")
def c4_trace() -> treelab.SearchTrace:
    return treelab.trace("connect4", "4453", iterations=60, seed=3)


def test_the_widget_steps_forward_and_back(c4_trace: treelab.SearchTrace) -> None:
    w = c4_trace.stepper()
    assert w.step == 1 and w.steps == 60 and w.record["simulation"] == 1
    assert w.forward().step == 2 and w.forward(10).step == 12 and w.back(5).step == 7
    assert w.record == {**w.data["frames"][6]} and w.record["path"] == list(c4_trace.step(7)["path"])
    assert w.forward(500).step == 60 and w.back(500).step == 1
    with pytest.raises(TraceError, match="step 61 is outside this search: use 1 to 60"):
        w.go(61)
    assert w.step == 1
    # the board: the cell each move of the path and the playout fills, in order
    frame = w.data["frames"][0]
    moves = [*frame["path"], *frame["playout"]]
    assert len(frame["cells"]) == len(moves) and all(isinstance(c, list) for c in frame["cells"])
    height = {"3": 1, "4": 2, "5": 1}  # discs already in each column at 4453
    first = frame["path"][0]
    assert frame["cells"][0] == [5 - height.get(first, 0), int(first) - 1]  # it lands on the lowest free cell
    small = treelab.stepper(c4_trace, max_steps=10, step=10)
    assert small.steps == 10 and small.data["simulations"] == 60 and small.data["roots"]["_at"][-1] == 60


def test_the_convergence_series_are_the_searched_trees_root_moves(c4_trace: treelab.SearchTrace) -> None:
    """After the last simulation, each root move's visits and mean are what the search reported."""
    data = stepper_data(c4_trace)
    assert c4_trace.summary is not None
    children = {c["move"]: c for c in c4_trace.summary.to_dict()["children"] if c["nb_visit"]}
    assert set(data["roots"]) - {"_at"} == set(data["means"]) == set(children)
    for move, child in children.items():
        assert data["roots"][move][-1] == child["nb_visit"]
        assert data["means"][move][-1] == pytest.approx(child["mean"], abs=1e-3)


def _render(browser: Any, data: dict[str, Any], step: int = 1) -> Any:
    page = browser.new_page(viewport={"width": 1150, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content('<div id="host"></div>')
    page.evaluate(HOST, [ESM.read_text(), data, step])
    page.errors = errors
    return page


def _shown(page: Any) -> dict[str, Any]:
    return page.evaluate("""() => ({
      step: document.querySelector(".tl-stepper").dataset.step,
      path: [...document.querySelectorAll("svg.diagram g.node.picked")].map((g) => g.dataset.move),
      made: [...document.querySelectorAll("svg.diagram g.node.new")].map((g) => g.dataset.move),
      picked: [...document.querySelectorAll("table.terms tr.picked")].map((r) => r.dataset.move),
      numbered: [...document.querySelectorAll(".board .cell .n")].map((n) => Number(n.textContent)),
      ringed: document.querySelectorAll(".board .cell.path").length,
      slider: document.querySelector(".tl-controls input").value,
      label: document.querySelector(".tl-controls .label").textContent,
      model: window.model ? window.model.get("step") : null,
    })""")


def _agrees(shown: dict[str, Any], frame: dict[str, Any]) -> None:
    assert shown["path"] == ["start", *frame["path"]]
    assert shown["made"] == ([frame["expanded"]] if frame["expanded"] else [])
    picked_in_table = [level["picked"] for level in frame["levels"] if level["why"] != "untried"]
    assert shown["picked"] == picked_in_table
    assert sorted(shown["numbered"]) == list(range(1, len(frame["playout"]) + 1))
    assert shown["ringed"] == len(frame["path"])


@pytest.mark.browser
def test_the_widget_front_end_in_chromium(browser: Any, c4_trace: treelab.SearchTrace) -> None:
    data = stepper_data(c4_trace)
    page = _render(browser, data)
    frames = data["frames"]
    shown = _shown(page)
    assert shown["step"] == "1" and "simulation 1 of 60" in shown["label"]
    _agrees(shown, frames[0])
    page.click("button[data-act=step]")
    assert _shown(page)["model"] == 2 and page.evaluate("() => window.saved") == 1
    page.click("button[data-act=step10]")
    shown = _shown(page)
    assert shown["step"] == "12" and shown["slider"] == "12"
    _agrees(shown, frames[11])
    page.click("button[data-act=back]")
    shown = _shown(page)
    assert shown["step"] == "11"
    _agrees(shown, frames[10])
    page.locator(".tl-controls input").fill("40")  # the slider
    _agrees(_shown(page), frames[39])
    # the table shows the score terms as the search saw them: mean + exploration = score
    row = page.locator("table.terms tr.picked").first
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    assert abs(float(cells[4]) + float(cells[5]) - float(cells[6])) < 2e-3
    # convergence: a share curve and a mean curve for every root move, the best move so far in bold
    curves = page.evaluate("""() => ["share", "mean"].map((w) =>
      [...document.querySelectorAll(`svg.convergence.${w} polyline`)].map((p) => p.dataset.move).sort())""")
    moves = sorted(m for m in data["roots"] if m != "_at")
    assert curves == [moves, moves]
    best = (page.locator("svg.convergence.share text.best").text_content() or "").strip("■ ")
    j = next(k for k, i in enumerate(data["roots"]["_at"]) if i >= 40)
    assert data["roots"][best][j] == max(data["roots"][m][j] for m in moves)
    page.screenshot(path=str(IMG / "stepper.png"), full_page=True)
    page.click("button[data-act=run]")  # runs on by itself, then pauses at the end
    page.wait_for_function("() => window.model.get('step') >= 43", timeout=10000)
    page.click("button[data-act=run]")
    held = _shown(page)["model"]
    page.wait_for_timeout(400)
    assert _shown(page)["model"] == held  # paused
    page.evaluate("() => window.model.set('step', 999)")  # a step past the end: one clear line
    assert page.locator(".tl-stepper .error").inner_text() == "step 999 is outside this search: use 1 to 60"
    assert page.errors == []


@pytest.mark.browser
def test_the_widget_draws_puct_and_a_text_board(browser: Any) -> None:
    puct = treelab.trace("tictactoe", "", iterations=20, seed=1, algorithm="puct")
    page = _render(browser, stepper_data(puct), step=2)
    assert "prior" in page.locator("table.terms thead").inner_text()
    assert "added its 9 children" in page.locator(".phases").inner_text() or "evaluated" in page.locator(
        ".phases").inner_text()
    nim = treelab.trace("nim", "", iterations=10, seed=1)  # no grid: the board is text
    page = _render(browser, stepper_data(nim), step=3)
    assert "playout:" in page.locator("pre.text-board").inner_text()
    assert page.errors == []


# -- the explorer's step mode --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with serving(str(SAMPLE_C4)) as srv:
        yield srv


def test_the_trace_api(server: Server) -> None:
    status, data = server.json("/api/trace?path=4453&iterations=50&search=solver&seed=2")
    assert status == 200 and data["simulations"] == len(data["frames"]) == 50 and data["solver"]
    again = treelab.trace("connect4", "4453", iterations=50, seed=2, solver=True)
    assert [f["path"] for f in data["frames"]] == [r["path"] for r in again.records]  # the same search
    status, stored = server.json("/api/trace?path=44&iterations=30&tree=stored")
    assert status == 200 and stored["tree"] == "stored" and stored["frames"][0]["levels"][0]["nb_visit"] > 0
    for query, words in [("path=4453&search=mcts", "search 'mcts'"), ("path=4453&iterations=99999", "iterations"),
                         ("path=4453&tree=mine", "tree 'mine'"), ("path=4x", "4x"),
                         ("path=1212121&iterations=5", "the game is over")]:
        status, body = server.json(f"/api/trace?{query}")
        assert status == 400 and words in body["error"], (query, body)


@pytest.mark.browser
def test_the_explorer_step_mode_in_chromium(browser: Any, server: Server, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "?path=4453")
    _ready(page, "4453")
    page.locator("#step-toggle").click()
    _ready(page, "4453")
    assert "mode=step" in page.url and "step=1" in page.url
    expected = treelab.trace("connect4", "4453", iterations=200, seed=1).records
    frames = [{**r, "playout": r["playout"]} for r in expected]
    _agrees(_shown(page), frames[0])
    page.click("#stepper button[data-act=step10]")
    assert "step=11" in page.url
    _agrees(_shown(page), frames[10])
    page.reload()  # the URL holds the step
    _ready(page, "4453")
    assert _shown(page)["step"] == "11"
    _agrees(_shown(page), frames[10])
    page.locator("#step-search").select_option("puct")
    page.wait_for_function("() => (document.body.dataset.stepped || '').includes('search=puct')", timeout=30000)
    assert "search=puct" in page.url and "step=1" in page.url
    assert "prior" in page.locator("#stepper table.terms thead").inner_text()
    page.goto(server.url + "?path=4453&mode=step&step=7&iterations=50")
    _ready(page, "4453")
    shot = tmp_path / "explorer_step.png"  # the docs' picture is replaced only when asked (TREELAB_REGOLD=1)
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if os.environ.get("TREELAB_REGOLD") == "1" or not (IMG / "explorer_step.png").exists():
        shutil.copyfile(shot, IMG / "explorer_step.png")
    page.goto(server.url + "?path=4453&mode=step&step=51&iterations=50")
    page.wait_for_function("() => document.body.dataset.ready === 'error'", timeout=20000)
    assert page.locator("#error .message").inner_text() == "step 51 is past the end of this search: use 1 to 50"
    assert errors == []


def _ready(page: Any, path: str) -> None:
    page.wait_for_function(
        "([p]) => (document.body.dataset.ready || '').startsWith(p + '|') && (!location.search.includes('mode=step')"
        " || document.querySelector('.tl-stepper') !== null)", arg=[path], timeout=30000)
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()


def test_the_explorer_page_holds_only_escaped_text() -> None:
    source = ESM.read_text()
    assert "innerHTML" not in source and "eval(" not in source
    assert json.loads(json.dumps(stepper_data(treelab.trace("tictactoe", "1", iterations=5, seed=1))))
