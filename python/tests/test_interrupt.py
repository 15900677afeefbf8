"""Ctrl-C during a long run raises KeyboardInterrupt and leaves the simulation usable; the
progress bar draws where asked."""
import copy
import os
import signal
import threading

import numpy as np
import pytest

import heartwave as hw
from conftest import SMALL_CASE


def _case(tmp_path, t_end=1e6):
    d = copy.deepcopy(SMALL_CASE)
    d["output"]["directory"] = str(tmp_path / "out")
    d["time"]["t_end"] = t_end
    return hw.Case.from_dict(d)


def _interrupt_after(seconds):
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_during_simulation_run(tmp_path):
    s = hw.Simulation(_case(tmp_path), backend="cpu")
    timer = _interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        s.run(1e6, progress=False)  # hours of steps: only Ctrl-C ends it
    timer.join()
    t = s.time
    assert 0 < t < 1e6
    s.step(5)  # still usable, from where it stopped
    assert s.time == pytest.approx(t + 5 * s.dt)
    assert np.isfinite(s.voltage()).all()


def test_ctrl_c_during_a_run_writes_a_checkpoint(tmp_path):
    r = hw.Run(_case(tmp_path), backend="cpu")
    timer = _interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt, match="checkpoint"):
        r.run(progress=False)
    timer.join()
    assert any(p.suffix == ".hwck" for p in (tmp_path / "out").iterdir())
    assert 0 < r.time < 1e6


def test_progress_bar(tmp_path, capsys):
    s = hw.Simulation(_case(tmp_path, t_end=5), backend="cpu")
    s.run(progress=True)
    err = capsys.readouterr().err
    assert "100.0%" in err and "t = 5.0 / 5.0 ms" in err
