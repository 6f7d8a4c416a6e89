// Canopy web UI: plain JavaScript and SVG, served by `canopy serve`.
// Routes (location.hash): #/ play form, #/game/ID a game (#/game/ID/analyze:
// with the analysis shown), #/replay and
// #/replay/NAME replays, #/runs the run dashboards.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const main = document.getElementById("main");
const PLAYER_COLORS = ["#d23c3c", "#e8b400", "#2b6cb0", "#6b46c1"];

// ---- helpers ----

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick" || k === "onchange" || k === "oninput") e[k] = v;
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k.nodeType ? k : String(k));
  return e;
}

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") e.onclick = v;
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k.nodeType ? k : document.createTextNode(String(k)));
  return e;
}

let toastTimer = null;
function toast(msg) {
  const t = document.getElementById("toast");
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  if (r.status === 204) return null;
  let data = null;
  try { data = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) throw new Error((data && data.error) || (r.status + " " + r.statusText));
  return data;
}

function fmt(x, d) {
  if (typeof x !== "number") return x === null || x === undefined ? "" : String(x);
  if (Number.isInteger(x)) return String(x);
  return x.toFixed(d === undefined ? 3 : d);
}

function setNav(which) {
  for (const id of ["play", "replay", "runs"]) {
    document.getElementById("nav-" + id).classList.toggle("active", id === which);
  }
}

// ---- boards ----

// drawBoard returns an SVG element for st.board (connect4, tictactoe, hex).
// onCell(actionId) is called on clicks of legal cells; an (analysis rows by
// action id, or null) is overlaid.
function drawBoard(st, onCell, an) {
  const b = st.board;
  const legal = new Set();
  for (const l of st.legal) for (const a of l.actions) legal.add(a.id);
  const maxVisits = an ? Math.max(1, ...Object.values(an).map(r => r.visits)) : 1;
  const best = an ? Object.values(an).reduce((x, y) => (y.visits > (x ? x.visits : -1) ? y : x), null) : null;
  if (b.kind === "connect4") return drawConnect4(b, st, legal, onCell, an, maxVisits, best);
  if (b.kind === "tictactoe") return drawTicTacToe(b, st, legal, onCell, an, maxVisits, best);
  return drawHex(b, st, legal, onCell, an, maxVisits, best);
}

function stone(p) { return PLAYER_COLORS[p] || "#888"; }

function anLabel(row) {
  return row.visits + " visits, Q " + fmt(row.q) + ", prior " + fmt(row.prior) + (row.score ? ", score " + fmt(row.score) : "");
}

function drawConnect4(b, st, legal, onCell, an, maxVisits, best) {
  const S = 64, top = an ? 44 : 8, W = b.cols * S + 16, H = b.rows * S + top + 12;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-connect4", id: "board" });
  g.append(svg("rect", { x: 4, y: top - 4, width: b.cols * S + 8, height: b.rows * S + 8, rx: 10, fill: "#1f4fa8" }));
  for (let c = 0; c < b.cols; c++) {
    const x = 8 + c * S;
    const ok = legal.has(c) && onCell;
    const col = svg("g", { class: "cell col" + (ok ? "" : " illegal"), "data-action": c });
    const hl = svg("rect", { x, y: top - 4, width: S, height: b.rows * S + 8, fill: "#fff", "fill-opacity": 0 });
    col.append(hl);
    if (an && an[c]) {
      const row = an[c];
      hl.setAttribute("fill", "#4ade80");
      hl.setAttribute("fill-opacity", (0.08 + 0.5 * row.visits / maxVisits).toFixed(3));
      const t = svg("text", { x: x + S / 2, y: 16, "text-anchor": "middle", "font-size": 13, "font-weight": best === row ? 700 : 400, class: "an" }, String(row.visits));
      const q = svg("text", { x: x + S / 2, y: 32, "text-anchor": "middle", "font-size": 11, fill: "#555", class: "an" }, "Q " + fmt(row.q, 2));
      g.append(t, q);
      col.append(svg("title", {}, "column " + (c + 1) + ": " + anLabel(row)));
    }
    for (let r = 0; r < b.rows; r++) {
      const v = b.cells[r][c];
      col.append(svg("circle", { cx: x + S / 2, cy: top + r * S + S / 2, r: S * 0.4, fill: v < 0 ? "#f4f6fb" : stone(v), stroke: "#173c80", "stroke-width": 2 }));
    }
    if (ok) {
      col.onclick = () => onCell(c);
      col.addEventListener("mouseenter", () => { if (!an) hl.setAttribute("fill-opacity", 0.18); });
      col.addEventListener("mouseleave", () => { if (!an) hl.setAttribute("fill-opacity", 0); });
    }
    g.append(col);
  }
  // Mark the last stone played.
  if (st.last >= 0 && st.last < b.cols) {
    for (let r = 0; r < b.rows; r++) {
      if (b.cells[r][st.last] >= 0) {
        g.append(svg("circle", { cx: 8 + st.last * S + S / 2, cy: top + r * S + S / 2, r: 6, fill: "#fff", "fill-opacity": 0.8, "pointer-events": "none" }));
        break;
      }
    }
  }
  return g;
}

