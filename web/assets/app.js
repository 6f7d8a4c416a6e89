// Canopy web UI: plain JavaScript and SVG, served by `canopy serve`.
// Routes (location.hash): #/ play form, #/game/ID a game (#/game/ID/analyze:
// with the analysis shown), #/replay and
// #/replay/NAME replays, #/runs the run dashboards (watched live).
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

// streams holds the AbortControllers of the event streams the page has
// open; a new view closes them (the server stops a live search when its
// client goes away).
const streams = new Set();

function closeStreams() {
  for (const c of streams) c.abort();
  streams.clear();
}

// openStream reads the server-sent events of GET path: onEvent(name, data)
// for each, onEnd(error or null) once at the end. It reads with fetch, not
// EventSource, so that an error answer's message can be shown and nothing
// reconnects by itself. It returns the stream's AbortController.
function openStream(path, onEvent, onEnd) {
  const ctl = new AbortController();
  streams.add(ctl);
  (async () => {
    let err = null;
    try {
      const r = await fetch(path, { signal: ctl.signal });
      if (!r.ok) {
        let d = null;
        try { d = await r.json(); } catch (e) { /* not JSON */ }
        throw new Error((d && d.error) || (r.status + " " + r.statusText));
      }
      const rd = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await rd.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let name = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (data) onEvent(name, JSON.parse(data));
        }
      }
    } catch (e) {
      if (e.name !== "AbortError") err = e;
    }
    streams.delete(ctl);
    if (onEnd) onEnd(err);
  })();
  return ctl;
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

// drawBoard returns an SVG element for st.board (a games.Board): each kind
// with a drawing of its own, any other as a plain grid (drawGrid).
// onCell(actionId) is called on clicks of legal cells; an (analysis rows by
// action id, or null) is overlaid.
function drawBoard(st, onCell, an) {
  const b = st.board;
  const legal = new Set();
  for (const l of st.legal) for (const a of l.actions) legal.add(a.id);
  const maxVisits = an ? Math.max(1, ...Object.values(an).map(r => r.visits)) : 1;
  // Without visits (the solver, the policy agent) the best move is the
  // highest Q, else the highest prior.
  const key = r => (maxVisits > 1 || Object.values(an).some(x => x.visits) ? r.visits : r.q !== null && r.q !== undefined ? r.q : r.prior);
  const best = an ? Object.values(an).reduce((x, y) => (x === null || key(y) > key(x) ? y : x), null) : null;
  if (b.kind === "connect4") return withHint(drawConnect4(b, st, legal, onCell, an, maxVisits, best), onCell,
    "Click a column to drop a stone; four in a row (across, up or diagonal) wins.");
  if (b.kind === "tictactoe") return drawTicTacToe(b, st, legal, onCell, an, maxVisits, best);
  if (b.kind === "hex") return withHint(drawHex(b, st, legal, onCell, an, maxVisits, best), onCell,
    "Click an empty cell to place a stone. Black (player 0) joins the top and bottom edges, White (player 1) the left and right" +
    (st.legal.some(l => l.actions.some(a => a.text === "swap")) ? "; swap takes Black's first stone as White's." : "."));
  // The boards below come with notes and per-player panels.
  let pic = null;
  if (b.kind === "connect4d") pic = drawConnect4d(b, st, legal, onCell, an, maxVisits, best);
  else if (b.kind === "strands") pic = drawStrands(b, st, legal, onCell, an, maxVisits, best);
  else if (b.kind === "tetrislink") pic = drawTetrisLink(b, st, onCell);
  else if (b.kind === "sequence") pic = drawSequence(b, st, legal, onCell, an, maxVisits, best);
  else if (b.kind !== "sushigo" && b.rows > 0 && b.cols > 0) pic = drawGrid(b, st, legal, onCell, an, maxVisits, best);
  return el("div", { class: "boardwrap" + (b.kind === "sushigo" ? " board board-sushigo" : ""), id: b.kind === "sushigo" ? "board" : null },
    pic, b.notes ? el("div", { class: "notes" }, b.notes.map(n => el("div", { class: "muted" }, n))) : null,
    b.players ? drawPlayers(b, st, onCell) : null);
}

function stone(p) { return PLAYER_COLORS[p] || "#888"; }

// PIECE_COLORS are the colours of each game's pieces by board kind (the
// seat badges wear them); other games use PLAYER_COLORS.
const PIECE_COLORS = {
  connect4: ["#d23c3c", "#e8b400"], connect4d: ["#d23c3c", "#e8b400"], tictactoe: ["#d23c3c", "#2b6cb0"],
  hex: ["#1c1c1c", "#fbfbfb"], strands: ["#1c1c1c", "#fbfbfb"],
};

// seatBadge is player p's badge ("P0") in the colour of p's pieces in a
// game drawn as board kind (null: the default colours).
function seatBadge(kind, p, text) {
  const col = (PIECE_COLORS[kind] || PLAYER_COLORS)[p] || "#888";
  const light = /^#(f|e)/i.test(col);
  return el("span", { class: "seat p" + p, style: `background:${col};color:${light ? "#222" : "#fff"};border:1px solid ${light ? "#888" : col}`,
    title: "player " + p }, text === undefined ? "P" + p : text);
}

// markLine rings the cells of b.line (the line that won) on board g;
// at(r, c) is a cell's centre, rad the ring's radius.
function markLine(g, b, at, rad) {
  for (const [r, c] of b.line || []) {
    const [x, y] = at(r, c);
    g.append(svg("circle", { cx: x, cy: y, r: rad, fill: "none", stroke: "#16a34a", "stroke-width": Math.max(3, rad * 0.22), class: "winline", "pointer-events": "none" }));
  }
}

// withHint puts a line of help above a board the person can play on.
function withHint(pic, onCell, text) {
  // As wide as the board, so that the page's columns stay as they were.
  return onCell ? el("div", { class: "boardwrap" }, el("p", { class: "muted hint", style: `max-width:${pic.getAttribute("width")}px` }, text), pic) : pic;
}

function anLabel(row) {
  return (row.visits ? row.visits + " visits, " : "") + (row.q !== null && row.q !== undefined ? "Q " + fmt(row.q) + ", " : "") +
    "prior " + fmt(row.prior) + (row.score ? ", score " + fmt(row.score) : "");
}

