// Mulle live: the page. Plain JavaScript, no build step. Speaks the protocol of docs/live.md.
"use strict";

const $ = (id) => document.getElementById(id);
const SYM = { KL: "♣", SP: "♠", HJ: "♥", RU: "♦" };
const SUIT_NAME = { KL: "clubs", SP: "spades", HJ: "hearts", RU: "diamonds" };
const RANK_NAME = { A: "ace", J: "jack", Q: "queen", K: "king" };
const params = new URLSearchParams(location.search);

// A seat is held by a per-table token kept in localStorage (issue 33, defect 1): the table opened again in any
// tab of this browser within the grace period takes the seat back with the game as it was.
function seatTokens() {
  try { return JSON.parse(localStorage.getItem("mulle-seats") || "{}") || {}; } catch (e) { return {}; }
}
function seatToken(table) { const t = seatTokens()[table]; return t && t.session ? t : null; }
function keepSeatToken(table, session, name) {
  const all = seatTokens();
  all[table] = { session, name, at: Date.now() };
  // Keep the newest few: a token is worth something only within a grace period.
  const names = Object.keys(all).sort((a, b) => all[b].at - all[a].at);
  for (const n of names.slice(20)) delete all[n];
  localStorage.setItem("mulle-seats", JSON.stringify(all));
}
function dropSeatToken(table) {
  const all = seatTokens();
  if (table in all) { delete all[table]; localStorage.setItem("mulle-seats", JSON.stringify(all)); }
}

const ui = {
  ws: null,
  mode: null,          // "play" | "watch" | "replay"
  session: sessionStorage.getItem("mulle-session"),
  // What the person last joined with: the form gets it back when the seat is gone (issue 24, defect 11).
  lastJoin: JSON.parse(sessionStorage.getItem("mulle-last-join") || "null"),
  seat: null,
  table: null,
  view: null,
  request: null,       // {id, moves, previews, sent}
  selected: null,      // the hand card whose uses are on offer
  elsewhere: false,    // this session continues in another tab
  frames: null,
  frame: 0,
  leaving: false,
  retry: null,
  oneClick: localStorage.getItem("mulle-one-click") === "1",
  fallbackJoin: null,  // the join by name to send when a kept seat token turns out to be expired
  announced: [],       // everything said aloud, in order (the live region keeps the last few)
  games: { offset: 0, limit: 10, total: 0 },
  staged: [],          // Casino: the table piles on this person's temporary stack (never sent until a drop)
  chooser: null,       // Casino: {card, choices} the server offered for an ambiguous drop
  dropped: null,       // Casino: the last drop sent
};

// ----- small DOM helpers -------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function cardName(text) {
  const [suit, rank] = text.split(" ");
  return `${RANK_NAME[rank] || rank} of ${SUIT_NAME[suit] || suit}`;
}

function cardEl(text, extra = "", tag = "span") {
  const [suit] = text.split(" ");
  const red = suit === "HJ" || suit === "RU";
  const attrs = { class: `card ${red ? "red" : ""} ${extra}`, "data-card": text, title: text };
  if (tag === "button") { attrs.type = "button"; attrs["aria-label"] = `${text}, ${cardName(text)}`; } else {
    attrs.role = "img";
    attrs["aria-label"] = `${text}`;
  }
  return el(tag, attrs, el("span", { class: "sym", text: SYM[suit] || "?", "aria-hidden": "true" }),
    el("span", { class: "txt", text, "aria-hidden": "true" }));
}

function backEl(extra = "") { return el("span", { class: `card back ${extra}`, role: "img", "aria-label": "hidden card" }); }

function fill(node, children) { node.replaceChildren(...children); }

function listRole(node, label, empty) {
  // A list role needs list items (axe's aria-required-children flagged the empty builds list, issue 52): an empty
  // pile is plain text saying so, a pile with cards a labelled list of them.
  if (node.querySelector("[role=listitem]")) {
    node.setAttribute("role", "list");
    node.setAttribute("aria-label", label);
    node.removeAttribute("data-empty");
  } else {
    node.removeAttribute("role");
    node.removeAttribute("aria-label");
    node.dataset.empty = empty;
  }
}

// ----- messages: errors float over the page and give way to the next success -------------------
function showError(text, kind = "error") {
  $("error-text").textContent = text;
  $("error").className = `toast ${kind === "info" ? "info" : ""}`;
  $("error").setAttribute("role", kind === "info" ? "status" : "alert");
  $("error").hidden = false;
}

function clearError() { $("error").hidden = true; }