function drawTicTacToe(b, st, legal, onCell, an, maxVisits, best) {
  const S = 100, W = 3 * S + 20, H = 3 * S + 20;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-tictactoe", id: "board" });
  g.append(svg("rect", { x: 0, y: 0, width: W, height: H, fill: "#fff" }));
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) {
      const a = b.actions[r][c], v = b.cells[r][c], x = 10 + c * S, y = 10 + r * S;
      const ok = legal.has(a) && onCell;
      const cell = svg("g", { class: "cell" + (ok ? "" : " illegal"), "data-action": a });
      const bg = svg("rect", { x: x + 3, y: y + 3, width: S - 6, height: S - 6, fill: "#fff" });
      cell.append(bg);
      if (v === 0) {
        cell.append(svg("path", { d: `M${x + 22} ${y + 22} L${x + S - 22} ${y + S - 22} M${x + S - 22} ${y + 22} L${x + 22} ${y + S - 22}`, stroke: stone(0), "stroke-width": 10, "stroke-linecap": "round" }));
      } else if (v === 1) {
        cell.append(svg("circle", { cx: x + S / 2, cy: y + S / 2, r: S * 0.3, fill: "none", stroke: "#2b6cb0", "stroke-width": 10 }));
      }
      if (an && an[a]) overlayCell(cell, bg, an[a], x + S / 2, y + S / 2, maxVisits, best, 16);
      if (ok) cell.onclick = () => onCell(a);
      g.append(cell);
    }
  }
  for (let i = 1; i < 3; i++) {
    g.append(svg("line", { x1: 10 + i * S, y1: 14, x2: 10 + i * S, y2: H - 14, stroke: "#333", "stroke-width": 4, "stroke-linecap": "round" }));
    g.append(svg("line", { x1: 14, y1: 10 + i * S, x2: W - 14, y2: 10 + i * S, stroke: "#333", "stroke-width": 4, "stroke-linecap": "round" }));
  }
  return g;
}

// overlayCell shades a cell's background by its share of the visits and
// writes the visits and Q in it.
function overlayCell(cell, bg, row, cx, cy, maxVisits, best, size) {
  bg.setAttribute("fill", "#22c55e");
  bg.setAttribute("fill-opacity", (0.1 + 0.55 * row.visits / maxVisits).toFixed(3));
  cell.append(svg("text", { x: cx, y: cy - 1, "text-anchor": "middle", "font-size": size, "font-weight": best === row ? 700 : 400, class: "an" }, String(row.visits)));
  cell.append(svg("text", { x: cx, y: cy + size * 0.95, "text-anchor": "middle", "font-size": size * 0.7, fill: "#333", class: "an" }, fmt(row.q, 2)));
  cell.append(svg("title", {}, anLabel(row)));
}

