"""The page in a real browser: headless Chromium (the system's, Debian's ``chromium``) driven by Playwright.

Nothing is downloaded: Playwright launches the browser at ``MULLE_CHROMIUM`` or the first
``chromium``/``chromium-browser`` on the PATH. Where there is none the tests skip with the
reason, except in CI (``CI`` set), where a missing browser fails: ``.ci/run`` installs it.
Set ``MULLE_LIVE_SCREENSHOT=path.png`` to keep the screenshot the test takes (docs/img/live.png
comes from there).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections import defaultdict
from pathlib import Path

import pytest

import agents
from mulle_env.engine.match import Match


def find_chromium() -> str | None:
    """The system Chromium to drive, or None."""
    override = os.environ.get("MULLE_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _missing() -> str | None:
    try:
        import aiohttp  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"the browser tests need aiohttp and playwright (pip install -e \".[test]\"): {exc}"
    if find_chromium() is None:
        return ("no Chromium found (install Debian's 'chromium' or set MULLE_CHROMIUM); "
                "nothing is downloaded at run time")
    return None


MISSING = _missing()


def test_ci_has_a_browser():
    """In CI the browser tests must run, never skip: .ci/run installs Chromium."""
    if os.environ.get("CI") and MISSING:
        pytest.fail(f"CI is set but the browser tests cannot run: {MISSING}")
    if MISSING:
        pytest.skip(MISSING)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if MISSING:
        if os.environ.get("CI"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    from live.hub import LiveConfig
    from live.server import ServerThread

    with ServerThread(LiveConfig(opponent="random", grace=5, close_after=1, trust_loopback=True, analysis_time=0.02,
                                 db=str(tmp_path_factory.mktemp("store") / "games.db"))) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    # The sanitizer run (.ci/sanitize --all) preloads libasan into Python to check the compiled engine the
    # server plays on; Playwright's driver and the browser are not ours to check and do not start with it.
    preload = os.environ.pop("LD_PRELOAD", None)
    try:
        pw = sync_playwright().start()  # its driver, and the browsers the driver starts, take this environment
    finally:
        if preload is not None:
            os.environ["LD_PRELOAD"] = preload
    try:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        # A small /dev/shm (containers) crashes Chromium's renderer unless it uses /tmp.
        args += ["--disable-gpu", "--disable-dev-shm-usage"]
        b = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=args)
        yield b
        b.close()
    finally:
        pw.stop()


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(10_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(f"{exc} {exc.stack}"[:600]))
    yield pg
    ctx.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def sit_down(page, server, table: str, name: str = "Anna", seed: int | None = None, sets: int = 2,
             opponent: str = "random") -> None:
    query = f"?delay=0&table={table}&name={name}" + (f"&seed={seed}" if seed is not None else "")
    page.goto(server.url + "/" + query)
    page.wait_for_selector("#agent-names option", state="attached")
    page.fill("#opponent", opponent)
    page.select_option("#sets", str(sets))
    page.click("#join-btn")
    page.wait_for_selector("#game:not([hidden])")


def start(page) -> None:
    page.click("#start-btn")
    page.wait_for_selector("#hand.active .card")


def uses_by_card(match: Match) -> dict[str, list[str]]:
    uses = defaultdict(list)
    for m in match.legal_moves():
        text = str(m)
        uses[" ".join(text.split()[1:3])].append(text)
    return uses


def test_a_whole_game_against_random_by_clicking(server, page):
    sit_down(page, server, "browser-game", seed=5, sets=1)
    start(page)
    clicks = 0
    while True:
        page.wait_for_selector("#hand.active .card:not(.unusable), #game-over:not([hidden])")
        if page.is_visible("#game-over"):
            break
        page.locator("#hand.active .card:not(.unusable)").first.click()
        if page.is_visible("#choices"):
            page.locator("#choices button[data-move]").first.click()
        clicks += 1
        assert clicks < 200, "the game does not end"
    table = server.call(lambda: server.hub.tables["browser-game"])
    result = server.call(lambda: table.match.result())
    over = page.inner_text("#game-over")
    assert f"{result.scores[0]}" in over and f"{result.scores[1]}" in over
    assert clicks == sum(1 for e in table.match.history if e.player == 0)
    assert page.locator("#sheets table.sheet").count() == 1  # one set, one score sheet
    totals = page.locator("#sheets table.sheet tr.total td").all_inner_texts()
    assert totals == ["total", str(result.scores[0]), str(result.scores[1])]
    assert page.inner_text("#turn") == "Game over"
    # The lobby offers a new game.
    assert page.is_visible("#start-btn") and page.inner_text("#start-btn") == "New game"
    # The record can be saved, or replayed at once.
    game_id = server.call(lambda: table.last_over["game_id"])  # the server keeps a history: named by its id
    assert page.get_attribute("#save-record", "download") == f"mulle-game-{game_id}.json"
    page.click("#replay-record")
    page.wait_for_selector("#replay-controls:not([hidden])")
    n = len(table.match.history)
    assert page.inner_text("#rp-pos") == f"move 0 / {n}"
    page.click("#rp-last")
    assert page.inner_text("#rp-pos") == f"move {n} / {n}"
    assert f"{result.scores[0]}" in page.inner_text("#game-over")


def moves_logged(page) -> list[str]:
    return page.locator("#log li[data-move]").evaluate_all("ls => ls.map(l => l.dataset.move)")


def test_the_first_click_shows_the_uses_and_one_click_is_a_choice(server, page):
    # A deal where some card of seat 0 has several uses and another has exactly one.
    for seed in range(200):
        uses = uses_by_card(Match(seed))
        several = [c for c, u in uses.items() if len(u) >= 2]
        single = [c for c, u in uses.items() if len(u) == 1]
        if several and single:
            break
    sit_down(page, server, "browser-choice", seed=seed)
    start(page)
    card = several[0]
    page.locator(f'#hand .card[data-card="{card}"]').first.click()
    page.wait_for_selector("#choices:not([hidden])")
    offered = page.locator("#choices button[data-move]")
    assert sorted(offered.evaluate_all("bs => bs.map(b => b.dataset.move)")) == sorted(uses[card])
    # Hovering a build shows on the table exactly what it builds on and gathers (the engine's preview).
    from live.views import move_previews

    previews = move_previews(Match(seed).state, Match(seed).legal_moves())
    build = next((m for m in uses[card] if m.startswith("build")), None)
    if build is not None:
        page.hover(f'#choices button[data-move="{build}"]')
        marked = page.locator("#loose .card.target").evaluate_all("cs => cs.map(c => c.dataset.card)")
        assert sorted(marked) == sorted(previews[build]["loose"])
        assert page.locator(f'#choices button[data-move="{build}"]').inner_text().startswith(
            f"build {build.rsplit(' ', 1)[1]} on ")
    # Cancel; a card with one use is not played on the first click either: its use is offered.
    page.click("#choices button.cancel")
    assert page.is_hidden("#choices")
    page.locator(f'#hand .card[data-card="{single[0]}"]').first.click()
    page.wait_for_selector("#choices:not([hidden])")
    assert page.locator("#choices button[data-move]").count() == 1
    assert server.call(lambda: len(server.hub.tables["browser-choice"].match.history)) == 0
    # With "one click plays" chosen, it goes at once.
    page.click("#choices button.cancel")
    page.check("#one-click")
    page.locator(f'#hand .card[data-card="{single[0]}"]').first.click()
    page.wait_for_function("m => [...document.querySelectorAll('#log li')].some(l => l.dataset.move === m)",
                           arg=uses[single[0]][0])
    first = server.call(lambda: str(server.hub.tables["browser-choice"].match.history[0].move))
    assert first == uses[single[0]][0]
    page.uncheck("#one-click")


def test_replay_steps_forward_and_back_with_both_hands(server, page, tmp_path):
    m = Match(17)
    m.play_out([agents.make("random"), agents.make("greedy")], [random.Random(1), random.Random(2)])
    moves = m.moves
    results = tmp_path / "results.jsonl"
    lines = [{"game_id": "g1", "seed": 3, "moves": 0, "specs": ["a", "b"]},  # no move list: offered, not replayable
             {"game_id": "g2", "seed": 17, "moves": len(moves), "move_list": moves, "specs": ["random", "greedy"],
              "scores": list(m.result().scores)}]
    results.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    page.goto(server.url + "/")
    page.set_input_files("#replay-file", str(results))
    page.wait_for_selector("#replay-games:not([hidden]) option", state="attached")
    page.select_option("#replay-games", "1")
    page.click("#replay-btn")
    page.wait_for_selector("#game:not([hidden])")
    assert page.inner_text("#rp-pos") == f"move 0 / {len(moves)}"
    replay = Match(17)

    def check(n: int) -> None:
        assert page.inner_text("#rp-pos") == f"move {n} / {len(moves)}"
        assert page.locator("#log li").count() == n
        st = replay.state
        hand0 = page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
        hand1 = page.locator("#top-hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
        assert hand0 == replay.view(0).to_dict()["hand"] and hand1 == replay.view(1).to_dict()["hand"]
        assert page.inner_text("#deck-size") == str(len(st.deck))
        loose = page.locator("#loose .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
        assert loose == replay.view(0).to_dict()["loose"]

    check(0)
    for n in range(1, 4):
        page.click("#rp-fwd")
        replay.play(moves[n - 1])
        check(n)
    assert page.get_attribute("#last-move .line", "data-move") == moves[2]
    page.click("#rp-back")
    replay = Match.from_record({"seed": 17, "moves": moves[:2]})
    check(2)
    page.click("#rp-last")
    replay = Match.from_record({"seed": 17, "moves": moves})
    check(len(moves))
    assert page.is_visible("#game-over") and str(m.result().scores[0]) in page.inner_text("#game-over")


def test_screenshot_and_its_key_elements(server, page, tmp_path):
    sit_down(page, server, "browser-shot", seed=7, opponent="random")
    start(page)
    for _ in range(9):  # into the game: piles, builds and a few captures on the table
        page.wait_for_selector("#hand.active .card:not(.unusable)")
        page.locator("#hand.active .card:not(.unusable)").last.click()
        if page.is_visible("#choices"):
            page.locator("#choices button[data-move]").last.click()
    page.wait_for_selector("#hand.active .card")
    table = server.call(lambda: server.hub.tables["browser-shot"])
    view = server.call(lambda: table.match.view(0).to_dict())
    # Open the choice of a card with several uses, so the picture shows the offer too.
    match = server.call(lambda: table.match)
    several = [(c, u) for c, u in server.call(lambda: uses_by_card(match)).items() if len(u) >= 2]
    if several:
        page.locator(f'#hand .card[data-card="{several[0][0]}"]').first.click()
        page.wait_for_selector("#choices:not([hidden])")
        offered = page.locator("#choices button[data-move]").evaluate_all("bs => bs.map(b => b.dataset.move)")
        assert sorted(offered) == sorted(several[0][1])
    target = Path(os.environ.get("MULLE_LIVE_SCREENSHOT") or tmp_path / "live.png")
    page.screenshot(path=str(target))
    assert target.stat().st_size > 10_000
    cards = page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    assert cards == view["hand"]
    assert page.locator("#top-hand .card.back").count() == view["opponent_hand_size"]
    assert page.inner_text("#opp-hand-size") == str(view["opponent_hand_size"])
    assert page.inner_text("#deck-size") == str(view["deck_size"])
    assert page.inner_text("#set-deal") == f"Set {view['set']} of 2 · deal {view['deal']}"
    assert page.inner_text("#turn") == "Anna (you) to move"
    loose = page.locator("#loose .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    assert loose == view["loose"]
    assert page.locator("#builds .build").count() == len(view["builds"])
    for i, b in enumerate(view["builds"]):
        label = page.locator("#builds .build .label").nth(i).inner_text()
        assert label.startswith(f"[{b['value']}]") and ("locked" in label) == b["locked"]
    mulle = page.locator("#bottom-mulle .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    assert mulle == view["mulle"][0]
    # Intake is one number (issue 33, defect 11): the intake points the score sheet counts, cards captured beside it.
    assert page.inner_text("#bottom-intake") == str(view["scores"][0]["intake"])
    assert page.inner_text("#bottom-cards") == str(len(view["intake"][0]) + len(view["mulle"][0]))
    assert page.inner_text("#my-hand-size") == str(len(view["hand"]))  # issue 33, defect 6
    assert page.inner_text("#top-tabbe") == str(view["tabbe"][1])
    # Suit colours: hearts and diamonds red, clubs and spades black.
    colours = page.locator("#hand .card:not(.unusable)").evaluate_all(
        "cs => cs.map(c => [c.dataset.card, getComputedStyle(c).color])")
    for card, colour in colours:
        assert (colour == "rgb(192, 24, 43)") == card.startswith(("HJ", "RU")), (card, colour)
    assert "Last:" in page.inner_text("#last-move")
    assert page.inner_text("#status") == "connected" or page.inner_text("#status").startswith("connected ·")


def test_watch_two_agents_to_the_end(server, page):
    page.goto(server.url + "/?seed=2&sets=1")
    page.wait_for_selector("#agent-names option", state="attached")
    page.fill("#watch-a", "random")
    page.fill("#watch-b", "greedy:risk=0.5")
    page.fill("#watch-speed", "0")
    page.click("#watch-btn")
    page.wait_for_selector("#game-over:not([hidden])", timeout=20_000)
    assert page.locator("#top-hand .card.back").count() == 0  # both hands shown, no card backs
    assert "greedy:risk=0.5" in page.inner_text("#top-name")


def test_server_errors_are_shown(server, browser, page):
    sit_down(page, server, "browser-error", name="Anna")
    other = browser.new_page()
    try:
        other.goto(server.url + "/?table=browser-error&name=anna")
        other.wait_for_selector("#agent-names option", state="attached")
        other.click("#join-btn")
        other.wait_for_selector("#error:not([hidden])")
        # Issue 52: the refusal in words, not "error 2004:"; the code stays on the element for tools.
        text = other.inner_text("#error-text")
        assert text.startswith("That name is taken: ") and "2004" not in text and other.is_visible("#start")
        assert other.get_attribute("#error", "data-code") == "2004"
    finally:
        other.close()


def test_a_reload_inside_the_grace_period_keeps_the_seat(server, page):
    sit_down(page, server, "browser-reload", seed=4)
    start(page)
    page.locator("#hand.active .card:not(.unusable)").first.click()
    if page.is_visible("#choices"):
        page.locator("#choices button[data-move]").first.click()
    page.wait_for_selector("#hand.active .card")
    before = page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    page.reload()
    page.wait_for_selector("#hand.active .card")  # back at the table, asked to move again
    assert page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)") == before
    assert page.is_hidden("#start") and "you are back" in page.inner_text("#log")
    assert page.locator("#log li").count() == 1 + 2  # the two moves so far, rebuilt from the history
    table = server.call(lambda: server.hub.tables["browser-reload"])
    assert server.call(lambda: table.seats[0].person.name) == "Anna"


def test_a_refused_move_is_shown_and_the_turn_goes_on(server, page):
    """The page never sends an illegal move itself; a forged one shows the server's error and play continues."""
    sit_down(page, server, "browser-refused", seed=6)
    start(page)
    hand = page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")
    missing = next(f"{s} {r}" for s in ("KL", "SP", "HJ", "RU") for r in ("2", "3", "4", "5", "6", "7", "8", "9")
                   if f"{s} {r}" not in hand)
    page.evaluate("""m => { ui.ws.send(JSON.stringify({type: "response",
        payload: {request_id: ui.request.id, data: {move: m}}})); ui.request.sent = true; render(); }""",
                  f"discard {missing}")
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error-text").startswith("Not your card: ") and missing in page.inner_text("#error")
    page.wait_for_selector("#hand.active .card:not(.unusable)")  # the request still stands
    page.locator("#hand.active .card:not(.unusable)").first.click()
    if page.is_visible("#choices"):
        page.locator("#choices button[data-move]").first.click()
    page.wait_for_function("() => document.querySelectorAll('#log li').length >= 4")
    assert server.call(lambda: len(server.hub.tables["browser-refused"].match.history)) >= 1


