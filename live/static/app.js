// Mulle live: the page. Plain JavaScript, no build step. Speaks the protocol of docs/live.md.
"use strict";

const $ = (id) => document.getElementById(id);
const SYM = { KL: "♣", SP: "♠", HJ: "♥", RU: "♦" };
const params = new URLSearchParams(location.search);

const ui = {
  ws: null,
  mode: null,          // "play" | "watch" | "replay"
  session: sessionStorage.getItem("mulle-session"),
  seat: null,
  table: null,
  view: null,
  request: null,       // {request_id, legal_moves}
  selected: null,      // hand card text with several uses on offer
  frames: null,
  frame: 0,
  pendingJoin: null,
  leaving: false,
  retry: null,
};

// ----- small DOM helpers -------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function cardEl(text, extra = "") {
  const [suit, rank] = text.split(" ");
  const red = suit === "HJ" || suit === "RU";
  return el("span", { class: `card ${red ? "red" : ""} ${extra}`, "data-card": text, title: text },
    el("span", { class: "sym", text: SYM[suit] || "?" }), el("span", { class: "txt", text }));
}

function backEl(extra = "") { return el("span", { class: `card back ${extra}` }); }

function fill(node, children) { node.replaceChildren(...children); }

function showError(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

function setStatus(text) { $("status").textContent = text; }

// ----- the connection ------------------------------------------------------------------------
function wsUrl() { return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`; }

function send(type, payload = {}) {
  if (ui.ws && ui.ws.readyState === WebSocket.OPEN) ui.ws.send(JSON.stringify({ type, payload }));
  else showError("not connected to the server");
}

function connect(first) {
  const ws = new WebSocket(wsUrl());
  ui.ws = ws;
  ws.onopen = () => {
    setStatus("connected");
    clearTimeout(ui.retry);
    if (first) { first(); return; }
    if (ui.session && ui.mode === "play") send("join", { session_id: ui.session });
  };
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => {
    setStatus("offline");
    if (ui.ws !== ws) return;
    ui.ws = null;
    // A dropped player retries every second and gets the seat back (inside the grace period).
    if (ui.mode === "play" && ui.session && !ui.leaving) {
      setStatus("reconnecting…");
      ui.retry = setTimeout(() => connect(null), 1000);
    }
  };
}

function ensureConnected(then) {
  if (ui.ws && ui.ws.readyState === WebSocket.OPEN) then();
  else connect(then);
}

setInterval(() => {
  if (ui.ws && ui.ws.readyState === WebSocket.OPEN) send("ping", { timestamp: new Date().toISOString() });
}, 15000);

// ----- incoming messages -----------------------------------------------------------------------
function onMessage(msg) {
  const p = msg.payload || {};
  switch (msg.type) {
    case "joined_confirmation":
      ui.mode = "play";
      ui.session = p.session_id;
      sessionStorage.setItem("mulle-session", p.session_id);
      ui.seat = p.seat;
      ui.table = p.table;
      ui.request = null;
      enterGame();
      restoreLog(p.history);
      setView(p.view);
      if (p.rejoined) log(`you are back at seat ${p.seat}`);
      break;
    case "watch_confirmation":
      ui.mode = "watch";
      ui.seat = null;
      ui.table = p.table;
      enterGame();
      restoreLog(p.history);
      setView(p.view);
      break;
    case "request":
      ui.request = { id: p.request_id, moves: p.context.legal_moves };
      ui.selected = null;
      setView(p.view);
      break;
    case "notification":
      onNotification(p.event, p.data || {}, p.view);
      break;
    case "pong":
      setStatus(`connected · ${Math.round(Date.now() - Date.parse(p.timestamp))} ms`);
      break;
    case "error":
      onError(p);
      break;
  }
}

function onError(p) {
  if (p.code === 2000 || p.code === 2001) {
    // The session is gone (grace period over or server restarted): back to the start page.
    sessionStorage.removeItem("mulle-session");
    ui.session = null;
    ui.mode = null;
    $("game").hidden = true;
    $("start").hidden = false;
  }
  // The server refused our answer: its request still stands, so the hand is active again.
  if (p.original_request_id && ui.request && p.original_request_id === ui.request.id) {
    ui.selected = null;
    ui.request.sent = false;
  }
  showError(`error ${p.code}: ${p.message}`);
  render();
}

function onNotification(event, data, view) {
  if (data.table) ui.table = data.table;
  switch (event) {
    case "moved":
      if (ui.request) ui.request = null;
      log(eventText(data), data.player === ui.seat);
      break;
    case "set_over":
      log(`set ${data.set} over: ${seatName(0)} ${data.sheets[0].total}, ${seatName(1)} ${data.sheets[1].total}`);
      break;
    case "game_over": {
      ui.request = null;
      const w = data.winner;
      const text = `Game over: ${seatName(0)} ${data.scores[0]} – ${seatName(1)} ${data.scores[1]}. ` +
        (w === null || w === undefined ? "A draw." : `${seatName(w)} wins.`);
      fill($("game-over"), [el("div", { text }), recordLinks(data.record)]);
      $("game-over").hidden = false;
      log(text);
      break;
    }
    case "game_started":
      $("game-over").hidden = true;
      fill($("log"), []);
      $("last-move").textContent = "";
      log(`game ${data.game} starts`);
      break;
    case "deal":
      log(`set ${data.set}, deal ${data.deal}: ${data.deck_size} cards left in the deck`);
      break;
    case "player_joined": log(`${data.player_name} sits down in seat ${data.player_index}`); break;
    case "player_left": log(`${data.player_name} left; ${data.replaced_by_name} takes seat ${data.player_index}`); break;
    case "player_dropped": log(`${data.player_name} lost the connection (seat kept ${data.grace} s)`); break;
    case "player_reconnected": if (data.player_index !== ui.seat) log(`${data.player_name} is back`); break;
    case "agent_replaced": log(`agent ${data.agent} ${data.reason}; ${data.replaced_by_name} plays on`); break;
  }
  if (view !== undefined && view !== null) setView(view); else render();
}

function recordLinks(record) {
  // The finished game's record: download it, or step through it at once.
  const blob = new Blob([JSON.stringify(record)], { type: "application/json" });
  const save = el("a", { id: "save-record", href: URL.createObjectURL(blob), download: `mulle-${record.seed}.json`,
    text: "Save the game record" });
  const replay = el("button", { id: "replay-record", text: "Replay it", onclick: () => {
    if (ui.mode === "play") send("leave");
    sessionStorage.removeItem("mulle-session");
    ui.session = null;
    $("replay-text").value = JSON.stringify(record);
    $("replay-games").hidden = true;
    startReplay();
  } });
  return el("div", { class: "record-links" }, save, " ", replay);
}

// ----- entering and leaving ----------------------------------------------------------------------
function enterGame() {
  $("start").hidden = true;
  $("game").hidden = false;
  $("replay-controls").hidden = ui.mode !== "replay";
  $("watch-controls").hidden = ui.mode !== "watch";
  $("leave-btn").textContent = ui.mode === "play" ? "Leave" : "Close";
}

function leave() {
  ui.leaving = true;
  if (ui.mode === "play" || ui.mode === "watch") send("leave");
  sessionStorage.removeItem("mulle-session");
  Object.assign(ui, { mode: null, session: null, seat: null, table: null, view: null, request: null, frames: null });
  fill($("log"), []);
  $("game-over").hidden = true;
  $("game").hidden = true;
  $("start").hidden = false;
  setTimeout(() => { ui.leaving = false; }, 100);
}

function eventText(e) {
  // One move for people, with the seat's name and what a capture took.
  let text = `${seatName(e.player)}: ${e.move}`;
  if (e.taken && e.taken.length) text += `, taking ${e.taken.join(", ")}`;
  if (e.mulles) text += ` (${e.mulles} mulle${e.mulles > 1 ? "s" : ""}!)`;
  if (e.tabbe) text += " – tabbe!";
  return text;
}

function restoreLog(history) {
  fill($("log"), []);
  for (const e of history || []) log(eventText(e), e.player === ui.seat);
}

function log(text, mine = false) {
  $("log").append(el("li", { class: mine ? "me" : "", text }));
  $("log-box").scrollTop = $("log-box").scrollHeight;
}

// ----- drawing -----------------------------------------------------------------------------------
function seatName(seat) {
  if (ui.mode === "replay") {
    const specs = ui.record && ui.record.specs;
    return specs && specs[seat] ? specs[seat].replace(/^person:/, "") : `P${seat}`;
  }
  const s = ui.table && ui.table.seats ? ui.table.seats[seat] : null;
  if (!s) return `P${seat}`;
  return s.kind === "person" ? s.name + (seat === ui.seat ? " (you)" : "") + (s.connected ? "" : " (away)") : `${s.name} (agent)`;
}

function setView(view) {
  ui.view = view;
  render();
}

function render() {
  const v = ui.view;
  const t = ui.table;
  const me = ui.seat !== null && ui.seat !== undefined ? ui.seat : 0;
  const opp = 1 - me;
  $("table-label").textContent = ui.mode === "replay" ? "Replay" : (t ? `Table ${t.table_name}` : "");
  $("top-name").textContent = seatName(opp);
  $("bottom-name").textContent = seatName(me);

  // The lobby: the host starts the (next) game; nothing to play yet.
  const lobby = ui.mode === "play" && t && t.phase === "lobby";
  $("lobby").hidden = !lobby;
  if (lobby) {
    const host = t.host && t.seats[ui.seat] && t.seats[ui.seat].name === t.host;
    $("start-btn").disabled = !host;
    $("start-btn").textContent = t.games ? "New game" : "Start game";
    $("lobby-opponent").disabled = !host;
    if ($("lobby-opponent").value !== t.opponent && !$("lobby-opponent").matches(":focus")) $("lobby-opponent").value = t.opponent;
  }
  if (!v) {
    $("set-deal").textContent = lobby ? "Lobby: waiting for the host to start" : "";
    for (const id of ["hand", "top-hand", "loose", "builds", "top-mulle", "bottom-mulle", "choices"]) fill($(id), []);
    return;
  }
  $("set-deal").textContent = `Set ${v.set} of ${v.ruleset.sets} · deal ${v.deal}`;
  $("deck-size").textContent = v.deck_size;
  const turnText = v.over ? "Game over" : `${seatName(v.to_move)} to move`;
  $("turn").textContent = turnText;
  $("top-turn").textContent = !v.over && v.to_move === opp ? "◀ to move" : "";
  $("bottom-turn").textContent = !v.over && v.to_move === me ? "◀ to move" : "";

  // Hands: one's own (or both, when watching agents or replaying).
  const hands = v.hands;
  const oppSize = v.hand_sizes ? v.hand_sizes[opp] : v.opponent_hand_size;
  $("opp-hand-size").textContent = oppSize;
  fill($("top-hand"), hands ? hands[opp].map((c) => cardEl(c)) : Array.from({ length: oppSize }, () => backEl()));
  const myHand = hands ? hands[me] : v.hand;
  const active = ui.mode === "play" && ui.request && !ui.request.sent && !v.over && v.to_move === me;
  const hand = $("hand");
  hand.classList.toggle("active", !!active);
  fill(hand, myHand.map((c) => {
    const uses = active ? usesOf(c) : [];
    const node = cardEl(c, active && !uses.length ? "unusable" : (ui.selected === c ? "selected" : ""));
    if (active && uses.length) node.addEventListener("click", () => clickCard(c));
    return node;
  }));
  renderChoices(active);

  // The table: loose cards and builds with value, owner and lock.
  fill($("loose"), v.loose.map((c) => cardEl(c)));
  fill($("builds"), v.builds.map((b, i) => el("div", { class: `build ${b.locked ? "locked" : ""}`, "data-value": b.value },
    el("div", { class: "label", text: `[${b.value}] ${b.owner === null ? "no owner" : seatName(b.owner)}${b.locked ? " · locked" : ""}` }),
    el("div", { class: "cards" }, ...b.cards.map((c) => cardEl(c, "mini"))))));

  // Captured piles: mulle pairs face up, intake as a count, tabbes and running score.
  for (const [side, seat] of [["top", opp], ["bottom", me]]) {
    fill($(`${side}-mulle`), v.mulle[seat].map((c) => cardEl(c, "mini")));
    $(`${side}-intake`).textContent = v.intake[seat].length;
    $(`${side}-tabbe`).textContent = v.tabbe[seat];
    $(`${side}-score`).textContent = v.scores[seat].total;
  }
  if (v.last_move && ui.mode !== "replay") {
    const taken = v.last_taken && v.last_taken.length ? `, taking ${v.last_taken.join(", ")}` : "";
    $("last-move").textContent = `Last: ${seatName(v.last_move[0])}: ${v.last_move[1]}${taken}`;
  } else if (!v.last_move) $("last-move").textContent = "";
  renderSheets(v);
}

function renderSheets(v) {
  const box = $("sheets");
  box.className = "sheets";
  if (!v.sheets.length) { fill(box, []); return; }
  // One small table per finished set: the score sheet's lines down, the two seats across.
  const tables = v.sheets.map((pair, i) => el("table", { class: "sheet", "data-set": i + 1 },
    el("tr", {}, el("th", { text: `Set ${i + 1}` }), el("th", { text: seatName(0) }), el("th", { text: seatName(1) })),
    ...["mulle", "tabbe", "intake", "bonus", "total"].map((k) => el("tr", { class: k },
      el("td", { text: k }), el("td", { text: pair[0][k] }), el("td", { text: pair[1][k] })))));
  fill(box, [el("h3", { text: "Score sheets" }), ...tables]);
}

// ----- playing: a click on a hand card ----------------------------------------------------------
function cardOf(moveText) { return moveText.split(" ").slice(1, 3).join(" "); }

function usesOf(card) { return ui.request ? ui.request.moves.filter((m) => cardOf(m) === card) : []; }

function describeUse(move) {
  const w = move.split(" ");
  if (w[0] === "capture") return w.length > 3 ? `capture taking ${w.slice(4).join(" ")}` : "capture";
  if (w[0] === "build") return `build to ${w[w.length - 1]} on ${w.slice(4, w.length - 2).join(" ")}`;
  return w[0];
}

function clickCard(card) {
  const uses = usesOf(card);
  if (uses.length === 1) { play(uses[0]); return; }
  ui.selected = ui.selected === card ? null : card;
  render();
}

function renderChoices(active) {
  const box = $("choices");
  if (!active || !ui.selected) { box.hidden = true; fill(box, []); return; }
  box.hidden = false;
  fill(box, [el("span", { text: `${ui.selected}: ` }),
    ...usesOf(ui.selected).map((m) => el("button", { "data-move": m, onclick: () => play(m), text: describeUse(m),
      onmouseenter: () => markTargets(m), onmouseleave: () => markTargets(null) })),
    el("button", { class: "cancel", onclick: () => { ui.selected = null; render(); }, text: "cancel" })]);
}

function markTargets(move) {
  // Show on the table what a build goes onto, or what a capture with a choice takes.
  document.querySelectorAll(".target").forEach((n) => n.classList.remove("target"));
  if (!move) return;
  const w = move.split(" ");
  if (w[0] === "build") {
    const on = w.slice(4, w.length - 2).join(" ");
    const sel = on.startsWith("[") ? `#builds .build[data-value="${on.slice(1, -1)}"]` : `#loose .card[data-card="${on}"]`;
    const node = document.querySelector(sel);
    if (node) node.classList.add("target");
  } else if (w[0] === "capture" && w[3] === "taking") {
    const left = w.slice(4).join(" ").split(", ");
    document.querySelectorAll("#loose .card").forEach((n) => {
      const i = left.indexOf(n.dataset.card);
      if (i >= 0) { n.classList.add("target"); left.splice(i, 1); }
    });
  }
}