function drawHex(b, st, legal, onCell, an, maxVisits, best) {
  const n = b.rows, R = n <= 7 ? 26 : n <= 11 ? 20 : 16, w = Math.sqrt(3) * R;
  const x0 = 30 + w / 2, y0 = 34 + R;
  const W = x0 + (n - 1) * w + (n - 1) * w / 2 + w / 2 + 30, H = y0 + (n - 1) * 1.5 * R + R + 34;
  const g = svg("svg", { viewBox: `0 0 ${W.toFixed(0)} ${H.toFixed(0)}`, width: W.toFixed(0), height: H.toFixed(0), class: "board board-hex", id: "board" });
  const center = (r, c) => [x0 + c * w + r * w / 2, y0 + r * 1.5 * R];
  const corner = (cx, cy, k, rad) => [cx + rad * Math.cos(Math.PI / 180 * (60 * k - 30)), cy + rad * Math.sin(Math.PI / 180 * (60 * k - 30))];
  const hexPath = (cx, cy, rad) => { let d = ""; for (let k = 0; k < 6; k++) { const [x, y] = corner(cx, cy, k, rad); d += (k ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1); } return d + "Z"; };
  // Goal edges: Black (player 0) joins top and bottom, White (player 1) left and right.
  const edge = (pts, color) => g.append(svg("polyline", { points: pts.map(p => p.map(v => v.toFixed(1)).join(",")).join(" "), fill: "none", stroke: color, "stroke-width": 7, "stroke-linecap": "round" }));
  const [tlx, tly] = center(0, 0), [trx, try_] = center(0, n - 1), [blx, bly] = center(n - 1, 0), [brx, bry] = center(n - 1, n - 1);
  edge([[tlx - w / 2, tly - R], [trx + w / 2, try_ - R]], "#222");
  edge([[blx - w / 2, bly + R], [brx + w / 2, bry + R]], "#222");
  edge([[tlx - w / 2 - 4, tly - R / 2], [blx - w / 2 - 4, bly + R / 2]], "#bbb");
  edge([[trx + w / 2 + 4, try_ - R / 2], [brx + w / 2 + 4, bry + R / 2]], "#bbb");
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const a = b.actions[r][c], v = b.cells[r][c], [cx, cy] = center(r, c);
      const ok = legal.has(a) && onCell;
      const cell = svg("g", { class: "cell" + (ok ? "" : " illegal"), "data-action": a });
      const bg = svg("path", { d: hexPath(cx, cy, R - 1), fill: "#f1e3bd", stroke: "#8a7a55", "stroke-width": 1 });
      cell.append(bg);
      if (v >= 0) cell.append(svg("circle", { cx, cy, r: R * 0.62, fill: v === 0 ? "#1c1c1c" : "#fbfbfb", stroke: "#555", "stroke-width": 1.5 }));
      if (st.last === a && v >= 0) cell.append(svg("circle", { cx, cy, r: R * 0.18, fill: v === 0 ? "#fff" : "#222" }));
      if (an && an[a]) overlayCell(cell, bg, an[a], cx, cy, maxVisits, best, R * 0.5);
      if (ok) cell.onclick = () => onCell(a);
      cell.append(svg("title", {}, String.fromCharCode(97 + c) + (r + 1)));
      g.append(cell);
    }
  }
  for (let c = 0; c < n; c++) {
    const [cx, cy] = center(0, c);
    g.append(svg("text", { x: cx, y: cy - R - 10, "text-anchor": "middle", "font-size": 11, fill: "#666" }, String.fromCharCode(97 + c)));
  }
  for (let r = 0; r < n; r++) {
    const [cx, cy] = center(r, 0);
    g.append(svg("text", { x: cx - w / 2 - 14, y: cy + 4, "text-anchor": "end", "font-size": 11, fill: "#666" }, String(r + 1)));
  }
  return g;
}

// ---- play form ----

let catalog = null;

