import copy
import pathlib

import numpy as np
import pytest

import heartwave as hw
from conftest import ROOT, SMALL_CASE


def small(tmp_path, **time):
    d = copy.deepcopy(SMALL_CASE)
    d["output"]["directory"] = str(tmp_path / "out")
    d["time"].update(time)
    return hw.Case.from_dict(d)


def test_case_from_file_and_overrides():
    c = hw.Case.from_file(ROOT / "examples" / "spiral2d.toml", overrides={"time.t_end": 50})
    assert c.t_end == 50 and c.dt == pytest.approx(0.02)
    assert "spiral2d" in c.describe() or "grid" in c.describe()


def test_dict_equals_toml(tmp_path):
    a = small(tmp_path)
    b = hw.Case.from_toml(a.text)
    sa, sb = hw.Simulation(a, backend="cpu"), hw.Simulation(b, backend="cpu")
    sa.run(5, progress=False)
    sb.run(5, progress=False)
    np.testing.assert_array_equal(sa.voltage(), sb.voltage())


def test_step_run_and_shapes(tmp_path):
    s = hw.Simulation(small(tmp_path), backend="cpu")
    assert s.shape == (1, 30, 40) and s.spacing[1:] == pytest.approx((0.3, 0.3))
    s.step(10)
    assert s.steps == 10 and s.time == pytest.approx(0.2)
    s.run(10, progress=False)
    assert s.time == pytest.approx(10)
    v = s.voltage()
    assert v.shape == (1, 30, 40) and v.dtype == np.float32
    assert np.nanmax(v) > 0.5  # the stimulated edge fired and the wave travels
    assert s.state("v").shape == v.shape
    assert s.mask().all()


def test_callback_every(tmp_path):
    s = hw.Simulation(small(tmp_path), backend="cpu")
    seen = []
    s.run(2, every=25, callback=lambda sim: seen.append(sim.steps))
    assert seen == [25, 50, 75, 100]


def test_set_fields_start_a_wave_by_hand(tmp_path):
    d = copy.deepcopy(SMALL_CASE)
    d.pop("stimulus")
    d["output"]["directory"] = str(tmp_path / "o")
    s = hw.Simulation(hw.Case.from_dict(d), backend="cpu")
    nz, ny, nx = s.shape
    v = np.full(s.shape, np.nan)
    v[:, :, :5] = 1.0
    s.set_voltage(v)
    got = s.voltage()
    assert np.all(got[:, :, :5] == 1.0) and np.all(got[:, :, 5:] == 0.0)
    s.set_state("v", 0.5)
    assert np.all(s.state("v") == 0.5)
    s.set_state("v", 0.0)
    s.run(15, progress=False)
    assert np.nanmax(s.voltage()[:, :, 20:]) > 0.5  # the wave started by hand crossed the middle


def test_save_load_continues_identically(tmp_path):
    s = hw.Simulation(small(tmp_path), backend="cpu")
    s.run(4, progress=False)
    state = s.save_state()
    s.run(8, progress=False)
    after = s.voltage()
    t = hw.Simulation(small(tmp_path), backend="reference")  # another engine takes the same state
    u = hw.Simulation(small(tmp_path), backend="cpu")
    u.load_state(state)
    assert u.time == pytest.approx(4)
    u.run(8, progress=False)
    np.testing.assert_array_equal(u.voltage(), after)
    t.load_state(state)
    t.run(8, progress=False)
    np.testing.assert_allclose(t.voltage(), after, atol=2e-3)


def test_reference_and_cpu_agree(tmp_path):
    a = hw.Simulation(small(tmp_path), backend="reference")
    b = hw.Simulation(small(tmp_path), backend="cpu")
    a.run(10, progress=False)
    b.run(10, progress=False)
    np.testing.assert_allclose(a.voltage(), b.voltage(), atol=2e-3)


def test_activation_and_probes(tmp_path):
    s = hw.Simulation(small(tmp_path), backend="cpu")
    s.track_activation(threshold=0.5, apd=False)
    s.add_probe("left", (1.0, 4.5, 0))
    s.add_probe("right", (11.0, 4.5, 0))
    s.run(20, progress=False)
    act = s.activation_map()
    assert act.shape == s.shape
    row = act[0, 15]
    assert np.all(np.isfinite(row[:30])) and np.all(np.diff(row[2:30]) > 0)  # the wave goes left to right
    p = s.probes()
    t, left, right = (np.asarray(p[k]) for k in ("t", "left", "right"))
    assert len(t) == s.steps and t[-1] == pytest.approx(20)
    assert t[np.argmax(left > 0.5)] < t[np.argmax(right > 0.5)]
    with pytest.raises(hw.InputError, match="APD90"):
        s.apd_map()


