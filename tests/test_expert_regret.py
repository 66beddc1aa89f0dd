"""``mulle-expert regret``: players charged by a reference search's values, decision by decision (numpy only)."""

from __future__ import annotations

import json

import pytest

import agents
from training import cli
from training.regret import KINDS, data_regret_table, regret_table


class _GreedyJudge:
    """A reference with exact, known values: greedy's choice is worth 1, every other move 0."""

    spec = "judge"

    def __init__(self) -> None:
        self.greedy = agents.make("greedy")

    def reset(self) -> None:
        pass

    def observe(self, event) -> None:
        pass

    def move_values(self, view, legal_moves, rng):
        best = self.greedy.act(view, legal_moves, rng)
        return [(m, 1.0 if m == best else 0.0) for m in legal_moves]


@pytest.fixture
def judge(monkeypatch):
    real = agents.make
    monkeypatch.setattr(agents, "make", lambda spec: _GreedyJudge() if spec == "judge" else real(spec))


def test_a_player_that_agrees_with_the_reference_has_no_regret_and_the_others_do(judge):
    res = regret_table(["greedy", "random"], "judge", games=1, every=1, seed=3, driver="heuristic")
    greedy, rnd = res["players"]
    assert res["decisions"] > 20
    assert greedy["agreement"] == 1.0 and greedy["regret"]["value"] == 0.0
    # Values are 0/1: regret is exactly the share of disagreements.
    assert rnd["agreement"] < 0.9
    assert rnd["regret"]["value"] == pytest.approx(1 - rnd["agreement"])
    assert rnd["regret"]["low"] <= rnd["regret"]["value"] <= rnd["regret"]["high"]
    assert 0 < res["random"] < 1


def test_kinds_split_the_mean_regret_and_every_thins_the_decisions(judge):
    every1 = regret_table(["random"], "judge", games=1, every=1, seed=5, driver="greedy")
    every3 = regret_table(["random"], "judge", games=1, every=3, seed=5, driver="greedy")
    assert every3["decisions"] == every1["decisions"] // 3
    p = every1["players"][0]
    assert set(p["by_kind"]) <= set(KINDS)
    assert sum(k["decisions"] for k in p["by_kind"].values()) == every1["decisions"]
    assert sum(k["share"] for k in p["by_kind"].values()) == pytest.approx(p["regret"]["value"])


def test_the_same_seed_gives_the_same_table():
    args = (["greedy", "pimc:samples=2"], "pimc:samples=4")
    a = regret_table(*args, games=1, every=5, seed=11, driver="greedy")
    assert a == regret_table(*args, games=1, every=5, seed=11, driver="greedy")


class _Listener(_GreedyJudge):
    """A judge that checks, at every decision, that it heard each move so far exactly once."""

    spec = "listener"
    checked = 0
    kinds: list = []

    def reset(self) -> None:
        self.heard = []

    def observe(self, event) -> None:
        self.heard.append(event)

    def move_values(self, view, legal_moves, rng):
        assert (self.heard[-1] if self.heard else None) == view.last_move
        # Seats alternate, so hearing a move twice shows as the same event twice in a row.
        assert all(a != b for a, b in zip(self.heard, self.heard[1:]))
        _Listener.checked += 1
        valued = super().move_values(view, legal_moves, rng)
        _Listener.kinds.append(next(m.kind for m, v in valued if v == 1.0))
        return valued


class _Screen(_GreedyJudge):
    """A judge that, like a search with candidate screening, values only two moves."""

    def move_values(self, view, legal_moves, rng):
        return super().move_values(view, legal_moves, rng)[:2]


def test_the_reference_hears_every_move_once_and_files_each_decision_under_its_preferred_kind(monkeypatch):
    real = agents.make
    monkeypatch.setattr(agents, "make", lambda spec: _Listener() if spec == "listener" else real(spec))
    res = regret_table(["random"], "listener", games=1, every=1, seed=2, driver="greedy")
    assert _Listener.checked == res["decisions"] > 20
    assert res["kinds"] == _Listener.kinds and set(res["kinds"]) <= set(KINDS)
    assert len(set(res["kinds"])) > 1
    assert len(res["players"][0]["per_decision"]) == res["decisions"]