async function showHome() {
  setNav("play");
  main.replaceChildren(el("h1", {}, "Play a game"));
  try {
    catalog = catalog || await api("GET", "/api/catalog");
  } catch (e) {
    main.append(el("p", { class: "err" }, e.message));
    return;
  }
  const gameSel = el("select", { id: "game-select" }, catalog.games.map(g => el("option", { value: g.name }, g.name + " (" + g.players + " players)")));
  const spec = el("input", { type: "text", id: "game-spec", value: "connect4" });
  const players = el("input", { type: "text", id: "players", value: "human;mcts:sims=2000" });
  const seed = el("input", { type: "text", id: "seed", placeholder: "random" });
  const info = el("p", { class: "muted" });
  const presets = { connect4: "human;mcts:sims=2000", tictactoe: "human;mcts:sims=500", hex: "human;mcts:sims=2000" };
  const describe = () => {
    const g = catalog.games.find(x => x.name === gameSel.value);
    info.textContent = g ? g.summary + (g.options.length ? "  Options: " + g.options.join(", ") : "") : "";
  };
  gameSel.value = "connect4";
  gameSel.onchange = () => {
    spec.value = gameSel.value === "hex" ? "hex:size=7" : gameSel.value;
    const g = catalog.games.find(x => x.name === gameSel.value);
    const np = g ? parseInt(g.players, 10) : 2;
    players.value = presets[gameSel.value] || ["human"].concat(Array(Math.max(np - 1, 1)).fill("random")).join(";");
    describe();
  };
  describe();
  const err = el("p", { class: "err", id: "create-error" });
  const go = el("button", { class: "primary", id: "create" }, "Start game");
  go.onclick = async () => {
    err.textContent = "";
    const body = { game: spec.value.trim(), players: players.value.split(";").map(s => s.trim()).filter(s => s) };
    if (seed.value.trim()) {
      const n = Number(seed.value.trim());
      if (!Number.isSafeInteger(n) || n < 0) { err.textContent = "seed: want a non-negative integer"; return; }
      body.seed = n;
    }
    try {
      const st = await api("POST", "/api/games", body);
      location.hash = "#/game/" + st.id;
    } catch (e) { err.textContent = e.message; }
  };
  const agents = el("table", {}, el("tr", {}, el("th", { class: "l" }, "agent"), el("th", { class: "l" }, "what it is")),
    catalog.agents.map(a => el("tr", {}, el("td", { class: "l" }, a.name), el("td", { class: "l" }, a.summary + (a.games ? " (" + a.games.join(", ") + " only)" : "")))));
  main.append(el("div", { class: "panel" },
    el("label", {}, "Game"), gameSel,
    el("label", {}, "Game spec (name:key=value,...)"), spec, info,
    el("label", {}, "Seats, separated by ';': an agent spec or human"), players,
    el("label", {}, "Seed"), seed, el("p", {}, go), err,
    el("p", { class: "muted" }, "Limits: " + catalog.limits.max_games + " games at once, sims ≤ " + catalog.limits.max_sims +
      ", " + catalog.limits.move_timeout + " per agent move, games expire after " + catalog.limits.idle_timeout + " idle.")),
  el("h2", {}, "Agents"), el("div", { class: "panel tablewrap" }, agents));
}

// ---- game view ----

let game = null; // { id, st, an, auto, view, analyst, thinking }

// showGame opens game id; withAnalysis runs the analysis at once (the
// link #/game/ID/analyze).
async function showGame(id, withAnalysis) {
  setNav("play");
  game = { id, st: null, an: null, auto: true, view: null, analyst: "mcts:sims=2000", thinking: false };
  main.replaceChildren(el("p", { class: "muted" }, "loading game " + id + "..."));
  try {
    game.st = await api("GET", "/api/games/" + encodeURIComponent(id));
  } catch (e) {
    main.replaceChildren(el("p", { class: "err" }, e.message), el("a", { href: "#/" }, "New game"));
    return;
  }
  renderGame();
  if (withAnalysis) analyze();
  else maybeAgent();
}

