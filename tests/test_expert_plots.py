"""mulle-expert's plots without torch: where the Elo-vs-time plot puts its labels (CI has matplotlib, not torch)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")


def test_speed_plot_moves_crowded_labels_off_their_neighbours(tmp_path, monkeypatch):
    """Agents of about the same strength and time: a label goes left of a slower neighbour, or down a leader line."""
    import matplotlib.axes

    from training import plots

    pts = [{"spec": s, "ms": ms, "elo": elo, "low": elo - 100, "high": elo + 100}
           for s, ms, elo in [("random", 0.01, 0.0), ("greedy", 0.5, 815.0), ("pimc:samples=40", 2.4, 946.0),
                              ("netsearch:depth=2,samples=48", 5.1, 980.0), ("pimc", 11.3, 986.0)]]
    monkeypatch.setattr(plots.results_mod, "load", lambda *a, **k: type("L", (), {"lines": []})())
    monkeypatch.setattr(plots, "speed_points", lambda lines: pts)
    seen = {}
    real = matplotlib.axes.Axes.annotate

    def spy(self, text, xy, **kw):
        seen[text] = kw
        return real(self, text, xy, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "annotate", spy)
    plots.plot_speed(tmp_path / "r.jsonl", tmp_path / "s.png")
    assert (tmp_path / "s.png").stat().st_size > 0
    assert seen["greedy"]["ha"] == "left" and "arrowprops" not in seen["greedy"]
    assert seen["pimc:samples=40"]["ha"] == "right"  # the slower neighbour's marker is in the way
    assert "arrowprops" in seen["netsearch:depth=2,samples=48"]  # boxed in on both sides
    assert seen["pimc"]["ha"] == "left"
