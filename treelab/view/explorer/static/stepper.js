// treelab stepper: one search, one simulation at a time (an anywidget ES module; the explorer's step mode too).
// The model holds `data` (treelab.view.step_widget.stepper_data) and `step` (from 1). Everything shown is built
// with DOM calls and textContent: nothing from the data is ever parsed as HTML.
const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const STYLE = `
.tl-stepper { font: 13px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; }
.tl-stepper .tl-controls { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; margin-bottom: 6px; }
.tl-stepper button { font: inherit; padding: 2px 10px; cursor: pointer; }
.tl-stepper input[type=range] { width: 260px; }
.tl-stepper .cols { display: flex; gap: 18px; flex-wrap: wrap; align-items: flex-start; }
.tl-stepper .phases { margin: 4px 0 8px; padding: 0; list-style: none; }
.tl-stepper .phases li { margin: 2px 0; }
.tl-stepper .phase { display: inline-block; min-width: 70px; font-weight: bold; }
.tl-stepper .p-select { color: #e66101; } .tl-stepper .p-expand { color: #1b7837; }
.tl-stepper .p-simulate { color: #5e3c99; } .tl-stepper .p-backup { color: #2659a8; }
.tl-stepper table { border-collapse: collapse; background: #fff; }
.tl-stepper th, .tl-stepper td { padding: 2px 6px; border-bottom: 1px solid #eee; text-align: right; }
.tl-stepper th { background: #f2f2f2; }
.tl-stepper td.mv, .tl-stepper th.mv { text-align: left; font-weight: bold; }
.tl-stepper tr.level td { background: #f7f7f7; text-align: left; font-weight: bold; color: #555; }
.tl-stepper tr.picked td { background: #fde0c5; }
.tl-stepper tr.skipped td { color: #999; }
.tl-stepper .board { display: grid; gap: 3px; padding: 5px; border-radius: 6px; width: 230px; }
.tl-stepper .cell { aspect-ratio: 1; border-radius: 50%; display: flex; align-items: center; justify-content: center;
  font-weight: bold; font-size: 12px; position: relative; }
.tl-stepper .board.marks .cell { border-radius: 3px; font-size: 18px; }
.tl-stepper .cell.path { outline: 3px solid #e66101; outline-offset: -3px; }
.tl-stepper .cell .n { position: absolute; right: 2px; bottom: 0; font-size: 10px; color: #000; background: #fffc;
  border-radius: 3px; padding: 0 2px; }
.tl-stepper .muted { color: #666; } .tl-stepper .small { font-size: 11px; }
.tl-stepper svg text { font: 11px system-ui, sans-serif; }
.tl-stepper .error { color: #b2182b; }
`;

function h(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k === "style") node.style.cssText = v; else node.setAttribute(k, v);
  }
  for (const kid of kids) node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return node;
}

