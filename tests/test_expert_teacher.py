"""Teacher data: every legal move valued, seeded, resumable shards, refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mulle_env import codec
from mulle_env.engine import MOVES
from mulle_env.observation import OBS_SIZE
from training import teacher

RULES = {"sets": 1}
TEACHER = "pimc:samples=2,horizon=2"


def make(path, workers=1, games=4, **kw):
    args = {"teacher": TEACHER, "games": games, "seed": 5, "opponents": ["self", "heuristic"], "shard_games": 2,
                "workers": workers, "progress": False, "rules": RULES}
    args.update(kw)
    return teacher.generate(path, **args)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("teacher")
    assert make(d)["made"] == 2
    return d


def test_rows_hold_every_legal_move_with_its_value(data_dir):
    d = teacher.load(data_dir)
    n = len(d["action"])
    assert d["obs"].shape == (n, OBS_SIZE) and d["obs"].dtype == np.float16
    assert d["legal"].dtype == np.int16 and d["values"].dtype == np.float32 and d["outcome"].dtype == np.float32
    assert d["banked"].dtype == np.float32 and d["banked"][0] == 0 and np.abs(d["banked"]).max() > 0
    # Games 0, 1 are self-play (both seats recorded), games 2, 3 against heuristic (one seat).
    per_game = np.bincount(d["game"])
    assert len(per_game) == 4 and per_game[0] > per_game[2] and per_game[1] > per_game[3]
    for i in range(n):
        k = int((d["legal"][i] >= 0).sum())
        assert k >= 2 and (d["legal"][i, k:] == -1).all()
        vals = d["values"][i, :k]
        assert np.isfinite(vals).all() and np.isnan(d["values"][i, k:]).all()  # width=0: every move searched
        best = d["legal"][i, int(np.argmax(vals))]
        assert d["values"][i, list(d["legal"][i]).index(d["action"][i])] == vals.max()
        assert MOVES[int(best)].id == best < codec.NUM_ACTIONS
    # Outcome is from the mover's seat: the two seats of a self-play game see opposite numbers.
    g0 = d["game"] == 0
    assert set(np.unique(d["outcome"][g0])) <= {float(x) for x in (d["outcome"][g0][0], -d["outcome"][g0][0])}


def test_banked_points_equal_set_value_along_games():
    import random

    from agents.rollout import set_value
    from mulle_env.engine import new_game

    rng = random.Random(4)
    for seed in range(3):
        st = new_game(seed, {"sets": 2})
        while True:
            for p in (0, 1):
                assert teacher.banked_points(st.view(p)) == set_value(st, p)
            if st.over:
                break
            st.play(rng.choice(st.legal_moves()))


def test_same_seed_same_data_in_any_number_of_workers(data_dir, tmp_path):
    make(tmp_path / "two", workers=2)
    a, b = teacher.load(data_dir), teacher.load(tmp_path / "two")
    for k in a:
        assert np.array_equal(a[k], b[k], equal_nan=True), k


def test_rerun_makes_only_missing_shards(data_dir, tmp_path):
    import shutil

    d = tmp_path / "copy"
    shutil.copytree(data_dir, d)
    before = teacher.load(d)
    (d / "shard_00001.npz").unlink()
    assert make(d)["made"] == 1
    after = teacher.load(d)
    for k in before:
        assert np.array_equal(before[k], after[k], equal_nan=True), k
    assert make(d)["made"] == 0
    assert make(d, games=6)["made"] == 1  # growing the data set adds shards


def test_other_settings_and_bad_teachers_are_refused(data_dir, tmp_path):
    with pytest.raises(teacher.TeacherDataError, match="seed: 5 there, 6 asked"):
        make(data_dir, seed=6)
    with pytest.raises(teacher.TeacherDataError, match="no move_values"):
        make(tmp_path / "x", teacher="heuristic")
    with pytest.raises(teacher.TeacherDataError, match="multiple of shard_games"):
        make(tmp_path / "y", games=3)
    spec = json.loads((data_dir / "spec.json").read_text())
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "spec.json").write_text(json.dumps({**spec, "obs_fingerprint": "0" * 16}))
    with pytest.raises(teacher.TeacherDataError, match="observation layout"):
        teacher.load(bad)


def test_data_of_another_agent_version_is_refused(data_dir, tmp_path):
    """A data set from before agent versions was made by version 1 of each agent; pimc is version 2 now."""
    spec = json.loads((data_dir / "spec.json").read_text())
    assert set(spec["versions"].values()) == {"2", "1"}  # the teacher (a pimc) and heuristic
    old = tmp_path / "old"
    old.mkdir()
    (old / "spec.json").write_text(json.dumps({k: v for k, v in spec.items() if k != "versions"}))
    with pytest.raises(teacher.TeacherDataError, match="versions"):
        make(old)
    same = tmp_path / "same"
    same.mkdir()
    (same / "spec.json").write_text(json.dumps(spec))
    assert make(same, games=2)["made"] == 1


def test_a_driver_plays_the_moves_the_teacher_values(data_dir, tmp_path):
    """DAgger's on-policy labels: the driver's moves are played and stored, the teacher's values beside them."""
    import random

    import agents
    from mulle_env.engine import new_game

    d = tmp_path / "driven"
    make(d, opponents=["self"], driver="learned")
    data = teacher.load(d)
    spec = json.loads((d / "spec.json").read_text())
    assert spec["driver"] == "learned" and "learned" in spec["versions"]
    # Replay game 0 (self-play, both seats recorded) with learned, which draws no random numbers: its moves
    # are the stored actions.
    g0 = np.flatnonzero(data["game"] == 0)
    driver = agents.make("learned")
    st = new_game(teacher.deal_seed(5, 0), RULES)
    played, rows = 0, iter(g0)
    while not st.over:
        legal = st.legal_moves()
        move = driver.act(st.view(st.to_move), legal, random.Random(0)) if len(legal) > 1 else legal[0]
        if len(legal) > 1:
            i = next(rows)
            assert int(data["action"][i]) == move.id
            played += 1
        st.play(move)
    assert played == len(g0)
    # The teacher valued every move, and it does not always agree with the driver: labels, not the driver's pick.
    vals = data["values"]
    picked = vals[np.arange(len(vals)), [list(r).index(a) for r, a in zip(data["legal"], data["action"])]]
    assert np.isfinite(vals[data["legal"] >= 0]).all() and (picked < np.nanmax(vals, axis=1)).any()
    # Resuming checks the driver like every other setting; data made without one stays resumable without one.
    with pytest.raises(teacher.TeacherDataError, match="driver: 'learned' there, 'heuristic' asked"):
        make(d, opponents=["self"], driver="heuristic")
    with pytest.raises(teacher.TeacherDataError, match="driver: 'learned' there, None asked"):
        make(d, opponents=["self"])
    assert "driver" not in json.loads((data_dir / "spec.json").read_text())
    assert make(data_dir)["made"] == 0