function announce(text) {
  // A screen reader reads what is added to the polite live region, in order: each announcement is a line of its
  // own, so "Your turn." never replaces the opponent's move before it was read (issue 33, defect 3). The region
  // keeps the last few lines; ui.announced keeps everything said.
  ui.announced.push(text);
  const box = $("announce");
  box.append(el("p", { text }));
  while (box.childElementCount > 8) box.firstElementChild.remove();
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
  setStatus("connecting…");
  ws.onopen = () => {
    setStatus("connected");
    clearTimeout(ui.retry);
    if (first) { first(); return; }
    if (ui.session && ui.mode === "play") send("join", { session_id: ui.session });
  };
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => {
    if (ui.ws !== ws) return;
    ui.ws = null;
    setStatus(ui.mode ? "connection lost" : "");
    // A dropped player retries every second and gets the seat back (inside the grace period).
    if (ui.mode === "play" && ui.session && !ui.leaving) {
      setStatus("connection lost: reconnecting…");
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
      clearError();
      ui.mode = "play";
      ui.session = p.session_id;
      ui.elsewhere = false;
      sessionStorage.setItem("mulle-session", p.session_id);
      keepSeatToken(p.table.table_name, p.session_id, p.player_name);
      ui.fallbackJoin = null;
      ui.lastJoin = { table: p.table.table_name, name: p.player_name };
      sessionStorage.setItem("mulle-last-join", JSON.stringify(ui.lastJoin));
      ui.seat = p.seat;
      ui.table = p.table;
      ui.request = null;
      enterGame();
      restoreLog(p.history);
      showLastGame(p.last_game);
      setView(p.view);
      if (p.rejoined) log(`you are back at seat ${p.seat}`, false, "note");
      $("seat-link").hidden = false;
      focusForTurn();
      break;
    case "watch_confirmation":
      clearError();
      ui.mode = "watch";
      ui.seat = null;
      ui.table = p.table;
      enterGame();
      restoreLog(p.history);
      showLastGame(p.last_game);
      setView(p.view);
      break;
    case "request":
      clearError();
      ui.request = { id: p.request_id, moves: p.context.legal_moves, previews: p.context.previews || {} };
      ui.selected = null;
      startClock(p.clock);
      setView(p.view);
      announce("Your turn.");
      focusForTurn();
      break;
    case "notification":
      onNotification(p.event, p.data || {}, p.view);
      break;
    case "drop_choices":
      onDropChoices(p);
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
  const d = p.details || {};
  if ((p.code === 2000 || p.code === 2001) && ui.fallbackJoin) {
    // A kept seat token for this table has expired: sit down by name instead, as the person asked.
    const payload = ui.fallbackJoin;
    ui.fallbackJoin = null;
    dropSeatToken(payload.table_name);
    sessionStorage.removeItem("mulle-session");
    ui.session = null;
    send("join", payload);
    return;
  }
  if (p.code === 2000 || p.code === 2001) {
    if (ui.lastJoin) dropSeatToken(ui.lastJoin.table);
    // The session is gone (grace period over, or the server restarted): back to the start page, with the
    // table and name filled in so one click sits down again.
    sessionStorage.removeItem("mulle-session");
    ui.session = null;
    ui.mode = null;
    ui.request = null;
    $("game").hidden = true;
    $("start").hidden = false;
    restoreForm();
    const where = ui.lastJoin ? ` Press "Sit down" to join table ${ui.lastJoin.table} again as ${ui.lastJoin.name}.` : "";
    showError(`${p.message}.${where}`, "info");
    return;
  }
  if (p.code === 2005 && d.reason === "continued elsewhere") {
    // Another tab took this session over: this one stops offering moves until the person takes it back.
    ui.elsewhere = true;
    ui.request = null;
    ui.selected = null;
    render();
    announce("This table continues in another tab.");
    return;
  }
  if (d.action === "set_opponent" && ui.table) $("lobby-opponent").value = ui.table.opponent;
  // The server refused our answer: its request still stands, so the hand is active again.
  if (p.original_request_id && ui.request && p.original_request_id === ui.request.id) {
    ui.selected = null;
    ui.chooser = null;
    ui.request.sent = false;
    ui.request.dropping = false;
  }
  showError(errorWords(p));
  $("error").dataset.code = p.code;  // the protocol's code stays readable to tools, never shown as the message
  render();
}

// What each refusal is, in words (the code itself is for programs: issue 52, "error 2004:" was shown to people).
const CODE_WORDS = { 1000: "The server failed", 1001: "Not understood", 1002: "Not allowed", 1003: "The server is busy",
  2000: "Your seat has gone", 2001: "Your seat has gone", 2002: "No such table", 2003: "The table is full",
  2004: "That name is taken", 2005: "You are seated already", 3000: "Not possible", 3001: "Not your card",
  3002: "Not your turn", 3006: "Too late", 4000: "The game has started", 4001: "Only the host can do that" };

function errorWords(p) {
  const text = p.message ? p.message[0].toUpperCase() + p.message.slice(1) : "";
  return `${CODE_WORDS[p.code] || "Refused"}: ${text}`;
}

function onNotification(event, data, view) {
  if (data.table) ui.table = data.table;
  switch (event) {
    case "moved": {
      if (ui.request) ui.request = null;
      const mine = data.player === ui.seat;
      ui.chooser = null;
      if (mine) ui.staged = [];
      const text = eventText(data);
      log(text, mine, "", data.move, data.number);
      showMove(data, text);
      // One's own move is confirmed aloud too (defect 2): "You: captured with KL 9, taking HJ 9".
      if (mine) { clearError(); announce(`You: ${text.replace(/^You /, "")}`); } else announce(text);
      moment(data);
      if (data.sweep) {
        const sweep = sweepText(data.sweep);
        log(sweep, false, "note");
        announce(sweep);
      }
      break;
    }
    case "set_over": {
      const text = `Set ${data.set} over: ${seatName(0)} ${data.sheets[0].total}, ${seatName(1)} ${data.sheets[1].total}.` +
        (data.scores ? ` Score so far: ${seatName(0)} ${data.scores[0]}, ${seatName(1)} ${data.scores[1]}.` : "");
      log(text, false, "note");
      announce(text);
      break;
    }
    case "game_over": {
      ui.request = null;
      startClock(null);
      const text = showLastGame(data);
      log(text, false, "note");
      announce(text);
      if (ui.mode === "play") localStorage.setItem("mulle-played", "1");
      // The result takes the focus (it fell to <body>) and comes into view, on a phone too (defect 7).
      setTimeout(() => {
        const box = $("game-over");
        if (box.hidden) return;
        const a = document.activeElement;
        if (ui.mode === "play" || !a || a === document.body) box.focus({ preventScroll: true });
        box.scrollIntoView({ block: "center", behavior: reducedMotion() ? "auto" : "smooth" });
      }, 0);
      break;
    }
    case "game_started":
      clearError();
      $("game-over").hidden = true;
      fill($("log"), []);
      fill($("last-move"), []);
      log(`game ${data.game} starts`, false, "note");
      break;
    case "deal": {
      const text = isCasino() ? `Round ${data.set}: new cards dealt, ${data.deck_size} left in the stock.`
        : `Set ${data.set}, deal ${data.deal}: new cards dealt, ${data.deck_size} left in the deck.`;
      log(text, false, "note");
      announce(text);  // a new deal is news to a screen reader too (issue 52)
      break;
    }
    case "lobby_update":
      clearError();
      if (data.action === "rematch" && data.wants) log(`${data.wants.join(" and ")} asked for a rematch`, false, "note");
      break;
    case "forfeit": log(`${data.name} forfeits: ${data.reason}`, false, "note"); break;
    case "player_joined": log(`${data.player_name} sits down in seat ${data.player_index}`, false, "note"); break;
    case "player_left": log(`${data.player_name} left; ${data.replaced_by_name} takes seat ${data.player_index}`, false, "note"); break;
    case "player_dropped": log(`${data.player_name} lost the connection (seat kept ${data.grace} s)`, false, "note"); break;
    case "player_reconnected": if (data.player_index !== ui.seat) log(`${data.player_name} is back`, false, "note"); break;
    case "agent_replaced": log(`agent ${data.agent} ${data.reason}; ${data.replaced_by_name} plays on`, false, "note"); break;
  }
  if (view !== undefined && view !== null) setView(view); else render();
}

function showLastGame(data) {
  // The result of the table's last game: from game_over, or from a (re)join after it (defect 8).
  if (!data) { $("game-over").hidden = true; return ""; }
  const w = data.winner;
  // A forfeit says who forfeited and why (issue 52: it read "Rita -> heuristic 0 - heuristic 6").
  const text = data.result_line ? `Game over: ${data.result_line}.` :
    `Game over: ${seatName(0)} ${data.scores[0]} – ${seatName(1)} ${data.scores[1]}. ` +
    (w === null || w === undefined ? "A draw." : `${seatName(w)} wins.`);
  const parts = [el("div", { text })];
  if (data.ratings) parts.push(el("div", { class: "note", text: ratingWords(data.ratings) }));
  if (data.store_error) parts.push(el("div", { class: "note", text: data.store_error }));
  if (ui.mode === "play") {
    parts.push(el("button", { type: "button", class: "rematch", text: "Rematch",
      onclick: () => send("lobby_action", { action: "rematch" }) }));
  }
  parts.push(recordLinks(data));
  fill($("game-over"), parts);
  $("game-over").hidden = false;
  return text;
}

function ratingWords(ratings) {
  // "Anna 1562 (+62, provisional), random 1438 (−62)": what the game did to the ratings.
  return "Ratings: " + ratings.filter(Boolean).map((r) => {
    const change = r.change === null ? "" : `${r.change > 0 ? "+" : r.change < 0 ? "−" : "±"}${Math.abs(r.change)}`;
    const extra = [change, r.provisional ? "provisional" : ""].filter(Boolean).join(", ");
    return `${r.name} ${r.rating}${extra ? ` (${extra})` : ""}`;
  }).join(", ");
}

// ----- the move clock (issue 52, item 5): the server's deadline for the request, counted down here ----------
function startClock(clock) {
  clearInterval(ui.clockTimer);
  ui.clock = clock || null;
  const node = $("clock");
  if (!ui.clock) { node.hidden = true; return; }
  // The deadline is the server's; the page counts from what is left now, so a wrong local clock does not matter.
  const end = Date.now() + ui.clock.left * 1000;
  const tick = () => {
    const left = Math.max(0, Math.round((end - Date.now()) / 1000));
    node.textContent = `Your move: ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left`;
    node.classList.toggle("clock-low", left <= 15);
    if (left === 30 || left === 10) announce(`${left} seconds left for your move.`);
    if (left === 0) clearInterval(ui.clockTimer);
  };
  node.hidden = false;
  tick();
  ui.clockTimer = setInterval(tick, 1000);
}

function recordLinks(data) {
  // The record's exact text from the server: a 63-bit seed must never pass through a JavaScript number.
  const text = data.record_text;
  const blob = new Blob([text], { type: "application/json" });
  const name = data.game_id ? `mulle-game-${data.game_id}` : `mulle-${data.seed}`;
  const save = el("a", { id: "save-record", href: URL.createObjectURL(blob), download: `${name}.json`,
    text: "Save the game record" });
  const replay = el("button", { id: "replay-record", type: "button", text: "Replay it", onclick: () => {
    if (ui.mode === "play") send("leave");
    sessionStorage.removeItem("mulle-session");
    ui.session = null;
    replayText(text);
  } });
  const links = el("div", { class: "record-links" }, save, replay);
  if (data.game_id) links.append(el("button", { id: "analyse-record", type: "button", text: "Analyse", onclick: () => analyse(data.game_id) }));
  return links;
}

// ----- entering and leaving ----------------------------------------------------------------------
function reducedMotion() { return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches; }

function enterGame() {
  $("start").hidden = true;
  $("game").hidden = false;
  $("replay-controls").hidden = ui.mode !== "replay";
  // The pause per move is an agents' table's (defect 6: a watcher of a people's table saw a control that only erred).
  $("watch-controls").hidden = !(ui.mode === "watch" && ui.table && ui.table.watch);
  $("one-click-label").hidden = ui.mode !== "play";
  $("hints-label").hidden = ui.mode !== "play";
  const invite = ui.mode === "play" && ui.table && !ui.table.watch;
  $("invite").hidden = !invite;
  $("leave-btn").textContent = ui.mode === "play" ? "Leave" : "Close";
}

function askLeave() {
  // Leaving a running game gives the seat to an agent: the person confirms it first (issue 52). The lobby, a
  // finished game, watching and replaying leave at once.
  const running = ui.mode === "play" && ui.table && ui.table.phase === "playing" && ui.view && !ui.view.over;
  if (!running) { leave(); return; }
  $("leave-dialog").showModal();
  $("leave-no").focus();
}

function leave() {
  ui.leaving = true;
  if (ui.mode === "play" || ui.mode === "watch") send("leave");
  if (ui.mode === "play" && ui.table) dropSeatToken(ui.table.table_name);
  sessionStorage.removeItem("mulle-session");
  Object.assign(ui, { mode: null, session: null, seat: null, table: null, view: null, request: null, frames: null,
    elsewhere: false, boardAnalysis: null, staged: [], chooser: null });
  $("board-analysis").hidden = true;
  $("seat-link").hidden = true;
  startClock(null);
  fill($("log"), []);
  $("game-over").hidden = true;
  $("game").hidden = true;
  $("start").hidden = false;
  restoreForm();
  loadGames(ui.games.offset);
  loadTables();
  setTimeout(() => { ui.leaving = false; }, 100);
}

function restoreForm() {
  if (!ui.lastJoin) return;
  $("table-name").value = ui.lastJoin.table;
  $("player-name").value = ui.lastJoin.name;
}

// ----- words for people ------------------------------------------------------------------------
function handValue(card) {
  const [suit, rank] = card.split(" ");
  if (rank === "A") return 14;
  if (card === "SP 2") return 15;
  if (card === "RU 10") return 16;
  return { J: 11, Q: 12, K: 13 }[rank] || Number(rank);
}

function listCards(cards) {
  if (cards.length <= 1) return cards.join("");
  return `${cards.slice(0, -1).join(", ")} and ${cards[cards.length - 1]}`;
}

function whoDid(e) {
  if (e.by) return e.by.kind === "person" ? (e.player === ui.seat && e.by.name === mySeatName() ? "You" : e.by.name) : `${e.by.name} (agent)`;
  return seatName(e.player);
}

function mySeatName() {
  const s = ui.table && ui.table.seats && ui.seat !== null ? ui.table.seats[ui.seat] : null;
  return s ? s.name : null;
}

function casinoEventText(e, who) {
  // A Casino move for people: "Anna captured with HJ 5, taking KL 5 – a sweep!", "built 8", "raised the build".
  const w = e.move.split(" ");
  const card = casinoCard(e.move);
  if (w[0] === "capture") {
    return `${who} captured with ${card}` + (e.taken && e.taken.length ? `, taking ${listCards(e.taken)}` : "") +
      (e.table_swept ? " – a sweep, the table is empty!" : "");
  }
  if (w[0] === "build") return `${who} built ${w[w.indexOf("to") + 1]} with ${card}`;
  if (w[0] === "increase") return `${who} raised the build of ${w[1].startsWith("[") ? "cards " + w.slice(1, w.indexOf("with")).join(" ") : w[1]} with ${card}`;
  return `${who} trailed ${card} (laid it on the table)`;
}

function buildTarget(w) {
  // A Mulle build's target, with the way it changes a build said (issue 52: "build 15 on build 14" and "build 13
  // on build 14" stood side by side unexplained): building up adds the card, building down takes it away.
  const on = w.slice(4, w.length - 2).join(" ");
  const m = on.match(/^\[(\d+)\]$/);
  if (!m) return on;
  const from = Number(m[1]);
  const to = Number(w[w.length - 1]);
  return to > from ? `build ${from} (building up: ${from} + ${to - from})` : `build ${from} (building down: ${from} − ${from - to})`;
}

function eventText(e) {
  // One move for people: who actually played it (defect 6), in plain words, with what a capture took.
  const who = whoDid(e);
  if (isCasino() || e.round !== undefined) return casinoEventText(e, who);
  const w = e.move.split(" ");
  const card = w.slice(1, 3).join(" ");
  let text;
  if (w[0] === "capture") {
    text = `${who} captured with ${card}` + (e.taken && e.taken.length ? `, taking ${listCards(e.taken)}` : "");
    if (e.mulles) text += ` (${e.mulles} mulle${e.mulles > 1 ? "s" : ""}!)`;
    if (e.tabbe) text += " – tabbe, the table is empty!";
  } else if (w[0] === "build") {
    text = `${who} built ${w[w.length - 1]}: ${card} on ${buildTarget(w)}`;
  } else if (w[0] === "trotta") {
    text = `${who} played trotta with ${card}: a locked build of ${handValue(card)}`;
  } else {
    text = `${who} laid ${card} on the table`;
  }
  return text;
}

function sweepText(s) {
  return `The cards left on the table (${listCards(s.cards)}) go to ${seatName(s.to)}, the last to capture.`;
}

function useText(move, pv) {
  // What a use of one's own card does, said plainly (the preview comes from the server's engine).
  const w = move.split(" ");
  const card = w.slice(1, 3).join(" ");
  pv = pv || {};
  const took = [...(pv.loose || []), ...(pv.builds || []).map((v) => `build ${v}`)];
  if (w[0] === "capture") {
    let t = `take ${took.length ? listCards(took) : "nothing"}`;
    if (pv.mulles) t += ` – ${pv.mulles} mulle${pv.mulles > 1 ? "s" : ""}`;
    if (pv.tabbe) t += " – tabbe";
    return t;
  }
  if (w[0] === "build" || w[0] === "trotta") {
    const v = w[0] === "build" ? Number(w[w.length - 1]) : pv.value;
    const target = w[0] === "build" ? ` on ${buildTarget(w)}` : "";
    const hand = (ui.view && ui.view.hand ? ui.view.hand : []).slice();
    hand.splice(hand.indexOf(card), 1);
    const keep = [...new Set(hand.filter((c) => handValue(c) === v))];
    const on = w.slice(4, w.length - 2).join(" ").replace(/^\[(\d+)\]$/, "build $1");
    const gathers = took.filter((c) => w[0] === "trotta" || c !== on);
    let t = w[0] === "build" ? `build ${v}${target}` : `trotta: a locked build of ${v}`;
    if (w[0] === "build" && gathers.length) t += `, gathering ${listCards(gathers)} (locked)`;
    else if (w[0] === "trotta" && gathers.length) t += ` with ${listCards(gathers)}`;
    if (keep.length) t += `: you must later capture it with ${v === 8 || v === 11 ? "an" : "a"} ${v}, which is your ${keep.join(" or ")}`;
    return t;
  }
  return "lay it on the table";
}

function restoreLog(history) {
  fill($("log"), []);
  for (const e of history || []) log(eventText(e), e.player === ui.seat, "", e.move, e.number);
}

function log(text, mine = false, kind = "", move = null, number = null) {
  // A move's line keeps the move in the notation (data-move, and a tooltip) beside the plain words, and is
  // numbered by its move number (notes between moves are not numbered).
  $("log").append(el("li", { class: `${mine ? "me" : ""} ${kind}`, text, "data-move": move, title: move, value: number }));
  $("log-box").scrollTop = $("log-box").scrollHeight;
}

function showMove(e, text) {
  // The last move on the table, with the cards a capture took (and a set's sweep) shown as cards.
  const line = el("div", { class: "line", "data-move": e.move, title: e.move }, el("span", { text: `Last: ${text}` }));
  if (e.taken && e.taken.length) line.append(el("span", { class: "taken" }, ...e.taken.map((c) => cardEl(c, "mini"))));
  const parts = [line];
  if (e.sweep) {
    parts.push(el("div", { class: "line sweep" }, el("span", { text: sweepText(e.sweep) }),
      el("span", { class: "taken" }, ...e.sweep.cards.map((c) => cardEl(c, "mini")))));
  }
  fill($("last-move"), parts);
  const box = $("last-move");
  box.classList.remove("flash");
  void box.offsetWidth;  // restart the animation
  if (e.taken && e.taken.length || e.sweep) box.classList.add("flash");
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
  // Cards move between hand, table and piles: where each card was is noted before drawing the new position.
  const before = reducedMotion() ? null : cardRects();
  ui.view = view;
  render();
  if (before) animateCards(before);
}

function myTurn() {
  const v = ui.view;
  return ui.mode === "play" && !ui.elsewhere && ui.request && !ui.request.sent && v && !v.over && v.to_move === ui.seat;
}

function render() {
  const v = ui.view;
  const t = ui.table;
  const me = ui.seat !== null && ui.seat !== undefined ? ui.seat : 0;
  const opp = 1 - me;
  $("table-label").textContent = ui.mode === "replay" ? `Replay${isCasino() ? " · Casino" : ""}`
    : (t ? `Table ${t.table_name}${t.game === "casino" ? " · Casino" : ""}` : "");
  $("top-name").textContent = seatName(opp);
  $("bottom-name").textContent = seatName(me);
  $("elsewhere").hidden = !ui.elsewhere;

  // The lobby: the host starts the (next) game; nothing to play yet.
  const lobby = ui.mode === "play" && t && t.phase === "lobby" && !ui.elsewhere;
  $("lobby").hidden = !lobby;
  if (lobby) {
    const host = t.host && t.seats[ui.seat] && t.seats[ui.seat].name === t.host;
    $("start-btn").disabled = !host;
    $("start-btn").textContent = t.games ? "New game" : "Start game";
    $("lobby-opponent").disabled = !host;
    if ($("lobby-opponent").value !== t.opponent && document.activeElement !== $("lobby-opponent")) $("lobby-opponent").value = t.opponent;
  }
  if (!v) {
    const host = lobby && t.host && t.seats[ui.seat] && t.seats[ui.seat].name === t.host;
    $("set-deal").textContent = !lobby ? "" : host ? `Lobby: you are the host; press ${t.games ? "New game" : "Start game"} when ready`
      : `Lobby: waiting for ${t.host || "the host"} to start`;
    $("turn").textContent = "";
    for (const id of ["hand", "top-hand", "loose", "builds", "top-mulle", "bottom-mulle", "choices"]) fill($(id), []);
    listRole($("loose"), "Loose cards", "No loose cards");
    listRole($("builds"), "Builds", "No builds");
    $("choices").hidden = true;
    return;
  }
  if (v.game === "casino") { renderCasino(v, me, opp); return; }
  for (const n of document.querySelectorAll(".mulle-piles")) n.hidden = false;
  for (const n of document.querySelectorAll(".casino-piles")) n.hidden = true;
  $("stack").hidden = true;
  $("drop-note").hidden = true;
  $("deck-label").textContent = "Deck";
  $("set-deal").textContent = `Set ${v.set} of ${v.ruleset.sets} · deal ${v.deal}`;
  $("deck-size").textContent = v.deck_size;
  $("turn").textContent = v.over ? "Game over" : `${seatName(v.to_move)} to move`;
  $("top-turn").textContent = !v.over && v.to_move === opp ? "◀ to move" : "";
  $("bottom-turn").textContent = !v.over && v.to_move === me ? "◀ to move" : "";

  // Hands: one's own (or both, when watching agents or replaying).
  const hands = v.hands;
  const oppSize = v.hand_sizes ? v.hand_sizes[opp] : v.opponent_hand_size;
  $("opp-hand-size").textContent = oppSize;
  // Every seat's hand size (defect 6: the bottom seat's was not shown).
  $("my-hand-size").textContent = v.hand_sizes ? v.hand_sizes[me] : v.hand.length;
  fill($("top-hand"), hands ? hands[opp].map((c) => cardEl(c)) : Array.from({ length: oppSize }, () => backEl()));
  // A watcher of a people's table sees both hands' backs, the bottom seat's too (issue 52: it saw one).
  if (!hands && ui.mode === "watch") { fill($("hand"), Array.from({ length: v.hand_sizes[me] }, () => backEl())); renderChoices(false); }
  else renderHand(hands ? hands[me] : v.hand);

  // The table: loose cards and builds with value, owner and lock.
  fill($("loose"), v.loose.map((c) => { const n = cardEl(c); n.setAttribute("role", "listitem"); return n; }));
  listRole($("loose"), "Loose cards", "No loose cards");
  fill($("builds"), v.builds.map((b) => el("div", { class: `build ${b.locked ? "locked" : ""}`, "data-value": b.value, role: "listitem",
    "aria-label": `build ${b.value}, ${b.owner === null ? "no owner" : seatName(b.owner)}${b.locked ? ", locked" : ""}: ${b.cards.join(", ")}` },
    el("div", { class: "label", text: `[${b.value}] ${b.owner === null ? "no owner" : seatName(b.owner)}${b.locked ? " · locked" : ""}`, "aria-hidden": "true" }),
    el("div", { class: "cards", "aria-hidden": "true" }, ...b.cards.map((c) => cardEl(c, "mini"))))));
  listRole($("builds"), "Builds", "No builds");

  // Captured piles: mulle pairs face up, intake as a count, tabbes and running score.
  for (const [side, seat] of [["top", opp], ["bottom", me]]) {
    fill($(`${side}-mulle`), v.mulle[seat].map((c) => cardEl(c, "mini")));
    // Intake is one number everywhere (defect 11): the intake points so far this set, as the score sheet counts
    // them (over the mulle and intake piles alike); the cards captured are said beside it.
    $(`${side}-intake`).textContent = setIntake(v, seat);
    $(`${side}-cards`).textContent = v.intake[seat].length + v.mulle[seat].length;
    $(`${side}-tabbe`).textContent = v.tabbe[seat];
    $(`${side}-score`).textContent = v.scores[seat].total;
  }
  if (!v.last_move && ui.mode !== "replay") fill($("last-move"), []);
  renderSheets(v);
  renderScoreboard(v);
  renderHint();
}

function setIntake(v, seat) {
  // The view's score is the game's so far (finished sets plus this one); the bonus counts per set, so the set's
  // intake points are what the page shows: the game's minus the finished sets' (the last set's once it is over).
  if (v.over && v.sheets.length) return v.sheets[v.sheets.length - 1][seat].intake;
  return v.scores[seat].intake - v.sheets.reduce((sum, pair) => sum + pair[seat].intake, 0);
}

function renderHand(cards) {
  // Hand cards are buttons in one tab stop (roving tabindex): arrow keys move, Enter chooses, Escape cancels.
  const active = myTurn();
  const hand = $("hand");
  const focused = hand.contains(document.activeElement) ? [...hand.children].indexOf(document.activeElement) : -1;
  hand.classList.toggle("active", !!active);
  if (ui.selected && !cards.includes(ui.selected)) ui.selected = null;
  // The hand is one tab stop at every moment, the opponent's turn included (defect 9): one can read one's cards.
  let tabStop = Math.max(0, cards.indexOf(ui.selected));
  if (focused >= 0) tabStop = Math.min(focused, cards.length - 1);
  fill(hand, cards.map((c, i) => {
    const uses = active ? usesOf(c) : [];
    const cls = active && !uses.length ? "unusable" : (ui.selected === c ? "selected" : "");
    if (ui.mode !== "play") return cardEl(c);
    const node = cardEl(c, cls, "button");
    node.tabIndex = i === tabStop ? 0 : -1;
    if (active) {
      node.setAttribute("aria-label", `${c}, ${cardName(c)}: ${uses.length ? `${uses.length} use${uses.length > 1 ? "s" : ""}` : "no move now"}`);
      node.setAttribute("aria-pressed", ui.selected === c ? "true" : "false");
      // Focus alone opens nothing (defects 2 and 8): Enter or a click shows the uses, a second Enter plays.
      node.addEventListener("click", () => clickCard(c));
      if (isCasino()) {
        // A Casino card is dragged onto a table pile, the temporary stack or the empty table (CASINO.md 8).
        node.draggable = true;
        node.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", `hand:${c}`); e.dataTransfer.effectAllowed = "move"; });
      }
    } else {
      node.setAttribute("aria-disabled", "true");
    }
    node.addEventListener("keydown", (e) => handKey(e, i));
    return node;
  }));
  if (focused >= 0 && hand.children.length) hand.children[Math.min(focused, hand.children.length - 1)].focus({ preventScroll: true });
  renderChoices(active);
}

function renderSheets(v) {
  const box = $("sheets");
  box.className = "sheets";
  if (!v.sheets.length) { fill(box, []); return; }
  // One small table per finished set: the score sheet's lines down, the two seats across.
  const tables = v.sheets.map((pair, i) => el("table", { class: "sheet", "data-set": i + 1 },
    el("tr", {}, el("th", { text: `${v.game === "casino" ? "Round" : "Set"} ${i + 1}`, scope: "col" }), el("th", { text: seatName(0), scope: "col" }), el("th", { text: seatName(1), scope: "col" })),
    ...(v.game === "casino" ? Object.keys(pair[0]) : ["mulle", "tabbe", "intake", "bonus", "total"]).map((k) => el("tr", { class: k },
      el("td", { text: k === "intake" ? "intake points" : k.replace("_", " ") }), el("td", { text: pair[0][k] }), el("td", { text: pair[1][k] })))));
  fill(box, [el("h2", { text: "Score sheets" }), ...tables]);
}

// ----- playing: choose a card, see its uses, then play one ------------------------------------------
function cardOf(moveText) { return moveText.split(" ").slice(1, 3).join(" "); }

function usesOf(card) {
  return ui.request ? ui.request.moves.filter((m) => (isCasino() ? casinoCard(m) : cardOf(m)) === card) : [];
}

function clickCard(card) {
  const uses = usesOf(card);
  if (!uses.length) return;
  // Nothing is played on the first click, unless the person chose "one click plays a card that has one use".
  if (ui.oneClick && uses.length === 1) { play(uses[0]); return; }
  ui.chooser = null;
  if (ui.selected === card) {  // a second click on the chosen card closes its uses
    ui.selected = null;
    render();
    return;
  }
  selectCard(card, false);
}

function selectCard(card, focusUse) {
  ui.selected = card;
  for (const n of $("hand").children) {
    n.classList.toggle("selected", n.dataset.card === card);
    n.setAttribute("aria-pressed", n.dataset.card === card ? "true" : "false");
  }
  renderChoices(myTurn());
  renderHint();  // the hint follows the choice (issue 52: it said "choose one" after a card was chosen)
  if (focusUse) { const b = $("choices").querySelector("button[data-move], button[data-target]"); if (b) b.focus(); }
}

function handKey(e, i) {
  const cards = [...$("hand").children];
  const go = (j) => { e.preventDefault(); const n = cards[(j + cards.length) % cards.length]; n.tabIndex = 0; cards[i].tabIndex = -1; n.focus(); };
  if (e.key === "ArrowRight" || e.key === "ArrowDown") go(i + 1);
  else if (e.key === "ArrowLeft" || e.key === "ArrowUp") go(i - 1);
  else if (e.key === "Home") go(0);
  else if (e.key === "End") go(cards.length - 1);
  else if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    const card = cards[i].dataset.card;
    const uses = usesOf(card);
    if (!myTurn() || !uses.length) return;
    // The first Enter shows the card's uses and moves the focus onto the first; Enter there plays it.
    selectCard(card, true);
  } else if (e.key === "Escape") { e.preventDefault(); cancelChoice(); }
}

function cancelChoice() {
  const card = ui.selected;
  if (!card && !ui.chooser && ui.staged.length) { clearStack(); return; }  // Escape with nothing chosen: the stack
  ui.selected = null;
  ui.chooser = null;
  markTargets(null);
  render();
  const n = card && $("hand").querySelector(`[data-card="${card}"]`);
  if (n && document.activeElement !== n) n.focus();
}

function renderChoices(active) {
  const box = $("choices");
  if (!active || !ui.selected) { box.hidden = true; fill(box, []); markTargets(null); return; }
  box.hidden = false;
  const previews = ui.request.previews || {};
  const esc = (e) => { if (e.key === "Escape") { e.preventDefault(); cancelChoice(); } };
  if (isCasino() && ui.chooser) {
    // The server's chooser: the moves the drop means, in words (CASINO.md 8.1).
    const d = ui.dropped;
    const where = d ? (d.target === null ? (d.staged.length ? "your temporary stack" : "the table") : pileWords(d.target)) : "there";
    fill(box, [el("span", { text: `${ui.chooser.card} on ${where} means: ` }),
      ...ui.chooser.choices.map((c) => el("button", { type: "button", "data-move": c.move, title: c.move, text: c.words,
        onclick: () => play(c.move), onmouseenter: () => markTargets(c.move), onmouseleave: () => markTargets(null),
        onfocus: () => markTargets(c.move), onblur: () => markTargets(null), onkeydown: esc })),
      el("button", { type: "button", class: "cancel", onclick: cancelChoice, text: "cancel", onkeydown: esc })]);
    if (box.scrollIntoView) box.scrollIntoView({ block: "nearest" });  // on a phone the choices may lie below
    return;
  }
  if (isCasino()) {
    // Where the chosen card goes: the keyboard's (and a click's) equivalent of a drag.
    const v = ui.view;
    const targets = [...v.loose.map((c) => ({ pile: c, words: `on ${c}` })),
      ...v.builds.map((b) => ({ pile: b.cards, words: `on ${pileWords(b.cards)}` }))];
    const buttons = targets.map((t) => el("button", { type: "button", "data-target": pileKey(t.pile), text: t.words,
      onclick: () => sendDrop(ui.selected, t.pile), onkeydown: esc }));
    if (ui.staged.length) buttons.push(el("button", { type: "button", "data-target": "stack", text: "on your temporary stack",
      onclick: () => sendDrop(ui.selected, null), onkeydown: esc }));
    buttons.push(el("button", { type: "button", "data-target": "table", text: "on the empty table (trail)",
      onclick: () => sendDrop(ui.selected, null, false), onkeydown: esc }));
    fill(box, [el("span", { text: `Where does ${ui.selected} go? ` }), ...buttons,
      el("button", { type: "button", class: "cancel", onclick: cancelChoice, text: "cancel", onkeydown: esc })]);
    if (box.scrollIntoView) box.scrollIntoView({ block: "nearest" });
    return;
  }
  fill(box, [el("span", { text: `${ui.selected}: ` }),
    ...usesOf(ui.selected).map((m) => el("button", { type: "button", "data-move": m, onclick: () => play(m), text: useText(m, previews[m]),
      onmouseenter: () => markTargets(m), onmouseleave: () => markTargets(null), onfocus: () => markTargets(m),
      onblur: () => markTargets(null), onkeydown: (e) => { if (e.key === "Escape") { e.preventDefault(); cancelChoice(); } } })),
    el("button", { type: "button", class: "cancel", onclick: cancelChoice, text: "cancel" })]);
  // On a phone the uses may lie below the fold: bring them into view.
  if (box.scrollIntoView) box.scrollIntoView({ block: "nearest" });
}

function markTargets(move) {
  // Show on the table exactly what the move would take or build on (the server's engine says which cards).
  document.querySelectorAll(".target").forEach((n) => n.classList.remove("target"));
  if (!move || !ui.request) return;
  const pv = (ui.request.previews || {})[move];
  if (!pv) return;
  const left = [...pv.loose];
  document.querySelectorAll("#loose .card").forEach((n) => {
    const i = left.indexOf(n.dataset.card);
    if (i >= 0) { n.classList.add("target"); left.splice(i, 1); }
  });
  for (const value of pv.builds) {
    const node = document.querySelector(`#builds .build[data-value="${value}"]`);
    if (node) node.classList.add("target");
  }
}

function play(move) {
  startClock(null);
  // Only texts from the request's legal moves are ever sent.
  if (!ui.request || ui.request.sent || !ui.request.moves.includes(move)) return;
  send("response", { request_id: ui.request.id, data: { move } });
  ui.request.sent = true;  // one answer per request: no double clicks
  ui.selected = null;
  ui.chooser = null;
  markTargets(null);
  $("hand").classList.remove("active");
  $("choices").hidden = true;
}

function focusForTurn() {
  // Keyboard and screen-reader players land on their hand when it is their turn (unless they are typing).
  let a = document.activeElement;
  if (a && a.closest("[hidden]")) a = null;  // the form just left the screen: the focus is nowhere
  if (!myTurn() || (a && a.matches("input, textarea, select, #rules *"))) {
    if (ui.mode === "play" && ui.table && ui.table.phase === "lobby" && !$("start-btn").disabled && (!a || a === document.body)) $("start-btn").focus();
    return;
  }
  if (a && a !== document.body && !$("bottom-seat").contains(a) && !$("lobby").contains(a)) return;
  const first = $("hand").querySelector("button.card:not(.unusable)") || $("hand").querySelector("button.card");
  if (first) { for (const n of $("hand").children) n.tabIndex = n === first ? 0 : -1; first.focus(); }
}

// ----- Casino at the table: drops, the chooser, the temporary stack (CASINO.md 8) ----------------------------
// The page only sends drops; the server reads them with mulle_env.casino.drops and plays the one move a drop
// means, offers the moves in words when it means several, or says why it means none.
function isCasino() {
  return (ui.view && ui.view.game === "casino") || (ui.table && ui.table.game === "casino") ||
    (ui.mode === "replay" && ui.record && ui.record.game === "casino");
}

function casinoCard(move) {
  // The hand card a Casino move plays: "increase 5 with HJ 3" plays HJ 3, every other kind names it second.
  const w = move.split(" ");
  const i = w[0] === "increase" ? w.indexOf("with") + 1 : 1;
  return w.slice(i, i + 2).join(" ");
}

function pileKey(pile) { return Array.isArray(pile) ? `[${pile.join(" ")}]` : pile; }

function pileWords(pile) {
  if (!Array.isArray(pile)) return pile;
  const b = ui.view && ui.view.builds.find((x) => pileKey(x.cards) === pileKey(pile));
  return b ? `the build of ${b.value} (${b.owner === ui.seat ? "yours" : seatName(b.owner)})` : `the build ${pileKey(pile)}`;
}

function stageToggle(pile) {
  // A table pile into (or out of) the temporary stack: the person's own staging, never sent until a drop.
  const key = pileKey(pile);
  const i = ui.staged.findIndex((p) => pileKey(p) === key);
  if (i >= 0) ui.staged.splice(i, 1); else ui.staged.push(pile);
  announce(i >= 0 ? `${pileWords(pile)} back on the table.` : `${pileWords(pile)} on your temporary stack.`);
  const focused = document.activeElement && document.activeElement.closest("#loose, #builds");
  render();
  // The table was drawn anew: the focus stays on the pile the person staged.
  if (focused) {
    const again = [...document.querySelectorAll("#loose .card, #builds .build")].find((n) => (n.dataset.build || n.dataset.card) === key);
    if (again) again.focus();
  }
}

function clearStack() {
  if (!ui.staged.length) return;
  ui.staged = [];
  announce("Temporary stack cleared.");
  render();
}

function sendDrop(card, target, withStack = true) {
  // One drop per request until the server answers (a move, a chooser, or a refusal). A drop on the empty table
  // (withStack false) trails whatever is staged; a drop on a pile or on the stack takes the stack with it.
  if (!myTurn() || ui.request.dropping) return;
  const staged = withStack ? ui.staged.filter((p) => pileKey(p) !== (target === null ? null : pileKey(target))) : [];
  ui.request.dropping = true;
  ui.dropped = { card, target, staged };
  send("drop", { request_id: ui.request.id, card, target, staged });
}

function onDropChoices(p) {
  if (!ui.request || p.request_id !== ui.request.id) return;
  ui.request.dropping = false;
  ui.chooser = { card: p.card, choices: p.choices };
  ui.selected = p.card;
  render();
  const b = $("choices").querySelector("button[data-move]");
  if (b) b.focus();
  announce(`${p.choices.length} ways to play ${p.card} there: ${p.choices.map((c) => c.words).join(", ")}.`);
}

function dragData(e) { return e.dataTransfer ? e.dataTransfer.getData("text/plain") : ""; }

function dropZone(node, target) {
  // A place a hand card can be dropped on (a table pile, the stack, the empty table), and where table piles
  // are dragged to be staged (the stack).
  node.addEventListener("dragover", (e) => { if (myTurn()) { e.preventDefault(); node.classList.add("over"); } });
  node.addEventListener("dragleave", () => node.classList.remove("over"));
  node.addEventListener("drop", (e) => {
    e.preventDefault();
    e.stopPropagation();
    node.classList.remove("over");
    const data = dragData(e);
    if (data.startsWith("table:")) { if (target === "stack") stageToggle(JSON.parse(data.slice(6))); return; }
    if (!data.startsWith("hand:")) return;
    sendDrop(data.slice(5), target === "stack" || target === "table" ? null : target, target !== "table");
  });
}

function pileButton(node, pile) {
  // A table pile in a Casino game: a button (click or Enter: the chosen hand card goes there, or with no card
  // chosen the pile goes onto the temporary stack), draggable onto the stack, a drop target for hand cards.
  const staged = ui.staged.some((p) => pileKey(p) === pileKey(pile));
  node.classList.toggle("staged", staged);
  if (ui.mode !== "play" || !myTurn()) return node;
  node.tabIndex = 0;
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", `${pileWords(pile)}${staged ? ", on your temporary stack" : ""}: ` +
    (ui.selected ? `drop ${ui.selected} here` : "put on your temporary stack"));
  node.setAttribute("aria-pressed", staged ? "true" : "false");
  node.draggable = true;
  node.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", `table:${JSON.stringify(pile)}`); });
  const act = () => { if (ui.selected && !ui.chooser) sendDrop(ui.selected, pile); else stageToggle(pile); };
  node.addEventListener("click", (e) => { e.stopPropagation(); act(); });
  node.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(); }
    if (e.key === "Escape") { e.preventDefault(); cancelChoice(); }
  });
  dropZone(node, pile);
  return node;
}