function s(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

const fmt = (x, d = 3) => (x === null || x === undefined ? "∞" : Number(x).toFixed(d));
const player = (p) => (p === null || p === undefined ? "draw" : `player ${p} wins`);

function mover(data, f, j) {  // the player making the j-th move (from 0) after the search's root (-1: into it)
  if (f.movers && f.movers[j + 1] !== undefined) return f.movers[j + 1];  // games whose players need not alternate
  return ((data.to_move + 1 + j) % 2) + 1;
}

// -- the four phases, in words -------------------------------------------------------------------------
function phases(data, f) {
  const list = h("ul", { class: "phases" });
  const steps = f.levels.map((l) => `${l.picked} (${l.why === "untried" ? "untried, at random" : l.why === "best" ?
    `best score ${fmt(l.candidates.find((c) => c.move === l.picked)?.score)}` : l.why})`);
  list.append(h("li", {}, h("span", { class: "phase p-select" }, "select"),
    steps.length ? `start → ${steps.join(" → ")}` : "the start itself (nothing to choose yet)"));
  const made = (f.created || []).length;
  list.append(h("li", {}, h("span", { class: "phase p-expand" }, "expand"),
    f.expanded === null || f.expanded === undefined ? "nothing new (a finished game, or every node known)" :
      data.algorithm === "puct" ? `evaluated ${f.expanded || "the start"} and added its ${made} children with their priors` :
        `added the node ${f.expanded}`));
  const playout = f.playout;
  list.append(h("li", {}, h("span", { class: "phase p-simulate" }, "simulate"),
    playout === null || playout === undefined ? `the evaluator's result: ${player(f.winner)}` :
      playout.length ? `playout ${playout.join(" ")} → ${player(f.winner)}` : `the game is over here: ${player(f.winner)}`));
  const proofs = Object.entries(f.proofs || {});
  list.append(h("li", {}, h("span", { class: "phase p-backup" }, "back up"),
    `every node on the path +1 visit; the winner's moves +1 win${f.winner === null ? " (a draw: +1 draw everywhere)" : ""}` +
      (proofs.length ? `; proved ${proofs.map(([k, v]) => `${k || "start"} ${v}`).join(", ")}` : "")));
  return list;
}

// -- the diagram: each level's candidates, the path highlighted, the new node marked, the increments ---
function diagram(data, f) {
  const levels = f.levels;
  const width = Math.max(320, ...levels.map((l) => (l.candidates.length + (l.untried ? l.untried.length : 0)) * 58 + 130));
  const rowH = 74;
  const height = 60 + rowH * (levels.length + 1);
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "diagram" });
  const gains = f.backup || [];
  const gainText = (depth) => {
    const g = gains[depth];
    if (!g) return "";
    return `+${g[0]}` + (g[1] ? " win" : g[2] ? " draw" : " loss");
  };
  let px = width / 2 - 40, py = 26;
  const node = (x, y, label, cls, extra) => {
    const g = s("g", { class: `node ${cls}`, "data-move": label });
    const picked = cls.includes("picked"), made = cls.includes("new"), ghost = cls.includes("untried");
    g.append(s("circle", { cx: x, cy: y, r: 17, fill: ghost ? "#fff" : made ? "#d9f0d3" : picked ? "#fde0c5" : "#fff",
      stroke: made ? "#1b7837" : picked ? "#e66101" : ghost ? "#bbb" : "#555", "stroke-width": picked || made ? 3 : 1,
      "stroke-dasharray": ghost || made ? "4 2" : "none" }));
    g.append(s("text", { x, y: y + 4, "text-anchor": "middle", "font-weight": "bold" }, label));
    if (extra) g.append(s("text", { x, y: y + 30, "text-anchor": "middle", fill: "#444" }, extra));
    svg.append(g);
  };
  node(px, py, "start", "root picked", "");
  svg.append(s("text", { x: px + 24, y: py - 6, fill: "#2659a8", class: "gain" }, gainText(data.depth)));
  levels.forEach((level, i) => {
    const y = py + rowH;
    const items = [...level.candidates.map((c) => ({ ...c, kind: "kid" })),
      ...(level.untried || []).filter((m) => m !== level.picked).map((m) => ({ move: m, kind: "untried" }))];
    if (level.why === "untried") items.push({ move: level.picked, kind: "new" });
    const step = Math.min(58, (width - 40) / Math.max(1, items.length));
    const x0 = width / 2 - (step * (items.length - 1)) / 2;
    let nx = px;
    items.forEach((c, k) => {
      const x = x0 + k * step;
      const picked = c.move === level.picked;
      svg.append(s("line", { x1: px, y1: py + 17, x2: x, y2: y - 17, stroke: picked ? "#e66101" : "#ccc",
        "stroke-width": picked ? 3 : 1 }));
      const cls = c.kind === "untried" ? "untried" : c.kind === "new" ? "new picked" : picked ? "picked" : c.skipped ? "skipped" : "";
      const extra = c.kind === "kid" ? `${c.nb_visit} · ${c.score === null ? "∞" : fmt(c.score, 2)}` :
        c.kind === "new" ? "new" : "";
      node(x, y, c.move, cls, extra);
      if (picked) nx = x;
    });
    px = nx; py = y;
    svg.append(s("text", { x: px + 22, y: py - 8, fill: "#2659a8", class: "gain" }, gainText(data.depth + i + 1)));
  });
  if (data.algorithm === "puct" && f.expanded !== null && f.expanded !== undefined) {
    const made = (f.created || []).length;
    svg.append(s("text", { x: px, y: py + 50, "text-anchor": "middle", fill: "#1b7837" }, `+${made} children`));
  } else if (f.playout && f.playout.length) {
    svg.append(s("text", { x: px, y: py + 50, "text-anchor": "middle", fill: "#5e3c99" },
      `playout: ${f.playout.length} moves → ${f.winner === null ? "draw" : `player ${f.winner}`}`));
  }
  svg.append(s("text", { x: 6, y: height - 6, fill: "#666" }, "visits · score at selection; blue: what the backup added"));
  return svg;
}