def test_run_writes_outputs(tmp_path):
    d = copy.deepcopy(SMALL_CASE)
    d["output"].update({"directory": str(tmp_path / "run"), "activation_map": True, "activation_threshold": 0.5,
                        "probes": [{"name": "mid", "position": [6, 4.5]}]})
    r = hw.Run(hw.Case.from_dict(d), backend="cpu")
    res = r.run(progress=False)
    assert res["outcome"] == "finished" and res["time"] == pytest.approx(20)
    files = {p.name for p in pathlib.Path(tmp_path / "run").iterdir()}
    assert any("probe" in f for f in files) and any("activation" in f for f in files)
    assert r.voltage().size == 40 * 30
    # A second run into the same folder is refused (it holds the first run's outputs, run.json
    # says whose); with overwrite=True it replaces them and leaves other files alone.
    (tmp_path / "run" / "notes.txt").write_text("mine")
    with pytest.raises(hw.InputError, match="output.directory") as refused:
        hw.Run(hw.Case.from_dict(d), backend="cpu")
    # The advice is in Python's words, not the command line's.
    assert "overwrite=True" in str(refused.value) and "--overwrite" not in str(refused.value)
    again = hw.Run(hw.Case.from_dict(d), backend="cpu", overwrite=True)
    assert again.run(progress=False)["outcome"] == "finished"
    assert (tmp_path / "run" / "notes.txt").read_text() == "mine"


def test_numerical_error_keeps_state(tmp_path):
    s = hw.Simulation(small(tmp_path), backend="cpu")
    s.run(1, progress=False)
    good_t = s.time
    v = np.full(s.shape, np.nan)
    v[0, 10, 10] = 1e30
    s.set_voltage(v)
    with pytest.raises(hw.NumericalError) as e:
        s.run(5, progress=False)
    assert e.value.variable and len(e.value.cell) == 3
    assert s.time >= good_t  # the simulation is still usable
    s.time


def test_stimulate_while_running_equals_a_stimulus_in_the_case(tmp_path):
    d = copy.deepcopy(SMALL_CASE)
    d.pop("stimulus")
    d["output"]["directory"] = str(tmp_path / "o")
    later = {"region": {"kind": "box", "lo": [0, 0], "hi": [1.5, 9]}, "amplitude": 1.0,
             "start": 2.0, "duration": 1.0}
    with_it = copy.deepcopy(d)
    with_it["stimulus"] = [later]
    a = hw.Simulation(hw.Case.from_dict(with_it), backend="cpu")
    b = hw.Simulation(hw.Case.from_dict(d), backend="cpu")
    a.run(1, progress=False)
    b.run(1, progress=False)
    b.stimulate((0, 0, 0), (1.5, 9.0, 1.0), 1.0, start=2.0, duration=1.0)
    a.run(8, progress=False)
    b.run(8, progress=False)
    np.testing.assert_array_equal(a.voltage(), b.voltage())
    assert np.nanmax(b.voltage()) > 0.5
    with pytest.raises(hw.InputError, match="no tissue cell"):
        b.stimulate((50, 50, 0), (60, 60, 1))


def test_live_serves_this_simulation_and_hands_it_back(tmp_path):
    """sim.live(): the page of this simulation is served (the token's link answers), the run
    steps from where the simulation was, and the simulation goes on from where the view left it."""
    import threading
    import urllib.request

    s = hw.Simulation(small(tmp_path), backend="cpu")
    s.run(2, progress=False)
    got = {}

    def ready(url):
        def fetch():
            with urllib.request.urlopen(url, timeout=10) as r:
                got["status"], got["page"] = r.status, r.read()
        t = threading.Thread(target=fetch)
        t.start()
        got["thread"] = t

    r = s.live(seconds=1.5, on_ready=ready, log=str(tmp_path / "actions.jsonl"))
    got["thread"].join(10)
    assert got["status"] == 200 and b"<canvas" in got["page"]
    token = r["url"].rstrip("/").rsplit("/", 1)[1]
    assert r["url"].startswith("http://127.0.0.1:") and len(token) == 32
    assert r["steps"] > 100 and s.steps == r["steps"] and s.time == pytest.approx(r["time"])
    s.step(1)  # still usable
    log = (tmp_path / "actions.jsonl").read_text().splitlines()
    assert '"event":"start"' in log[0] and '"step":100' in log[0]
    with pytest.raises(TypeError):
        s.live(seconds=0, on_ready="not callable")