function play(move) {
  // Only texts from the request's legal moves are ever sent.
  if (!ui.request || ui.request.sent || !ui.request.moves.includes(move)) return;
  send("response", { request_id: ui.request.id, data: { move } });
  ui.request.sent = true;  // one answer per request: no double clicks
  ui.selected = null;
  $("hand").classList.remove("active");
  $("choices").hidden = true;
}

// ----- replay --------------------------------------------------------------------------------------
function showFrame(i) {
  ui.frame = Math.max(0, Math.min(i, ui.frames.length - 1));
  const f = ui.frames[ui.frame];
  $("rp-pos").textContent = `move ${ui.frame} / ${ui.frames.length - 1}`;
  $("last-move").textContent = f.event ? `Last: ${eventText(f.event)}` : "";
  fill($("log"), ui.frames.slice(1, ui.frame + 1).map((fr) => el("li", { text: eventText(fr.event) })));
  $("log-box").scrollTop = $("log-box").scrollHeight;
  const over = ui.frame === ui.frames.length - 1 && f.view.over;
  $("game-over").hidden = !over;
  if (over) {
    const s = f.view.scores.map((x) => x.total);
    const w = s[0] === s[1] ? "A draw." : `${seatName(s[0] > s[1] ? 0 : 1)} wins.`;
    $("game-over").textContent = `Final: ${seatName(0)} ${s[0]} – ${seatName(1)} ${s[1]}. ${w}`;
  }
  setView(f.view);
}