function renderCasino(v, me, opp) {
  $("set-deal").textContent = `Round ${v.round}${v.ruleset.rounds ? ` of ${v.ruleset.rounds}` : ` (to ${v.ruleset.target_score} points)`}`;
  $("deck-label").textContent = "Stock";
  $("deck-size").textContent = v.stock_size;
  $("turn").textContent = v.over ? "Game over" : `${seatName(v.to_move)} to move`;
  $("top-turn").textContent = !v.over && v.to_move === opp ? "◀ to move" : "";
  $("bottom-turn").textContent = !v.over && v.to_move === me ? "◀ to move" : "";
  for (const n of document.querySelectorAll(".mulle-piles")) n.hidden = true;
  for (const n of document.querySelectorAll(".casino-piles")) n.hidden = false;
  const hands = v.hands;
  const oppSize = v.hand_sizes ? v.hand_sizes[opp] : v.opponent_hand_size;
  fill($("top-hand"), hands ? hands[opp].map((c) => cardEl(c)) : Array.from({ length: oppSize }, () => backEl()));
  if (!hands && ui.mode === "watch") { fill($("hand"), Array.from({ length: v.hand_sizes[me] }, () => backEl())); renderChoices(false); }
  else renderHand(hands ? hands[me] : v.hand);
  fill($("loose"), v.loose.map((c) => { const n = pileButton(cardEl(c), c); if (!n.getAttribute("role")) n.setAttribute("role", "listitem"); return n; }));
  listRole($("loose"), "Loose cards", "No loose cards");
  fill($("builds"), v.builds.map((b) => {
    const owner = b.owner === me && ui.mode === "play" ? "yours" : seatName(b.owner);
    const node = el("div", { class: "build", "data-value": b.value, "data-build": pileKey(b.cards), role: "listitem",
      "aria-label": `build of ${b.value}, ${owner}: ${b.cards.join(", ")}` },
      el("div", { class: "label", text: `[${b.value}] ${owner}${b.single ? "" : " · multiple"}`, "aria-hidden": "true" }),
      el("div", { class: "cards", "aria-hidden": "true" }, ...b.cards.map((c) => cardEl(c, "mini"))));
    return pileButton(node, b.cards);
  }));
  listRole($("builds"), "Builds", "No builds");
  // The staged piles exist only in this page; a pile no longer on the table leaves the stack.
  const onTable = new Set([...v.loose, ...v.builds.map((b) => pileKey(b.cards))]);
  ui.staged = ui.staged.filter((p) => onTable.has(pileKey(p)));
  const playing = ui.mode === "play" && !v.over;
  $("stack").hidden = !(playing && ui.staged.length);
  fill($("stack-cards"), ui.staged.map((p) => el("span", { class: "staged-pile", text: pileWords(p) })));
  $("drop-note").hidden = !(playing && myTurn());
  for (const [side, seat] of [["top", opp], ["bottom", me]]) {
    $(`${side}-captured`).textContent = v.captured_sizes[seat];
    $(`${side}-sweeps`).textContent = v.sweeps[seat];
    $(`${side}-cscore`).textContent = v.scores[seat];
    fill($(`${side}-mulle`), []);
  }
  if (!v.last_move && ui.mode !== "replay") fill($("last-move"), []);
  renderSheets(v);
  renderScoreboard(v);
  renderHint();
}