// anTexts are the two lines an overlay writes on a move: visits and Q of
// a search; Q (a win, draw or loss for the solver) and score without
// visits; the prior when there is nothing else (the policy agent).
function anTexts(row) {
  const hasQ = row.q !== null && row.q !== undefined;
  if (row.visits) return [String(row.visits), hasQ ? "Q " + fmt(row.q, 2) : ""];
  if (hasQ) return [(row.q > 0 ? "+" : "") + fmt(row.q, 2), row.score ? "score " + fmt(row.score, 0) : ""];
  return [fmt(100 * row.prior, 0) + "%", "prior"];
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
      hl.setAttribute("fill-opacity", (0.08 + 0.5 * (maxVisits > 1 ? row.visits / maxVisits : (best && row.q === best.q && row.prior === best.prior ? 1 : 0))).toFixed(3));
      const [main, sub] = anTexts(row);
      const t = svg("text", { x: x + S / 2, y: 16, "text-anchor": "middle", "font-size": 13, "font-weight": best === row ? 700 : 400, class: "an" }, main);
      const q = svg("text", { x: x + S / 2, y: 32, "text-anchor": "middle", "font-size": 11, fill: "#555", class: "an" }, sub);
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
  markLine(g, b, (r, c) => [8 + c * S + S / 2, top + r * S + S / 2], S * 0.4);
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

// drawGrid draws a board of a kind this page has no drawing of its own
// for (a new game's games.Board): a square grid, each cell's owner as a
// stone in the player's colour, its label, a ring on marked cells, the
// winning line; a click on a cell plays its action when it is legal.
function drawGrid(b, st, legal, onCell, an, maxVisits, best) {
  const S = Math.max(24, Math.min(60, Math.floor(540 / Math.max(b.rows, b.cols)))), W = b.cols * S + 16, H = b.rows * S + 16;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-grid", id: "board" });
  g.append(svg("rect", { x: 0, y: 0, width: W, height: H, fill: "#f4efe6" }));
  for (let r = 0; r < b.rows; r++) {
    for (let c = 0; c < b.cols; c++) {
      const a = b.actions[r][c], v = b.cells[r][c], x = 8 + c * S, y = 8 + r * S;
      const ok = a >= 0 && legal.has(a) && onCell;
      const cell = svg("g", { class: "cell" + (ok ? "" : " illegal"), "data-action": a, "data-row": r, "data-col": c });
      const bg = svg("rect", { x: x + 1, y: y + 1, width: S - 2, height: S - 2, fill: "#fff", stroke: "#bbb" });
      cell.append(bg);
      const mark = b.marks ? b.marks[r][c] : 0;
      if (mark) cell.append(svg("rect", { x: x + 3, y: y + 3, width: S - 6, height: S - 6, fill: "none", stroke: mark === 2 ? "#333" : "#16a34a", "stroke-width": 2 }));
      if (v >= 0) cell.append(svg("circle", { cx: x + S / 2, cy: y + S / 2, r: S * 0.36, fill: stone(v), stroke: "#333", "stroke-width": 1, class: "stone p" + v }));
      const label = b.labels ? b.labels[r][c] : "";
      if (label) cell.append(svg("text", { x: x + S / 2, y: y + S / 2 + S * 0.12, "text-anchor": "middle", "font-size": Math.round(S * 0.32), fill: v >= 0 ? "#fff" : "#555", "pointer-events": "none" }, label));
      if (an && an[a]) overlayCell(cell, bg, an[a], x + S / 2, y + S / 2, maxVisits, best, Math.max(10, S * 0.25));
      if (ok) cell.onclick = () => onCell(a);
      g.append(cell);
    }
  }
  markLine(g, b, (r, c) => [8 + c * S + S / 2, 8 + r * S + S / 2], S * 0.42);
  return g;
}

// overlayCell shades a cell's background by its share of the visits and
// writes the visits and Q in it.
function overlayCell(cell, bg, row, cx, cy, maxVisits, best, size) {
  bg.setAttribute("fill", "#22c55e");
  bg.setAttribute("fill-opacity", (0.1 + 0.55 * (maxVisits > 1 ? row.visits / maxVisits : (best && row.q === best.q && row.prior === best.prior ? 1 : 0))).toFixed(3));
  const [main, sub] = anTexts(row);
  cell.append(svg("text", { x: cx, y: cy - 1, "text-anchor": "middle", "font-size": size, "font-weight": best === row ? 700 : 400, class: "an" }, main));
  cell.append(svg("text", { x: cx, y: cy + size * 0.95, "text-anchor": "middle", "font-size": size * 0.7, fill: "#333", class: "an" }, sub.replace(/^Q /, "")));
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
  markLine(g, b, center, R * 0.75);
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

// drawConnect4d draws Connect4d's d boards side by side; only the board to
// play in (b.active) takes clicks, on its columns (action board*7+column).
function drawConnect4d(b, st, legal, onCell, an, maxVisits, best) {
  const d = b.boards, C = b.cols / d, S = Math.max(20, Math.min(48, Math.floor(840 / b.cols))), gap = 14;
  const top = 22 + (an ? 30 : 0), bw = C * S + 8;
  const W = d * bw + (d - 1) * gap + 8, H = top + b.rows * S + 16;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-connect4d", id: "board" });
  for (let k = 0; k < d; k++) {
    const bx = 4 + k * (bw + gap), active = k === b.active;
    g.append(svg("text", { x: bx + bw / 2, y: 14, "text-anchor": "middle", "font-size": 12, "font-weight": active ? 700 : 400, fill: active ? "#1f4fa8" : "#666" }, "board " + k + (active ? " — to play" : "")));
    g.append(svg("rect", { x: bx, y: top - 4, width: bw, height: b.rows * S + 8, rx: 8, fill: active ? "#1f4fa8" : "#5a73a6", stroke: active ? "#e8b400" : "none", "stroke-width": 3 }));
    for (let c = 0; c < C; c++) {
      const gc = k * C + c, a = b.actions[0][gc], x = bx + 4 + c * S;
      const ok = legal.has(a) && onCell;
      const col = svg("g", { class: "cell col" + (ok ? "" : " illegal"), "data-action": a });
      const hl = svg("rect", { x, y: top - 4, width: S, height: b.rows * S + 8, fill: "#fff", "fill-opacity": 0 });
      col.append(hl);
      if (an && an[a]) {
        const row = an[a];
        hl.setAttribute("fill", "#4ade80");
        hl.setAttribute("fill-opacity", (0.08 + 0.5 * row.visits / maxVisits).toFixed(3));
        g.append(svg("text", { x: x + S / 2, y: top - 10, "text-anchor": "middle", "font-size": 11, "font-weight": best === row ? 700 : 400, class: "an" }, anTexts(row)[0]));
        col.append(svg("title", {}, "board " + k + " column " + String.fromCharCode(97 + c) + ": " + anLabel(row)));
      }
      for (let r = 0; r < b.rows; r++) {
        const v = b.cells[r][gc];
        col.append(svg("circle", { cx: x + S / 2, cy: top + r * S + S / 2, r: S * 0.4, fill: v < 0 ? "#f4f6fb" : stone(v), stroke: "#173c80", "stroke-width": 1.5 }));
      }
      if (st.last === a) {
        for (let r = 0; r < b.rows; r++) {
          if (b.cells[r][gc] >= 0) { col.append(svg("circle", { cx: x + S / 2, cy: top + r * S + S / 2, r: S * 0.1, fill: "#fff", "fill-opacity": 0.85 })); break; }
        }
      }
      g.append(svg("text", { x: x + S / 2, y: H - 3, "text-anchor": "middle", "font-size": 10, fill: "#888" }, String.fromCharCode(97 + c)));
      if (ok) {
        col.onclick = () => onCell(a);
        col.addEventListener("mouseenter", () => { if (!an) hl.setAttribute("fill-opacity", 0.22); });
        col.addEventListener("mouseleave", () => { if (!an) hl.setAttribute("fill-opacity", 0); });
      }
      g.append(col);
    }
  }
  markLine(g, b, (r, gc) => { const k = Math.floor(gc / C), c = gc % C; return [4 + k * (bw + gap) + 4 + c * S + S / 2, top + r * S + S / 2]; }, S * 0.42);
  return g;
}

// STRANDS_COLORS are the fills of free cells by printed number 1..6.
const STRANDS_COLORS = ["#eee", "#fde2e2", "#fef3c7", "#d9f99d", "#bfdbfe", "#ddd6fe", "#fbcfe8"];

// drawStrands draws the hexagon of side b.rows/2+1 inside its W x W array
// (cell (x, y) sits half a cell right per row, as Hex), numbers on free
// cells; the cells the mover may take have a dark outline.
function drawStrands(b, st, legal, onCell, an, maxVisits, best) {
  const n = b.rows, side = (n + 1) / 2, R = side <= 4 ? 26 : side <= 5 ? 23 : 20, w = Math.sqrt(3) * R;
  const x0 = 34 + w / 2, y0 = 30 + R;
  const W = x0 + (n - 1) * w + w / 2 + 24, H = y0 + (n - 1) * 1.5 * R + R + 26;
  const g = svg("svg", { viewBox: `0 0 ${W.toFixed(0)} ${H.toFixed(0)}`, width: W.toFixed(0), height: H.toFixed(0), class: "board board-strands", id: "board" });
  const center = (r, c) => [x0 + (c + r / 2 - (side - 1) / 2) * w, y0 + r * 1.5 * R];
  const hexPath = (cx, cy, rad) => { let d = ""; for (let k = 0; k < 6; k++) { const t = Math.PI / 180 * (60 * k - 30); d += (k ? "L" : "M") + (cx + rad * Math.cos(t)).toFixed(1) + " " + (cy + rad * Math.sin(t)).toFixed(1); } return d + "Z"; };
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const a = b.actions[r][c];
      if (a < 0) continue;
      const v = b.cells[r][c], lab = b.labels[r][c], [cx, cy] = center(r, c);
      const ok = legal.has(a) && onCell;
      const cell = svg("g", { class: "cell" + (ok ? "" : " illegal"), "data-action": a });
      const bg = svg("path", { d: hexPath(cx, cy, R - 1), fill: STRANDS_COLORS[+lab] || "#eee", stroke: ok ? "#333" : "#999", "stroke-width": ok ? 2.2 : 1 });
      cell.append(bg);
      if (v >= 0) cell.append(svg("circle", { cx, cy, r: R * 0.66, fill: v === 0 ? "#1c1c1c" : "#fbfbfb", stroke: "#555", "stroke-width": 1.5 }));
      if (!(an && an[a])) cell.append(svg("text", { x: cx, y: cy + R * 0.2, "text-anchor": "middle", "font-size": R * (v >= 0 ? 0.45 : 0.6), fill: v === 0 ? "#bbb" : v === 1 ? "#999" : "#444", "pointer-events": "none" }, lab));
      if (st.last === a && v >= 0) cell.append(svg("circle", { cx, cy: cy - R * 0.38, r: R * 0.1, fill: v === 0 ? "#fff" : "#222" }));
      if (an && an[a]) overlayCell(cell, bg, an[a], cx, cy, maxVisits, best, R * 0.5);
      if (ok) cell.onclick = () => onCell(a);
      cell.append(svg("title", {}, String.fromCharCode(97 + c) + (r + 1) + ": number " + lab));
      g.append(cell);
    }
  }
  // Coordinates as the moves name them: the row's number left of its
  // first cell, the column's letter above its first cell.
  for (let r = 0; r < n; r++) {
    const c = b.actions[r].findIndex(a => a >= 0);
    if (c < 0) continue;
    const [cx, cy] = center(r, c);
    g.append(svg("text", { x: cx - w / 2 - 4, y: cy + 4, "text-anchor": "end", "font-size": 11, fill: "#666", class: "coord" }, String(r + 1)));
  }
  // A column runs down and to the right: its letter stands on the
  // line of the column, above its top cell when that is on the top edge,
  // below its bottom cell when that is on the bottom edge.
  for (let c = 0; c < n; c++) {
    const rows = b.actions.map((row, r) => (row[c] >= 0 ? r : -1)).filter(r => r >= 0);
    if (!rows.length) continue;
    const letter = String.fromCharCode(97 + c);
    if (rows[0] === 0) {
      const [cx, cy] = center(0, c);
      g.append(svg("text", { x: cx - w / 4, y: cy - R - 3, "text-anchor": "middle", "font-size": 11, fill: "#666", class: "coord" }, letter));
    }
    if (rows[rows.length - 1] === n - 1) {
      const [cx, cy] = center(n - 1, c);
      g.append(svg("text", { x: cx + w / 4, y: cy + R + 12, "text-anchor": "middle", "font-size": 11, fill: "#666", class: "coord" }, letter));
    }
  }
  return g;
}