# ----- issue 24: a game people enjoy and can trust ------------------------------------------------------


def play_by_keyboard(page, limit: int = 400) -> int:
    """Play the person's moves with the keyboard only until the game ends; return how many were played."""
    played = 0
    while True:
        page.wait_for_selector("#hand.active .card, #game-over:not([hidden])")
        if page.is_visible("#game-over"):
            return played
        # It is our turn: the focus is on our hand. Move with the arrows to a card that has a use.
        for _ in range(12):
            if page.evaluate("() => document.activeElement.matches('#hand .card:not(.unusable)')"):
                break
            page.keyboard.press("ArrowRight")
        assert page.evaluate("() => document.activeElement.matches('#hand .card:not(.unusable)')")
        before = page.evaluate("() => document.querySelectorAll('#log li[data-move]').length")
        page.keyboard.press("Enter")
        if page.evaluate("() => document.activeElement.matches('#choices button[data-move]')"):
            page.keyboard.press("Enter")
        page.wait_for_function("n => document.querySelectorAll('#log li[data-move]').length > n", arg=before)
        played += 1
        assert played < limit, "the game does not end"


def test_a_whole_unseeded_game_by_keyboard_then_reload_then_replay_it(server, page):
    """Keyboard only: the name field joins on Enter, the host lands on Start, the hand takes arrows and Enter.

    Then defect 8 (a reload after the game keeps the result) and defect 1 (an unseeded game's 63-bit seed
    survives the page: "Replay it" replays the same game, the file is named by its exact seed or id)."""
    page.goto(server.url + "/?delay=0&table=browser-keys")
    page.wait_for_selector("#agent-names option", state="attached")
    page.select_option("#sets", "1")
    for _ in range(10):
        if page.evaluate("() => document.activeElement.id") == "player-name":
            break
        page.keyboard.press("Tab")
    page.keyboard.type("Kim")
    page.keyboard.press("Enter")
    page.wait_for_selector("#game:not([hidden])")
    page.wait_for_function("() => document.activeElement.id === 'start-btn'")
    page.keyboard.press("Enter")
    played = play_by_keyboard(page)
    table = server.call(lambda: server.hub.tables["browser-keys"])
    match = server.call(lambda: table.match)
    result = server.call(lambda: match.result())
    assert played == sum(1 for e in match.history if e.player == 0) and match.seed >= 2**53  # unseeded: 63 bits
    over = page.inner_text("#game-over")
    assert f"{result.scores[0]}" in over and f"{result.scores[1]}" in over
    assert axe_violations(page) == []  # the game-over screen passes the accessibility scan
    # The opponent's moves and the turn were announced for screen readers.
    assert page.get_attribute("#announce", "aria-live") == "polite"
    # Defect 8: a reload after the game keeps the result and the record links.
    page.reload()
    page.wait_for_selector("#game-over:not([hidden])")
    assert page.inner_text("#game-over").split("\n")[0] == over.split("\n")[0]
    game_id = server.call(lambda: table.last_over["game_id"])
    assert page.get_attribute("#save-record", "download") == f"mulle-game-{game_id}.json"
    saved = page.evaluate("async () => await (await fetch(document.querySelector('#save-record').href)).text()")
    assert json.loads(saved)["seed"] == match.seed  # exact: the text never became a JavaScript number
    # Defect 1: "Replay it" replays the same game.
    page.click("#replay-record")
    page.wait_for_selector("#replay-controls:not([hidden])")
    n = len(match.history)
    assert page.inner_text("#rp-pos") == f"move 0 / {n}"
    page.click("#rp-last")
    assert page.inner_text("#rp-pos") == f"move {n} / {n}"
    assert moves_logged(page) == [str(e.move) for e in match.history]
    assert f"{result.scores[0]}" in page.inner_text("#game-over")