// ----- replay --------------------------------------------------------------------------------------
function showFrame(i) {
  ui.frame = Math.max(0, Math.min(i, ui.frames.length - 1));
  const f = ui.frames[ui.frame];
  $("rp-pos").textContent = `move ${ui.frame} / ${ui.frames.length - 1}`;
  if (f.event) showMove(f.event, eventText(f.event)); else fill($("last-move"), []);
  fill($("log"), ui.frames.slice(1, ui.frame + 1).map((fr) => el("li", { text: eventText(fr.event), "data-move": fr.event.move,
    value: fr.event.number })));
  $("log-box").scrollTop = $("log-box").scrollHeight;
  const over = ui.frame === ui.frames.length - 1 && f.view.over;
  $("game-over").hidden = !over;
  if (ui.boardAnalysis) setTimeout(boardAnalysis, 0);  // after the new position is drawn
  if (over) {
    const s = [total(f.view, 0), total(f.view, 1)];
    const w = s[0] === s[1] ? "A draw." : `${seatName(s[0] > s[1] ? 0 : 1)} wins.`;
    $("game-over").textContent = `Final: ${seatName(0)} ${s[0]} – ${seatName(1)} ${s[1]}. ${w}`;
  }
  setView(f.view);
}

async function replayText(text, analysis = null) {
  // The text goes to the server as it is: a seed of 63 bits must not pass through a JavaScript number.
  let res;
  try {
    res = await fetch("/api/replay", { method: "POST", body: text, headers: { "Content-Type": "application/json" } });
  } catch (e) { showError(`cannot reach the server: ${e}`); return; }
  const body = await res.json();
  if (!res.ok) { showError(`cannot replay: ${body.error}`); return; }
  clearError();
  ui.mode = "replay";
  ui.seat = 0;
  ui.table = null;
  ui.elsewhere = false;
  ui.record = body.record;
  ui.frames = body.frames;
  ui.boardAnalysis = analysis;
  enterGame();
  $("lobby").hidden = true;
  showFrame(0);
  $("rp-fwd").focus();
}