// drawTetrisLink draws the 20 x 10 well. With placements on offer
// (b.drops), a picker chooses the piece orientation and the board shows
// where it lands under the mouse; a click drops it.
function drawTetrisLink(b, st, onCell) {
  const S = 22, top = 6, left = 26, W = left + b.cols * S + 10, H = top + b.rows * S + 22;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-tetrislink", id: "board" });
  g.append(svg("rect", { x: left - 3, y: top - 3, width: b.cols * S + 6, height: b.rows * S + 6, fill: "#23272e", rx: 4 }));
  const lastCells = new Set();
  for (let r = 0; r < b.rows; r++) {
    g.append(svg("text", { x: left - 6, y: top + r * S + S * 0.7, "text-anchor": "end", "font-size": 9, fill: "#999" }, String(b.rows - r)));
    for (let c = 0; c < b.cols; c++) {
      const v = b.cells[r][c];
      g.append(svg("rect", { x: left + c * S + 1, y: top + r * S + 1, width: S - 2, height: S - 2, rx: 2, fill: v < 0 ? "#2f343c" : stone(v), stroke: v < 0 ? "none" : "#0006", "stroke-width": 1 }));
    }
  }
  for (let c = 0; c < b.cols; c++) g.append(svg("text", { x: left + c * S + S / 2, y: H - 6, "text-anchor": "middle", "font-size": 10, fill: "#666" }, String(c + 1)));
  const drops = (b.drops || []);
  if (!drops.length || !onCell) return g;
  const orients = [...new Set(drops.map(d => d.orient))];
  if (!game.tlOrient || !orients.includes(game.tlOrient)) game.tlOrient = orients[0];
  const ghost = svg("g", { "pointer-events": "none" });
  g.append(ghost);
  const pickFor = x => {
    const ds = drops.filter(d => d.orient === game.tlOrient);
    if (!ds.length) return null;
    const wd = Math.max(...ds[0].cells.map(p => p[1])) - ds[0].col + 1;
    const want = x - Math.floor((wd - 1) / 2);
    return ds.reduce((u, v) => (Math.abs(v.col - want) < Math.abs(u.col - want) ? v : u));
  };
  const show = d => {
    ghost.replaceChildren();
    if (!d) return;
    for (const [r, c] of d.cells) ghost.append(svg("rect", { x: left + c * S + 1, y: top + r * S + 1, width: S - 2, height: S - 2, rx: 2, fill: stone(d.player), "fill-opacity": 0.45, stroke: "#fff", "stroke-width": 1.5 }));
  };
  for (let c = 0; c < b.cols; c++) {
    const col = svg("rect", { x: left + c * S, y: top, width: S, height: b.rows * S, fill: "#fff", "fill-opacity": 0, class: "cell col", "data-col": c });
    col.addEventListener("mouseenter", () => show(pickFor(c)));
    col.onclick = () => { const d = pickFor(c); if (d) onCell(d.id, d.player); };
    g.append(col);
  }
  g.addEventListener("mouseleave", () => show(null));
  // The picker: one small drawing per orientation on offer.
  const picker = el("div", { class: "picker", id: "piece-picker" });
  for (const o of orients) {
    const d = drops.find(x => x.orient === o);
    const r0 = Math.min(...d.cells.map(p => p[0])), c0 = Math.min(...d.cells.map(p => p[1]));
    const ps = 9, pic = svg("svg", { width: 4 * ps + 4, height: 4 * ps + 4 });
    for (const [r, c] of d.cells) pic.append(svg("rect", { x: 2 + (c - c0) * ps, y: 2 + (r - r0) * ps, width: ps - 1, height: ps - 1, fill: stone(d.player) }));
    const btn = el("button", { class: "orient" + (o === game.tlOrient ? " selected" : ""), "data-orient": o, title: o }, pic, el("div", {}, o));
    btn.onclick = () => { game.tlOrient = o; renderGame(); };
    picker.append(btn);
  }
  show(pickFor(Math.floor(b.cols / 2)));
  return el("div", {}, el("p", { class: "muted" }, "Pick a piece, then click a column to drop it (the outline shows where it lands)."), picker, g);
}