function renderGame() {
  const st = game.st;
  const g = game;
  const anMap = g.an && g.an.move === st.move ? Object.fromEntries(g.an.rows.map(r => [r.action, r])) : null;
  const humanWaiting = st.legal.length > 0;
  const send = async (player, text) => {
    try {
      g.an = null;
      g.st = await api("POST", `/api/games/${g.id}/move`, { action: text, player });
      renderGame();
      maybeAgent();
    } catch (e) { toast(e.message); }
  };
  const byId = {};
  for (const l of st.legal) for (const a of l.actions) byId[a.id] = [l.player, a.text];
  const left = el("div", {});
  if (st.board) {
    left.append(drawBoard(st, humanWaiting && !g.thinking ? (a => byId[a] && send(byId[a][0], byId[a][1])) : null, anMap));
  } else {
    left.append(el("pre", { class: "text", id: "text" }, st.text));
  }
  const seats = el("p", {}, st.seats.map((s, p) => el("span", {}, el("span", { class: "seat p" + p }, "P" + p), s.spec + "  ")));
  const status = el("p", { class: "status" + (st.terminal ? " over" : ""), id: "status" }, g.thinking ? st.result + " — the agent is thinking..." : st.result);
  // Buttons for the legal moves; on a drawn board only for those that
  // are not a cell (Hex's swap), the board takes the others.
  const onBoard = new Set(st.board ? st.board.actions.flat() : []);
  const moves = el("div", { id: "legal" });
  for (const l of st.legal) {
    const acts = l.actions.filter(a => !onBoard.has(a.id));
    if (st.board && !acts.length) continue;
    moves.append(el("div", {}, el("span", { class: "muted" }, "player " + l.player + ": "),
      acts.map(a => el("button", { class: "move", "data-action": a.id, disabled: g.thinking, onclick: () => send(l.player, a.text) }, a.text))));
  }
  const agentBtn = el("button", { id: "agent-move", disabled: g.thinking || st.terminal || humanWaiting && st.waiting.every(p => st.seats[p].human) }, "Agent move");
  agentBtn.onclick = () => agentMove();
  const auto = el("input", { type: "checkbox", id: "auto", checked: g.auto });
  auto.onchange = () => { g.auto = auto.checked; maybeAgent(); };
  const undo = el("button", { id: "undo", disabled: !st.can_undo || g.thinking }, "Undo");
  undo.onclick = async () => { try { g.an = null; g.st = await api("POST", `/api/games/${g.id}/undo`, {}); renderGame(); } catch (e) { toast(e.message); } };
  const del = el("button", {}, "End game");
  del.onclick = async () => { try { await api("DELETE", "/api/games/" + g.id); } catch (e) { /* gone already */ } location.hash = "#/"; };
  const logLink = el("a", { href: `/api/games/${g.id}/log`, download: "game.json" }, "download log");
  const analyst = el("input", { type: "text", id: "analyst", value: g.analyst });
  analyst.oninput = () => { g.analyst = analyst.value; };
  const anBtn = el("button", { id: "analyze", disabled: st.terminal || g.thinking }, "Analyse");
  anBtn.onclick = () => analyze();
  const viewSel = el("select", { id: "view" }, el("option", { value: "-1" }, "everything"),
    st.seats.map((s, p) => el("option", { value: String(p) }, "player " + p)));
  viewSel.value = String(st.view);
  viewSel.onchange = async () => { g.view = viewSel.value; await refresh(); };
  const right = el("div", { class: "side" },
    el("h1", {}, st.long_name || st.name, el("span", { class: "muted" }, "  " + st.game + ", seed " + st.seed)),
    seats, status,
    st.scores ? el("p", {}, "scores: " + st.scores.map(x => fmt(x, 1)).join(" / ")) : null,
    moves,
    el("p", { class: "controls" }, agentBtn, " ", el("label", { style: "display:inline" }, auto, " agents move by themselves"), " ", undo, " ", del, " ", logLink),
    el("div", { class: "panel" }, el("label", {}, "Analyse with (mcts, az, policy, solver; empty: the seat's agent)"), analyst, " ", anBtn,
      g.an ? analysisTable(g.an) : null),
    st.board ? el("details", {}, el("summary", {}, "text view"), el("pre", { class: "text", id: "text" }, st.text)) : null,
    el("label", {}, "View as"), viewSel,
    el("h2", {}, "Moves"), el("div", { class: "history", id: "history" }, st.history.join(" ")));
  main.replaceChildren(el("div", { class: "row" }, left, right));
}