function startReplay() {
  // What the person gave last wins: a game picked from a file, or the text in the box (defect 7).
  const pick = $("replay-games");
  if (!$("replay-games-label").hidden && pick.value !== "") { replayText(ui.replayLines[Number(pick.value)]); return; }
  const text = $("replay-text").value.trim();
  if (!text) { showError("choose a file or paste a record first"); return; }
  const lines = text.split("\n").filter((l) => l.trim());
  if (lines.length > 1) { offerGames(lines); return; }
  try { JSON.parse(lines[0]); } catch (e) {
    showError(`cannot replay: the pasted text is not a game record (not JSON: ${e.message})`);
    return;
  }
  replayText(lines[0]);
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
  $("replay-games-label").hidden = false;
  $("replay-text").value = "";
  showError(`${options.length} games in the file: pick one and press Replay`, "info");
}

// ----- the game history --------------------------------------------------------------------------
async function loadGames(offset = 0) {
  const q = new URLSearchParams({ limit: ui.games.limit, offset });
  if ($("games-table").value.trim()) q.set("table", $("games-table").value.trim());
  if ($("games-player").value.trim()) q.set("player", $("games-player").value.trim());
  let res;
  try { res = await fetch(`/api/games?${q}`); } catch (e) { return; }
  if (res.status === 404) { $("games-note").textContent = "This server keeps no game history."; fill($("games-list"), []); return; }
  const body = await res.json();
  if (!res.ok) { $("games-note").textContent = body.error; return; }
  Object.assign(ui.games, { offset: body.offset, total: body.total });
  $("games-note").textContent = body.total ? "" : "No finished games yet.";
  fill($("games-list"), body.games.map((g) => {
    const names = g.players.map((seat) => seat.map((h) => h.name).join(" → "));
    const text = `#${g.id} ${g.table}: ${names[0]} ${g.scores[0]} – ${names[1]} ${g.scores[1]} (${g.finished_at.replace("T", " ").replace("Z", " UTC")})`;
    const status = g.status === "abandoned" ? " – abandoned"
      : g.status === "forfeit" && g.forfeit ? ` – ${g.forfeit.name} forfeited (${g.forfeit.reason})` : "";
    return el("li", { "data-game": g.id }, el("span", { text: text + status }),
      el("span", { class: "row-buttons" },
        el("button", { type: "button", text: "Replay", "aria-label": `Replay game ${g.id}`, onclick: () => replayStored(g.id) }),
        el("button", { type: "button", text: "Analyse", "aria-label": `Analyse game ${g.id}`, onclick: () => analyse(g.id) })));
  }));
  const end = Math.min(body.offset + body.games.length, body.total);
  $("games-pos").textContent = body.total ? `${body.offset + 1}–${end} of ${body.total}` : "";
  $("games-prev").disabled = body.offset === 0;
  $("games-next").disabled = end >= body.total;
}

