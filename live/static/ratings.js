// Mulle live: the ratings page. Reads GET /api/ratings (docs/live.md).
"use strict";

const $ = (id) => document.getElementById(id);

function cell(text, tag = "td") { const c = document.createElement(tag); c.textContent = text; return c; }

function fmt(x) { return x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + x.toFixed(0); }

async function load(player) {
  const q = player ? `?player=${encodeURIComponent(player)}` : "";
  let res;
  try { res = await fetch(`/api/ratings${q}`); } catch (e) { $("ratings-note").textContent = `cannot reach the server: ${e}`; return; }
  const body = await res.json();
  if (!res.ok) { $("ratings-note").textContent = body.error; return; }
  $("ratings-note").textContent = body.players.length ? `${body.games} rated games.` : "No rated games yet: play some!";
  if (body.anchor) $("anchor").textContent = body.anchor.replace(/^agent:/, "the agent ").replace(/^person:/, "");
  $("ratings-body").replaceChildren(...body.players.map((p, i) => {
    const row = document.createElement("tr");
    row.dataset.key = p.key;
    row.append(cell(String(i + 1)), cell(p.kind === "agent" ? `${p.name} (agent)` : p.name), cell(fmt(p.elo)),
      cell(`${fmt(p.low)} to ${fmt(p.high)}`), cell(String(p.games)), cell(`${p.wins}–${p.draws}–${p.losses}`));
    return row;
  }));
  if (player) {
    const h = body.history || [];
    $("history-note").textContent = h.length ? `${player}: ${h.length} rated games, newest first.` : `No rated games for ${player}.`;
    $("history-list").replaceChildren(...h.map((g) => {
      const li = document.createElement("li");
      li.dataset.game = g.id;
      li.textContent = `${g.finished_at.replace("T", " ").replace("Z", " UTC")}: ${g.result} against ${g.opponent}; rating after it ${fmt(g.elo)} (${fmt(g.low)} to ${fmt(g.high)})`;
      return li;
    }));
  }
}

$("history-form").addEventListener("submit", (e) => { e.preventDefault(); load($("history-name").value.trim()); });
const start = new URLSearchParams(location.search).get("player");
if (start) $("history-name").value = start;
load(start);