const SUITS = { S: ["♠", "#222"], H: ["♥", "#c81e1e"], D: ["♦", "#c81e1e"], C: ["♣", "#222"] };

// cardFace splits "10H" into ["10♥", colour].
function cardFace(t) {
  const s = SUITS[t.slice(-1)];
  return s ? [t.slice(0, -1) + s[0], s[1]] : [t, "#222"];
}

// drawSequence draws the 10 x 10 card board with chips; squares of the
// shown hand's cards are tinted; squares a card of the hand can take now
// are clickable (jacks, dead cards and pass are buttons).
function drawSequence(b, st, legal, onCell, an, maxVisits, best) {
  const S = 54, left = 22, top = 6, W = left + 10 * S + 8, H = top + 10 * S + 22;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "board board-sequence", id: "board" });
  g.append(svg("rect", { x: left - 4, y: top - 4, width: 10 * S + 8, height: 10 * S + 8, rx: 6, fill: "#1f5f3f" }));
  for (let r = 0; r < 10; r++) {
    g.append(svg("text", { x: left - 8, y: top + r * S + S / 2 + 4, "text-anchor": "end", "font-size": 10, fill: "#666" }, String(10 - r)));
    for (let c = 0; c < 10; c++) {
      const a = b.actions[r][c], v = b.cells[r][c], mark = b.marks[r][c], face = b.labels[r][c], x = left + c * S, y = top + r * S;
      const ok = a >= 0 && legal.has(a) && onCell;
      const cell = svg("g", { class: "cell" + (ok ? "" : " illegal") + (mark === 1 ? " mine" : ""), "data-action": a >= 0 ? a : null });
      const bg = svg("rect", { x: x + 2, y: y + 2, width: S - 4, height: S - 4, rx: 4, fill: mark === 1 ? "#fde68a" : "#fffdf6", stroke: ok ? "#b45309" : "#c9c3b0", "stroke-width": ok ? 2.5 : 1 });
      cell.append(bg);
      if (face === "*") {
        cell.append(svg("text", { x: x + S / 2, y: y + S / 2 + 8, "text-anchor": "middle", "font-size": 24, fill: "#b7950b" }, "★"));
      } else {
        const [txt, col] = cardFace(face);
        cell.append(svg("text", { x: x + S / 2, y: y + (v >= 0 ? 14 : S / 2 + 6), "text-anchor": "middle", "font-size": v >= 0 ? 11 : 16, "font-weight": 600, fill: col }, txt));
      }
      if (v >= 0) {
        cell.append(svg("circle", { cx: x + S / 2, cy: y + S / 2 + 6, r: S * 0.27, fill: stone(v), stroke: mark === 2 ? "#111" : "#fff", "stroke-width": mark === 2 ? 4 : 2 }));
        if (mark === 2) cell.append(svg("circle", { cx: x + S / 2, cy: y + S / 2 + 6, r: S * 0.08, fill: "#111" }));
      }

      if (a >= 0 && an && an[a]) overlayCell(cell, bg, an[a], x + S / 2, y + S / 2, maxVisits, best, 13);
      if (ok) cell.onclick = () => onCell(a);
      cell.append(svg("title", {}, String.fromCharCode(97 + c) + (10 - r) + (face === "*" ? " corner" : " " + face)));
      g.append(cell);
    }
  }
  for (let c = 0; c < 10; c++) g.append(svg("text", { x: left + c * S + S / 2, y: H - 6, "text-anchor": "middle", "font-size": 10, fill: "#666" }, String.fromCharCode(97 + c)));
  markLine(g, b, (r, c) => [left + c * S + S / 2, top + r * S + S / 2 + 6], S * 0.36);
  return g;
}

// SUSHI_COLORS are the card chips' colours by card name.
const SUSHI_COLORS = { tempura: "#c7b8f5", sashimi: "#b7e4a8", dumpling: "#b9dcf7", maki1: "#f7b3b3", maki2: "#f39a9a", maki3: "#ec7f7f",
  wasabi: "#a7d48d", egg: "#fff0a6", salmon: "#ffc69a", squid: "#ffe08a", pudding: "#f3c8e0", chopsticks: "#cfe7ef" };

function cardChip(name, attrs) {
  const base = name.startsWith("wasabi+") ? name.slice(7) : name;
  const face = /^[0-9JQKA]/.test(name) && name.length <= 3 ? cardFace(name) : null;
  return el(attrs && attrs.onclick ? "button" : "span", Object.assign({ class: "card", style: face ? "color:" + face[1] : "background:" + (SUSHI_COLORS[base] || "#eee") + (base !== name ? ";box-shadow:inset 0 -5px 0 #6aa84f" : "") }, attrs || {}),
    face ? face[0] : name);
}