async function startReplay() {
  let text = $("replay-text").value.trim();
  const pick = $("replay-games");
  if (!pick.hidden && pick.value !== "") text = ui.replayLines[Number(pick.value)];
  if (!text) { showError("choose a file or paste a record first"); return; }
  const lines = text.split("\n").filter((l) => l.trim());
  if (lines.length > 1) { offerGames(lines); return; }
  const res = await fetch("/api/replay", { method: "POST", body: lines[0], headers: { "Content-Type": "application/json" } });
  const body = await res.json();
  if (!res.ok) { showError(`cannot replay: ${body.error}`); return; }
  ui.mode = "replay";
  ui.seat = 0;
  ui.table = null;
  ui.record = body.record;
  ui.frames = body.frames;
  enterGame();
  $("lobby").hidden = true;
  showFrame(0);
}

function offerGames(lines) {
  // A results file: let the person pick one game (only lines with a move list can be replayed).
  ui.replayLines = lines;
  const pick = $("replay-games");
  const options = [];
  lines.forEach((line, i) => {
    try {
      const g = JSON.parse(line);
      const ok = Array.isArray(g.move_list) || Array.isArray(g.moves);
      const specs = g.specs ? g.specs.join(" vs ") : "game";
      const scores = g.scores ? ` ${g.scores.join(":")}` : "";
      options.push(el("option", { value: ok ? String(i) : "", text: `${g.game_id || i + 1}: ${specs}${scores}${ok ? "" : " (no moves saved)"}` }));
    } catch (e) { /* not a JSON line: skip it */ }
  });
  fill(pick, options);
  pick.hidden = false;
  $("replay-text").value = "";
  showError(`${options.length} games in the file: pick one and press Replay`);
}

