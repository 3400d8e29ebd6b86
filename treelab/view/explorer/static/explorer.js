// treelab explorer: the page's whole script, dependency-free.
// The URL is the state (?path=SEQ&depth=D&top=K&game=G&compare=1&sort=KEY&dir=asc|desc, and the step mode's
// mode=step&search=uct|puct|solver&iterations=N&tree=fresh|stored&step=K):
// every view can be shared, and back/forward walk the browser history.
// Every value from the server is put on the page as text (textContent) or as a parsed SVG
// document with scripts and event attributes removed: nothing is inserted as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const POLL_MS = 2000;
let info = null;          // the last /api/info answer
let node = null;          // the last /api/node answer
let version = null;       // info.version when the node was fetched
let lastSlider = null;    // the slider's previous value (for "new since")

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "style") e.setAttribute("style", v);
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const kid of kids) e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return e;
}

function params() { return new URLSearchParams(location.search); }

function pageUrl(changes) {
  const p = params();
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === "") p.delete(k); else p.set(k, v);
  }
  const q = p.toString();
  return "/" + (q ? "?" + q : "");
}

function go(changes, replace) {
  const url = pageUrl(changes);
  if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
  load();
}

function link(text, path, extra) {
  if (path === null || path === undefined) return el("span", { class: "unlinked" }, text);
  const a = el("a", { href: pageUrl({ path: path, ...(extra || {}) }) }, text);
  a.addEventListener("click", (ev) => {
    if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    go({ path: path });
  });
  return a;
}

async function getJson(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json().catch(() => ({ error: `bad answer (${r.status})` }));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

function apiQuery(extra) {
  const p = params();
  const q = new URLSearchParams({ path: p.get("path") || "" });
  if (p.get("game")) q.set("game", p.get("game"));
  if (p.get("since")) q.set("since", p.get("since"));
  for (const [k, v] of Object.entries(extra || {})) if (v !== null && v !== "") q.set(k, v);
  return q.toString();
}

function showError(message) {  // a red banner, with a way back to a page that loads
  const box = $("error");
  box.replaceChildren();
  if (message) box.append(el("span", { class: "message" }, message), " · ", el("a", { href: "/", id: "error-back" }, "back to the start"));
  box.hidden = !message;
}

const fmt = (x, d = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(x >= 0.1 ? 0 : 1) + "%");
const count = (x) => (x === null || x === undefined ? "–" : x.toLocaleString("en"));

// -- board --------------------------------------------------------------------
function drawBoard(data) {
  const box = $("board");
  box.replaceChildren();
  const b = data.board;
  if (b.kind !== "grid") { box.append(el("pre", { class: "text-board" }, b.text)); return; }
  const look = b.look;
  const rows = b.cells.length, cols = rows ? b.cells[0].length : 0;
  const byMove = Object.fromEntries(data.children.map((k) => [k.move, k]));
  const discs = look.marks === null;  // colour only: round discs (Connect Four); else marks in square cells
  const grid = el("div", { class: "grid" + (discs ? " discs" : " marks"),
    style: `grid-template-columns: repeat(${cols}, 1fr); background: ${look.background}; max-width: ${Math.min(340, cols * 90)}px` });
  const targets = {};
  for (const [move, [r, c]] of Object.entries(b.targets)) targets[`${r},${c}`] = move;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const owner = b.cells[r][c];
      const cell = el("div", { class: `cell p${owner}`, style: `background: ${look.fills[owner]}` });
      if (look.marks && look.marks[owner]) {
        cell.append(el("span", { class: "mark", style: `color: ${look.mark_colours[owner]}` }, look.marks[owner]));
      }
      const move = targets[`${r},${c}`];
      const kid = move !== undefined ? byMove[move] : undefined;
      if (kid && kid.share === null) {  // a past game's counts that were not logged: the move, no numbers
        cell.append(link(move, kid.path));
      } else if (kid) {
        const size = 0.45 + 0.55 * Math.sqrt(kid.share);  // area grows with the share of visits
        const spot = link("", kid.path);
        spot.className = "heat" + (kid.new ? " new" : "");
        spot.dataset.move = kid.move;
        spot.title = `move ${kid.move}: ${pct(kid.share)} of visits, mean ${fmt(kid.mean)}`;
        spot.setAttribute("style", `background:${kid.colour}; transform: scale(${size.toFixed(3)})`);
        spot.append(el("span", { class: "share" }, pct(kid.share)));
        if (kid.share >= 0.02) spot.append(el("span", { class: "mean" }, fmt(kid.mean, 2)));
        cell.append(spot);
      } else if (move !== undefined && !discs) {
        cell.append(el("span", { class: "muted small" }, move));
      }
      grid.append(cell);
    }
  }
  box.append(grid);
  if (look.footer.length) {
    const foot = el("div", { class: "grid labels", style: `grid-template-columns: repeat(${cols}, 1fr); max-width: ${Math.min(340, cols * 90)}px` });
    for (const label of look.footer) foot.append(el("div", {}, label));
    box.append(foot);
  }
}