// drawPlayers shows one line per player: pieces left (Tetris Link), its
// tableau and puddings (Sushi Go), its hand or hand size. Sushi Go hand
// cards the player may pick alone are buttons.
function drawPlayers(b, st, onCell) {
  const legalOf = {};
  for (const l of st.legal) legalOf[l.player] = new Set(l.actions.map(a => a.id));
  const box = el("div", { class: "players", id: "players" });
  for (const p of b.players) {
    const score = st.scores ? " score " + fmt(st.scores[p.player], 0) : "";
    const row = el("div", { class: "player", "data-player": p.player }, seatBadge(b.kind, p.player), el("span", { class: "muted" }, score + (p.note ? " · " + p.note : "")));
    if (p.pieces) row.append(el("div", {}, el("span", { class: "muted" }, "pieces left: "), p.pieces.map((n, k) => el("span", { class: "piece" + (n ? "" : " none") }, b.piece_names[k] + "×" + n))));
    if (p.table) row.append(el("div", { class: "tableau" }, el("span", { class: "muted" }, "table" + (p.puddings ? " (" + p.puddings + " pudding)" : "") + ": "), p.table.length ? p.table.map(c => cardChip(c)) : el("span", { class: "muted" }, "—")));
    if (!p.pieces) {
      const hand = el("div", { class: "hand" + (p.hidden ? " hidden" : "") }, el("span", { class: "muted" }, "hand: "));
      if (p.hidden) hand.append(el("span", { class: "muted" }, p.hand_count + " cards, hidden"));
      else if (!p.hand || !p.hand.length) hand.append(el("span", { class: "muted" }, "empty"));
      else p.hand.forEach((c, i) => {
        const a = p.hand_actions ? p.hand_actions[i] : -1;
        const ok = onCell && a >= 0 && legalOf[p.player] && legalOf[p.player].has(a);
        hand.append(cardChip(c, ok ? { onclick: () => onCell(a, p.player), "data-action": a, title: "play " + c } : undefined));
      });
      row.append(hand);
    }
    box.append(row);
  }
  return box;
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
  game = { id, st: null, an: null, auto: true, view: null, analyst: "mcts:sims=2000", thinking: false, live: false, analysis: null };
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
  // Hidden cards with several people at one screen: the server shows the
  // seat to move; hand the screen over before showing another seat's cards.
  if (st.private && st.seats.filter(s => s.human).length > 1 && g.shown !== st.view) {
    const ok = el("button", { id: "handover-ok" }, "I am player " + st.view + ": show my cards");
    ok.onclick = () => { g.shown = st.view; renderGame(); };
    main.replaceChildren(el("div", { class: "panel", id: "handover" },
      el("h1", {}, "Hand the screen to player " + st.view),
      el("p", { class: "muted" }, "The next screen shows player " + st.view + "'s cards: the other players look away."), ok));
    return;
  }
  const anMap = g.an && g.an.move === st.move ? Object.fromEntries(g.an.rows.map(r => [r.action, r])) : null;
  const humanWaiting = st.legal.length > 0;
  const send = async (player, text) => {
    try {
      stopAnalysis();
      g.an = null;
      g.st = await api("POST", `/api/games/${g.id}/move`, { action: text, player });
      renderGame();
      maybeAgent();
    } catch (e) { toast(e.message); }
  };
  const byId = {};
  for (const l of st.legal) for (const a of l.actions) byId[l.player + ":" + a.id] = byId[a.id] = [l.player, a.text];
  const left = el("div", { id: "boardbox" });
  if (st.board) {
    // onCell(action, player): player only where several players choose at once.
    const onCell = (a, p) => { const m = byId[p === undefined ? a : p + ":" + a]; if (m) send(m[0], m[1]); };
    left.append(drawBoard(st, humanWaiting && !g.thinking ? onCell : null, anMap));
  } else {
    left.append(el("pre", { class: "text", id: "text" }, st.text));
  }
  const kind = st.board ? st.board.kind : null;
  const seats = el("p", { id: "seats" }, st.seats.map((s, p) => el("span", {}, seatBadge(kind, p), s.spec + "  ")));
  const status = el("p", { class: "status" + (st.terminal ? " over" : ""), id: "status" }, g.thinking ? st.result + (g.live ? " — analysing..." : " — the agent is thinking...") : st.result);
  // Buttons for the legal moves; on a drawn board only for those that
  // are not a cell (Hex's swap), the board takes the others.
  // Some boards (Sequence, Sushi Go) keep every move as a button; Tetris
  // Link's placements go to its piece picker, their buttons folded away.
  const onBoard = new Set(st.board && !st.board.buttons ? st.board.actions.flat() : []);
  const dropIds = new Set(st.board && st.board.drops ? st.board.drops.map(d => d.id) : []);
  const moves = el("div", { id: "legal" });
  for (const l of st.legal) {
    const acts = l.actions.filter(a => !onBoard.has(a.id));
    if (st.board && !acts.length) continue;
    const btns = acts.map(a => el("button", { class: "move", "data-action": a.id, disabled: g.thinking, onclick: () => send(l.player, a.text) }, a.text));
    if (dropIds.size && acts.every(a => dropIds.has(a.id))) {
      moves.append(el("details", {}, el("summary", { class: "muted" }, "player " + l.player + ": " + acts.length + " placements as buttons"), btns));
      continue;
    }
    moves.append(el("div", {}, el("span", { class: "muted" }, "player " + l.player + ": "), btns));
  }
  const agentBtn = el("button", { id: "agent-move", disabled: g.thinking || st.terminal || humanWaiting && st.waiting.every(p => st.seats[p].human) }, "Agent move");
  agentBtn.onclick = () => agentMove();
  const auto = el("input", { type: "checkbox", id: "auto", checked: g.auto });
  auto.onchange = () => { g.auto = auto.checked; maybeAgent(); };
  const undo = el("button", { id: "undo", disabled: !st.can_undo || g.thinking }, "Undo");
  undo.onclick = async () => { try { g.an = null; g.st = await api("POST", `/api/games/${g.id}/undo`, {}); renderGame(); } catch (e) { toast(e.message); } };
  const del = el("button", {}, "End game");
  del.onclick = async () => { try { await api("DELETE", "/api/games/" + g.id); } catch (e) { /* gone already */ } location.hash = "#/"; };
  const logLink = st.log_ready === false ? el("span", { class: "muted", id: "log-later" }, "log when the game is over")
    : el("a", { href: `/api/games/${g.id}/log`, download: "game.json" }, "download log");
  const analyst = el("input", { type: "text", id: "analyst", value: g.analyst });
  analyst.oninput = () => { g.analyst = analyst.value; };
  const anBtn = g.live ? el("button", { id: "stop-analysis" }, "Stop") : el("button", { id: "analyze", disabled: st.terminal || g.thinking }, "Analyse");
  anBtn.onclick = () => (g.live ? stopAnalysis() : analyze());
  const viewSel = el("select", { id: "view" }, (st.views || [-1, ...st.seats.keys()]).map(v =>
    el("option", { value: String(v) }, v < 0 ? "everything" : "player " + v)));
  viewSel.value = String(st.view);
  viewSel.onchange = async () => { g.view = viewSel.value; await refresh(); };
  const right = el("div", { class: "side" },
    el("h1", {}, st.long_name || st.name, el("span", { class: "muted" }, "  " + st.game + ", seed " + st.seed)),
    seats, status,
    st.scores ? el("p", {}, "scores: " + st.scores.map(x => fmt(x, 1)).join(" / ")) : null,
    moves,
    el("p", { class: "controls" }, agentBtn, " ", el("label", { style: "display:inline" }, auto, " agents move by themselves"), " ", undo, " ", del, " ", logLink),
    el("div", { class: "panel" }, el("label", {}, "Analyse with (mcts, az, policy, solver; empty: the seat's agent)"), analyst, " ", anBtn,
      el("div", { id: "anbox" }, g.an ? analysisTable(g.an, kind) : null)),
    st.board ? el("details", {}, el("summary", {}, "text view"), el("pre", { class: "text", id: "text" }, st.text)) : null,
    el("label", {}, "View as"), viewSel,
    el("h2", {}, "Moves"), historyList(st.history));
  main.replaceChildren(el("div", { class: "row" }, left, right));
}

// scoreMeaning says what an analyzer's "score" is, by its name.
function scoreMeaning(agent) {
  const name = (agent || "").split(":")[0];
  if (name === "solver") return ["solver score", "the solver's score: above 0 the mover wins (the larger, the sooner), below 0 loses, 0 draws"];
  if (/^(mcts|az|rave|grave)/.test(name)) return ["AMAF Q", "the move's all-moves-as-first value (RAVE statistics), from the mover's view"];
  return ["score", "a score particular to " + name + " (a heuristic value)"];
}