// -- the board: the path's moves ringed, the playout's numbered ------------------------------------------
function board(data, f) {
  const b = data.board;
  if (b.kind !== "grid") {
    return h("pre", { class: "text-board" }, `${b.text}\npath: ${f.path.join(" ") || "-"}\nplayout: ${(f.playout || []).join(" ") || "-"}`);
  }
  const rows = b.cells.length, cols = b.cells[0].length, look = b.look;
  const owner = b.cells.map((r) => r.slice());
  const tags = {};
  (f.cells || []).forEach((cell, j) => {
    if (!cell) return;
    owner[cell[0]][cell[1]] = mover(data, f, j);
    tags[`${cell[0]},${cell[1]}`] = j < f.path.length ? { path: true, n: "" } : { path: false, n: j - f.path.length + 1 };
  });
  const grid = h("div", { class: "board" + (look.marks ? " marks" : ""),
    style: `grid-template-columns: repeat(${cols}, 1fr); background: ${look.background}` });
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const who = owner[r][c];
      const tag = tags[`${r},${c}`];
      const cell = h("div", { class: "cell" + (tag && tag.path ? " path" : ""), style: `background: ${look.fills[who]}` });
      if (look.marks && look.marks[who]) cell.append(h("span", { style: `color: ${look.mark_colours[who]}` }, look.marks[who]));
      if (tag && tag.n !== "") cell.append(h("span", { class: "n" }, tag.n));
      grid.append(cell);
    }
  }
  return grid;
}

// -- the table of score terms at each level -----------------------------------------------------------------
function table(data, f) {
  const puct = data.algorithm === "puct";
  const head = h("tr", {}, h("th", { class: "mv" }, "move"), h("th", {}, "visits"), h("th", {}, "wins"), h("th", {}, "draws"),
    h("th", {}, puct ? "Q" : "mean"), ...(puct ? [h("th", {}, "prior")] : []),
    h("th", {}, puct ? "c·P·√N/(1+n)" : "c·√(ln N / n)"), h("th", {}, "score"), h("th", { class: "mv" }, ""));
  const body = h("tbody");
  f.levels.forEach((level, i) => {
    const at = i === 0 ? "start" : f.path.slice(0, i).join(" ");
    body.append(h("tr", { class: "level" }, h("td", { colspan: puct ? 9 : 8 },
      `level ${i + 1}: at ${at} (N = ${level.nb_visit}) → ${level.picked}, ` +
        (level.untried ? `drawn at random among the untried ${level.untried.join(" ")}` : level.why))));
    for (const c of level.candidates) {
      const note = c.move === level.picked ? "← picked" : c.skipped ? `${c.proven}: skipped` : c.proven || "";
      body.append(h("tr", { class: c.move === level.picked ? "picked" : c.skipped ? "skipped" : "", "data-move": c.move },
        h("td", { class: "mv" }, c.move), h("td", {}, c.nb_visit), h("td", {}, c.nb_win), h("td", {}, c.nb_draw),
        h("td", {}, c.mean === null ? "–" : fmt(c.mean)), ...(puct ? [h("td", {}, fmt(c.prior))] : []),
        h("td", {}, fmt(c.explore)), h("td", { class: "score" }, fmt(c.score)), h("td", { class: "mv" }, note)));
    }
  });
  return h("table", { class: "terms" }, h("thead", {}, head), body);
}

