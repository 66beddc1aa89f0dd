// Mulle live: the ratings page. Reads GET /api/ratings?game=mulle|casino (docs/live.md, "Ratings").
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let game = params.get("game") === "casino" ? "casino" : "mulle";

function cell(content, tag = "td") {
  const c = document.createElement(tag);
  if (typeof content === "string") c.textContent = content; else c.append(content);
  return c;
}

function playerLink(p) {
  const a = document.createElement("a");
  a.href = `/players/${encodeURIComponent(p.kind === "agent" ? `agent:${p.name}` : p.name)}`;
  a.textContent = p.kind === "agent" ? `${p.name} (agent)` : p.name;
  return a;
}

async function load() {
  for (const b of document.querySelectorAll(".game-switch button")) b.setAttribute("aria-pressed", String(b.dataset.game === game));
  const title = game === "casino" ? "Casino" : "Mulle";
  $("ratings-caption").textContent = `${title} ratings`;
  let res;
  try { res = await fetch(`/api/ratings?game=${game}`); } catch (e) { $("ratings-note").textContent = `cannot reach the server: ${e}`; return; }
  const body = await res.json();
  if (!res.ok) { $("ratings-note").textContent = body.error; return; }
  $("ratings-note").textContent = body.players.length ? `${title}: ${body.players.length} rated players.` : `No rated ${title} games yet: claim a name, log in and play!`;
  $("ratings-body").replaceChildren(...body.players.map((p, i) => {
    const row = document.createElement("tr");
    row.dataset.key = p.key;
    const rating = `${Math.round(p.rating)}${p.provisional ? "?" : ""}`;
    row.append(cell(String(i + 1)), cell(playerLink(p)), cell(rating), cell(String(Math.round(p.rd))),
      cell(String(p.games)), cell(`${p.wins}–${p.draws}–${p.losses}`));
    if (p.provisional) row.title = "provisional: fewer than 10 games, or a deviation above 110";
    return row;
  }));
}

for (const b of document.querySelectorAll(".game-switch button")) {
  b.addEventListener("click", () => {
    game = b.dataset.game;
    history.replaceState(null, "", `/ratings?game=${game}`);
    load();
  });
}
$("history-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("history-name").value.trim();
  if (name) location.href = `/players/${encodeURIComponent(name)}`;
});
load();