// -- children table -------------------------------------------------------------
// "nb_select" is the move-choice rule (treelab/mcts/choice.py), the order the principal variation is chosen by:
// a proven win first, a proven loss last, then the most selected, then the most visited. It is the default order.
const RULE = (k) => [k.proven === "win" ? 2 : k.proven === "loss" ? 0 : 1, k.nb_select ?? -1, k.nb_visit ?? -1];
const DEFAULT_SORT = "nb_select";
const SORTS = {
  move: (k) => (isNaN(Number(k.move)) ? k.move : Number(k.move)),
  nb_visit: (k) => k.nb_visit ?? -1, nb_select: RULE, wdl: (k) => (k.nb_visit ? k.nb_win / k.nb_visit : -1),
  mean: (k) => (k.nb_visit ? k.mean : -1), ucb1: (k) => (k.ucb1 === null ? Infinity : k.ucb1),
  proven: (k) => ({ win: 3, draw: 2, loss: 1 })[k.proven] || 0,
  model_prior: (k) => (k.model_prior ?? -1), oracle: (k) => (k.oracle ?? -2),
};
const ORACLE_WORDS = { 1: "win", 0: "draw", "-1": "loss" };

function bar(parts) {
  const b = el("div", { class: "bar" });
  for (const [share, cls, title] of parts) {
    if (share > 0) b.append(el("span", { class: cls, title: title, style: `width:${(100 * share).toFixed(2)}%` }));
  }
  return b;
}

// an imported search's value sum (its values counted as draws) and prior, when the node has them
function valued(k) {
  const parts = [];
  if (k.value_sum !== undefined) parts.push(`value sum ${k.value_sum >= 0 ? "+" : ""}${fmt(k.value_sum)}`);
  if (k.prior !== undefined) parts.push(`prior ${fmt(k.prior)}`);
  return parts.length ? el("span", { class: "muted small valued" }, ` ${parts.join(" · ")}`) : "";
}

function compare(x, y) {  // numbers, strings, or arrays of them (lexicographic)
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) { const c = compare(x[i], y[i]); if (c) return c; }
    return 0;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

function drawTable(data) {
  const p = params();
  const key = SORTS[p.get("sort")] ? p.get("sort") : DEFAULT_SORT;
  const dir = p.get("dir") === "asc" ? 1 : -1;
  const kids = data.children.slice().sort((a, b) => compare(SORTS[key](a), SORTS[key](b)) * dir);  // stable: ties keep the server's order
  for (const th of document.querySelectorAll("#children th")) {
    th.classList.toggle("sorted", th.dataset.key === key);
    th.dataset.dir = th.dataset.key === key ? (dir > 0 ? "asc" : "desc") : "";
  }
  const rows = kids.map((k) => {
    const n = k.nb_visit || 0;
    const unknown = k.nb_visit === null;  // a past game's counts that were not logged
    const wdl = unknown ? el("span", { class: "muted" }, "–") : n ? bar([[k.nb_win / n, "win", `${k.nb_win} wins`],
      [k.nb_draw / n, "draw", `${k.nb_draw} draws`], [k.nb_loss / n, "loss", `${k.nb_loss} losses`]])
      : el("span", { class: "muted" }, "unvisited");
    const ucb = unknown ? el("span", { class: "muted" }, "–") : k.ucb1 === null ? el("span", {}, "∞ (unvisited)")
      : el("span", {}, fmt(k.ucb1), el("span", { class: "muted" }, ` = ${fmt(k.exploitation)} + ${fmt(k.exploration)}`));
    const tr = el("tr", { "data-move": k.move, class: k.new ? "new" : "" },
      el("td", { class: "move" }, link(k.move, k.path), k.action ? el("span", { class: "muted small" }, ` ${k.action}`) : ""),
      el("td", { class: "num" }, el("span", { class: "visits" }, count(k.nb_visit)),
        el("span", { class: "muted" }, ` (${pct(k.share)})`), bar([[k.share || 0, "share", pct(k.share)]])),
      el("td", { class: "num selected" }, count(k.nb_select)),
      el("td", {}, wdl, unknown ? "" : el("span", { class: "muted small" }, ` ${k.nb_win}/${k.nb_draw}/${k.nb_loss}`)),
      el("td", { class: "num mean" }, el("span", { class: "swatch", style: `background:${k.colour}` }), fmt(k.mean),
        valued(k)),
      el("td", { class: "num ucb1" }, ucb),
      el("td", { class: "proof" }, k.proven || ""),
      el("td", { class: "num opt-model model-prior" }, k.model_prior === undefined ? "" : pct(k.model_prior)),
      el("td", { class: "opt-oracle oracle" }, k.oracle === undefined ? ""
        : k.oracle === null ? el("span", { class: "muted" }, "not solved") : ORACLE_WORDS[k.oracle]));
    return tr;
  });
  $("children").classList.toggle("with-model", "model_value" in data);
  $("children").classList.toggle("with-oracle", data.children.some((k) => "oracle" in k));
  $("children").tBodies[0].replaceChildren(...rows);
  const order = key !== DEFAULT_SORT ? "" : data.replay ? " · in order of visits (selections were not logged per game)"
    : " · in the order the principal variation is chosen by: proofs first, then the most selected";
  $("moves-note").textContent = `${data.children.length} stored, player ${data.to_move} to move, c = ${fmt(data.c, 4)}${order}`;
}