// analysisTable shows an analysis: visits, share, Q (the move's value
// from the mover's view, where the analyzer has one), prior, and the
// analyzer's own score where it gives one.
function analysisTable(an, kind) {
  const total = an.visits;
  const state = an.live ? (an.final ? " (done)" : " (searching...)") : "";
  const hasQ = an.rows.some(r => r.q !== null && r.q !== undefined);
  const hasScore = an.rows.some(r => r.score);
  const hasVisits = total > 0;
  const [scoreName, scoreHelp] = scoreMeaning(an.agent);
  const cols = [["move", "the move"]];
  if (hasVisits) cols.push(["visits", "search visits of the move"], ["share", "its share of the visits"]);
  if (hasQ) cols.push(["Q", "the move's value for the mover, from -1 (loss) to +1 (win)"]);
  if (an.rows.some(r => r.prior)) cols.push(["prior", "the prior (policy) probability of the move"]);
  if (hasScore) cols.push([scoreName, scoreHelp]);
  const cell = (r, name) => {
    switch (name) {
      case "move": return el("td", { class: "l" }, r.text);
      case "visits": return el("td", {}, r.visits);
      case "share": return el("td", {}, total ? fmt(100 * r.visits / total, 1) + "%" : "");
      case "Q": return el("td", {}, fmt(r.q));
      case "prior": return el("td", {}, fmt(r.prior));
      default: return el("td", {}, fmt(r.score));
    }
  };
  return el("div", { id: "analysis", "data-final": an.final === undefined || an.final ? "true" : "false", "data-visits": total },
    el("p", { class: "muted" }, `${an.agent} for player ${an.player}: ` + (hasVisits ? `${total} visits in ` : "") + `${fmt(an.seconds, 2)} s${state}`),
    an.pv && an.pv.length ? el("p", { id: "pv" }, el("span", { class: "muted" }, "principal variation: "),
      an.pv.map(m => el("span", { class: "pvmove", "data-action": m.action, title: "player " + m.player }, seatBadge(kind, m.player), m.text, " "))) : null,
    an.values && an.values.length ? el("p", { id: "seatvalues" }, el("span", { class: "muted", title: "the search's value of the position for every seat, from -1 (last) to +1 (first)" }, "value per seat: "),
      an.values.map((v, p) => el("span", { class: "seatvalue", "data-seat": p }, seatBadge(kind, p), " " + fmt(v) + " "))) : null,
    hasQ ? null : el("p", { class: "muted", id: "noq" }, "No Q per move: " + an.agent + " values positions, not moves."),
    el("div", { class: "tablewrap" }, el("table", {},
      el("tr", {}, cols.map(([h, help]) => el("th", { title: help }, h))),
      an.rows.map(r => el("tr", {}, cols.map(([h]) => cell(r, h)))))));
}

// historyList shows the moves, runs of chance moves folded into one
// entry ("chance ×12", the outcomes in its tooltip).
function historyList(items) {
  const box = el("div", { class: "history", id: "history" });
  for (let i = 0; i < items.length;) {
    if (/^chance(:|$)/.test(items[i])) {
      let j = i;
      while (j < items.length && /^chance(:|$)/.test(items[j])) j++;
      const run = items.slice(i, j);
      box.append(el("span", { class: "chance", title: run.join(" "), "data-moves": run.length }, run.length === 1 ? run[0] : "chance ×" + run.length), " ");
      i = j;
      continue;
    }
    box.append(el("span", { class: "mv" }, items[i]), " ");
    i++;
  }
  return box;
}

async function refresh() {
  const q = game.view !== null && !game.st.private ? "?view=" + encodeURIComponent(game.view) : "";
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

// analyze streams the analysis of the position: the overlay, the table
// and the principal variation are redrawn with every snapshot (about
// every 200 ms for mcts and az; once for the other analyzers).
function analyze() {
  const g = game;
  stopAnalysis();
  g.thinking = true;
  g.live = true;
  renderGame();
  const q = new URLSearchParams({ agent: g.analyst.trim() });
  g.analysis = openStream(`/api/games/${g.id}/analyze/live?` + q, (name, data) => {
    if (game !== g) return;
    if (name === "snapshot") {
      g.an = data;
      renderAnalysis();
    } else if (name === "error") toast(data.error);
  }, err => {
    if (err) toast(err.message);
    if (g.analysis) g.analysis = null;
    g.thinking = false;
    g.live = false;
    if (game === g) renderGame();
  });
}

// stopAnalysis closes the live analysis, if any (the server stops it).
function stopAnalysis() {
  if (game && game.analysis) {
    game.analysis.abort();
    game.analysis = null;
  }
}

// renderAnalysis redraws the board overlay and the analysis panel only,
// leaving the rest of the page (and what is typed in it) alone.
function renderAnalysis() {
  const g = game;
  const box = document.getElementById("boardbox"), an = document.getElementById("anbox");
  if (!box || !an || !g.st.board) return renderGame();
  const anMap = g.an && g.an.move === g.st.move ? Object.fromEntries(g.an.rows.map(r => [r.action, r])) : null;
  box.replaceChildren(drawBoard(g.st, null, anMap));
  an.replaceChildren(analysisTable(g.an, g.st.board ? g.st.board.kind : null));
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
    try {
      const text = await f.text();
      showFrames(viewer, await api("POST", "/api/replay", text), { log: JSON.parse(text) });
    } catch (e) { err.textContent = e.message; }
  };
  const list = el("ul", { id: "logs" });
  const arenaList = el("ul", { id: "arena-files" });
  const arenaBox = el("div", { hidden: true }, el("label", {}, "Arena results (canopy arena --json) in --logs: not game logs; the Dashboard draws them"), arenaList);
  main.append(el("div", { class: "panel" }, el("label", {}, "Upload a log written by canopy play --log (or this page's download)"), file, err,
    el("label", {}, "Game logs in the server's --logs directory"), list, arenaBox), viewer);
  try {
    const logs = await api("GET", "/api/logs");
    const gameLogs = logs.filter(l => l.kind !== "arena"), arenaFiles = logs.filter(l => l.kind === "arena");
    if (!gameLogs.length) list.append(el("li", { class: "muted" }, "none (start the server with --logs DIR)"));
    for (const l of gameLogs) list.append(el("li", {}, el("a", { href: "#/replay/" + encodeURIComponent(l.name) }, l.name)));
    arenaBox.hidden = !arenaFiles.length;
    for (const l of arenaFiles) arenaList.append(el("li", {}, el("a", { href: "#/dashboard", class: "arena-file" }, l.name), el("span", { class: "muted" }, " — results on the Dashboard")));
  } catch (e) { list.append(el("li", { class: "err" }, e.message)); }
  if (name) {
    try { showFrames(viewer, await api("GET", "/api/logs/" + encodeURIComponent(name)), { name }); } catch (e) { err.textContent = e.message; }
  }
}

// ICONS are the replay buttons' drawings (paths in a 16 x 16 box): no
// font has to hold the glyphs.
const ICONS = {
  first: "M3 2h2v12H3z M14 2v12L6 8z", prev: "M12 2v12L4 8z", next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2z M2 2v12l8-6z", play: "M4 2v12l10-6z", pause: "M3 2h4v12H3z M9 2h4v12H9z",
};

function icon(name) {
  return svg("svg", { width: 14, height: 14, viewBox: "0 0 16 16", class: "icon", "aria-hidden": "true" }, svg("path", { d: ICONS[name], fill: "currentColor" }));
}