// ----- wiring ------------------------------------------------------------------------------------
async function loadAgents() {
  const res = await fetch("/api/agents");
  const data = await res.json();
  const names = Object.keys(data.agents);
  fill($("agent-names"), names.map((n) => el("option", { value: n, text: data.agents[n] })));
  $("opponent").value = params.get("opponent") || data.default;
  $("watch-a").value = names.includes("heuristic") ? "heuristic" : names[0];
  $("watch-b").value = names.includes("greedy") ? "greedy" : names[names.length - 1];
  ui.agentsLoaded = true;
}

function joinTable() {
  const table = $("table-name").value.trim();
  const name = $("player-name").value.trim();
  if (!table || !name) { showError("a table name and your name, please"); return; }
  const payload = { table_name: table, player_name: name, opponent: $("opponent").value.trim() || undefined, sets: Number($("sets").value),
    agent_delay_ms: Number(params.get("delay") ?? 500) };
  if (params.get("seed")) payload.seed = Number(params.get("seed"));
  ui.mode = "play";
  ensureConnected(() => send("join", payload));
}

function watchAgents() {
  const payload = { agents: [$("watch-a").value.trim(), $("watch-b").value.trim()], delay_ms: Number($("watch-speed").value) };
  if (params.get("seed")) payload.seed = Number(params.get("seed"));
  if (params.get("sets")) payload.sets = Number(params.get("sets"));
  $("speed").value = $("watch-speed").value;
  $("speed-out").textContent = `${$("speed").value} ms`;
  ensureConnected(() => send("watch", payload));
}

