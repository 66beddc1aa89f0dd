// Mulle live: a player's page. Reads GET /api/players/{name} and charts each game's rating as SVG (no library).
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const TITLES = { mulle: "Mulle", casino: "Casino" };

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

function el(tag, text = null, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== null) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// The rating after each game, with a band of ±RD: the start (1500) is the first point.
function chart(history, title) {
  const W = 720, H = 260, L = 48, R = 12, T = 12, B = 28;
  const points = [{ rating: history[0].before, rd: 350, result: null }, ...history];
  const lows = points.map((p) => p.rating - p.rd), highs = points.map((p) => p.rating + p.rd);
  let lo = Math.min(...lows), hi = Math.max(...highs);
  if (hi - lo < 100) { lo -= 50; hi += 50; }
  const x = (i) => L + (points.length === 1 ? 0 : (i * (W - L - R)) / (points.length - 1));
  const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);
  const last = history[history.length - 1];
  const label = `${title} rating over ${history.length} rated games: from ${Math.round(points[0].rating)} to ` +
    `${Math.round(last.rating)} (deviation ${Math.round(last.rd)})`;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label });
  root.append(svg("title", {}, label));
  const band = points.map((p, i) => `${x(i)},${y(p.rating + p.rd)}`).concat(
    points.map((p, i) => `${x(i)},${y(p.rating - p.rd)}`).reverse());
  root.append(svg("polygon", { points: band.join(" "), class: "band" }));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis", "stroke-dasharray": "2 4" }));
    root.append(svg("text", { x: 4, y: y(v) + 4 }, String(Math.round(v))));
  }
  root.append(svg("polyline", { points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(" "), class: "line" }));
  points.forEach((p, i) => {
    if (p.result) root.append(svg("circle", { cx: x(i), cy: y(p.rating), r: 3.5, class: p.result }));
  });
  root.append(svg("text", { x: L, y: H - 8 }, "start"));
  root.append(svg("text", { x: W - R - 60, y: H - 8 }, `game ${history.length}`));
  return root;
}

function block(game, rating, history) {
  const box = el("section", null, { class: "game-block", "aria-labelledby": `title-${game}` });
  box.append(el("h3", TITLES[game], { id: `title-${game}` }));
  if (!rating) { box.append(el("p", `No rated ${TITLES[game]} games.`, { class: "note" })); return box; }
  const mark = rating.provisional ? " (provisional)" : "";
  box.append(el("p", `Rating ${Math.round(rating.rating)}${mark}, deviation ${Math.round(rating.rd)}, ` +
    `${rating.games} games (${rating.wins} won, ${rating.draws} drawn, ${rating.losses} lost).`,
    { class: "rating-line", "data-game": game }));
  if (history.length) box.append(chart(history, TITLES[game]));
  const table = el("table", null, { class: "ratings" });
  table.append(el("caption", `${TITLES[game]} games, newest first`, { class: "sr-only" }));
  const head = el("tr");
  for (const h of ["Game", "Opponent", "Result", "Rating", "Change"]) head.append(el("th", h, { scope: "col" }));
  const thead = el("thead");
  thead.append(head);
  table.append(thead);
  const body = el("tbody");
  for (const h of [...history].reverse()) {
    const row = el("tr");
    const change = Math.round(h.rating - h.before);
    // The game's record, byte for byte as stored (the start page's Replay takes it).
    const link = el("a", String(h.game_id), { href: `/api/games/${h.game_id}/record` });
    const cells = [link, h.opponent, h.result, String(Math.round(h.rating)), (change > 0 ? "+" : "") + change];
    for (const c of cells) { const td = el("td"); td.append(c); row.append(td); }
    body.append(row);
  }
  table.append(body);
  box.append(table);
  return box;
}

async function load() {
  const name = decodeURIComponent(location.pathname.replace(/^\/players\//, ""));
  $("player-name").textContent = name;
  document.title = `Mulle live: ${name}`;
  let res;
  try { res = await fetch(`/api/players/${encodeURIComponent(name)}`); } catch (e) { $("player-note").textContent = `cannot reach the server: ${e}`; return; }
  const body = await res.json();
  if (!res.ok) { $("player-note").textContent = body.error; return; }
  $("player-name").textContent = body.kind === "agent" ? `${body.name} (agent)` : body.name;
  $("player-games").replaceChildren(...Object.keys(TITLES).map((g) => block(g, body.ratings[g], body.history[g])));
}
load();