def test_a_reference_that_screens_moves_is_refused(monkeypatch):
    real = agents.make
    monkeypatch.setattr(agents, "make", lambda spec: _Screen() if spec == "screen" else real(spec))
    with pytest.raises(ValueError, match="valued 2 of .* legal moves.*width=0"):
        regret_table(["random"], "screen", games=1, every=1, driver="greedy")


def test_paired_difference_compares_two_players_on_the_same_decisions(judge):
    from training.regret import paired_difference

    res = regret_table(["greedy", "random"], "judge", games=1, every=1, seed=4, driver="greedy")
    d = paired_difference(res, "random", "greedy")
    assert d["value"] == pytest.approx(res["players"][1]["regret"]["value"]) and d["decisions"] == res["decisions"]
    kind = res["kinds"][0]
    only = paired_difference(res, "random", "greedy", kind)
    assert only["decisions"] == res["kinds"].count(kind)
    with pytest.raises(ValueError, match="no player 'pimc'.*greedy, random"):
        paired_difference(res, "pimc", "greedy")


def test_a_reference_that_cannot_value_moves_is_refused():
    with pytest.raises(ValueError, match="cannot value moves.*pimc or netsearch"):
        regret_table(["random"], "greedy", games=1)


def test_cli_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    lines = []
    code = cli.main(["regret", "greedy", "random", "--reference", "pimc:samples=2", "--driver", "greedy",
                     "--games", "1", "--every", "6", "--no-progress", "--json", str(out)], out=lines.append)
    assert code == 0
    assert lines[0].endswith("valued by pimc:samples=2")
    assert [ln.split()[0] for ln in lines[2:4]] == ["greedy", "random"]
    saved = json.loads(out.read_text())
    assert [p["spec"] for p in saved["players"]] == ["greedy", "random"]


@pytest.fixture(scope="module")
def learned_games(tmp_path_factory):
    """Two games `learned` played while a small pimc valued every move (one shard each)."""
    from training import teacher

    d = tmp_path_factory.mktemp("regret") / "data"
    teacher.generate(d, "pimc:samples=2,horizon=2", 2, seed=7, shard_games=1, afterstates=True, driver="learned",
                     progress=False)
    return d


def _played_regrets(d, shards):
    """The regret of the move the driver played, per decision with a choice, from the stored arrays."""
    import numpy as np

    out = []
    for k in shards:
        with np.load(d / f"shard_{k:05d}.npz") as z:
            for legal, values, action in zip(z["legal"], z["values"], z["action"]):
                ids, vals = legal[legal >= 0], values[legal >= 0]
                if len(ids) > 1:
                    out.append(float(vals.max() - vals[list(ids).index(action)]))
    return out


def test_on_stored_data_the_driver_is_charged_for_the_moves_it_played(learned_games):
    # The data's driver was `learned`: judged on its own games it picks what it played, so its
    # regret per decision is the teacher's best value minus that of the move in the record.
    res = data_regret_table(["learned", "learned:path=agents/data/generations/gen6.npz"], learned_games)
    mine, gen6 = res["players"]
    assert res["decisions"] > 100 and res["games"] == 2 and res["every"] == 1
    assert res["reference"] == "pimc:horizon=2,samples=2" and res["driver"] == "learned"
    assert mine["per_decision"] == pytest.approx(_played_regrets(learned_games, [0, 1]))
    assert gen6["per_decision"] != mine["per_decision"]  # another net picks otherwise somewhere
    assert sum(k["share"] for k in mine["by_kind"].values()) == pytest.approx(mine["regret"]["value"])
    only = data_regret_table(["learned"], learned_games, (1, 2))
    assert only["shards"] == [1, 2] and only["games"] == 1
    assert only["players"][0]["per_decision"] == pytest.approx(_played_regrets(learned_games, [1]))