$("join-btn").addEventListener("click", joinTable);
$("watch-btn").addEventListener("click", watchAgents);
$("replay-btn").addEventListener("click", startReplay);
$("leave-btn").addEventListener("click", leave);
$("start-btn").addEventListener("click", () => send("lobby_action", { action: "start_game" }));
$("lobby-opponent").addEventListener("change", (e) => send("lobby_action", { action: "set_opponent", data: { opponent: e.target.value.trim() } }));
$("watch-speed").addEventListener("input", (e) => { $("watch-speed-out").textContent = `${e.target.value} ms`; });
$("speed").addEventListener("change", (e) => { $("speed-out").textContent = `${e.target.value} ms`; send("set_speed", { delay_ms: Number(e.target.value) }); });
$("rp-first").addEventListener("click", () => showFrame(0));
$("rp-back").addEventListener("click", () => showFrame(ui.frame - 1));
$("rp-fwd").addEventListener("click", () => showFrame(ui.frame + 1));
$("rp-last").addEventListener("click", () => showFrame(ui.frames.length - 1));
document.addEventListener("keydown", (e) => {
  if (ui.mode !== "replay" || e.target.matches("input, textarea, select")) return;
  if (e.key === "ArrowLeft") showFrame(ui.frame - 1);
  if (e.key === "ArrowRight") showFrame(ui.frame + 1);
});
$("replay-file").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  $("replay-text").value = (await file.text()).trim();
  $("replay-games").hidden = true;
  const lines = $("replay-text").value.split("\n").filter((l) => l.trim());
  if (lines.length > 1) offerGames(lines);
});
if (params.get("table")) $("table-name").value = params.get("table");
if (params.get("name")) $("player-name").value = params.get("name");
loadAgents().catch((e) => showError(`cannot load the agent list: ${e}`));

// Back after a reload inside the grace period: the stored session takes the seat again.
if (ui.session) { ui.mode = "play"; connect(() => send("join", { session_id: ui.session })); }