async function replayStored(id) {
  const res = await fetch(`/api/games/${id}/record`);
  if (!res.ok) { showError(`cannot load game ${id}`); return; }
  replayText(await res.text());
}

// ----- the feel of a card room: motion, the mulle and tabbe moment, sound, the scoreboard, hints ---------------
const PLACES = ["hand", "top-hand", "loose", "builds"];

function cardRects() {
  // Where each card is drawn now, by place and name (a name may be there twice: two decks).
  const out = [];
  for (const place of PLACES) {
    for (const n of $(place).querySelectorAll(".card[data-card]")) out.push({ place, card: n.dataset.card, rect: n.getBoundingClientRect() });
  }
  return out;
}

function animateCards(before) {
  // A card that changed place (hand to table, table to a build) slides from where it was; a card that left the
  // table for a pile flies there. Nothing moves with prefers-reduced-motion (the caller does not call this then).
  if (!document.body.animate) return;
  const now = cardRects();
  const left = before.slice();
  const take = (card, test) => { const i = left.findIndex((b) => b.card === card && test(b)); return i >= 0 ? left.splice(i, 1)[0] : null; };
  // Cards still in the same place stay put.
  const moved = [];
  for (const n of now) {
    if (!take(n.card, (b) => b.place === n.place)) moved.push(n);
  }
  for (const n of moved) {
    const from = take(n.card, () => true);
    if (!from) continue;
    const node = [...$(n.place).querySelectorAll(`.card[data-card="${n.card}"]`)].find((x) => x.getBoundingClientRect().x === n.rect.x && x.getBoundingClientRect().y === n.rect.y);
    if (!node) continue;
    const dx = from.rect.x - n.rect.x, dy = from.rect.y - n.rect.y;
    node.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], { duration: 380, easing: "ease-out" });
  }
  // What is gone from the table went to a capturer's pile: a copy flies to it and fades.
  const v = ui.view;
  if (!v || !v.last_move) return;
  const me = ui.seat !== null && ui.seat !== undefined ? ui.seat : 0;
  const pile = $(v.last_move[0] === me ? "bottom-mulle" : "top-mulle");
  const to = pile.getBoundingClientRect();
  for (const gone of left.filter((b) => b.place === "loose" || b.place === "builds")) {
    const ghost = cardEl(gone.card, "ghost");
    ghost.setAttribute("aria-hidden", "true");
    Object.assign(ghost.style, { left: `${gone.rect.x}px`, top: `${gone.rect.y}px`, width: `${gone.rect.width}px`, height: `${gone.rect.height}px` });
    document.body.append(ghost);
    const a = ghost.animate([{ transform: "none", opacity: 1 }, { transform: `translate(${to.x - gone.rect.x}px, ${to.y - gone.rect.y}px) scale(.6)`, opacity: 0.2 }],
      { duration: 520, easing: "ease-in" });
    a.onfinish = () => ghost.remove();
  }
}

function moment(e) {
  // A short moment for a mulle or a tabbe (issue 33): big words over the table, and a sound when sound is on.
  const words = e.mulles ? `Mulle${e.mulles > 1 ? ` ×${e.mulles}` : ""}!` : (e.tabbe ? "Tabbe!" : (e.table_swept ? "Sweep!" : null));
  if (e.player === ui.seat || words) beep(words ? 880 : 520, words ? 0.18 : 0.06);
  if (!words) return;
  const box = $("moment");
  box.textContent = words;
  box.hidden = false;
  box.classList.remove("show");
  void box.offsetWidth;  // restart the animation
  box.classList.add("show");
  clearTimeout(ui.momentTimer);
  ui.momentTimer = setTimeout(() => { box.hidden = true; }, 1300);
}

let audio = null;
function beep(freq, seconds) {
  // Sound is off unless the person turns it on (remembered in this browser).
  if (!$("sound").checked) return;
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + seconds);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + seconds);
  } catch (err) { /* no audio here: the game goes on silently */ }
}

function renderScoreboard(v) {
  // The running score, always in view (the bar stays at the top of the window).
  if (!v) { $("scoreboard").textContent = ""; return; }
  $("scoreboard").textContent = `Score: ${seatName(0)} ${total(v, 0)} – ${seatName(1)} ${total(v, 1)}`;
}

function total(v, seat) {
  // A seat's game total so far: Mulle's views give a sheet per seat, Casino's a number.
  return typeof v.scores[seat] === "number" ? v.scores[seat] : v.scores[seat].total;
}

function hintsOn() { return ui.mode === "play" && $("hints").checked; }

function renderHint() {
  // A guided first game: what to do now, in plain words, until the person turns the hints off.
  const box = $("hint");
  if (!hintsOn() || !ui.view || ui.view.over) { box.hidden = true; return; }
  let text;
  if (isCasino() && myTurn()) {
    text = ui.chooser ? `Hint: that drop means more than one move; each button says one in words. Enter or a click plays it, Escape goes back.`
      : ui.selected ? `Hint: now choose where ${ui.selected} goes: a table card or build (to capture or build), your temporary stack, or the empty table to trail. Escape goes back.`
        : "Hint: your turn. Drag a card onto a table card or build to capture or build on it, or onto the empty table to trail; click table cards first to gather them into a temporary stack. By keyboard: Enter on a card, then choose where it goes.";
    box.textContent = text;
    box.hidden = false;
    return;
  }
  if (!myTurn()) text = "Hint: the opponent is playing. Your cards stay readable with Tab and the arrow keys.";
  else if (!ui.selected) {
    const captures = ui.request.moves.filter((m) => m.startsWith("capture"));
    text = "Hint: your turn. The lit cards can be played; choose one (click, or Enter) to see its uses." +
      (captures.length ? ` You can capture now: ${[...new Set(captures.map(cardOf))].join(", ")}. Two identical cards taken together make a mulle.` :
        " Nothing captures now: build on a card or lay one on the table.");
  } else {
    text = `Hint: each button is one way to play ${ui.selected}; pointing at one marks on the table what it takes or builds on. Enter or a click plays it, Escape goes back.`;
  }
  box.textContent = text;
  box.hidden = false;
}

// ----- post-game analysis ------------------------------------------------------------------------
async function analyse(id) {
  // Ask the server to analyse the game in the background, show its progress, then every decision.
  const panel = $("analysis");
  panel.hidden = false;
  $("analysis-title").textContent = `Analysis of game ${id}`;
  $("analysis-status").textContent = "Starting the analysis…";
  fill($("analysis-list"), []);
  $("analysis-progress").hidden = true;
  panel.focus();
  ui.analysing = id;
  let res;
  try { res = await fetch(`/api/games/${id}/analysis`, { method: "POST" }); } catch (e) { $("analysis-status").textContent = `cannot reach the server: ${e}`; return; }
  while (res.status === 202 && ui.analysing === id && !panel.hidden) {
    const job = await res.json();
    if (job.total) {
      $("analysis-progress").hidden = false;
      $("analysis-progress").max = job.total;
      $("analysis-progress").value = job.done;
      $("analysis-status").textContent = `Analysing: ${job.done} of ${job.total} decisions`;
    } else $("analysis-status").textContent = "Waiting for the analyser…";
    await new Promise((r) => setTimeout(r, 700));
    try { res = await fetch(`/api/games/${id}/analysis`); } catch (e) { return; }
  }
  if (ui.analysing !== id || panel.hidden) return;
  const body = await res.json();
  if (!res.ok) { $("analysis-status").textContent = `cannot analyse: ${body.error}`; return; }
  showAnalysis(body);
}

function analysisHeadline(a) {
  // The result first, read from the game (issue 52: "Anna lost 72.8 points" was her points lost by the analyser's
  // estimate, for a game she won 75–57), then what the analyser thinks of each person's play.
  const names = a.names || ["seat 0", "seat 1"];
  if (!a.result) return `${names[0]} – ${names[1]}: a game that did not finish.`;
  const [x, y] = a.result.scores;
  const w = a.result.winner;
  return `${names[0]} ${x} – ${names[1]} ${y}: ` + (w === null || w === undefined ? "a draw." :
    `${names[w]} won, ${w === 0 ? x : y}–${w === 0 ? y : x}.`);
}

function accuracyText(a) {
  const out = [];
  for (const seat of [0, 1]) {
    const n = a.decisions_by_seat ? a.decisions_by_seat[seat] : a.decisions.filter((d) => d.seat === seat).length;
    if (!n) continue;
    const who = (a.names && a.names[seat]) || `seat ${seat}`;
    const mistakes = a.decisions.filter((d) => d.seat === seat && d.mistake).length;
    const acc = a.accuracy ? `accuracy ${a.accuracy[seat]}% over ${n} decisions` : `${n} decisions`;
    out.push(`${who}: ${acc}; by the analyser's estimate ${a.total_lost[seat].toFixed(1)} points given away; ` +
      `${mistakes} mistake${mistakes === 1 ? "" : "s"} (moves losing ${a.mistake_points || 3} points or more).`);
  }
  return out.join(" ");
}