def test_on_stored_data_each_decision_is_filed_under_the_teachers_preferred_kind(learned_games):
    import numpy as np

    from agents.rollout import best_index
    from mulle_env.codec import action_to_move

    kinds = []
    for k in (0, 1):
        with np.load(learned_games / f"shard_{k:05d}.npz") as z:
            for legal, values in zip(z["legal"], z["values"]):
                ids, vals = legal[legal >= 0], values[legal >= 0]
                if len(ids) > 1:
                    kinds.append(action_to_move(int(ids[best_index(vals.tolist())])).kind)
    res = data_regret_table(["learned"], learned_games)
    assert res["kinds"] == kinds and len(set(kinds)) >= 3


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_stored_data_refuses_records_unvalued_moves_gaps_and_sampling(learned_games, tmp_path):
    import numpy as np

    records = _copy(learned_games, tmp_path / "records")
    spec = json.loads((records / "spec.json").read_text())
    (records / "spec.json").write_text(json.dumps({**spec, "label": "choice", "teacher": None}))
    with pytest.raises(ValueError, match="holds game records"):
        data_regret_table(["learned"], records)
    screened = _copy(learned_games, tmp_path / "screened")
    with np.load(screened / "shard_00001.npz") as z:
        arrays = {k: z[k] for k in z.files}
    first = int(np.flatnonzero((arrays["legal"] >= 0).sum(axis=1) > 1)[0])
    arrays["values"][first, 0] = np.nan  # a move the teacher did not value
    np.savez(screened / "shard_00001.npz", **arrays)
    with pytest.raises(ValueError, match=r"shard_00001.npz: the teacher .* valued \d+ of \d+ legal moves"):
        data_regret_table(["learned"], screened)
    gap = _copy(learned_games, tmp_path / "gap")
    (gap / "shard_00000.npz").unlink()
    with pytest.raises(ValueError, match=r"lacks shard\(s\) 0 of 0:2"):
        data_regret_table(["learned"], gap, (0, 2))
    assert data_regret_table(["learned"], gap, (1, 2))["games"] == 1
    with pytest.raises(ValueError, match="samples its moves"):
        data_regret_table(["learned:sample=true"], learned_games)


def test_stored_data_judges_only_afterstate_nets_and_names_missing_shards(learned_games, tmp_path):
    with pytest.raises(ValueError, match="'greedy' is not an afterstate net"):
        data_regret_table(["greedy"], learned_games)
    with pytest.raises(ValueError, match=r"no shard in 5:9 \(it has 2, numbered 0 to 1\)"):
        data_regret_table(["learned"], learned_games, (5, 9))
    with pytest.raises(ValueError, match="not a teacher data directory"):
        data_regret_table(["learned"], tmp_path)