// showFrames shows a replay: the board step by step, and on demand the
// value graph (one analysed position after the other, from src: the
// log's name in --logs or the log itself). A click on the graph jumps to
// that position; the analysis of the shown position is overlaid.
function showFrames(viewer, rep, src) {
  let i = 0;
  const n = rep.frames.length;
  const kind = rep.frames[0].board ? rep.frames[0].board.kind : null;
  const values = new Array(n).fill(undefined); // per position: the answer of /api/replay/analyze
  const slider = el("input", { type: "range", min: 0, max: n - 1, value: 0, id: "step" });
  const pos = el("span", { class: "muted", id: "frame" });
  const board = el("div", {});
  const move = el("p", { class: "status" });
  const graph = el("div", { id: "value-graph" });
  const anBox = el("div", { id: "replay-analysis" });
  const draw = () => {
    const f = rep.frames[i];
    slider.value = i;
    pos.textContent = ` position ${i} of ${n - 1} `;
    move.textContent = (i > 0 ? rep.moves[i - 1] + " — " : "start — ") + f.result;
    const v = values[i];
    const anMap = v && v.analysis ? Object.fromEntries(v.analysis.rows.map(r => [r.action, r])) : null;
    board.replaceChildren(f.board ? drawBoard(f, null, anMap) : el("pre", { class: "text" }, f.text));
    if (f.board) board.append(el("details", {}, el("summary", {}, "text view"), el("pre", { class: "text" }, f.text)));
    anBox.replaceChildren(v && v.analysis ? analysisTable(v.analysis, kind) : el("p", { class: "muted" }, v ? "no analysis at this position (" + (v.player === -4 ? "the end" : "a chance move") + ")" : ""));
    drawGraph();
  };
  const go = k => { i = Math.max(0, Math.min(n - 1, k)); draw(); };
  slider.oninput = () => go(parseInt(slider.value, 10));
  const btn = (ic, id, title, f) => el("button", { id, title, "aria-label": title, onclick: f, class: "iconbtn" }, icon(ic));
  let timer = null;
  const play = el("button", { id: "play", class: "iconbtn", title: "play" }, icon("play"), " play");
  const setPlay = on => play.replaceChildren(icon(on ? "pause" : "play"), on ? " pause" : " play");
  play.onclick = () => {
    if (timer) { clearInterval(timer); timer = null; setPlay(false); return; }
    setPlay(true);
    timer = setInterval(() => { if (i >= n - 1) { clearInterval(timer); timer = null; setPlay(false); } else go(i + 1); }, 700);
  };

  // The value graph: value for player 0 (two players; the mover's
  // otherwise) per position, from -1 to +1.
  const twoPlayers = rep.players.length === 2 || (rep.frames[n - 1].returns || []).length === 2;
  const valueOf = v => {
    if (!v) return null;
    if (v.returns) return twoPlayers ? v.returns[0] : Math.max(...v.returns);
    if (v.value === null || v.value === undefined) return null;
    return twoPlayers && v.player === 1 ? -v.value : v.value;
  };
  function drawGraph() {
    if (!values.some(v => v !== undefined)) { graph.replaceChildren(); return; }
    const W = Math.max(360, Math.min(1100, viewer.clientWidth - 40)), H = 170, L = 44, R = 12, T = 12, B = 26;
    const x = k => L + (n > 1 ? k * (W - L - R) / (n - 1) : 0), y = v => T + (1 - v) / 2 * (H - T - B);
    const g = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "value-graph" });
    g.append(svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "#fbfbf8", stroke: "#d6d9dd" }));
    for (const [v, lab] of [[1, "+1"], [0, "0"], [-1, "-1"]]) {
      g.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: v === 0 ? "#999" : "#e3e5e8", "stroke-dasharray": v === 0 ? "4 3" : null }));
      g.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#666" }, lab));
    }
    g.append(svg("text", { x: L, y: H - 6, "font-size": 11, fill: "#666" }, "position →"));
    g.append(svg("line", { x1: x(i), x2: x(i), y1: T, y2: H - B, stroke: "#2b6cb0", "stroke-width": 2, class: "cursor" }));
    let d = "";
    values.forEach((v, k) => { const val = valueOf(v); if (val !== null) d += (d && valueOf(values[k - 1]) !== null ? "L" : "M") + x(k).toFixed(1) + " " + y(val).toFixed(1); });
    g.append(svg("path", { d, fill: "none", stroke: "#1f2937", "stroke-width": 2 }));
    values.forEach((v, k) => {
      const val = valueOf(v);
      if (val === null) return;
      g.append(svg("circle", { cx: x(k), cy: y(val), r: k === i ? 5 : 3.2, fill: val > 0.05 ? stoneOf(0) : val < -0.05 ? stoneOf(1) : "#999", stroke: "#333", "stroke-width": 1, class: "vpt", "data-pos": k },
        svg("title", {}, `position ${k}: ${val >= 0 ? "+" : ""}${val.toFixed(2)}`)));
    });
    // A click anywhere on the graph jumps to the nearest position.
    g.onclick = ev => {
      const box = g.getBoundingClientRect();
      const k = Math.round((ev.clientX - box.left - L) / ((W - L - R) / Math.max(1, n - 1)));
      go(k);
    };
    const who = twoPlayers ? "value for player 0 (+1: player 0 wins, -1: player 1 wins)" : "value for the player to move";
    graph.replaceChildren(el("p", { class: "muted" }, `${graphAgent}: ${who}; click to jump to a position`), g);
  }
  function stoneOf(p) { return (PIECE_COLORS[kind] || PLAYER_COLORS)[p]; }

  // Analysis: every position in turn, the graph growing with the answers.
  let graphAgent = "";
  let run = 0;
  const analyst = el("input", { type: "text", id: "graph-agent", value: /^connect4($|:)/.test(rep.game) ? "solver" : "mcts:sims=1000" });
  const status = el("span", { class: "muted", id: "graph-status" });
  const goBtn = el("button", { id: "graph" }, "Value graph");
  goBtn.onclick = async () => {
    const my = ++run;
    graphAgent = analyst.value.trim();
    values.fill(undefined);
    draw();
    for (let k = 0; k < n && my === run; k++) {
      status.textContent = ` analysing position ${k} of ${n - 1}...`;
      try {
        values[k] = await api("POST", "/api/replay/analyze", Object.assign({ agent: graphAgent, position: k }, src));
      } catch (e) {
        status.textContent = " " + e.message;
        return;
      }
      if (my !== run) return;
      drawGraph();
      if (k === i) draw();
    }
    status.textContent = ` done: ${n} positions`;
    graph.dataset.done = "true";
  };
  const analyse = src ? el("div", {},
    el("label", {}, "Value graph and analysis by (solver for Connect Four, mcts, az, policy): every position in turn"),
    analyst, " ", goBtn, status) : null;

  viewer.replaceChildren(el("div", { class: "panel" },
    el("h2", {}, rep.game, el("span", { class: "muted" }, "  " + rep.players.join(" vs ") + (rep.seed ? ", seed " + rep.seed : ""))),
    analyse,
    el("p", { class: "controls" }, btn("first", "first", "first position", () => go(0)), btn("prev", "prev", "previous position", () => go(i - 1)),
      btn("next", "next", "next position", () => go(i + 1)), btn("last", "last", "last position", () => go(n - 1)), " ", play, pos),
    slider, graph, move, el("div", { class: "row" }, el("div", {}, board), el("div", { class: "side" }, anBox))));
  draw();
}

// ---- runs ----

// maxWatched bounds the runs the page watches live (each watch holds one
// of the browser's few connections to the server).
const maxWatched = 4;