// -- position, crumbs, PV ---------------------------------------------------------
function drawPosition(data) {
  const crumbs = [link("start", "")];
  for (const c of data.crumbs) crumbs.push(el("span", { class: "sep" }, " › "), link(c.move, c.path));
  $("crumbs").replaceChildren(...crumbs);
  $("position-title").textContent = data.path ? `position ${data.path}` : "the start";
  const proof = data.proven ? `, proven ${data.proven} for player ${data.to_move}` : "";
  const end = data.terminal ? (data.winner ? ` · game over: player ${data.winner} won` : " · game over: draw") : "";
  const model = "model_value" in data ? ` · model's value ${fmt(data.model_value)}` : "";
  $("summary").textContent = `${count(data.nb_visit)} visits · value ${fmt(data.value)} for player ` +
    `${data.to_move}${model}${proof}${end}`;
  const merged = data.position;  // the position table: every stored path to this position (and its mirror images)
  $("merged").textContent = merged ? `position reached by ${merged.paths.toLocaleString("en")} stored ` +
    `path${merged.paths === 1 ? "" : "s"} · merged: ${merged.nb_visit.toLocaleString("en")} visits, mean ` +
    `${fmt(merged.mean)} for the player who moved here` +
    (data.statistics === "graph" ? " · scores: graph search (position value + edge exploration)" : "") : "";
  const pv = [el("b", {}, "principal variation: ")];
  if (data.replay) pv.push(el("span", { class: "muted" }, "not known for a past game (it follows selections)"));
  else if (!data.principal_variation.length) pv.push(el("span", { class: "muted" }, "–"));
  data.principal_variation.forEach((move, i) => pv.push(link(move, data.pv_paths[i]), " "));
  $("pv").replaceChildren(...pv);
  document.title = `treelab explorer · ${data.game} · ${data.path || "start"}`;
}

// -- subtree diagram ----------------------------------------------------------------
async function drawDiagram() {
  const p = params();
  const box = $("diagram");
  $("depth").value = p.get("depth") || "2";
  const top = p.has("top") ? p.get("top") : "3";
  $("top").value = top === "all" ? "" : top;
  if (p.get("game")) {  // a past game's counts below the start's moves were not logged: no numbers to draw
    box.replaceChildren(el("p", { class: "muted replay-note" }, "The diagram is drawn for the latest tree only: " +
      "treelab logs the counts of the start's moves after each game, not the deeper ones."));
    return;
  }
  const q = apiQuery({ depth: $("depth").value, top: $("top").value });
  const r = await fetch(`/api/subtree.svg?${q}`, { cache: "no-store" });
  if (!r.ok) {
    const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
    box.replaceChildren(el("p", { class: "muted" }, body.error));
    return;
  }
  const doc = new DOMParser().parseFromString(await r.text(), "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") { box.replaceChildren(el("p", { class: "muted" }, "no diagram")); return; }
  for (const bad of svg.querySelectorAll("script, foreignObject")) bad.remove();
  for (const e of svg.querySelectorAll("*")) {
    for (const a of Array.from(e.attributes)) if (a.name.toLowerCase().startsWith("on")) e.removeAttribute(a.name);
  }
  for (const a of svg.querySelectorAll("a")) a.removeAttribute("href"), a.removeAttributeNS("http://www.w3.org/1999/xlink", "href");
  const imported = document.importNode(svg, true);
  for (const g of imported.querySelectorAll("g.node")) {
    const id = g.getAttribute("id");
    if (!id || id.endsWith("more")) continue;
    g.classList.add("link");
    g.addEventListener("click", () => go({ path: id === "root" ? "" : id.split("/").join(",") }));
  }
  box.replaceChildren(imported);
}