function evalGraph(a, current, onPick) {
  // The evaluation over the game (the best move's value from seat 0's side at each analysed decision) as SVG:
  // drawn here, no library, no CDN. Mistakes are red; a point clicked steps the board to that move.
  const ns = "http://www.w3.org/2000/svg";
  const pts = a.evaluation || a.decisions.map((d) => ({ number: d.number, value: d.seat === 0 ? d.value : -d.value }));
  const W = 480, H = 140, pad = 10;
  const last = Math.max(1, ...pts.map((p) => p.number));
  const top = Math.max(1, ...pts.map((p) => Math.abs(p.value || 0)));
  const X = (n) => pad + (W - 2 * pad) * (n / last);
  const Y = (v) => H / 2 - (H / 2 - pad) * ((v || 0) / top);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  const mistakes = a.decisions.filter((d) => d.mistake).map((d) => d.number);
  svg.setAttribute("aria-label", `Evaluation over the game from ${(a.names && a.names[0]) || "seat 0"}'s side, ` +
    `${pts.length} decisions; mistakes at moves ${mistakes.join(", ") || "none"}`);
  const line = (x1, y1, x2, y2, cls) => { const l = document.createElementNS(ns, "line");
    Object.entries({ x1, y1, x2, y2, class: cls }).forEach(([k, v]) => l.setAttribute(k, v)); svg.append(l); };
  line(pad, H / 2, W - pad, H / 2, "zero");
  const poly = document.createElementNS(ns, "polyline");
  poly.setAttribute("class", "eval");
  poly.setAttribute("points", pts.map((p) => `${X(p.number).toFixed(1)},${Y(p.value).toFixed(1)}`).join(" "));
  svg.append(poly);
  for (const p of pts) {
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", X(p.number).toFixed(1));
    c.setAttribute("cy", Y(p.value).toFixed(1));
    c.setAttribute("r", mistakes.includes(p.number) ? 5 : 3);
    c.setAttribute("class", mistakes.includes(p.number) ? "mistake" : "");
    c.dataset.number = p.number;
    const t = document.createElementNS(ns, "title");
    t.textContent = `move ${p.number}: ${(p.value || 0).toFixed(1)}`;
    c.append(t);
    if (onPick) c.addEventListener("click", () => onPick(p.number));
    svg.append(c);
  }
  if (current !== null && current !== undefined) line(X(current), pad, X(current), H - pad, "now");
  return svg;
}

function showAnalysis(a) {
  $("analysis-progress").hidden = true;
  ui.analysis = a;
  const text = a.decisions.length ? `${analysisHeadline(a)} ${a.mistakes.length ? `Mistakes at moves ${a.mistakes.join(", ")}.` : "No big mistakes."}`
    : `${analysisHeadline(a)} No decision of a person to analyse in this game.`;
  $("analysis-status").textContent = text;
  $("analysis-accuracy").textContent = accuracyText(a);
  const id = ui.analysing;
  fill($("analysis-graph"), a.decisions.length ? [evalGraph(a, null, (n) => stepOnBoard(id, n))] : []);
  $("analysis-board").hidden = !a.decisions.length;
  $("analysis-board").onclick = () => stepOnBoard(id, a.mistakes.length ? a.mistakes[0] : a.decisions[0].number);
  announce("The analysis is ready.");
  fill($("analysis-list"), a.decisions.map((d) => {
    const same = d.played === d.best;
    const words = same ? `played ${d.played}, the analyser's choice too`
      : `played ${d.played}; the analyser prefers ${d.best} (${d.points_lost.toFixed(1)} points lost)`;
    return el("li", { value: d.number, class: d.mistake ? "mistake" : "", "data-move": d.played },
      el("span", { text: `${d.by}: ${words}` }), d.mistake ? el("b", { class: "mistake-tag", text: " – mistake" }) : "",
      el("button", { type: "button", class: "show-board", text: "show", "aria-label": `Show move ${d.number} on the board`,
        onclick: () => stepOnBoard(id, d.number) }));
  }));
}

async function stepOnBoard(id, number) {
  // The analysed game as a replay, with the analysis beside the board: each frame says what the analyser thought
  // of the move about to be played, and a flagged move is shown beside the better one.
  const a = ui.analysis;
  const res = await fetch(`/api/games/${id}/record`);
  if (!res.ok) { showError(`cannot load game ${id}`); return; }
  $("analysis").hidden = true;
  ui.analysing = null;
  await replayText(await res.text(), a);
  showFrame(Math.max(0, number - 1));
}

function boardAnalysis() {
  // Beside the board in a replay of an analysed game: the headline, the graph, and the move at hand.
  const a = ui.boardAnalysis;
  $("board-analysis").hidden = !a;
  if (!a) return;
  const number = ui.frame + 1;  // the move about to be played from this position
  $("board-headline").textContent = analysisHeadline(a);
  $("board-accuracy").textContent = accuracyText(a);
  fill($("board-graph"), [evalGraph(a, ui.frame, (n) => showFrame(n - 1))]);
  document.querySelectorAll(".card.played, .card.better").forEach((n) => n.classList.remove("played", "better"));
  const d = a.decisions.find((x) => x.number === number);
  const next = ui.frames[ui.frame + 1];
  let note;
  if (!next) note = "The end of the game.";
  else if (!d) note = `Move ${number}: ${eventText(next.event)} (not a person's decision with a choice, so not analysed).`;
  else if (d.played === d.best) note = `Move ${number}: ${d.by} played ${d.played}, the analyser's choice too.`;
  else {
    const stake = d.points_lost;
    note = `Move ${number}: ${d.by} played ${d.played}; better was ${d.best}, about ${stake.toFixed(1)} ` +
      `point${stake === 1 ? "" : "s"} more by the analyser's estimate` + (d.mistake ? " – a mistake." : ".");
    // Both moves on the board: the card played (red) beside the better move's card (green).
    const cardOfMove = (m) => (isCasino() ? casinoCard(m) : cardOf(m));
    const place = d.seat === 0 ? "#hand" : "#top-hand";
    const played = document.querySelector(`${place} .card[data-card="${cardOfMove(d.played)}"]`);
    const better = document.querySelector(`${place} .card[data-card="${cardOfMove(d.best)}"]`);
    if (played) played.classList.add("played");
    if (better) better.classList.add("better");
  }
  $("board-note").textContent = note;
}

function stepMistake(dir) {
  const a = ui.boardAnalysis;
  if (!a) return;
  const now = ui.frame + 1;
  const list = a.mistakes.length ? a.mistakes : a.decisions.map((d) => d.number);
  const n = dir > 0 ? list.find((m) => m > now) : [...list].reverse().find((m) => m < now);
  if (n !== undefined) showFrame(n - 1);
}

// ----- open tables: join, watch, invite --------------------------------------------------------------
function inviteUrl(name) { return `${location.origin}/?table=${encodeURIComponent(name)}`; }

async function copyInvite(name) {
  // "Invite link" copies the link (issue 52: it was a link that reloaded this page); where the clipboard is
  // refused, the link is shown to copy by hand.
  const url = inviteUrl(name);
  let copied = false;
  try { await navigator.clipboard.writeText(url); copied = true; } catch (e) { copied = false; }
  ui.lastInvite = url;
  showError(copied ? `Invite link copied: ${url}` : `Copy this invite link: ${url}`, "info");
  announce(copied ? "Invite link copied." : `Invite link: ${url}`);
}

async function loadTables() {
  let res;
  try { res = await fetch("/api/tables"); } catch (e) { return; }
  if (!res.ok) return;
  const body = await res.json();
  $("tables-note").textContent = body.tables.length ? "" : "No open tables. Open one under Play.";
  fill($("tables-list"), body.tables.map((t) => {
    const seats = t.seats.map((s) => (s.kind === "person" ? s.name : `${s.name} (agent)`)).join(" vs ");
    const state = t.phase === "lobby" ? "in the lobby" : "playing";
    const game = t.game === "casino" ? "Casino" : "Mulle";
    const parts = [el("span", { text: `${t.name} (${game}): ${seats}, ${state}, ${t.spectators} watching` })];
    const buttons = el("span", { class: "row-buttons" });
    if (t.joinable) {
      buttons.append(el("button", { type: "button", text: "Join", "aria-label": `Join table ${t.name}`, onclick: () => {
        $("table-name").value = t.name;
        if ($("player-name").value.trim()) joinTable(); else { $("player-name").focus(); showError(`Your name, please, then Sit down at ${t.name}`, "info"); }
      } }));
    }
    buttons.append(el("button", { type: "button", text: "Watch", "aria-label": `Watch table ${t.name}`, onclick: () => watchTable(t.name) }));
    if (!t.watch) buttons.append(el("button", { type: "button", class: "invite", text: "Invite link", "data-url": inviteUrl(t.name),
      "aria-label": `Copy the invite link to table ${t.name}`, onclick: () => copyInvite(t.name) }));
    parts.push(buttons);
    return el("li", { "data-table": t.name }, ...parts);
  }));
}

function watchTable(name) {
  // Watch a named table (defect 6: only new agents' tables could be watched from the page).
  ensureConnected(() => send("watch", { table_name: name }));
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
    game: $("game-choice").value,
    move_clock_s: $("move-clock").value ? Number($("move-clock").value) : undefined,
    agent_delay_ms: Number(params.get("delay") ?? 500) };
  // The seed stays text until JSON is written: digits past 2^53 must survive (defect 1).
  const seed = params.get("seed");
  ui.mode = "play";
  const kept = seatToken(table);
  if (kept && kept.name.toLowerCase() === name.toLowerCase()) {
    // Our seat at this table may still be held for us (a closed tab, another tab): take it back.
    ui.fallbackJoin = payload;
    ui.session = kept.session;
    ensureConnected(() => send("join", { session_id: kept.session }));
    return;
  }
  ensureConnected(() => {
    let text = JSON.stringify({ type: "join", payload });
    if (seed && /^\d{1,19}$/.test(seed)) text = text.replace(/}}$/, `,"seed":${seed}}}`);
    if (ui.ws && ui.ws.readyState === WebSocket.OPEN) ui.ws.send(text);
  });
}

