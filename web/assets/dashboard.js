// Canopy web UI: the Dashboard tab (#/dashboard). The server draws every
// chart (package plots) as SVG on request; this page lists what can be
// drawn (GET /api/dashboard) and shows the charts as images:
//   - per run directory (--run): loss, Elo with intervals, solver accuracy
//     (canopy zero) or loss and win rate (canopy ppo);
//   - per game in --logs: game-length histogram by winner and, for
//     Sequence, the chip-placement heatmap (by agent or by seat);
//   - per canopy arena --json result in --logs: pairings and ratings.
// Loaded before app.js, whose router calls showDashboard; it uses app.js's
// helpers (el, api, main, setNav) only when called, after both loaded.
"use strict";

// dashImg shows a chart drawn for the width it gets on the page (the
// server lays titles and legends out for it: ?width=PX), full width when
// wide, else half of it.
function dashImg(src, alt, wide) {
  // main's padding (2 x 20) and a panel's padding and border (2 x 17).
  const avail = Math.max(420, (main.clientWidth || 1100) - 40 - 34);
  const px = Math.floor(wide ? avail : Math.max(400, (avail - 12) / 2));
  const img = el("img", { src: src + (src.includes("?") ? "&" : "?") + "width=" + px, alt, title: alt, class: wide ? "wide" : "half", style: `width:${px}px` });
  // A chart the server cannot draw answers with a JSON error: show it.
  img.onerror = async () => {
    let msg = "cannot draw " + alt;
    try { await api("GET", src); } catch (e) { msg = e.message; }
    img.replaceWith(el("p", { class: "err" }, msg));
  };
  return img;
}

function dashNav(on) {
  const a = document.getElementById("nav-dashboard");
  if (a) a.classList.toggle("active", on);
}

window.addEventListener("hashchange", () => dashNav(location.hash === "#/dashboard"));

async function showDashboard() {
  setNav("dashboard"); // clears app.js's tabs
  dashNav(true);
  if (typeof game !== "undefined") game = null; // stop following a game
  main.replaceChildren(el("h1", {}, "Dashboard"));
  let d;
  try { d = await api("GET", "/api/dashboard"); } catch (e) { main.append(el("p", { class: "err" }, e.message)); return; }
  const enc = encodeURIComponent;

  main.append(el("h2", {}, "Runs"));
  if (!d.runs.length) main.append(el("p", { class: "muted" }, "No run directories: start the server with --run DIR (a directory of canopy zero or canopy ppo)."));
  for (const r of d.runs) {
    const head = el("h2", {}, r.name, el("span", { class: "muted" }, r.kind ? `  ${r.kind} run, ${r.game}, ${r.records} record(s)` : ""));
    const box = el("div", { class: "panel dash-run", "data-run": r.name }, head);
    if (r.error) box.append(el("p", { class: "err" }, r.error));
    else if (!r.charts.length) box.append(el("p", { class: "muted" }, "no metrics yet"));
    box.append(el("div", { class: "plots" }, r.charts.map(c => dashImg(`/api/dashboard/runs/${enc(r.name)}/${enc(c)}.svg`, `${r.name}: ${c}`))));
    main.append(box);
  }

  main.append(el("h2", {}, "Game logs"));
  if (!d.logs.length && !d.arena.length) main.append(el("p", { class: "muted" }, "No game logs: start the server with --logs DIR holding JSON game logs (canopy play --log) or canopy arena --json results (*.json)."));
  for (const g of d.logs) {
    const charts = el("div", { class: "plots" });
    const by = el("select", { onchange: () => draw() }, el("option", { value: "agent" }, "by agent"), el("option", { value: "seat" }, "by seat"));
    const draw = () => charts.replaceChildren(...g.charts.map(c =>
      dashImg(`/api/dashboard/logs/${enc(c)}.svg?game=${enc(g.game)}&by=${by.value}`, `${g.game}: ${c}`, c === "heatmap")));
    main.append(el("div", { class: "panel dash-logs", "data-game": g.game },
      el("h2", {}, g.game, el("span", { class: "muted" }, `  ${g.logs} log(s)  `), by), charts));
    draw();
  }
  for (const a of d.arena) {
    main.append(el("div", { class: "panel dash-arena", "data-file": a.file },
      el("h2", {}, a.file, el("span", { class: "muted" }, `  arena: ${a.game}, ${a.agents.length} agents`)),
      el("div", { class: "plots" }, a.charts.map(c => dashImg(`/api/dashboard/arena/${enc(a.file)}/${enc(c)}.svg`, `${a.file}: ${c}`, c === "pairs")))));
  }
  if (d.problems.length) {
    main.append(el("div", { class: "panel" }, el("h2", {}, "Files left out"),
      el("ul", {}, d.problems.map(p => el("li", { class: "err" }, p)))));
  }
}