// -- compare ---------------------------------------------------------------------
async function drawCompare() {
  const on = params().get("compare") === "1" && info && info.compare;
  $("compare").hidden = !on;
  $("compare-toggle").checked = !!on;
  if (!on) return;
  const d = await getJson(`/api/compare?${apiQuery()}`);
  $("compare-title").textContent = `A = ${d.a}, B = ${d.b}, at ${d.path || "the start"}`;
  const common = d.principal_variation_a.length && d.pv_common === d.principal_variation_a.length &&
    d.pv_common === d.principal_variation_b.length ? "the same" : `they part after ${d.pv_common} moves`;
  $("compare-summary").textContent = `visits A ${d.nb_visit_a.toLocaleString("en")}, B ${d.nb_visit_b.toLocaleString("en")} ` +
    `(B − A ${d.root_visit_delta >= 0 ? "+" : ""}${d.root_visit_delta.toLocaleString("en")}) · PV A: ` +
    `${d.principal_variation_a.join(" ") || "–"} · PV B: ${d.principal_variation_b.join(" ") || "–"} (${common})`;
  const rows = d.children.map((k) => el("tr", { "data-move": k.move, class: k.in_a && k.in_b ? "" : "only" },
    el("td", { class: "move" }, link(k.move, k.path, { compare: "1" })),
    el("td", { class: "num a" }, k.nb_visit_a.toLocaleString("en")),
    el("td", { class: "num b" }, k.nb_visit_b.toLocaleString("en")),
    el("td", { class: "num" }, (k.visit_delta >= 0 ? "+" : "") + k.visit_delta.toLocaleString("en")),
    el("td", { class: "num" }, fmt(k.mean_a)), el("td", { class: "num" }, fmt(k.mean_b)),
    el("td", { class: "num" }, k.mean_delta === null ? "–" : (k.mean_delta >= 0 ? "+" : "") + fmt(k.mean_delta)),
    el("td", { class: "held" }, k.in_a && k.in_b ? "both" : k.in_a ? "A only" : "B only")));
  $("compare-table").tBodies[0].replaceChildren(...rows);
}

// -- growth replay ---------------------------------------------------------------
function drawSlider() {
  const s = $("replay-slider");
  const last = info ? info.last_game : 0;
  s.max = String(last);
  s.min = last ? "1" : "0";
  const g = params().get("game");
  s.value = g ? g : String(last);
  $("replay").hidden = !last;
  const note = g && node && node.replay ? ` · ${node.replay.note}` : "";
  $("replay-label").textContent = g ? `the tree after game ${g} of ${last} (new nodes since game ${params().get("since") || "–"} marked)${note}` :
    `latest: ${last.toLocaleString("en")} games, ${info ? info.nodes.toLocaleString("en") : "?"} nodes (live)`;
  lastSlider = Number(s.value);
}

let sliderTimer = null;
function onSlider() {
  clearTimeout(sliderTimer);
  sliderTimer = setTimeout(() => {
    const s = $("replay-slider");
    const g = Number(s.value);
    if (g >= Number(s.max)) { go({ game: null, since: null }, true); return; }
    const prev = lastSlider !== null && lastSlider < g ? lastSlider : g - 1;
    go({ game: String(g), since: String(Math.max(0, prev)) }, true);
  }, 120);
}

// -- step mode: a traced search of this position, drawn by the notebook widget's own module -------------------
let stepKey = null;      // the query of the trace shown
let stepData = null;     // its answer
const stepListeners = {};

const stepModel = {  // the anywidget model stepper.js expects, kept in the URL
  get(key) {
    if (key === "data") return stepData;
    if (key === "step") return Number(params().get("step") || "1");
    return undefined;
  },
  set(key, value) {
    if (key !== "step") return;
    history.replaceState(null, "", pageUrl({ step: String(value) }));
    for (const f of stepListeners["change:step"] || []) f();
  },
  save_changes() {},
  on(event, f) { (stepListeners[event] = stepListeners[event] || []).push(f); },
  off(event, f) { stepListeners[event] = (stepListeners[event] || []).filter((g) => g !== f); },
};