// -- the backup, from the leaf up ---------------------------------------------------------------------------
function backup(data, f) {
  const body = h("tbody");
  const names = ["start", ...f.path];
  for (let j = names.length - 1; j >= 0; j--) {
    const g = (f.backup || [])[data.depth + j];
    if (!g) continue;
    const who = mover(data, f, j - 1);  // the start: moved into by the player not to move there
    const result = f.winner === null ? "draw" : who === null ? "" : f.winner === who ? "win" : "loss";
    body.append(h("tr", {}, h("td", { class: "mv" }, names[j]), h("td", {}, who ? `player ${who}` : ""),
      h("td", {}, `+${g[0]}`), h("td", {}, `+${g[1]}`), h("td", {}, `+${g[2]}`), h("td", {}, `+${g[3]}`),
      h("td", { class: "mv" }, result)));
  }
  return h("table", { class: "backup" }, h("thead", {}, h("tr", {}, h("th", { class: "mv" }, "node (leaf first)"),
    h("th", {}, "moved by"), h("th", {}, "visits"), h("th", {}, "wins"), h("th", {}, "draws"), h("th", {}, "selected"),
    h("th", { class: "mv" }, "for its mover"))), body);
}

// -- convergence: each root move's share of the visits, and its mean ---------------------------------------
function convergence(data, step, what) {
  const roots = data.roots || {};
  const at = roots._at || [];
  const moves = Object.keys(roots).filter((k) => k !== "_at");
  const means = data.means || {};
  const W = 330, H = 150, L = 34, B = 20;
  const svg = s("svg", { width: W, height: H + 40, class: `convergence ${what}` });
  const n = at.length ? at[at.length - 1] : 1;
  const x = (i) => L + ((W - L - 8) * Math.log(i)) / Math.log(Math.max(2, n));
  const y = (v) => 8 + (H - B - 8) * (1 - v);
  const value = what === "mean" ? (m, i, j) => (means[m] || [])[j] || 0 : (m, i, j) => roots[m][j] / i;
  svg.append(s("line", { x1: L, y1: y(0), x2: W - 8, y2: y(0), stroke: "#999" }));
  svg.append(s("line", { x1: L, y1: y(0), x2: L, y2: y(1), stroke: "#999" }));
  svg.append(s("text", { x: 2, y: y(1) + 4 }, what === "mean" ? "1" : "100%"));
  svg.append(s("text", { x: 12, y: y(0) + 4 }, "0"));
  svg.append(s("text", { x: W - 60, y: H }, `simulation (log) → ${n}`));
  // the best move at the cursor: the most visited root move so far (the choice rule's "most selected" at the root)
  let j = at.findIndex((i) => i >= step);
  if (j < 0) j = at.length - 1;
  const best = moves.reduce((b, m) => (b === null || roots[m][j] > roots[b][j] ? m : b), null);
  moves.forEach((m, k) => {
    const pts = at.map((i, jj) => `${x(i).toFixed(1)},${y(value(m, i, jj)).toFixed(1)}`).join(" ");
    svg.append(s("polyline", { points: pts, fill: "none", stroke: COLOURS[k % 10], "stroke-width": m === best ? 2.8 : 1.4,
      "data-move": m }));
    svg.append(s("text", { x: L + 4 + (k % 7) * 42, y: H + 16 + Math.floor(k / 7) * 14, fill: COLOURS[k % 10],
      "font-weight": m === best ? "bold" : "normal", class: m === best ? "best" : "" }, `■ ${m}`));
  });
  const cx = x(Math.max(1, step));
  svg.append(s("line", { x1: cx, y1: y(0), x2: cx, y2: y(1), stroke: "#e66101", "stroke-dasharray": "3 2", class: "cursor" }));
  return svg;
}