def test_the_preview_marks_what_a_capture_takes(server, page):
    """A card with several uses, one of them a capture of two or more cards: focusing the capture marks exactly them."""
    from live.views import move_previews

    for seed in range(500):
        m = Match(seed, {"sets": 1})
        previews = move_previews(m.state, m.legal_moves())
        uses = uses_by_card(m)
        hit = next(((c, mv) for c, u in uses.items() if len(u) >= 2 for mv in u
                    if mv.startswith("capture") and len(previews[mv]["loose"]) >= 2), None)
        if hit:
            break
    card, capture = hit
    sit_down(page, server, "browser-preview", seed=seed, sets=1)
    start(page)
    page.locator(f'#hand .card[data-card="{card}"]').first.focus()
    assert page.is_hidden("#choices")  # focus alone opens nothing (issue 33, defect 2)
    page.keyboard.press("Enter")  # Enter shows the uses
    page.wait_for_selector("#choices:not([hidden])")
    page.locator(f'#choices button[data-move="{capture}"]').focus()
    marked = page.locator("#loose .card.target").evaluate_all("cs => cs.map(c => c.dataset.card)")
    assert sorted(marked) == sorted(previews[capture]["loose"])
    label = page.locator(f'#choices button[data-move="{capture}"]').inner_text()
    assert label.startswith("take ") and all(c in label for c in previews[capture]["loose"])
    assert ("mulle" in label) == bool(previews[capture]["mulles"])
    page.keyboard.press("Escape")  # cancels: the marks go, the focus is back on the card
    assert page.locator(".target").count() == 0 and page.is_hidden("#choices")
    assert page.evaluate("() => document.activeElement.dataset.card") == card
    assert server.call(lambda: len(server.hub.tables["browser-preview"].match.history)) == 0


def test_the_rules_panel_opens_and_closes_at_any_time(server, page):
    page.goto(server.url + "/")
    assert page.is_hidden("#rules")
    page.click("#rules-btn")
    assert page.is_visible("#rules") and page.get_attribute("#rules-btn", "aria-expanded") == "true"
    text = page.inner_text("#rules")
    for words in ("A = 14", "SP 2 = 15", "RU 10 = 16", "Capture", "Build", "locked", "Trotta", "Mulle", "Tabbe",
                  "bonus"):
        assert words in text, words
    page.keyboard.press("Escape")
    assert page.is_hidden("#rules") and page.get_attribute("#rules-btn", "aria-expanded") == "false"
    sit_down(page, server, "browser-rules")
    page.click("#rules-btn")
    assert page.is_visible("#rules")
    page.click("#rules-close")
    assert page.is_hidden("#rules")


def test_a_duplicated_tab_leaves_no_zombie(server, browser, page):
    """Defect 5: the old tab kept its hand lit and every click answered 3002."""
    sit_down(page, server, "browser-zombie", seed=None)
    start(page)
    session = page.evaluate("() => sessionStorage.getItem('mulle-session')")
    dup = page.context.new_page()
    try:
        dup.add_init_script(f"sessionStorage.setItem('mulle-session', {json.dumps(session)})")
        dup.goto(server.url + "/?delay=0")
        dup.wait_for_selector("#hand.active .card")
        page.wait_for_selector("#elsewhere:not([hidden])")
        assert "continues in another tab" in page.inner_text("#elsewhere")
        assert page.locator("#hand.active").count() == 0 and page.inner_text("#bottom-turn") != ""
        page.click("#take-back")
        page.wait_for_selector("#hand.active .card")
        assert page.is_hidden("#elsewhere")
        dup.wait_for_selector("#elsewhere:not([hidden])")
        assert dup.locator("#hand.active").count() == 0
    finally:
        dup.close()


@pytest.fixture()
def phone(browser):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    pg.set_default_timeout(10_000)
    yield pg
    ctx.close()


