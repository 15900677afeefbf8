import numpy as np
import pytest

import heartwave as hw


def test_pace_matches_cli(cli):
    py = hw.pace("tentusscher_2006_epi", bcl=1000, beats=2, dt=0.01)
    c = cli("cell", "tentusscher_2006_epi", "--beats", 2, "--json", json_out=True)
    assert len(py.beats) == len(c["beats"]) == 2
    for a, b in zip(py.beats, c["beats"]):
        assert a.apd90 == pytest.approx(b["apd90"], abs=0)  # the same runner: identical numbers
        assert a.v_peak == pytest.approx(b["v_peak"], abs=0)
    assert py.t[0] == 0 and py.t[-1] == pytest.approx(2000)
    assert py.V.max() > 20 and py.V.min() < -80
    assert py["Cai" if "Cai" in py.columns else py.columns[2]].shape == py.t.shape


def test_lookup_tables_within_their_bounds():
    exact = hw.pace("luo_rudy_1991", beats=1, record_interval=0.5)
    tables = hw.pace("luo_rudy_1991", beats=1, record_interval=0.5, cell_maths="tables")
    assert tables.beats[0].apd90 == pytest.approx(exact.beats[0].apd90, abs=0.1)
    rrms = np.sqrt(np.sum((tables.V - exact.V) ** 2) / np.sum(exact.V ** 2))
    assert 0 < rrms <= 1e-3  # not the exact kernel, and within the bound (docs/cell-maths.md)
    with pytest.raises(ValueError, match="cell_maths"):
        hw.pace("luo_rudy_1991", beats=1, cell_maths="fastest")


def test_fast_intrinsics_within_their_bounds_in_float():
    exact = hw.pace("luo_rudy_1991", beats=1, record_interval=0.5, precision="float")
    fast = hw.pace("luo_rudy_1991", beats=1, record_interval=0.5, precision="float", cell_maths="fast")
    assert fast.beats[0].apd90 == pytest.approx(exact.beats[0].apd90, abs=0.1)
    rrms = np.sqrt(np.sum((fast.V - exact.V) ** 2) / np.sum(exact.V ** 2))
    assert 0 < rrms <= 1e-3
    with pytest.raises(hw.InputError, match="float only"):
        hw.pace("luo_rudy_1991", beats=1, cell_maths="fast")  # double: the intrinsics are float only


def test_trace_columns_and_algebraics():
    r = hw.pace("luo_rudy_1991", beats=1, record_interval=0.5, algebraics=True)
    assert r.columns[:2] == ["t", "V"]
    assert len(r.columns) > 2 + len(r.state_names)
    assert np.allclose(np.diff(r.t), 0.5)
    with pytest.raises(KeyError, match="columns"):
        r["no_such_column"]


def test_biomarkers_frame():
    pd = pytest.importorskip("pandas")
    r = hw.pace("tentusscher_2006_epi", beats=2)
    df = r.biomarkers()
    assert isinstance(df, pd.DataFrame) and list(df["beat"]) == [1, 2]
    assert 250 < df["apd90"].iloc[-1] < 350


def test_state_round_trip_and_steady_state():
    y = hw.steady_state("tentusscher_2006_epi", bcl=1000, beats=3)
    r = hw.pace("tentusscher_2006_epi", beats=3, record_interval=100)
    np.testing.assert_array_equal(y, r.final_state)
    # Continuing from the final state of 3 beats = beats 4 of a 4-beat run.
    cont = hw.pace("tentusscher_2006_epi", beats=1, initial_state=y)
    four = hw.pace("tentusscher_2006_epi", beats=4)
    assert cont.beats[0].apd90 == pytest.approx(four.beats[3].apd90, rel=1e-9)
    assert set(r.final_states()) == set(r.state_names)


def test_params_change_apd():
    base = hw.pace("tentusscher_2006_epi", beats=1).last_beat.apd90
    m = hw.Model("tentusscher_2006_epi")
    gkr = next(p for p in m.parameters if p.name.lower() in ("g_kr", "gkr"))
    longer = hw.pace(m, beats=1, params={gkr.name: 0.5 * gkr.value}).last_beat.apd90
    assert longer > base + 10


@pytest.mark.parametrize("integrator", ["rl2", "grl2", "rk4", "cvode", "auto"])
def test_integrators_agree(integrator):
    ref = hw.pace("luo_rudy_1991", beats=1, integrator="cvode").last_beat.apd90
    r = hw.pace("luo_rudy_1991", beats=1, integrator=integrator, dt=0.005)
    assert r.last_beat.apd90 == pytest.approx(ref, abs=1.0)
    if integrator == "auto":
        assert r.note.startswith("integrator auto")


def test_float_precision():
    d = hw.pace("tentusscher_2006_epi", beats=1).last_beat.apd90
    f = hw.pace("tentusscher_2006_epi", beats=1, precision="float").last_beat.apd90
    assert f == pytest.approx(d, abs=0.5)
    assert "float" in hw.pace("tentusscher_2006_epi", beats=1, precision="float").integrator


def test_restitution_curve():
    r = hw.restitution("tentusscher_2006_epi", bcl=1000, n_s1=3, coupling=[150, 400, 500, 800])
    s2 = np.asarray(r["apd90_s2"])
    captured = np.asarray(r["captured"])
    di = np.asarray(r["di_ms"])
    assert len(s2) == 4 and list(captured) == [False, True, True, True]
    assert di[0] < 0 and np.isnan(s2[0])  # S2 inside the S1 action potential: no APD
    assert np.all(np.diff(s2[1:]) > 0)  # APD grows with the coupling interval
    assert len(set(np.asarray(r["apd90_s1"]))) == 1  # S1 measured once


def test_stimulus_needed_for_additive_model(shared_models):
    noble = shared_models / "noble_1962.cellml"
    with pytest.raises(hw.InputError, match="stim_amplitude="):
        hw.pace(noble, beats=1)
    r = hw.pace(noble, beats=1, bcl=600, stim_amplitude=2, stim_duration=2)
    assert r.V.max() > 0


def test_dynamic_restitution_follows_until_block():
    r = hw.dynamic_restitution("luo_rudy_1991", bcls=[300, 1000, 500], beats=20)
    bcl, apd, captured = (np.asarray(r[k]) for k in ("bcl_ms", "apd90", "captured"))
    assert list(bcl) == [1000, 500, 300]  # longest first, whatever the order given
    assert list(captured) == [True, True, False]  # 2:1 at 300 ms
    assert apd[0] == pytest.approx(360.7, abs=0.5) and apd[1] < apd[0] and np.isnan(apd[2])
    np.testing.assert_allclose(np.asarray(r["di_ms"])[:2], bcl[:2] - apd[:2])
