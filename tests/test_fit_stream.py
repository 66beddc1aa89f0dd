"""Afterstate fits streamed from disk in chunks (bounded memory), weighted data sets, game records as cloning data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.learned import load_policy
from training import cli, teacher
from training.afterfit import AfterstateConfig, fit_afterstate
from training.stream import ShardSource, chunk_rows_for, parse_source

pytest.importorskip("torch")

CFG = {"hidden": [16], "epochs": 2, "batch_size": 64, "extras": "capture-v3"}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("stream") / "data"
    teacher.generate(d, "pimc:samples=2,horizon=2", 6, seed=3, shard_games=1, rules={"sets": 1}, afterstates=True,
                     progress=False)
    return d


def weights(path):
    return load_policy(path).weights


def test_one_chunk_from_disk_is_the_in_memory_fit_bit_for_bit(data, tmp_path):
    loaded = teacher.load([data], large=("after_obs",), compact=True)
    fit_afterstate(loaded, tmp_path / "mem.npz", AfterstateConfig(**CFG), progress=False)
    fit_afterstate(ShardSource([data]), tmp_path / "disk.npz", AfterstateConfig(**CFG), progress=False)
    assert all(np.array_equal(a, b) for a, b in zip(weights(tmp_path / "mem.npz"), weights(tmp_path / "disk.npz")))


def test_chunks_hold_at_most_their_rows_and_an_epoch_visits_every_shard_once(data):
    source = ShardSource([data], chunk_rows=3000)
    assert source.rows_of.max() <= 3000 < source.rows_of.sum()
    for epoch in range(3):
        chunks = source.plan(epoch, seed=0)
        assert len(chunks) > 1
        assert sorted(s for c in chunks for s in c) == list(range(len(source.shards)))
        for c in chunks:
            assert source.rows_of[c].sum() <= 3000 or len(c) == 1
            loaded = source.load(c)
            assert len(loaded.data["after_obs"]) == source.rows_of[c].sum()
            assert np.array_equal(loaded.ids, source.decisions_of(c))
    assert source.plan(0, 0) != source.plan(1, 0)  # a new shuffle every epoch
    assert chunk_rows_for(4.0) > chunk_rows_for(2.0) >= 100_000


def test_a_chunked_fit_interrupted_mid_epoch_resumes_to_the_same_weights(data, tmp_path, monkeypatch):
    from training import fitloop

    cfg = AfterstateConfig(**CFG)
    fit_afterstate(ShardSource([data], chunk_rows=3000), tmp_path / "a.npz", cfg, progress=False)
    calls = {"n": 0}
    real = fitloop.FitLoop.optimize

    def stop_after_5(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 5:
            self.save()
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(fitloop.FitLoop, "optimize", stop_after_5)
    ckpt = tmp_path / "b.ckpt"
    with pytest.raises(KeyboardInterrupt):
        fit_afterstate(ShardSource([data], chunk_rows=3000), tmp_path / "b.npz", cfg, checkpoint=ckpt,
                       progress=False)
    monkeypatch.undo()
    fit_afterstate(ShardSource([data], chunk_rows=3000), tmp_path / "b.npz", cfg, checkpoint=ckpt, progress=False)
    assert all(np.array_equal(a, b) for a, b in zip(weights(tmp_path / "a.npz"), weights(tmp_path / "b.npz")))


def test_a_data_set_s_weight_changes_the_fit_and_bad_weights_are_refused(data, tmp_path):
    assert parse_source("runs/a=0.5") == ("runs/a", 0.5) and parse_source("runs/a") == ("runs/a", 1.0)
    assert parse_source("runs/x=y") == ("runs/x=y", 1.0)
    with pytest.raises(ValueError, match="positive number"):
        parse_source("runs/a=-1")
    cfg = AfterstateConfig(**CFG)
    fit_afterstate(ShardSource([(str(data), 1.0), (str(data), 1.0)]), tmp_path / "even.npz", cfg, progress=False)
    fit_afterstate(ShardSource([(str(data), 1.0), (str(data), 3.0)]), tmp_path / "tilted.npz", cfg, progress=False)
    assert not all(np.array_equal(a, b) for a, b in zip(weights(tmp_path / "even.npz"),
                                                        weights(tmp_path / "tilted.npz")))


def _record_file(path, agent_spec: str, games: int, rules=None):
    import random

    import agents
    from agents.match import play_agents

    with open(path, "w") as fh:
        for seed in range(games):
            bots = [agents.make(agent_spec), agents.make(agent_spec)]
            m = play_agents(bots, seed, [random.Random(seed), random.Random(seed + 1)], ruleset=rules)
            fh.write(json.dumps(m.record().to_dict()) + "\n")


def test_records_become_a_cloning_data_set_that_teaches_the_moves_played(tmp_path):
    games = tmp_path / "greedy.jsonl"
    _record_file(games, "greedy", 12, {"sets": 1})
    out = tmp_path / "records"
    lines = []
    assert cli.main(["records", str(games), "--out", str(out), "--rule", "sets=1", "--shard-games", "4"],
                    out=lines.append) == 0
    assert "12 games" in lines[0]
    spec = json.loads((out / "spec.json").read_text())
    assert spec["label"] == "choice" and spec["afterstates"] and spec["rules"] == {"sets": 1}
    loaded = teacher.load([out], large=("after_obs",))
    assert np.isnan(loaded["values"]).all() and len(loaded["action"]) > 300
    assert ((loaded["legal"] == loaded["action"][:, None]).sum(axis=1) == 1).all()  # the played move is stored
    # A fit on them learns to pick the moves greedy played far above chance.
    cfg = AfterstateConfig(hidden=[32], epochs=6, batch_size=128, lr=3e-3)
    figures = fit_afterstate(ShardSource([out]), tmp_path / "clone.npz", cfg, progress=False)
    chance = float(np.mean(1 / (loaded["legal"] >= 0).sum(axis=1)))
    assert figures["heldout_played_agreement"] > chance + 0.25
    # Other rules than the records' are not taken.
    with pytest.raises(teacher.TeacherDataError, match="no game under these rules"):
        from training.records import records_to_data

        records_to_data([games], tmp_path / "other", rules=None)


def test_the_live_servers_game_store_is_read_as_records(tmp_path):
    """Issue 25, item 5: people's games straight from mulle-serve's SQLite store, no export step."""
    import random
    import sqlite3
    import time

    import agents
    from agents.match import play_agents
    from live.store import FinishedGame, GameStore
    from training.records import RecordsError, read_records, records_to_data

    db = tmp_path / "games.db"
    store = GameStore(db)
    played = []
    for seed in range(3):
        m = play_agents([agents.make("heuristic"), agents.make("random")], seed,
                        [random.Random(seed), random.Random(seed + 9)], ruleset={"sets": 1})
        played.append(m.record())
        store.add(FinishedGame("kitchen", m.record(), (((1, "Vera", "person"),), ((1, "random", "agent"),)),
                               time.time()))
    read = list(read_records(db))
    assert [r.moves for _, r in read] == [r.moves for r in played] and read[0][0].endswith("games.db#1")
    store.close()
    lines = []
    assert cli.main(["records", str(db), "--out", str(tmp_path / "people"), "--rule", "sets=1"],
                    out=lines.append) == 0
    assert "3 games" in lines[0]
    # Another program's SQLite file is refused, naming it.
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(RecordsError, match="another program's SQLite file"):
        records_to_data([other], tmp_path / "out3")


def test_a_record_that_does_not_replay_is_an_error_naming_its_line(tmp_path):
    from training.records import RecordsError, records_to_data

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"seed": 1, "moves": []}) + "\n" + json.dumps({"seed": 1, "moves": ["capture KL 9"]})
                   + "\n")
    with pytest.raises(RecordsError, match=r"bad.jsonl:2: move 1 \('capture KL 9'\): illegal move"):
        records_to_data([bad], tmp_path / "out")
    bad.write_text("not json\n")
    with pytest.raises(RecordsError, match=r"bad.jsonl, line 1: not valid JSON"):
        records_to_data([bad], tmp_path / "out2")


def test_fit_refuses_a_missing_output_directory_and_cleans_its_checkpoint_up(data, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["fit", str(data), "--out", "/nonexistent/x.npz", "--hidden", "16", "--epochs", "1"])
    assert exc.value.code == 2 and "directory '/nonexistent' does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["fit", str(data), "--out", "/dev/null", "--hidden", "16", "--epochs", "1"])
    assert "not a regular file" in capsys.readouterr().err
    lines = []
    out = tmp_path / "x.npz"
    assert cli.main(["fit", f"{data}=2", "--out", str(out), "--hidden", "16", "--epochs", "1", "--no-progress"],
                    out=lines.append) == 0
    assert any(f"checkpoints go to {out}.ckpt.pt" in ln for ln in lines)
    assert out.is_file() and not (tmp_path / "x.npz.ckpt.pt").exists()
    assert load_policy(out).ruleset["sets"] == 1  # the data's rules are the net's