async function drawStep() {
  const p = params();
  const on = p.get("mode") === "step";
  $("step-section").hidden = !on;
  if (!on) { stepKey = null; $("stepper").replaceChildren(); return; }
  const query = { path: p.get("path") || "", search: p.get("search") || "uct",
    iterations: p.get("iterations") || "200", tree: p.get("tree") || "fresh", seed: p.get("seed") || "1" };
  $("step-search").value = query.search;
  $("step-iterations").value = query.iterations;
  $("step-tree").value = query.tree;
  const key = new URLSearchParams(query).toString();
  if (key !== stepKey) {
    if (stepKey !== null) history.replaceState(null, "", pageUrl({ step: "1" }));  // another search: from its start
    stepData = await getJson(`/api/trace?${key}`);
    stepKey = key;
    for (const k of Object.keys(stepListeners)) delete stepListeners[k];
    const module = await import("/static/stepper.js");
    $("stepper").replaceChildren();
    module.default.render({ model: stepModel, el: $("stepper") });
  }
  const last = stepData.frames.length;
  const step = Number(p.get("step") || "1");
  if (!Number.isInteger(step) || step < 1 || step > last) {
    throw new Error(`step ${p.get("step")} is past the end of this search: use 1 to ${last}`);
  }
  for (const f of stepListeners["change:step"] || []) f();
  document.body.dataset.stepped = key;  // the search drawn (tests wait for it)
}

function stepQuery(changes) { go({ mode: "step", step: "1", ...changes }, true); }

// -- loading --------------------------------------------------------------------
async function load() {
  try {
    info = await getJson(`/api/info`);
    $("source").textContent = `${info.db} · ${info.game} · ${info.nodes.toLocaleString("en")} nodes`;
    $("compare-control").hidden = !info.compare;
    $("compare-name").textContent = info.compare || "";
    drawSlider();
    node = await getJson(`/api/node?${apiQuery()}`);
    version = info.version;
    showError("");
    drawPosition(node);
    drawBoard(node);
    drawTable(node);
    drawSlider();  // its label says what a replayed game's answer leaves out
    document.body.dataset.loaded = node.path;
    await Promise.all([drawDiagram(), drawCompare(), drawStep()]);
    document.body.dataset.ready = node.path + "|" + (params().get("game") || "") + "|" + version;
  } catch (e) {
    showError(e.message);
    document.body.dataset.ready = "error";
  }
}

async function poll() {
  try {
    const now = await getJson(`/api/info`);
    const changed = !info || now.version !== info.version;
    info = now;
    $("live").classList.toggle("off", false);
    if (changed && !params().get("game")) {
      $("live").classList.add("pulse");
      setTimeout(() => $("live").classList.remove("pulse"), 600);
      await load();
    } else if (changed) {
      drawSlider();
    }
  } catch (e) {
    $("live").classList.add("off");
  }
  setTimeout(poll, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  for (const th of document.querySelectorAll("#children th")) {
    th.addEventListener("click", () => {
      const p = params();
      const same = (p.get("sort") || DEFAULT_SORT) === th.dataset.key;
      const dir = same ? (p.get("dir") === "asc" ? "desc" : "asc") : (th.dataset.key === "move" ? "asc" : "desc");
      history.replaceState(null, "", pageUrl({ sort: th.dataset.key, dir: dir }));
      if (node) drawTable(node);
    });
  }
  $("depth").addEventListener("change", () => go({ depth: $("depth").value }, true));
  $("top").addEventListener("change", () => go({ top: $("top").value || "all" }, true));
  $("replay-slider").addEventListener("input", onSlider);
  $("compare-toggle").addEventListener("change", () => go({ compare: $("compare-toggle").checked ? "1" : null }));
  $("step-toggle").addEventListener("click", (ev) => { ev.preventDefault(); go({ mode: "step", step: "1" }); });
  $("step-close").addEventListener("click", (ev) => { ev.preventDefault(); go({ mode: null, step: null }); });
  $("step-search").addEventListener("change", () => stepQuery({ search: $("step-search").value }));
  $("step-iterations").addEventListener("change", () => stepQuery({ iterations: $("step-iterations").value }));
  $("step-tree").addEventListener("change", () => stepQuery({ tree: $("step-tree").value }));
  window.addEventListener("popstate", load);
  load().then(() => setTimeout(poll, POLL_MS));
});