function analysisTable(an) {
  const total = an.visits;
  return el("div", { id: "analysis" },
    el("p", { class: "muted" }, `${an.agent} for player ${an.player}: ${total} visits in ${fmt(an.seconds, 2)} s`),
    el("div", { class: "tablewrap" }, el("table", {},
      el("tr", {}, ["move", "visits", "share", "Q", "prior", "score"].map(h => el("th", {}, h))),
      an.rows.map(r => el("tr", {}, el("td", { class: "l" }, r.text), el("td", {}, r.visits),
        el("td", {}, total ? fmt(100 * r.visits / total, 1) + "%" : ""), el("td", {}, fmt(r.q)), el("td", {}, fmt(r.prior)), el("td", {}, fmt(r.score)))))));
}

async function refresh() {
  const q = game.view !== null ? "?view=" + encodeURIComponent(game.view) : "";
  try { game.st = await api("GET", `/api/games/${game.id}${q}`); renderGame(); } catch (e) { toast(e.message); }
}

function agentToMove() {
  const st = game.st;
  return !st.terminal && st.waiting.some(p => !st.seats[p].human);
}

function maybeAgent() {
  if (game && game.auto && !game.thinking && agentToMove()) setTimeout(() => { if (game && game.auto && !game.thinking && agentToMove()) agentMove(); }, 250);
}

async function agentMove() {
  const g = game;
  g.thinking = true;
  g.an = null;
  renderGame();
  try {
    g.st = await api("POST", `/api/games/${g.id}/agent`, {});
  } catch (e) {
    toast(e.message);
    g.auto = false;
  }
  g.thinking = false;
  if (game !== g) return;
  renderGame();
  maybeAgent();
}

async function analyze() {
  const g = game;
  g.thinking = true;
  renderGame();
  try {
    g.an = await api("POST", `/api/games/${g.id}/analyze`, { agent: g.analyst.trim() });
  } catch (e) { toast(e.message); }
  g.thinking = false;
  if (game === g) renderGame();
}

// ---- replay ----

async function showReplay(name) {
  setNav("replay");
  game = null;
  main.replaceChildren(el("h1", {}, "Replay a game log"));
  const file = el("input", { type: "file", id: "log-file", accept: ".json,application/json" });
  const err = el("p", { class: "err" });
  const viewer = el("div", { id: "replay" });
  file.onchange = async () => {
    err.textContent = "";
    const f = file.files[0];
    if (!f) return;
    try { showFrames(viewer, await api("POST", "/api/replay", await f.text())); } catch (e) { err.textContent = e.message; }
  };
  const list = el("ul", { id: "logs" });
  main.append(el("div", { class: "panel" }, el("label", {}, "Upload a log written by canopy play --log (or this page's download)"), file, err,
    el("label", {}, "Logs in the server's --logs directory"), list), viewer);
  try {
    const logs = await api("GET", "/api/logs");
    if (!logs.length) list.append(el("li", { class: "muted" }, "none (start the server with --logs DIR)"));
    for (const l of logs) list.append(el("li", {}, el("a", { href: "#/replay/" + encodeURIComponent(l.name) }, l.name)));
  } catch (e) { list.append(el("li", { class: "err" }, e.message)); }
  if (name) {
    try { showFrames(viewer, await api("GET", "/api/logs/" + encodeURIComponent(name))); } catch (e) { err.textContent = e.message; }
  }
}

