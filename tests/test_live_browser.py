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
import re
import shutil
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
def server():
    if MISSING:
        if os.environ.get("CI"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    from live.hub import LiveConfig
    from live.server import ServerThread

    with ServerThread(LiveConfig(opponent="random", grace=5, close_after=1, trust_loopback=True)) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        # A small /dev/shm (containers) crashes Chromium's renderer unless it uses /tmp.
        args += ["--disable-gpu", "--disable-dev-shm-usage"]
        b = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=args)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(10_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
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
    assert page.get_attribute("#save-record", "download") == f"mulle-{table.match.seed}.json"
    page.click("#replay-record")
    page.wait_for_selector("#replay-controls:not([hidden])")
    n = len(table.match.history)
    assert page.inner_text("#rp-pos") == f"move 0 / {n}"
    page.click("#rp-last")
    assert page.inner_text("#rp-pos") == f"move {n} / {n}"
    assert f"{result.scores[0]}" in page.inner_text("#game-over")


def test_one_use_plays_at_once_several_uses_are_offered(server, page):
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
    # Hovering a build shows its target on the table.
    build = next((m for m in uses[card] if m.startswith("build") and " on [" not in m), None)
    if build is not None:
        page.hover(f'#choices button[data-move="{build}"]')
        target = build.split(" on ")[1].rsplit(" to ", 1)[0]
        assert page.locator("#loose .card.target").evaluate_all("cs => cs.map(c => c.dataset.card)") == [target]
    labels = offered.all_inner_texts()
    assert all(re.fullmatch(r"capture( taking .+)?|build to \d+ on .+|trotta|discard", x) for x in labels), labels
    # Cancel, then play the one-use card: it goes at once, with no choice shown.
    page.click("#choices button.cancel")
    assert page.is_hidden("#choices")
    page.locator(f'#hand .card[data-card="{single[0]}"]').first.click()
    page.wait_for_function("t => document.querySelector('#log').innerText.includes(t)",
                           arg=uses[single[0]][0])
    first = server.call(lambda: str(server.hub.tables["browser-choice"].match.history[0].move))
    assert first == uses[single[0]][0]
    # Next turn: choose a use that is not the first on offer.
    page.wait_for_selector("#hand.active .card")
    match = server.call(lambda: server.hub.tables["browser-choice"].match)
    now = server.call(lambda: uses_by_card(match))
    card = next((c for c, u in now.items() if len(u) >= 2), None)
    if card is not None:
        page.locator(f'#hand .card[data-card="{card}"]').first.click()
        page.locator(f'#choices button[data-move="{now[card][-1]}"]').click()
        page.wait_for_function("t => document.querySelector('#log').innerText.includes(t)", arg=now[card][-1])


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
    assert moves[2] in page.inner_text("#last-move")
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
    assert page.inner_text("#bottom-intake") == str(len(view["intake"][0]))
    assert page.inner_text("#top-tabbe") == str(view["tabbe"][1])
    # Suit colours: hearts and diamonds red, clubs and spades black.
    colours = page.locator("#hand .card").evaluate_all(
        "cs => cs.map(c => [c.dataset.card, getComputedStyle(c).color])")
    for card, colour in colours:
        assert (colour == "rgb(192, 24, 43)") == card.startswith(("HJ", "RU")), (card, colour)
    assert "Last:" in page.inner_text("#last-move")


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
        assert "2004" in other.inner_text("#error") and other.is_visible("#start")
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
    assert "3001" in page.inner_text("#error") and missing in page.inner_text("#error")
    page.wait_for_selector("#hand.active .card:not(.unusable)")  # the request still stands
    page.locator("#hand.active .card:not(.unusable)").first.click()
    if page.is_visible("#choices"):
        page.locator("#choices button[data-move]").first.click()
    page.wait_for_function("() => document.querySelectorAll('#log li').length >= 4")
    assert server.call(lambda: len(server.hub.tables["browser-refused"].match.history)) >= 1