def no_sideways_scroll(page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"


def test_a_phone_never_scrolls_sideways_and_reaches_every_choice(server, phone):
    """Defect 11: a 64-character table name widened the phone page to 609 px."""
    phone.goto(server.url + "/")
    no_sideways_scroll(phone)
    name = "x" * 64
    sit_down(phone, server, name, seed=5, sets=1)
    no_sideways_scroll(phone)
    start(phone)
    no_sideways_scroll(phone)
    card = phone.locator("#hand.active .card:not(.unusable)").first
    card.tap()
    phone.wait_for_selector("#choices:not([hidden])")
    box = phone.locator("#choices button[data-move]").first.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 844, box  # brought into view, not below the fold
    no_sideways_scroll(phone)
    phone.click("#rules-btn")
    no_sideways_scroll(phone)


def axe_violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    # Scan the page at rest: a card flying to a pile, half faded, is not text anyone has to read.
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    results = Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def test_accessibility_scan_of_the_lobby_and_a_game(server, page):
    """The game-over screen is scanned at the end of the keyboard game above."""
    page.goto(server.url + "/")
    page.wait_for_selector("#agent-names option", state="attached")
    assert axe_violations(page) == []
    sit_down(page, server, "browser-axe", seed=3, sets=1)
    assert axe_violations(page) == []  # the table's lobby
    start(page)
    page.locator("#hand.active .card:not(.unusable)").first.click()
    page.wait_for_selector("#choices:not([hidden])")
    assert axe_violations(page) == []  # a game, a card's uses on offer
    page.click("#choices button.cancel")
    page.click("#rules-btn")
    assert axe_violations(page) == []


def test_the_replay_picker_gives_way_to_pasted_text(server, page, tmp_path):
    """Defect 7: after replaying game 3 of a results file, pasting another line (or hello) replayed game 3."""
    games = []
    for seed in (21, 22):
        m = Match(seed, {"sets": 1})
        m.play_out([agents.make("random"), agents.make("random")], [random.Random(1), random.Random(2)])
        games.append(m)
    lines = [{"game_id": f"g{i}", "seed": m.seed, "ruleset": {"sets": 1}, "move_list": m.moves, "moves": len(m.moves),
              "specs": ["random", "random"]} for i, m in enumerate(games)]
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    page.goto(server.url + "/")
    page.set_input_files("#replay-file", str(results))
    page.wait_for_selector("#replay-games option", state="attached")
    page.select_option("#replay-games", "1")
    page.click("#replay-btn")
    page.wait_for_selector("#replay-controls:not([hidden])")
    page.click("#rp-last")
    assert moves_logged(page) == games[1].moves
    page.click("#leave-btn")
    page.fill("#replay-text", "hello")
    page.click("#replay-btn")
    page.wait_for_selector("#error:not([hidden])")
    assert "not a game record" in page.inner_text("#error") and page.is_visible("#start")
    page.fill("#replay-text", json.dumps(games[0].record().to_dict()))
    page.click("#replay-btn")
    page.wait_for_selector("#replay-controls:not([hidden])")
    page.click("#rp-last")
    assert moves_logged(page) == games[0].moves


def test_a_refused_opponent_leaves_the_lobby_field(server, page):
    """Defect 9: pimc:samples=5000 was refused, but the field kept showing it while the table kept the old one."""
    sit_down(page, server, "browser-refuse", opponent="random")
    page.fill("#lobby-opponent", "pimc:samples=5000")
    page.press("#lobby-opponent", "Enter")
    page.wait_for_selector("#error:not([hidden])")
    assert "samples may be at most" in page.inner_text("#error")
    page.wait_for_function("() => document.querySelector('#lobby-opponent').value === 'random'")


def test_the_error_banner_moves_nothing_and_gives_way_to_success(server, page):
    """Defect 10: the banner pushed the page down ~53 px, jumped back 8 s later, and outlived later successes."""
    sit_down(page, server, "browser-banner", opponent="random")
    top = page.locator("#game").bounding_box()["y"]
    page.fill("#lobby-opponent", "nobody-at-all")
    page.press("#lobby-opponent", "Enter")
    page.wait_for_selector("#error:not([hidden])")
    assert page.locator("#game").bounding_box()["y"] == top
    page.wait_for_timeout(300)
    assert page.is_visible("#error")  # no timer pulls it away under the pointer
    page.fill("#lobby-opponent", "heuristic")
    page.press("#lobby-opponent", "Enter")
    page.wait_for_selector("#error", state="hidden")  # the next success clears it


def test_before_joining_the_page_does_not_say_offline_and_an_expired_seat_keeps_the_form(server, page):
    """Defect 11: 'offline' read as if the server were down; after the grace period the form forgot the table and
    name it asked the person to rejoin with."""
    page.goto(server.url + "/")
    page.wait_for_selector("#agent-names option", state="attached")
    assert "offline" not in page.inner_text("#status")
    sit_down(page, server, "browser-expired", name="Ulla")
    session = page.evaluate("() => sessionStorage.getItem('mulle-session')")
    page.evaluate("() => { ui.leaving = true; ui.ws.close(); }")  # dropped, and not coming back in time
    table = server.call(lambda: server.hub.tables["browser-expired"])
    person = server.call(lambda: table.seats[0].person)
    # The grace period runs out only for someone the server has seen go: wait until it has (a sanitizer run
    # once ended the grace before the close arrived, and the seat was rightly still held).
    deadline = time.monotonic() + 10
    while server.call(lambda: person.conn) is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    server.call(lambda: table._grace_over(person))
    page.evaluate("s => { ui.leaving = false; ui.mode = 'play'; connect(() => send('join', {session_id: s})); }",
                  session)
    page.wait_for_selector("#start:not([hidden])")
    assert page.input_value("#table-name") == "browser-expired" and page.input_value("#player-name") == "Ulla"
    assert "Sit down" in page.inner_text("#error")


def test_the_start_page_lists_stored_games_and_replays_one(server, page):
    import time as _time

    from live.store import FinishedGame

    m = Match(31, {"sets": 1}, ["person:Vera", "random"])
    m.play_out([agents.make("random"), agents.make("random")], [random.Random(4), random.Random(5)])
    game = FinishedGame("browser-history", m.record(), (((1, "Vera", "person"),), ((1, "random", "agent"),)),
                        _time.time())
    gid = server.call(lambda: server.hub.store.add(game))
    page.goto(server.url + "/")
    page.fill("#games-player", "vera")
    page.press("#games-player", "Enter")
    # The unfiltered list (the module's other games) may still be showing: wait for the filtered one.
    page.wait_for_function("() => document.querySelectorAll('#games-list li').length === 1")
    page.wait_for_selector(f'#games-list li[data-game="{gid}"]')
    row = page.inner_text(f'#games-list li[data-game="{gid}"]')
    assert "browser-history" in row and "Vera" in row and str(m.result().scores[0]) in row
    page.click(f'#games-list li[data-game="{gid}"] button')
    page.wait_for_selector("#replay-controls:not([hidden])")
    page.click("#rp-last")
    assert moves_logged(page) == m.moves


# ----- issue 33: a card room people come back to --------------------------------------------------------


def hand_cards(page) -> list[str]:
    return page.locator("#hand .card").evaluate_all("cs => cs.map(c => c.dataset.card)")


def play_one_by_mouse(page) -> None:
    page.locator("#hand.active .card:not(.unusable)").first.click()
    page.wait_for_selector("#choices:not([hidden])")
    page.locator("#choices button[data-move]").first.click()


def test_a_closed_tab_reopened_in_another_tab_takes_the_seat_back(server, browser):
    """Defect 1: the session lived in the tab's sessionStorage; reopening the table gave 'error 2004: the name is
    taken', and after the grace period the game was lost. Now a per-table token in localStorage holds the seat."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.set_default_timeout(10_000)
        sit_down(page, server, "browser-comeback", seed=8, sets=1)
        start(page)
        play_one_by_mouse(page)
        page.wait_for_selector("#hand.active .card")
        before = hand_cards(page)
        page.close()  # the tab is gone
        table = server.call(lambda: server.hub.tables["browser-comeback"])
        person = server.call(lambda: table.seats[0].person)
        deadline = time.monotonic() + 10
        while server.call(lambda: person.conn) is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        # The table's link opened again in a new tab of the same browser: back at the seat, as it was.
        again = ctx.new_page()
        again.set_default_timeout(10_000)
        again.goto(server.url + "/?delay=0&table=browser-comeback")
        again.wait_for_selector("#hand.active .card")
        assert hand_cards(again) == before and "you are back" in again.inner_text("#log")
        assert again.is_hidden("#error") or "2004" not in again.inner_text("#error")
        assert server.call(lambda: table.seats[0].person is person)
        # Sitting down by name at that table from the start page (another tab) takes it back too, never 2004.
        third = ctx.new_page()
        third.set_default_timeout(10_000)
        third.goto(server.url + "/?delay=0")
        third.wait_for_selector("#agent-names option", state="attached")
        third.fill("#table-name", "browser-comeback")
        third.fill("#player-name", "anna")
        third.click("#join-btn")
        third.wait_for_selector("#hand.active .card")
        assert hand_cards(third) == before
        again.wait_for_selector("#elsewhere:not([hidden])")  # the other tab knows it moved
    finally:
        ctx.close()


def test_enter_shows_the_uses_a_second_enter_plays_and_every_move_is_announced_in_order(server, page):
    """Defects 2 and 3: focus opened a card's uses, so Enter on a one-use card played it at once, and one's own move
    was never announced; the opponent's move was replaced by "Your turn." within milliseconds."""
    for seed in range(200):
        uses = uses_by_card(Match(seed, {"sets": 1}))
        single = [c for c, u in uses.items() if len(u) == 1]
        if single:
            break
    sit_down(page, server, "browser-enter", seed=seed, sets=1)
    start(page)
    table = server.call(lambda: server.hub.tables["browser-enter"])
    page.locator(f'#hand .card[data-card="{single[0]}"]').first.focus()
    assert page.is_hidden("#choices") and page.locator("#hand .card.selected").count() == 0
    page.keyboard.press("Enter")  # shows the one use, focused; nothing is played
    page.wait_for_selector("#choices:not([hidden])")
    assert page.evaluate("() => document.activeElement.dataset.move") == uses[single[0]][0]
    assert server.call(lambda: len(table.match.history)) == 0
    n = page.evaluate("() => ui.announced.length")
    page.keyboard.press("Enter")  # the second Enter plays it
    page.wait_for_function("n => ui.announced.slice(n).includes('Your turn.')", arg=n)
    said = page.evaluate("n => ui.announced.slice(n)", n)
    mine = server.call(lambda: table.match.history[0])
    theirs = server.call(lambda: table.match.history[1])
    assert said[0].startswith("You: ") and single[0] in said[0]  # one's own move, confirmed aloud
    assert said.index("Your turn.") > 1 and str(theirs.move).split()[1] in said[1]  # their move first, then the turn
    assert mine.player == 0 and theirs.player == 1
    # Each announcement is a line of its own in the polite region: none replaced another.
    lines = page.locator("#announce p").all_inner_texts()
    assert lines[-3:] == said[-3:]
    assert page.get_attribute("#announce", "aria-atomic") == "false"


def test_mouse_players_find_no_card_chosen_for_them_and_tab_reaches_the_hand_on_the_opponents_turn(server, page):
    """Defects 8 and 9: the first card was raised with its uses open every turn; one's own hand could not be
    reached with Tab during the opponent's turn."""
    page.goto(server.url + "/?delay=4000&table=browser-mouse&name=Mo")  # the agent thinks 4 s: time to press Tab
    page.wait_for_selector("#agent-names option", state="attached")
    page.fill("#opponent", "random")
    page.select_option("#sets", "1")
    page.click("#join-btn")
    page.wait_for_selector("#game:not([hidden])")
    page.click("#start-btn")
    page.wait_for_selector("#hand.active .card")
    assert page.locator("#hand .card.selected").count() == 0 and page.is_hidden("#choices")
    play_one_by_mouse(page)
    page.wait_for_selector("#top-turn:has-text('to move')")
    page.locator("#leave-btn").focus()
    reached = False
    for _ in range(25):
        page.keyboard.press("Tab")
        if page.evaluate("() => !!document.activeElement.closest('#hand')"):
            reached = True
            break
    assert reached and page.locator("#hand.active").count() == 0
    assert page.evaluate("() => document.activeElement.getAttribute('aria-disabled')") == "true"
    page.keyboard.press("ArrowRight")  # the cards can be read one by one
    assert page.evaluate("() => !!document.activeElement.closest('#hand')")
    page.wait_for_selector("#hand.active .card")
    assert page.locator("#hand .card.selected").count() == 0 and page.is_hidden("#choices")


def test_open_tables_are_listed_to_join_or_watch_with_an_invite_link(server, browser, page):
    """Defect 6 and the open tables: a named table could not be watched from the page; a watcher saw a speed
    control that only erred; the bottom seat's hand size was not shown."""
    sit_down(page, server, "browser-open", seed=None, sets=1)
    start(page)
    other = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        w = other.new_page()
        w.set_default_timeout(10_000)
        w.goto(server.url + "/")
        row = w.locator('#tables-list li[data-table="browser-open"]')
        row.wait_for()
        assert "Anna" in row.inner_text() and "playing" in row.inner_text()
        assert row.locator("button.invite").get_attribute("data-url").endswith("/?table=browser-open")
        assert axe_violations(w) == []  # the start page with its open tables
        row.locator("button", has_text="Watch").click()
        w.wait_for_selector("#game:not([hidden])")
        assert w.is_hidden("#watch-controls")  # a people's table: no pause control that only errs
        # No card's face is seen; both hands' backs are (issue 52: the bottom seat's were missing).
        assert w.locator("#top-hand .card.back").count() > 0 and w.locator("#hand .card:not(.back)").count() == 0
        assert w.inner_text("#my-hand-size") == w.inner_text("#opp-hand-size") != "0"
        assert axe_violations(w) == []
        w.click("#leave-btn")
        # Join takes the agent's seat.
        w.fill("#player-name", "Bert")
        w.locator('#tables-list li[data-table="browser-open"] button', has_text="Join").click()
        w.wait_for_selector("#bottom-name:has-text('Bert')")
        table = server.call(lambda: server.hub.tables["browser-open"])
        assert server.call(lambda: table.seats[1].person.name) == "Bert"
        assert page.is_visible("#invite")  # the bar's Invite link (it copies: see the test of issue 52)
    finally:
        other.close()


def test_game_over_takes_the_focus_and_is_in_view_on_a_phone(server, phone):
    """Defect 7: at game over the focus fell to <body>; on a phone the result box sat below the fold."""
    sit_down(phone, server, "browser-phone-end", seed=12, sets=1)
    start(phone)
    while True:
        phone.wait_for_selector("#hand.active .card:not(.unusable), #game-over:not([hidden])")
        if phone.is_visible("#game-over"):
            break
        phone.locator("#hand.active .card:not(.unusable)").first.tap()
        phone.locator("#choices button[data-move]").first.tap()
    phone.wait_for_function("() => document.activeElement.id === 'game-over'")
    phone.wait_for_function("""() => { const r = document.querySelector('#game-over').getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight; }""")
    # The scoreboard stays in view, wherever the page is scrolled.
    phone.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    box = phone.locator("#scoreboard").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 844
    no_sideways_scroll(phone)


def test_the_rules_say_the_suits_the_winner_and_one_intake(server, page):
    """Defect 11: the rules never said what KL, SP, HJ and RU mean or how the winner is decided, and "intake" was
    three different numbers."""
    page.goto(server.url + "/")
    page.click("#rules-btn")
    text = page.inner_text("#rules")
    for words in ("KL = clubs", "SP = spades", "HJ = hearts", "RU = diamonds", "Who wins", "higher total wins",
                  "draw", "Intake points", "one \"intake\" number"):
        assert words in text, words
    assert "intake points" in page.content()  # the score sheet's row says the same words
    # In a later set the page shows that set's intake points (the bonus counts per set), not the game's sum.
    m = Match(7, {"sets": 2})
    rng, bot = random.Random(3), agents.make("random")
    while len(m.state.sheets) < 1 or m.state.set_sheet(0)["intake"] == 0:
        m.step(bot, rng)
    view = m.view(0).to_dict()
    assert view["scores"][0]["intake"] != m.state.set_sheet(0)["intake"]  # the game's sum differs
    assert page.evaluate("v => setIntake(v, 0)", view) == m.state.set_sheet(0)["intake"]


def test_the_card_room_moments_honour_reduced_motion_and_sound_is_off(server, browser):
    """Cards move and a mulle gets its moment; with prefers-reduced-motion nothing moves; sound is off by default;
    a first game shows hints."""
    for reduced in (False, True):
        ctx = browser.new_context(viewport={"width": 1280, "height": 900},
                                  reduced_motion="reduce" if reduced else "no-preference")
        try:
            page = ctx.new_page()
            page.set_default_timeout(10_000)
            sit_down(page, server, f"browser-feel-{int(reduced)}", seed=3, sets=1)
            start(page)
            assert page.is_visible("#hint") and "your turn" in page.inner_text("#hint").lower()  # a first game
            assert not page.is_checked("#sound")
            page.evaluate("""() => { window.__moves = 0; const real = Element.prototype.animate;
                Element.prototype.animate = function (...a) { window.__moves += 1; return real.apply(this, a); }; }""")
            play_one_by_mouse(page)
            page.wait_for_selector("#hand.active .card")
            moved = page.evaluate("() => window.__moves")
            assert (moved == 0) == reduced, moved
            page.evaluate("() => moment({mulles: 1, player: 1, tabbe: false})")
            assert page.inner_text("#moment") == "Mulle!" and page.is_visible("#moment")
            animated = page.evaluate("() => getComputedStyle(document.querySelector('#moment')).animationName")
            assert (animated == "none") == reduced
            assert page.evaluate("() => audio") is None  # no sound was made: it is off
            page.uncheck("#hints")
            assert page.is_hidden("#hint")
        finally:
            ctx.close()


def _store_game(server, table, seed, people=("Vera",)):
    """A finished one-set game played by random agents, stored as the game of ``people`` at seat 0 (and 1)."""
    import time as _time

    from live.store import FinishedGame

    names = [people[0], people[1] if len(people) > 1 else "random"]
    m = Match(seed, {"sets": 1}, [f"person:{names[0]}", names[1]])
    m.play_out([agents.make("random"), agents.make("heuristic")], [random.Random(4), random.Random(5)])
    kinds = ["person", "person" if len(people) > 1 else "agent"]
    game = FinishedGame(table, m.record(), (((1, names[0], kinds[0]),), ((1, names[1], kinds[1]),)), _time.time())
    return server.call(lambda: server.hub.store.add(game)), m


def test_a_stored_game_is_analysed_from_the_page_with_its_mistakes_marked(server, page):
    """Issue 33: "Analyse" runs in the background with progress and shows, per move, what was played, the
    analyser's choice and the points lost, the biggest mistakes marked."""
    gid, m = _store_game(server, "browser-analyse", 51, ("Ulf",))
    page.goto(server.url + "/")
    page.fill("#games-player", "ulf")
    page.press("#games-player", "Enter")
    page.wait_for_selector(f'#games-list li[data-game="{gid}"]')
    page.click(f'#games-list li[data-game="{gid}"] button:has-text("Analyse")')
    page.wait_for_selector("#analysis:not([hidden])")
    page.wait_for_selector("#analysis-list li", timeout=60_000)
    analysis = server.call(lambda: server.hub.store.analysis(gid))
    items = page.locator("#analysis-list li")
    assert items.count() == len(analysis["decisions"]) > 0
    marked = page.locator("#analysis-list li.mistake").evaluate_all("ls => ls.map(l => Number(l.value))")
    assert marked == [d["number"] for d in analysis["decisions"] if d["mistake"]] and marked
    first_mistake = next(d for d in analysis["decisions"] if d["mistake"])
    text = page.locator(f'#analysis-list li[value="{first_mistake["number"]}"]').inner_text()
    assert first_mistake["played"] in text and first_mistake["best"] in text and "points lost" in text
    assert "Mistakes at moves" in page.inner_text("#analysis-status")
    assert axe_violations(page) == []
    page.keyboard.press("Escape")
    assert page.is_hidden("#analysis")


def test_the_ratings_page_lists_glicko_ratings_and_a_players_page_charts_them(server, page):
    """Issue 52, item 3: Glicko-2 ratings per game with their deviation and a provisional mark; a player's page shows
    the history as an SVG chart drawn by the page (no CDN)."""
    import time as _time

    from live.ratings import agent_key, person_key
    from live.store import FinishedGame

    for i in range(4):
        m = Match(60 + i, {"sets": 1}, ["person:Rut", "random"])
        m.play_out([agents.make("random"), agents.make("heuristic")], [random.Random(4), random.Random(5)])
        game = FinishedGame("browser-ratings", m.record(), (((1, "Rut", "person"),), ((1, "random", "agent"),)),
                            _time.time(), rated=(person_key("Rut"), agent_key("random")))
        server.call(lambda g=game: server.hub.store.add(g))
    page.goto(server.url + "/ratings")
    page.wait_for_selector('#ratings-body tr[data-key="person:rut"]')
    import urllib.request

    with urllib.request.urlopen(server.url + "/api/ratings?game=mulle", timeout=10) as r:
        body = json.loads(r.read())
    row = page.locator('#ratings-body tr[data-key="person:rut"]').inner_text()
    rut = next(p for p in body["players"] if p["key"] == "person:rut")
    assert f"{round(rut['rating'])}?" in row and str(round(rut["rd"])) in row and str(rut["games"]) in row
    assert axe_violations(page) == []
    page.click('#ratings-body tr[data-key="person:rut"] a')
    page.wait_for_url("**/players/Rut")
    page.wait_for_selector("svg.chart")
    assert page.locator("svg.chart circle").count() == rut["games"]
    assert page.locator('.game-block tbody tr').count() == rut["games"]
    assert axe_violations(page) == []
    page.goto(server.url + "/")
    page.click("a.header-link")  # the start page links to the ratings
    page.wait_for_url("**/ratings")

# ----- issue 52: Casino at the table by drops, the chooser, the temporary stack ------------------------------


def sit_down_casino(page, server, table: str, seed: int, name: str = "Anna", rounds: int = 1) -> None:
    page.goto(server.url + f"/?delay=0&table={table}&name={name}&seed={seed}")
    page.wait_for_selector("#agent-names option", state="attached")
    page.fill("#opponent", "random")
    page.select_option("#game-choice", "casino")
    page.select_option("#sets", str(rounds))
    page.click("#join-btn")
    page.wait_for_selector("#game:not([hidden])")


def _casino_seed(want) -> tuple[int, object]:
    """A seed whose first position (seat 0 to move, one round) has what ``want(view)`` asks for."""
    from mulle_env import casino

    for seed in range(500):
        view = casino.new_game(seed, casino.Ruleset(rounds=1)).view(0)
        found = want(view)
        if found:
            return seed, found
    raise AssertionError("no seed found")


def _drops_in(view):
    from mulle_env.casino.drops import drop_moves

    out = {"one": None, "several": None, "none": None}
    piles = list(view.loose) + [tuple(b.cards) for b in view.builds]
    for card in view.hand:
        for pile in piles:
            n = len(drop_moves(view, card, pile))
            key = "none" if n == 0 else "one" if n == 1 else "several"
            out[key] = out[key] or (card, pile)
    return out


def _pile_selector(pile) -> str:
    from mulle_env.engine.cards import CARD_NAMES

    if isinstance(pile, tuple):
        return f'#builds .build[data-build="[{" ".join(CARD_NAMES[c] for c in pile)}]"]'
    return f'#loose .card[data-card="{CARD_NAMES[pile]}"]'


def _play_casino_turn_by_drag(page, server, table_name: str) -> str:
    """Seat 0's turn at a Casino table, played as a person would: the first legal move's other piles clicked onto the
    temporary stack, its card dragged onto its first pile (or onto the empty table to trail), the chooser answered."""
    from mulle_env.casino import rules
    from mulle_env.engine.cards import CARD_NAMES

    table = server.call(lambda: server.hub.tables[table_name])
    view = server.call(lambda: table.match.view(0))
    move, plan = next(iter(view.move_plans().items()))
    piles = [int(f) for f in plan.loose] + [tuple(sorted(b[2])) for b in plan.builds]
    if plan.base is not None:
        piles.insert(0, tuple(sorted(plan.base[2])))
    assert rules.taken_cards(plan) is not None
    for pile in piles[1:]:
        page.click(_pile_selector(pile))
    card = page.locator(f'#hand .card[data-card="{CARD_NAMES[move.card]}"]')
    before = len(server.call(lambda: list(table.match.history)))
    card.drag_to(page.locator(_pile_selector(piles[0]) if piles else "#table-title"))
    page.wait_for_function(f"() => !document.querySelector('#choices').hidden || "
                           f"document.querySelectorAll('#log li[data-move]').length > {before}")
    if page.is_visible(f'#choices button[data-move="{move}"]'):
        page.click(f'#choices button[data-move="{move}"]')
    page.wait_for_function(f"() => document.querySelectorAll('#log li[data-move]').length > {before}")
    return str(move)


def test_casino_by_drags_plays_at_once_offers_a_chooser_in_words_and_refuses_saying_why(server, page):
    """Issue 52, item 1: the seed's interaction rules in a real browser (CASINO.md 8)."""
    from mulle_env.casino.drops import drop_choices, drop_refusal
    from mulle_env.engine.cards import CARD_NAMES

    seed, found = _casino_seed(lambda v: (d := _drops_in(v)) and d["several"] and d["none"] and d)
    sit_down_casino(page, server, "browser-casino", seed)
    assert "Casino" in page.inner_text("#table-label")
    assert axe_violations(page) == []  # the Casino table's lobby
    start(page)
    assert axe_violations(page) == []  # a Casino game, the player's turn
    from mulle_env import casino

    view = casino.new_game(seed, casino.Ruleset(rounds=1)).view(0)
    # A drop that means no move is refused, in words, and the turn goes on.
    card, pile = found["none"]
    page.locator(f'#hand .card[data-card="{CARD_NAMES[card]}"]').drag_to(page.locator(_pile_selector(pile)))
    page.wait_for_selector("#error:not([hidden])")
    why = drop_refusal(view, card, pile)
    assert page.inner_text("#error-text") == f"Not possible: {why[0].upper()}{why[1:]}."
    assert "error 3000" not in page.inner_text("#error-text")
    # A drop that means several moves: the chooser names them in words.
    card, pile = found["several"]
    page.locator(f'#hand .card[data-card="{CARD_NAMES[card]}"]').drag_to(page.locator(_pile_selector(pile)))
    page.wait_for_selector("#choices:not([hidden]) button[data-move]")
    offered = page.locator("#choices button[data-move]").all_inner_texts()
    assert offered == [w for _, w in drop_choices(view, card, pile)]
    assert axe_violations(page) == []  # the chooser
    page.locator("#choices button[data-move]").first.click()
    page.wait_for_selector("#log li[data-move]")
    first = page.locator("#log li[data-move]").first.get_attribute("data-move")
    assert first == str(drop_choices(view, card, pile)[0][0])
    # The rest of the game by drags, to the end; the page never leaves a JavaScript error (the fixture checks).
    for _ in range(60):
        page.wait_for_selector("#hand.active .card, #game-over:not([hidden])")
        if page.is_visible("#game-over"):
            break
        _play_casino_turn_by_drag(page, server, "browser-casino")
    page.wait_for_selector("#game-over:not([hidden])")
    table = server.call(lambda: server.hub.tables["browser-casino"])
    result = server.call(lambda: table.match.result())
    assert f"{result.scores[0]}" in page.inner_text("#game-over")
    assert page.locator("#sheets table.sheet tr.total td").all_inner_texts()[1:] == [str(s) for s in result.scores]
    assert axe_violations(page) == []  # the Casino game's end


def test_casino_by_keyboard_with_the_temporary_stack(server, page):
    """Issue 52: the keyboard equivalent of a drop (Enter on a card, then where it goes) and the temporary stack
    (Enter on table cards with no card chosen stages them; the stack goes with the drop; Escape clears it)."""
    from mulle_env.casino.drops import drop_moves
    from mulle_env.engine.cards import CARD_NAMES

    def staged_capture(view):
        # A capture of two loose cards that sum to a hand card, taken by staging one and dropping on the other.
        for move, plan in view.move_plans().items():
            if move.kind == "capture" and len(plan.loose) >= 2 and not plan.builds:
                return move, plan
        return None

    seed, (move, plan) = _casino_seed(staged_capture)
    sit_down_casino(page, server, "browser-casino-keys", seed)
    start(page)
    first, *rest = [int(f) for f in plan.loose]
    # Stage every other pile by keyboard: focus it, Enter.
    for f in rest:
        page.focus(_pile_selector(f))
        page.keyboard.press("Enter")
    page.wait_for_selector("#stack:not([hidden])")
    assert page.locator("#stack-cards .staged-pile").count() == len(rest)
    assert axe_violations(page) == []  # the temporary stack shown
    # Escape with no card chosen clears the stack; stage again.
    page.keyboard.press("Escape")
    page.wait_for_selector("#stack", state="hidden")
    for f in rest:
        page.focus(_pile_selector(f))
        page.keyboard.press("Enter")
    # Enter on the hand card, then "on <first pile>": the drop with the stack.
    page.focus(f'#hand .card[data-card="{CARD_NAMES[move.card]}"]')
    page.keyboard.press("Enter")
    page.wait_for_selector("#choices:not([hidden]) button[data-target]")
    assert "now choose where" in page.inner_text("#hint").lower() or page.is_hidden("#hint")
    assert page.evaluate("() => document.activeElement.dataset.target") is not None
    page.focus(f'#choices button[data-target="{CARD_NAMES[first]}"]')
    page.keyboard.press("Enter")
    from mulle_env import casino

    view = casino.new_game(seed, casino.Ruleset(rounds=1)).view(0)
    expected = drop_moves(view, move.card, first, rest)
    if len(expected) > 1:
        page.wait_for_selector("#choices button[data-move]")
        page.focus(f'#choices button[data-move="{move}"]')
        page.keyboard.press("Enter")
    page.wait_for_selector("#log li[data-move]")
    assert page.locator("#log li[data-move]").first.get_attribute("data-move") == str(move)
    assert page.is_hidden("#stack")


def test_the_rules_panel_says_how_casino_is_played_and_opens_there_at_a_casino_table(server, page):
    sit_down_casino(page, server, "browser-casino-rules", 3)
    page.click("#rules-btn")
    rules = page.locator("#rules")
    assert "How Casino is played" in rules.inner_text() and "temporary stack" in rules.inner_text()
    # Scrolled to Casino's section (as far as the panel scrolls): its heading is in view.
    top = page.evaluate("() => document.getElementById('casino-rules').getBoundingClientRect().top")
    assert 0 <= top < page.evaluate("() => window.innerHeight") - 100
    assert axe_violations(page) == []


def test_a_drop_on_the_empty_table_trails(server, page):
    from mulle_env.casino.drops import drop_moves
    from mulle_env.engine.cards import CARD_NAMES

    seed, card = _casino_seed(lambda v: next((c for c in v.hand if [str(m) for m in drop_moves(v, c)]), None))
    sit_down_casino(page, server, "browser-casino-trail", seed)
    start(page)
    page.locator(f'#hand .card[data-card="{CARD_NAMES[card]}"]').drag_to(page.locator("#table-title"))
    page.wait_for_selector("#log li[data-move]")
    assert page.locator("#log li[data-move]").first.get_attribute("data-move") == f"trail {CARD_NAMES[card]}"


# ----- issue 52, item 6: the page's defects, a test each ------------------------------------------------------


def test_building_down_is_explained_beside_building_up(server, page):
    """"build 15 on build 14" and "build 13 on build 14" were offered side by side, unexplained."""
    page.goto(server.url + "/")
    up = page.evaluate("() => buildTarget('build HJ A on [14] to 15'.split(' '))")
    down = page.evaluate("() => buildTarget('build HJ A on [14] to 13'.split(' '))")
    assert up == "build 14 (building up: 14 + 1)" and down == "build 14 (building down: 14 − 1)"
    page.click("#rules-btn")
    rules = page.inner_text("#rules")
    assert "Building down" in rules and "14 − 1" in rules and "build 13 on build 14" in rules


def test_the_hint_follows_the_chosen_card_and_the_host_is_told_to_start(server, page):
    page.goto(server.url + "/")
    page.evaluate("() => localStorage.setItem('mulle-hints', '1')")
    sit_down(page, server, "browser-hint", seed=5, sets=1)
    assert page.inner_text("#set-deal").startswith("Lobby: you are the host; press Start game")
    assert "waiting for" not in page.inner_text("#set-deal")
    start(page)
    before = page.inner_text("#hint")
    page.locator("#hand.active .card:not(.unusable)").first.click()
    page.wait_for_selector("#choices:not([hidden])")
    after = page.inner_text("#hint")
    assert after != before and "each button is one way to play" in after


def test_invisible_names_are_refused_in_words(server, page):
    for name, code in (("\u3164", "U+3164"), ("Anna\u2800", "U+2800")):
        page.goto(server.url + "/?table=browser-invisible")
        page.wait_for_selector("#agent-names option", state="attached")
        page.fill("#player-name", name)
        page.click("#join-btn")
        page.wait_for_selector("#error:not([hidden])")
        text = page.inner_text("#error-text")
        assert text.startswith("Not understood: ") and code in text and "invisible" in text
        assert page.is_visible("#start")


def test_a_watcher_of_a_peoples_table_sees_both_hands_backs(server, browser, page):
    sit_down(page, server, "browser-backs", seed=5, sets=1)
    start(page)
    watcher = browser.new_page()
    try:
        watcher.goto(server.url + "/")
        watcher.wait_for_selector('#tables-list li[data-table="browser-backs"]')
        watcher.click('#tables-list li[data-table="browser-backs"] button:has-text("Watch")')
        watcher.wait_for_selector("#game:not([hidden]) #top-hand .card.back")
        sizes = server.call(lambda: [len(h) for h in server.hub.tables["browser-backs"].match.state.hands])
        assert watcher.locator("#hand .card.back").count() == sizes[0] > 0
        assert watcher.locator("#top-hand .card.back").count() == sizes[1] > 0
        assert watcher.locator("#hand .card:not(.back)").count() == 0  # and never a face
    finally:
        watcher.close()


def test_the_moment_banner_leaves_the_line_that_explains_it_readable(server, page):
    sit_down(page, server, "browser-moment", seed=5, sets=1)
    start(page)
    page.locator("#hand.active .card:not(.unusable)").first.click()
    page.locator("#choices button[data-move]").first.click()
    page.wait_for_selector("#last-move .line")
    page.evaluate("() => moment({ mulles: 1, player: 0 })")
    banner = page.locator("#moment").bounding_box()
    line = page.locator("#last-move").bounding_box()
    overlap_x = min(banner["x"] + banner["width"], line["x"] + line["width"]) - max(banner["x"], line["x"])
    overlap_y = min(banner["y"] + banner["height"], line["y"] + line["height"]) - max(banner["y"], line["y"])
    assert overlap_x <= 0 or overlap_y <= 0, (banner, line)


def test_leave_mid_game_asks_first(server, page):
    sit_down(page, server, "browser-leave", seed=5, sets=1)
    page.click("#leave-btn")  # in the lobby: at once
    page.wait_for_selector("#start:not([hidden])")
    sit_down(page, server, "browser-leave", seed=5, sets=1)
    start(page)
    page.click("#leave-btn")
    page.wait_for_selector("#leave-dialog[open]")
    assert "agent takes your seat" in page.inner_text("#leave-dialog")
    assert axe_violations(page) == []  # the question
    page.click("#leave-no")
    assert page.is_visible("#game") and page.is_hidden("#leave-dialog")
    assert server.call(lambda: server.hub.tables["browser-leave"].seats[0].person is not None)
    page.click("#leave-btn")
    page.click("#leave-yes")
    page.wait_for_selector("#start:not([hidden])")


def test_invite_link_copies_the_link_and_stays_on_the_page(server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    try:
        sit_down(page, server, "browser-invite", seed=5, sets=1)
        url = page.url
        page.click("#invite")
        page.wait_for_selector("#error.info:not([hidden])")
        invite = server.url + "/?table=browser-invite"
        assert page.evaluate("() => navigator.clipboard.readText()") == invite
        assert page.url == url and page.is_visible("#game")  # copied, not followed
        assert invite in page.inner_text("#error-text")
    finally:
        ctx.close()


def test_a_new_deal_is_announced_and_an_empty_builds_list_has_no_list_role(server, page):
    from mulle_env import casino

    seed = 3
    sit_down_casino(page, server, "browser-deal", seed)
    start(page)
    assert page.get_attribute("#builds", "role") is None  # no builds yet: no list that lacks its items
    st = casino.new_game(seed, casino.Ruleset(rounds=1))
    assert not st.builds
    for _ in range(8):  # four cards each: the next deal
        page.wait_for_selector("#hand.active .card")
        _play_casino_turn_by_drag(page, server, "browser-deal")
    page.wait_for_function("() => ui.announced.some((t) => t.includes('new cards dealt'))")
    assert any("Round 1: new cards dealt" in t for t in page.locator("#announce p").all_inner_texts())


# ----- issue 52, item 4: the analysis on the board ---------------------------------------------------------------


def test_the_analysis_steps_through_the_game_on_the_board_with_a_graph_and_the_result_read_right(server, page):
    gid, m = _store_game(server, "browser-board", 52, ("Vera",))
    result = m.result()
    page.goto(server.url + "/")
    page.fill("#games-player", "vera")
    page.press("#games-player", "Enter")
    page.wait_for_selector(f'#games-list li[data-game="{gid}"]')
    page.click(f'#games-list li[data-game="{gid}"] button:has-text("Analyse")')
    page.wait_for_selector("#analysis-list li", timeout=60_000)
    a = server.call(lambda: server.hub.store.analysis(gid))
    # The headline reads the result (issue 52: "Anna lost 72.8 points" for a game she won 75-57).
    names = ["Vera", "random"]
    s0, s1 = result.scores
    status = page.inner_text("#analysis-status")
    assert status.startswith(f"Vera {s0} – random {s1}: ")
    if result.winner is not None:
        w = result.winner
        assert f"{names[w]} won, {max(s0, s1)}–{min(s0, s1)}." in status
    shown = page.evaluate("x => String(x)", a["accuracy"][0])  # as JavaScript writes the number
    assert f"accuracy {shown}% over {a['decisions_by_seat'][0]} decisions" in page.inner_text("#analysis-accuracy")
    # Every mistake above the threshold is flagged (not five), and the graph marks each one.
    flagged = [d["number"] for d in a["decisions"] if d["mistake"]]
    assert flagged == [d["number"] for d in a["decisions"] if d["points_lost"] >= 3] and len(flagged) >= 2
    assert page.locator("#analysis-list li.mistake").count() == len(flagged)
    assert page.locator("#analysis-graph svg circle").count() == len(a["decisions"])
    assert page.locator("#analysis-graph svg circle.mistake").count() == len(flagged)
    assert axe_violations(page) == []  # the analysis with its graph
    # On the board: the first mistake, the move played beside the better one, the points at stake in words.
    page.click("#analysis-board")
    page.wait_for_selector("#board-analysis:not([hidden])")
    n = len(m.history)
    first = next(d for d in a["decisions"] if d["mistake"])
    assert page.inner_text("#rp-pos") == f"move {first['number'] - 1} / {n}"
    page.wait_for_function("() => document.querySelector('#board-note').textContent.includes('better was')")
    note = page.inner_text("#board-note")
    assert first["played"] in note and first["best"] in note and "a mistake" in note
    assert f"{first['points_lost']:.1f} point" in note
    assert page.locator("#hand .card.played").count() == 1
    assert page.inner_text("#board-headline").startswith(f"Vera {s0} – random {s1}: ")
    assert axe_violations(page) == []  # the board with its analysis
    # The keyboard steps (ArrowRight one move, n the next mistake) and a click on the graph jumps.
    page.locator("body").press("ArrowRight")
    assert page.inner_text("#rp-pos") == f"move {first['number']} / {n}"
    page.locator("body").press("n")
    second = next(d for d in a["decisions"] if d["mistake"] and d["number"] > first["number"])
    assert page.inner_text("#rp-pos") == f"move {second['number'] - 1} / {n}"
    last = a["decisions"][-1]["number"]
    page.locator(f'#board-graph circle[data-number="{last}"]').click()
    assert page.inner_text("#rp-pos") == f"move {last - 1} / {n}"
    page.click("#rp-back")
    assert page.inner_text("#rp-pos") == f"move {last - 2} / {n}"


def test_a_casino_game_is_analysed_and_stepped_on_the_board(server, page):
    import time as _time

    from live.games import CASINO
    from live.store import FinishedGame

    c = CASINO.match(6, CASINO.ruleset(1), ["person:Wim", "random"])
    rng = random.Random(6)
    while not c.over:
        c.play(rng.choice(c.legal_moves()))
    game = FinishedGame("browser-casino-analysis", c.record(), (((1, "Wim", "person"),), ((1, "random", "agent"),)),
                        _time.time())
    gid = server.call(lambda: server.hub.store.add(game))
    page.goto(server.url + "/")
    page.fill("#games-player", "wim")
    page.press("#games-player", "Enter")
    page.wait_for_selector(f'#games-list li[data-game="{gid}"]')
    page.click(f'#games-list li[data-game="{gid}"] button:has-text("Analyse")')
    page.wait_for_selector("#analysis-list li", timeout=60_000)
    s0, s1 = c.result().scores
    assert page.inner_text("#analysis-status").startswith(f"Wim {s0} – random {s1}: ")
    page.click("#analysis-board")
    page.wait_for_selector("#board-analysis:not([hidden])")
    assert "Casino" in page.inner_text("#table-label")
    page.click("#rp-last")
    assert page.inner_text("#rp-pos") == f"move {len(c.history)} / {len(c.history)}"
    assert f"{s0}" in page.inner_text("#game-over")
    assert axe_violations(page) == []


# ----- issue 52, "Done when": the whole card room in a real browser -------------------------------------------------


def _first_move_seed() -> int:
    """A seed whose one-round Casino game, both seats always playing their first legal move, has a winner."""
    from live.games import CASINO

    for seed in range(100):
        m = CASINO.match(seed, CASINO.ruleset(1), ["a", "b"])
        while not m.over:
            m.play(m.legal_moves()[0])
        if m.result().winner is not None:
            return seed
    raise AssertionError("no seed found")


def _claim(page, server, name: str) -> None:
    page.goto(server.url + "/")
    page.fill("#account-name", name)
    page.fill("#account-password", "a long enough secret")
    page.click("#claim-btn")
    page.wait_for_selector(f"#account-status:has-text('Logged in as {name}')")


def _casino_turn(page, server, table_name: str, seat: int) -> None:
    """Seat ``seat``'s turn played by drag as in _play_casino_turn_by_drag (its first legal move)."""
    from mulle_env.engine.cards import CARD_NAMES

    table = server.call(lambda: server.hub.tables[table_name])
    view = server.call(lambda: table.match.view(seat))
    move, plan = next(iter(view.move_plans().items()))
    piles = [int(f) for f in plan.loose] + [tuple(sorted(b[2])) for b in plan.builds]
    if plan.base is not None:
        piles.insert(0, tuple(sorted(plan.base[2])))
    for pile in piles[1:]:
        page.click(_pile_selector(pile))
    before = server.call(lambda: len(table.match.history))
    page.locator(f'#hand .card[data-card="{CARD_NAMES[move.card]}"]').drag_to(
        page.locator(_pile_selector(piles[0]) if piles else "#table-title"))
    page.wait_for_function(f"() => !document.querySelector('#choices').hidden || "
                           f"document.querySelectorAll('#log li[data-move]').length > {before}")
    if page.is_visible(f'#choices button[data-move="{move}"]'):
        page.click(f'#choices button[data-move="{move}"]')
    page.wait_for_function(f"() => document.querySelectorAll('#log li[data-move]').length > {before}")
    # A drop that lands elsewhere plays another move and the game leaves the line its seed was chosen for: say so
    # here, not as a puzzling result at the game's end (a rated game once ended level in CI).
    played = server.call(lambda: table.match.history[before].move)
    assert played == move, f"the drag played {played}, not {move} (seat {seat}, move {before + 1})"


def test_done_when_two_claimed_names_play_rated_casino_and_mulle_watched_resumed_rated_and_analysed(server, browser):
    """Issue 52's "Done when": two people claim names, play a rated Casino game with the seed's drop rules and a
    Mulle game, a watcher follows, one closes the tab and resumes from another context by the seat link, the
    winner's rating rises and the loser's falls, the analysis steps through the game on the board; axe finds no
    violation on any screen."""
    import urllib.request

    seed = _first_move_seed()
    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(4)]
    errors: list[str] = []
    pages = []
    for ctx in contexts:
        ctx.grant_permissions(["clipboard-read", "clipboard-write"])
        pg = ctx.new_page()
        pg.set_default_timeout(15_000)
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pages.append(pg)
    anna, bo, watcher, bo_elsewhere = pages
    try:
        # Two people claim their names (each browser context its own cookie jar: one person each).
        _claim(anna, server, "Anna52")
        assert axe_violations(anna) == []  # the start page, logged in
        _claim(bo, server, "Bo52")
        # Anna opens a Casino table; Bo joins it by name and takes the agent's seat.
        anna.goto(server.url + f"/?delay=0&table=done-casino&name=Anna52&seed={seed}")
        anna.wait_for_selector("#agent-names option", state="attached")
        anna.select_option("#game-choice", "casino")
        anna.select_option("#sets", "1")
        anna.click("#join-btn")
        anna.wait_for_selector("#game:not([hidden])")
        bo.goto(server.url + "/?delay=0&table=done-casino&name=Bo52")
        bo.wait_for_selector("#agent-names option", state="attached")
        bo.click("#join-btn")
        bo.wait_for_selector("#game:not([hidden])")
        anna.wait_for_selector("#top-name:has-text('Bo52')")
        assert axe_violations(bo) == []  # the lobby, as a guest of the host
        # A watcher follows from the open tables.
        watcher.goto(server.url + "/")
        watcher.wait_for_selector('#tables-list li[data-table="done-casino"]')
        watcher.click('#tables-list li[data-table="done-casino"] button:has-text("Watch")')
        watcher.wait_for_selector("#game:not([hidden])")
        anna.click("#start-btn")
        anna.wait_for_selector("#hand.active .card")
        watcher.wait_for_selector("#hand .card.back")
        assert watcher.locator("#hand .card:not(.back), #top-hand .card:not(.back)").count() == 0
        assert axe_violations(anna) == [] and axe_violations(watcher) == []  # the game, the watcher's table
        table = server.call(lambda: server.hub.tables["done-casino"])
        people = {0: anna, 1: bo}
        moves = 0
        resumed = False
        while not server.call(lambda: table.match.over):
            seat = server.call(lambda: table.match.to_move)
            page = people[seat]
            page.wait_for_selector("#hand.active .card")
            _casino_turn(page, server, "done-casino", seat)
            moves += 1
            if moves == 10 and not resumed:
                # Bo copies his private seat link, closes the tab, and resumes from another browser by it.
                bo.click("#seat-link")
                link = bo.evaluate("() => navigator.clipboard.readText()")
                assert "seat=" in link and "done-casino" in link
                bo.close()
                bo_elsewhere.goto(link + "&delay=0")
                bo_elsewhere.wait_for_selector("#game:not([hidden])")
                bo_elsewhere.wait_for_selector("#bottom-name:has-text('Bo52')")
                people[1] = bo_elsewhere
                resumed = True
        assert resumed and moves >= 40
        anna.wait_for_selector("#game-over:not([hidden])")
        result = server.call(lambda: table.match.result())
        winner, loser = (0, 1) if result.winner == 0 else (1, 0)
        names = ["Anna52", "Bo52"]
        with urllib.request.urlopen(server.url + "/api/ratings?game=casino", timeout=10) as r:
            ratings = {p["name"]: p for p in json.loads(r.read())["players"]}
        over = server.call(lambda: table.last_over)
        change = {r["name"]: r["change"] for r in over["ratings"]}
        assert change[names[winner]] > 0 > change[names[loser]]  # the winner rises, the loser falls
        assert ratings[names[winner]]["rating"] > ratings[names[loser]]["rating"]
        assert "Ratings:" in anna.inner_text("#game-over")
        watcher.wait_for_selector("#game-over:not([hidden])")
        assert axe_violations(anna) == [] and axe_violations(watcher) == []  # the Casino game's end
        # A Mulle game between the two, rated too (Bo back in his own browser, still logged in).
        bo2 = contexts[1].new_page()
        bo2.on("pageerror", lambda exc: errors.append(str(exc)))
        bo2.set_default_timeout(15_000)
        anna.click("#leave-btn")
        anna.wait_for_selector("#start:not([hidden])")
        anna.goto(server.url + "/?delay=0&table=done-mulle&name=Anna52&seed=5")
        anna.wait_for_selector("#agent-names option", state="attached")
        anna.select_option("#game-choice", "mulle")
        anna.select_option("#sets", "1")
        anna.click("#join-btn")
        anna.wait_for_selector("#game:not([hidden])")
        bo2.goto(server.url + "/?delay=0&table=done-mulle&name=Bo52")
        bo2.wait_for_selector("#agent-names option", state="attached")
        bo2.click("#join-btn")
        bo2.wait_for_selector("#game:not([hidden])")
        anna.wait_for_selector("#top-name:has-text('Bo52')")
        anna.click("#start-btn")
        mulle = server.call(lambda: server.hub.tables["done-mulle"])
        players = {0: anna, 1: bo2}
        while not server.call(lambda: mulle.match.over):
            seat = server.call(lambda: mulle.match.to_move)
            page = players[seat]
            before = server.call(lambda: len(mulle.match.history))
            page.wait_for_selector("#hand.active .card:not(.unusable)")
            page.locator("#hand.active .card:not(.unusable)").first.click()
            page.wait_for_selector("#choices:not([hidden]) button[data-move]")
            page.locator("#choices button[data-move]").first.click()
            page.wait_for_function(f"() => document.querySelectorAll('#log li[data-move]').length > {before}")
        anna.wait_for_selector("#game-over:not([hidden])")
        mulle_result = server.call(lambda: mulle.match.result())
        mulle_over = server.call(lambda: mulle.last_over)
        if mulle_result.winner is not None:
            change = {r["name"]: r["change"] for r in mulle_over["ratings"]}
            assert change[names[mulle_result.winner]] > 0 > change[names[1 - mulle_result.winner]]
        # The analysis of the Casino game, stepped through on the board.
        gid = over["game_id"]
        anna.click("#leave-btn")  # the game is over: Leave asks nothing
        anna.wait_for_selector("#start:not([hidden])")
        anna.fill("#games-table", "done-casino")
        anna.press("#games-table", "Enter")
        anna.wait_for_selector(f'#games-list li[data-game="{gid}"]')
        anna.click(f'#games-list li[data-game="{gid}"] button:has-text("Analyse")')
        anna.wait_for_selector("#analysis-list li", timeout=90_000)
        s0, s1 = result.scores
        assert anna.inner_text("#analysis-status").startswith(f"Anna52 {s0} – Bo52 {s1}: {names[winner]} won")
        assert axe_violations(anna) == []  # the analysis
        anna.click("#analysis-board")
        anna.wait_for_selector("#board-analysis:not([hidden])")
        start = anna.inner_text("#rp-pos")
        anna.locator("body").press("ArrowRight")
        assert anna.inner_text("#rp-pos") != start
        anna.locator("body").press("End")
        n = len(server.call(lambda: list(table.match.history)))
        assert anna.inner_text("#rp-pos") == f"move {n} / {n}"
        assert axe_violations(anna) == []  # the board with its analysis
        assert not errors, errors
    finally:
        for ctx in contexts:
            ctx.close()


def test_watch_two_agents_play_casino_to_the_end(server, page):
    page.goto(server.url + "/?seed=2&sets=1")
    page.wait_for_selector("#agent-names option", state="attached")
    page.select_option("#watch-game", "casino")
    page.fill("#watch-a", "heuristic")
    page.fill("#watch-b", "greedy")
    page.fill("#watch-speed", "0")
    page.click("#watch-btn")
    page.wait_for_selector("#game:not([hidden])")
    assert "Casino" in page.inner_text("#table-label") and page.is_visible("#top-captured")
    page.wait_for_selector("#game-over:not([hidden])", timeout=30_000)
    assert page.locator("#top-hand .card.back").count() == 0  # an agents' table: both hands shown
    assert page.locator("#sheets table.sheet").count() == 1 and "big casino" in page.inner_text("#sheets")
    assert axe_violations(page) == []


def test_casino_by_taps_on_a_phone(server, phone):
    """A phone has no drag and drop: a tap on a hand card, then a tap on where it goes, sends the same drop."""
    from mulle_env import casino
    from mulle_env.casino.drops import drop_moves
    from mulle_env.engine.cards import CARD_NAMES

    seed = 4
    view = casino.new_game(seed, casino.Ruleset(rounds=1)).view(0)
    card = next(c for c in view.hand if len(drop_moves(view, c)) == 1)  # a card that may trail
    sit_down_casino(phone, server, "browser-casino-phone", seed)
    phone.tap("#start-btn")
    phone.wait_for_selector("#hand.active .card")
    phone.tap(f'#hand .card[data-card="{CARD_NAMES[card]}"]')
    phone.wait_for_selector('#choices:not([hidden]) button[data-target="table"]')
    box = phone.locator('#choices button[data-target="table"]').bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 844, box  # in view
    no_sideways_scroll(phone)
    phone.tap('#choices button[data-target="table"]')
    phone.wait_for_selector("#log li[data-move]")
    assert phone.locator("#log li[data-move]").first.get_attribute("data-move") == f"trail {CARD_NAMES[card]}"
