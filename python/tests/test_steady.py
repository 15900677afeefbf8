"""Steady states from Python: until_steady, CellResult.save_state, initial_state=FILE,
read_state, restitution from a saved state, and the pacing warning."""
import warnings

import numpy as np
import pytest

import heartwave as hw


def test_until_steady_save_and_start_from(tmp_path):
    r = hw.pace("luo_rudy_1991", beats=50, until_steady=1e-5, record_interval=10)
    assert r.steady and 1 < r.steady_beat < 50
    assert len(r.beats) == r.steady_beat == len(r.state_changes)
    assert r.state_changes[-1] < 1e-5 <= r.state_changes[-2]
    path = tmp_path / "lr91.state"
    r.save_state(path)
    s = hw.read_state(path)
    assert s["model"] == "luo_rudy_1991" and s["steady_beat"] == r.steady_beat and s["bcl_ms"] == 1000
    assert list(s["states"]) == sorted(r.state_names) or set(s["states"]) == set(r.state_names)
    np.testing.assert_array_equal([s["states"][n] for n in r.state_names], r.final_state)
    # Starting from the file is starting from the array.
    a = hw.pace("luo_rudy_1991", beats=1, initial_state=path)
    b = hw.pace("luo_rudy_1991", beats=1, initial_state=r.final_state)
    assert a.last_beat.apd90 == b.last_beat.apd90
    # Restitution's S1 beats from it: one S1 beat is already at the steady APD.
    rows = hw.restitution("luo_rudy_1991", n_s1=1, coupling=[600.0], initial_state=path)
    apd_s1 = rows["apd90_s1"][0] if hasattr(rows, "columns") else rows["apd90_s1"][0]
    assert apd_s1 == pytest.approx(r.last_beat.apd90, abs=0.05)


def test_initial_state_file_of_another_model_or_other_pacing(tmp_path):
    path = tmp_path / "lr91.state"
    hw.pace("luo_rudy_1991", beats=1, record_interval=100).save_state(path)
    with pytest.raises(hw.InputError, match="belongs to model 'luo_rudy_1991'"):
        hw.pace("beeler_reuter_1977", beats=1, initial_state=path)
    with pytest.warns(RuntimeWarning, match="BCL 1000 ms"):
        hw.pace("luo_rudy_1991", bcl=800, beats=1, initial_state=path)


def test_pacing_warning_on_block():
    with pytest.warns(RuntimeWarning, match="does not follow the pacing"):
        r = hw.pace("luo_rudy_1991", bcl=200, beats=10, record_interval=10)
    assert "fail to capture" in r.pacing_warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hw.pace("luo_rudy_1991", beats=2, record_interval=10).pacing_warning == ""


def test_steady_state_until_steady():
    y = hw.steady_state("luo_rudy_1991", beats=50, until_steady=1e-5)
    r = hw.pace("luo_rudy_1991", beats=50, until_steady=1e-5, record_interval=100)
    np.testing.assert_array_equal(y, r.final_state)