function showFrames(viewer, rep) {
  let i = 0;
  const n = rep.frames.length;
  const slider = el("input", { type: "range", min: 0, max: n - 1, value: 0, id: "step" });
  const pos = el("span", { class: "muted", id: "frame" });
  const board = el("div", {});
  const move = el("p", { class: "status" });
  const draw = () => {
    const f = rep.frames[i];
    slider.value = i;
    pos.textContent = ` position ${i} of ${n - 1} `;
    move.textContent = (i > 0 ? rep.moves[i - 1] + " — " : "start — ") + f.result;
    board.replaceChildren(f.board ? drawBoard(f, null, null) : el("pre", { class: "text" }, f.text));
    if (f.board) board.append(el("details", {}, el("summary", {}, "text view"), el("pre", { class: "text" }, f.text)));
  };
  const go = k => { i = Math.max(0, Math.min(n - 1, k)); draw(); };
  slider.oninput = () => go(parseInt(slider.value, 10));
  const btn = (label, id, f) => el("button", { id, onclick: f }, label);
  let timer = null;
  const play = btn("▶ play", "play", () => {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "▶ play"; return; }
    play.textContent = "❚❚ pause";
    timer = setInterval(() => { if (i >= n - 1) { clearInterval(timer); timer = null; play.textContent = "▶ play"; } else go(i + 1); }, 700);
  });
  viewer.replaceChildren(el("div", { class: "panel" },
    el("h2", {}, rep.game, el("span", { class: "muted" }, "  " + rep.players.join(" vs ") + (rep.seed ? ", seed " + rep.seed : ""))),
    el("p", { class: "controls" }, btn("⏮", "first", () => go(0)), btn("◀", "prev", () => go(i - 1)), btn("▶", "next", () => go(i + 1)), btn("⏭", "last", () => go(n - 1)), " ", play, pos),
    slider, move, board));
  draw();
}

// ---- runs ----

async function showRuns() {
  setNav("runs");
  game = null;
  main.replaceChildren(el("h1", {}, "Runs"));
  let runs;
  try { runs = await api("GET", "/api/runs"); } catch (e) { main.append(el("p", { class: "err" }, e.message)); return; }
  if (!runs.length) main.append(el("p", { class: "muted" }, "No run directories: start the server with --run DIR (repeatable), e.g. canopy serve --run runs/zero-demo."));
  for (const r of runs) {
    const box = el("div", { class: "panel run", "data-run": r.name }, el("h2", {}, r.name, el("span", { class: "muted" }, "  " + r.path)));
    main.append(box);
    const plots = el("div", { class: "plots" }, r.plots.map(p => el("img", { src: `/runs/${encodeURIComponent(r.name)}/plots/${encodeURIComponent(p)}`, alt: p, title: p })));
    if (!r.plots.length) plots.append(el("p", { class: "muted" }, "no plots/*.svg yet"));
    box.append(plots);
    try {
      const m = await api("GET", `/api/runs/${encodeURIComponent(r.name)}/metrics`);
      if (!m.rows.length) { box.append(el("p", { class: "muted" }, "no metrics.jsonl records yet")); continue; }
      const cols = pickColumns(m.columns);
      box.append(el("p", { class: "muted" }, `metrics.jsonl: ${m.rows.length} record(s), ${m.columns.length} fields; showing ${cols.length}`),
        el("div", { class: "tablewrap" }, el("table", { class: "metrics" },
          el("tr", {}, cols.map(c => el("th", {}, m.columns[c]))),
          m.rows.map(row => el("tr", {}, cols.map(c => el("td", {}, fmt(row[c])))))))) ;
    } catch (e) { box.append(el("p", { class: "err" }, e.message)); }
  }
}

// pickColumns keeps the columns worth a table: numbers and short labels,
// without timestamps; at most 40.
function pickColumns(columns) {
  const out = [];
  columns.forEach((c, i) => { if (!/started|finished|^seconds$/.test(c)) out.push(i); });
  return out.slice(0, 40);
}

// ---- router ----

function route() {
  const h = location.hash || "#/";
  let m;
  if ((m = h.match(/^#\/game\/([0-9a-f]+)(\/analyze)?$/))) return showGame(m[1], !!m[2]);
  if ((m = h.match(/^#\/replay(?:\/(.+))?$/))) return showReplay(m[1] ? decodeURIComponent(m[1]) : null);
  if (h === "#/runs") return showRuns();
  game = null;
  return showHome();
}

window.addEventListener("hashchange", route);
route();