def test_a_damaged_shard_is_named(learned_games, tmp_path):
    import shutil

    d = tmp_path / "copy"
    shutil.copytree(learned_games, d)
    (d / "shard_00001.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"shard_00001.npz is not a readable teacher data shard"):
        data_regret_table(["learned"], d)


def test_stored_data_of_other_rules_is_refused(tmp_path):
    from training import teacher

    d = tmp_path / "locked"
    teacher.generate(d, "pimc:samples=2,horizon=2", 1, seed=7, shard_games=1, afterstates=True,
                     rules={"sets": 1, "lock_every_build": True}, progress=False)
    with pytest.raises(ValueError, match=r"lock_every_build=True \(trained for False\)"):
        data_regret_table(["learned"], d)


def test_cli_judges_stored_data(learned_games, tmp_path):
    lines = []
    out = tmp_path / "r.json"
    assert cli.main(["regret", "learned", "learned:path=agents/data/generations/gen6.npz", "--data",
                     str(learned_games), "--shards", "1:", "--no-progress", "--json", str(out)],
                    out=lines.append) == 0
    assert "of 1 games of learned in" in lines[0] and "(shards 1 to 1)" in lines[0]
    assert lines[0].endswith("valued by its teacher pimc:horizon=2,samples=2")
    assert [ln.split()[0] for ln in lines[2:4]] == ["learned", "learned:path=agents/data/generations/gen6.npz"]
    assert lines[-2].startswith("learned minus learned:path=agents/data/generations/gen6.npz")  # paired
    saved = json.loads(out.read_text())
    assert saved["shards"] == [1, 2] and saved["players"][0]["per_decision"] == pytest.approx(
        _played_regrets(learned_games, [1]))


def test_cli_online_defaults_are_kept(monkeypatch):
    from training import regret

    seen = {}

    def fake(players, reference, games, every, seed, driver, progress):
        seen.update(games=games, every=every, seed=seed, driver=driver)
        return {"reference": reference, "driver": driver, "games": games, "every": every, "seed": seed,
                "decisions": 0, "kinds": [], "players": [], "random": None}

    monkeypatch.setattr(regret, "regret_table", fake)
    assert cli.main(["regret", "greedy", "--reference", "pimc", "--no-progress"], out=lambda s: None) == 0
    assert seen == {"games": 24, "every": 4, "seed": 0, "driver": "learned"}


@pytest.mark.parametrize(("argv", "message"), [
    (["regret", "learned", "--data", "d", "--reference", "pimc"], "exclude each other"),
    (["regret", "learned", "--data", "d", "--games", "3"], "--games choose the games to play"),
    (["regret", "learned"], "--reference SEARCH (played games) or --data DIR"),
    (["regret", "learned", "--data", "d", "--shards", "9:3"], "not START:STOP"),
    (["regret", "learned", "--data", "d", "--shards", "x"], "not START:STOP"),
    (["regret", "learned", "--reference", "pimc", "--shards", "1:2"], "--shards chooses the stored games"),
])
def test_cli_data_mode_bad_flags_say_what_is_wrong(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv, out=lambda s: None)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["regret", "nosuchagent", "--reference", "pimc"], 2, "player 'nosuchagent'"),
    (["regret", "greedy", "--reference", "pimc", "--driver", "nosuch"], 2, "--driver 'nosuch'"),
    (["regret", "greedy", "--reference", "pimc", "--games", "0"], 2, "--games"),
    (["regret", "greedy", "--reference", "heuristic", "--games", "1", "--no-progress"], 2, "cannot value moves"),
])
def test_cli_bad_input_says_what_is_wrong(argv, code, message, capsys):
    try:
        got = cli.main(argv, out=lambda s: None)
    except SystemExit as exc:
        got = exc.code
    assert got == code
    assert message in capsys.readouterr().err


def test_cli_bad_arguments_on_stored_data_exit_2_and_damaged_data_exits_1(learned_games, tmp_path, capsys):
    # A player, the directory or the shard range is bad usage (exit 2, no progress bar printed); a shard that
    # cannot be read after every argument passed is the data's fault (exit 1).
    (tmp_path / "file").write_text("")
    for argv, message in [
        (["greedy", "--data", str(learned_games)], "player 'greedy' is not an afterstate net"),
        (["learned", "--data", str(learned_games), "--shards", "5:9"], "no shard in 5:9"),
        (["learned", "--data", str(tmp_path / "file")], "is not a directory"),
        (["learned", "--data", "a\x00b"], "contains a NUL byte"),
        (["learned:path=nope.npz", "--data", str(learned_games)], "'nope.npz' does not exist"),
    ]:
        with pytest.raises(SystemExit) as exc:
            cli.main(["regret", *argv])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and message in err and "shard/s" not in err, (argv, err)
    d = _copy(learned_games, tmp_path / "damaged")
    (d / "shard_00001.npz").write_bytes(b"not a zip")
    assert cli.main(["regret", "learned", "--data", str(d), "--no-progress"]) == 1
    assert "shard_00001.npz is not a readable teacher data shard" in capsys.readouterr().err