function watchAgents() {
  const payload = { agents: [$("watch-a").value.trim(), $("watch-b").value.trim()], delay_ms: Number($("watch-speed").value),
    game: $("watch-game").value };
  if (params.get("seed") && /^\d{1,15}$/.test(params.get("seed"))) payload.seed = Number(params.get("seed"));
  if (params.get("sets")) payload.sets = Number(params.get("sets"));
  $("speed").value = $("watch-speed").value;
  $("speed-out").textContent = `${$("speed").value} ms`;
  ensureConnected(() => send("watch", payload));
}

function toggleRules(open) {
  const panel = $("rules");
  const show = open === undefined ? panel.hidden : open;
  panel.hidden = !show;
  $("rules-btn").setAttribute("aria-expanded", show ? "true" : "false");
  if (show) panel.focus(); else $("rules-btn").focus();
  // At a Casino table the panel opens at Casino's rules (Mulle's come first in it).
  if (show && isCasino()) $("casino-rules").scrollIntoView({ block: "start" });
}

$("play-form").addEventListener("submit", (e) => { e.preventDefault(); joinTable(); });
$("watch-form").addEventListener("submit", (e) => { e.preventDefault(); watchAgents(); });
$("games-form").addEventListener("submit", (e) => { e.preventDefault(); loadGames(0); });
$("games-prev").addEventListener("click", () => loadGames(Math.max(0, ui.games.offset - ui.games.limit)));
$("games-next").addEventListener("click", () => loadGames(ui.games.offset + ui.games.limit));
$("replay-btn").addEventListener("click", startReplay);
$("leave-btn").addEventListener("click", askLeave);
$("leave-yes").addEventListener("click", () => { $("leave-dialog").close(); leave(); });
$("leave-no").addEventListener("click", () => $("leave-dialog").close());
$("error-close").addEventListener("click", clearError);
$("rules-btn").addEventListener("click", () => toggleRules());
$("rules-close").addEventListener("click", () => toggleRules(false));
$("analysis-close").addEventListener("click", () => { $("analysis").hidden = true; ui.analysing = null; });
dropZone(document.querySelector(".table-area"), "table");
dropZone($("stack"), "stack");
$("stack-clear").addEventListener("click", clearStack);
$("invite").addEventListener("click", () => { if (ui.table) copyInvite(ui.table.table_name); });
$("take-back").addEventListener("click", () => ensureConnected(() => send("join", { session_id: ui.session })));
$("start-btn").addEventListener("click", () => send("lobby_action", { action: "start_game" }));
$("lobby-opponent").addEventListener("change", (e) => send("lobby_action", { action: "set_opponent", data: { opponent: e.target.value.trim() } }));
$("one-click").checked = ui.oneClick;
$("tables-refresh").addEventListener("click", loadTables);
$("sound").checked = localStorage.getItem("mulle-sound") === "1";  // off by default
$("sound").addEventListener("change", (e) => localStorage.setItem("mulle-sound", e.target.checked ? "1" : "0"));
// Hints are on for a first game (nothing played in this browser yet) until the person turns them off.
$("hints").checked = (localStorage.getItem("mulle-hints") ?? (localStorage.getItem("mulle-played") ? "0" : "1")) === "1";
$("hints").addEventListener("change", (e) => { localStorage.setItem("mulle-hints", e.target.checked ? "1" : "0"); renderHint(); });
$("one-click").addEventListener("change", (e) => { ui.oneClick = e.target.checked; localStorage.setItem("mulle-one-click", ui.oneClick ? "1" : "0"); });
$("watch-speed").addEventListener("input", (e) => { $("watch-speed-out").textContent = `${e.target.value} ms`; });
$("speed").addEventListener("change", (e) => { $("speed-out").textContent = `${e.target.value} ms`; send("set_speed", { delay_ms: Number(e.target.value) }); });
$("rp-first").addEventListener("click", () => showFrame(0));
$("rp-back").addEventListener("click", () => showFrame(ui.frame - 1));
$("rp-fwd").addEventListener("click", () => showFrame(ui.frame + 1));
$("rp-last").addEventListener("click", () => showFrame(ui.frames.length - 1));
$("prev-mistake").addEventListener("click", () => stepMistake(-1));
$("next-mistake").addEventListener("click", () => stepMistake(1));
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && !$("rules").hidden) { toggleRules(false); return; }
  if (e.key === "Escape" && !$("analysis").hidden) { $("analysis").hidden = true; ui.analysing = null; return; }
  if (e.key === "Escape" && ui.mode === "play" && isCasino() && (ui.selected || ui.chooser || ui.staged.length)) { cancelChoice(); return; }
  if (ui.mode !== "replay" || e.target.matches("input, textarea, select")) return;
  if (e.key === "ArrowLeft") showFrame(ui.frame - 1);
  if (e.key === "ArrowRight") showFrame(ui.frame + 1);
  if (e.key === "Home") showFrame(0);
  if (e.key === "End") showFrame(ui.frames.length - 1);
  if (e.key === "n" || e.key === "N") stepMistake(1);  // the next (or previous) mistake of an analysed game
  if (e.key === "p" || e.key === "P") stepMistake(-1);
});
// Typing or pasting in the box makes the text the thing to replay (a game picked from a file before no longer is).
$("replay-text").addEventListener("input", () => { $("replay-games-label").hidden = true; });
$("replay-file").addEventListener("change", async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  $("replay-text").value = (await file.text()).trim();
  $("replay-games-label").hidden = true;
  const lines = $("replay-text").value.split("\n").filter((l) => l.trim());
  if (lines.length > 1) offerGames(lines);
});
if (params.get("table")) $("table-name").value = params.get("table");
if (params.get("name")) $("player-name").value = params.get("name");
if (!params.get("table") && !params.get("name")) restoreForm();
loadAgents().catch((e) => showError(`cannot load the agent list: ${e}`));
loadGames(0);
loadTables();
setInterval(() => { if (!$("start").hidden && !document.hidden) loadTables(); }, 5000);

// Back after a reload inside the grace period: the stored session takes the seat again. Opening a table's link
// in a new tab (or after closing the old one) finds the table's seat token in localStorage.
const linked = params.get("table") && seatToken(params.get("table"));
if (params.get("seat")) {
  // A private seat link (issue 52, item 5): its token takes the seat back from any device, within the grace.
  ui.session = params.get("seat");
  ui.mode = "play";
  history.replaceState(null, "", params.get("table") ? `/?table=${encodeURIComponent(params.get("table"))}` : "/");
  connect(() => send("join", { session_id: ui.session }));
} else if (linked && (!params.get("name") || params.get("name").toLowerCase() === linked.name.toLowerCase())) {
  ui.session = linked.session;
  ui.lastJoin = { table: params.get("table"), name: linked.name };
  ui.mode = "play";
  connect(() => send("join", { session_id: linked.session }));
} else if (ui.session) { ui.mode = "play"; connect(() => send("join", { session_id: ui.session })); }

// ----- coming back: "resume your game" when this browser holds a seat at an open table (issue 52, item 5) -----
async function offerResume() {
  const kept = seatTokens();
  const names = Object.keys(kept).filter((t) => kept[t].session && Date.now() - kept[t].at < 24 * 3600 * 1000);
  if (!names.length || ui.mode) { $("resume").hidden = true; return; }
  let open;
  try { open = (await (await fetch("/api/tables")).json()).tables; } catch (e) { return; }
  const items = [];
  for (const t of open) {
    const mine = kept[t.name];
    if (!mine || !names.includes(t.name)) continue;
    const seat = t.seats.find((s) => s.kind === "person" && s.name.toLowerCase() === mine.name.toLowerCase());
    if (!seat) continue;
    const label = `${t.name}: ${mine.name}, ${t.phase === "playing" ? "game in progress" : "in the lobby"}`;
    items.push(el("li", {}, el("span", { text: label }), " ",
      el("button", { type: "button", text: "Resume", "aria-label": `Resume your game at table ${t.name}`,
        onclick: () => { ui.session = mine.session; ui.mode = "play"; ensureConnected(() => send("join", { session_id: mine.session })); } })));
  }
  fill($("resume-list"), items);
  $("resume").hidden = items.length === 0;
}

// ----- the seat link: a private link that takes this seat back from any device ------------------------------
async function copySeatLink() {
  const table = ui.table ? ui.table.table_name : "";
  const url = `${location.origin}/?table=${encodeURIComponent(table)}&seat=${encodeURIComponent(ui.session || "")}`;
  try {
    await navigator.clipboard.writeText(url);
    showError("Seat link copied: open it on another device to take your seat back. Keep it private.", "info");
  } catch (e) {
    window.prompt("Your private seat link (keep it to yourself):", url);
  }
}
$("seat-link").addEventListener("click", copySeatLink);

// ----- accounts: claim a name, log in, log out (the cookie is HttpOnly: the page asks who it is) --------------
async function refreshAccount() {
  let me;
  try { me = await (await fetch("/api/session")).json(); } catch (e) { return; }
  if (!me.accounts) { $("account-panel").hidden = true; return; }
  ui.account = me.name;
  $("account-status").textContent = me.name ? `Logged in as ${me.name}: your games under this name are rated.` : "Not logged in: you play as a guest.";
  $("account-form").hidden = Boolean(me.name);
  $("logout-btn").hidden = !me.name;
  if (me.name && !$("player-name").value) $("player-name").value = me.name;
}

async function accountRequest(url, method) {
  const body = JSON.stringify({ name: $("account-name").value.trim(), password: $("account-password").value });
  const res = await fetch(url, { method, headers: { "Content-Type": "application/json" }, body });
  const data = res.status === 204 ? {} : await res.json();
  if (!res.ok) { showError(data.error || `the server answered ${res.status}`); return null; }
  return data;
}

function reconnectForLogin() {
  // The login travels with the WebSocket's upgrade request: a socket opened before it must be opened again.
  if (ui.ws && ui.mode !== "play") { const ws = ui.ws; ui.ws = null; ws.close(); }
}

$("account-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const ok = await accountRequest("/api/session", "POST");
  if (!ok) return;
  $("account-password").value = "";
  $("player-name").value = ok.name;
  reconnectForLogin();
  refreshAccount();
});
$("claim-btn").addEventListener("click", async () => {
  const made = await accountRequest("/api/accounts", "POST");
  if (!made) return;
  const ok = await accountRequest("/api/session", "POST");
  $("account-password").value = "";
  if (ok) { $("player-name").value = ok.name; reconnectForLogin(); }
  refreshAccount();
});
$("logout-btn").addEventListener("click", async () => {
  await fetch("/api/session", { method: "DELETE" });
  reconnectForLogin();
  refreshAccount();
});
refreshAccount();
offerResume();