async function showRuns() {
  setNav("runs");
  game = null;
  main.replaceChildren(el("h1", {}, "Runs"));
  let runs;
  try { runs = await api("GET", "/api/runs"); } catch (e) { main.append(el("p", { class: "err" }, e.message)); return; }
  if (!runs.length) main.append(el("p", { class: "muted" }, "No run directories: start the server with --run DIR (repeatable), e.g. canopy serve --run runs/zero-demo."));
  // Charts the server draws for the page's width (the Dashboard's), for
  // the runs it can read; the others show their plots/*.svg files.
  let drawn = {};
  try { for (const d of (await api("GET", "/api/dashboard")).runs) if (!d.error && d.charts.length) drawn[d.name] = d.charts; } catch (e) { /* files only */ }
  runs.forEach((r, k) => {
    const box = el("div", { class: "panel run", "data-run": r.name }, el("h2", {}, r.name, el("span", { class: "muted" }, "  " + r.path), el("span", { class: "live", hidden: true }, " ● live")));
    main.append(box);
    const enc = encodeURIComponent;
    const plots = el("div", { class: "plots" }, drawn[r.name] && typeof dashImg === "function"
      ? drawn[r.name].map(c => dashImg(`/api/dashboard/runs/${enc(r.name)}/${enc(c)}.svg`, `${r.name}: ${c}`))
      : r.plots.map(p => el("img", { src: `/runs/${enc(r.name)}/plots/${enc(p)}`, alt: p, title: p, class: "file" })));
    if (!drawn[r.name] && !r.plots.length) plots.append(el("p", { class: "muted" }, "no plots/*.svg yet"));
    const table = el("div", { class: "metrics-box" });
    const selfplay = el("p", { class: "selfplay", hidden: true });
    const gamesList = el("ul", { class: "games" });
    box.append(plots, selfplay, table, gamesList);
    const m = { columns: [], rows: [] }; // rows as objects, columns in order of appearance
    const addRows = rows => {
      for (const row of rows) {
        for (const c of Object.keys(row)) if (!m.columns.includes(c)) m.columns.push(c);
        m.rows.push(row);
      }
      renderMetrics(table, m);
    };
    api("GET", `/api/runs/${encodeURIComponent(r.name)}/metrics`).then(t => {
      if (m.rows.length) return; // the watch was first
      m.columns = t.columns.slice();
      addRows(t.rows.map(row => Object.fromEntries(row.map((v, i) => [t.columns[i], v]).filter(x => x[1] !== null))));
    }).catch(e => table.replaceChildren(el("p", { class: "err" }, e.message)));
    if (k >= maxWatched) {
      box.append(el("p", { class: "muted" }, "not watched live (the page watches the first " + maxWatched + " runs); reload to update"));
      return;
    }
    const live = box.querySelector(".live");
    live.hidden = false;
    openStream(`/api/runs/${encodeURIComponent(r.name)}/watch`, (name, d) => {
      if (name === "metrics") {
        if (d.reset) { m.columns = []; m.rows = []; }
        addRows(d.rows);
      } else if (name === "selfplay") {
        selfplay.hidden = false;
        selfplay.textContent = `self-play ${d.game}: ${d.done} of ${d.games} games, ${d.positions} positions, ${d.shards} shard(s)` +
          (d.resigned ? `, ${d.resigned} resigned` : "") + ` — ${d.file}` + (d.updated ? ", updated " + d.updated : "");
      } else if (name === "game") {
        gamesList.prepend(el("li", { class: "game" }, el("span", { class: "muted" }, d.file + ": "), d.game + ", " + d.players.join(" vs ") + ", " + d.moves + " moves — " + d.result));
        while (gamesList.children.length > 50) gamesList.lastChild.remove();
      }
    }, err => {
      live.hidden = true;
      if (err) box.append(el("p", { class: "muted" }, "live updates stopped: " + err.message));
    });
  });
}

// renderMetrics draws the metrics table (m: columns and rows as objects).
function renderMetrics(box, m) {
  if (!m.rows.length) { box.replaceChildren(el("p", { class: "muted" }, "no metrics.jsonl records yet")); return; }
  const cols = pickColumns(m.columns).map(i => m.columns[i]);
  box.replaceChildren(el("p", { class: "muted" }, `metrics.jsonl: ${m.rows.length} record(s), ${m.columns.length} fields; showing ${cols.length} (hover a heading for its field)`),
    el("div", { class: "tablewrap" }, el("table", { class: "metrics" },
      el("tr", {}, cols.map(c => el("th", { title: c, "data-field": c }, columnName(c)))),
      m.rows.map(row => el("tr", {}, cols.map(c => el("td", {}, fmt(row[c]))))))));
}

// COLUMN_NAMES name the metrics.jsonl fields of canopy zero and canopy
// ppo that a table shows most; columnName makes up the others.
const COLUMN_NAMES = {
  "iteration": "iteration", "update": "update",
  "train.final_loss.Total": "loss", "train.final_loss.Policy": "policy loss", "train.final_loss.Value": "value loss", "train.final_loss.L2": "L2 loss",
  "train.held_out.Total": "held-out loss", "train.held_out.Policy": "held-out policy loss", "train.held_out.Value": "held-out value loss", "train.held_out.L2": "held-out L2",
  "elo.value": "Elo", "elo.lo": "Elo low", "elo.hi": "Elo high",
  "eval.solver_policy": "optimal, network", "eval.solver_search": "optimal, search", "eval.solver_random": "optimal, random",
  "loss": "loss", "policy_loss": "policy loss", "value_loss": "value loss", "entropy": "entropy", "episodes": "episodes", "wins": "wins", "draws": "draws", "losses": "losses",
};

// columnName is a readable heading for a flattened JSON path:
// "eval.scores.0.score" becomes "score 1 score", "selfplay.games_per_sec"
// "selfplay games per sec".
function columnName(path) {
  if (COLUMN_NAMES[path]) return COLUMN_NAMES[path];
  let m;
  if ((m = path.match(/^eval\.(scores|alone)\.([0-9]+)\.(opponent|score|lo|hi|games)$/))) {
    const who = (m[1] === "alone" ? "alone " : "") + "#" + (+m[2] + 1);
    return { opponent: "opponent " + who, score: "score " + who, lo: "score " + who + " low", hi: "score " + who + " high", games: "games " + who }[m[3]];
  }
  const parts = path.split(".").filter(p => p !== "train" && p !== "eval");
  return parts.map((p, k) => /^[0-9]+$/.test(p) ? "#" + (+p + 1) : p.replace(/_/g, " ").replace(/^final loss$/, "loss")).join(" ") || path;
}

// pickColumns keeps the columns worth a table: numbers and short labels,
// without timestamps; at most 40.
function pickColumns(columns) {
  const out = [];
  columns.forEach((c, i) => { if (!/started|finished|^seconds$/.test(c)) out.push(i); });
  // The named fields first, in COLUMN_NAMES' order (the iteration, the
  // losses, Elo, ...), then each baseline's opponent, score and interval.
  const named = Object.keys(COLUMN_NAMES);
  const rank = c => {
    const k = named.indexOf(c);
    if (k >= 0) return k;
    const m = c.match(/^eval\.(scores|alone)\.([0-9]+)\.(opponent|score|lo|hi|games)$/);
    if (m) return 100 + (m[1] === "alone" ? 50 : 0) + 5 * +m[2] + ["opponent", "score", "lo", "hi", "games"].indexOf(m[3]);
    return 1000;
  };
  out.sort((x, y) => rank(columns[x]) - rank(columns[y]) || x - y);
  return out.slice(0, 40);
}

// ---- router ----

function route() {
  closeStreams();
  const h = location.hash || "#/";
  let m;
  if ((m = h.match(/^#\/game\/([0-9a-f]+)(\/analyze)?$/))) return showGame(m[1], !!m[2]);
  if ((m = h.match(/^#\/replay(?:\/(.+))?$/))) return showReplay(m[1] ? decodeURIComponent(m[1]) : null);
  if (h === "#/runs") return showRuns();
  if (h === "#/dashboard" && typeof showDashboard === "function") return showDashboard(); // dashboard.js
  game = null;
  return showHome();
}

window.addEventListener("hashchange", route);
route();