function render({ model, el }) {
  const root = h("div", { class: "tl-stepper" });
  root.append(h("style", {}, STYLE));
  const back = h("button", { "data-act": "back", title: "one simulation back" }, "◀ back");
  const one = h("button", { "data-act": "step", title: "one simulation on" }, "step ▶");
  const ten = h("button", { "data-act": "step10", title: "ten simulations on" }, "step 10 ▶▶");
  const run = h("button", { "data-act": "run", title: "play the simulations one after another" }, "run");
  const slider = h("input", { type: "range", min: "1", max: "1", value: "1", step: "1", "aria-label": "simulation" });
  const label = h("span", { class: "label" });
  const view = h("div", { class: "view" });
  root.append(h("div", { class: "tl-controls" }, back, one, ten, run, slider, label), view);
  el.append(root);
  let timer = null;

  const frames = () => (model.get("data") || {}).frames || [];
  const go = (step) => {
    const n = frames().length;
    const next = Math.max(1, Math.min(n, step));
    if (next !== model.get("step")) { model.set("step", next); model.save_changes(); }
  };
  const stop = () => { if (timer !== null) { clearInterval(timer); timer = null; run.textContent = "run"; } };
  back.onclick = () => { stop(); go(model.get("step") - 1); };
  one.onclick = () => { stop(); go(model.get("step") + 1); };
  ten.onclick = () => { stop(); go(model.get("step") + 10); };
  run.onclick = () => {
    if (timer !== null) { stop(); return; }
    run.textContent = "pause";
    timer = setInterval(() => {
      if (model.get("step") >= frames().length) { stop(); return; }
      go(model.get("step") + 1);
    }, 150);
  };
  slider.oninput = () => { stop(); go(Number(slider.value)); };

  const draw = () => {
    const data = model.get("data") || {};
    const list = data.frames || [];
    const step = model.get("step");
    slider.max = String(Math.max(1, list.length));
    slider.value = String(step);
    view.replaceChildren();
    const f = list[step - 1];
    if (!f) {
      label.textContent = "";
      view.append(h("p", { class: "error" }, list.length ? `step ${step} is outside this search: use 1 to ${list.length}` :
        "this trace holds no simulation"));
      root.dataset.step = "";
      return;
    }
    const kind = data.algorithm === "puct" ? "PUCT" : data.solver ? "UCT + solver" : "UCT";
    label.textContent = `simulation ${step} of ${list.length}` + (data.simulations > list.length ? ` (search ran ${data.simulations})` : "") +
      ` · ${kind} · ${data.game} at ${data.position || "the start"}`;
    view.append(phases(data, f),
      h("div", { class: "cols" },
        h("div", {}, h("div", { class: "muted small" }, "the tree, level by level"), diagram(data, f)),
        h("div", {}, h("div", { class: "muted small" }, "the board: path ringed, playout numbered"), board(data, f),
          h("div", { class: "muted small" }, "each root move's share of the visits (bold: the best move so far)"),
          convergence(data, step, "share"),
          h("div", { class: "muted small" }, "each root move's mean, for the player making it"),
          convergence(data, step, "mean"))),
      h("div", { class: "cols" },
        h("div", {}, h("div", { class: "muted small" }, "the scores at each level, as selection saw them"), table(data, f)),
        h("div", {}, h("div", { class: "muted small" }, "the backup, on the way up"), backup(data, f))));
    root.dataset.step = String(step);
  };
  model.on("change:step", draw);
  model.on("change:data", draw);
  draw();
  return () => { stop(); model.off("change:step", draw); model.off("change:data", draw); };
}

export default { render };
