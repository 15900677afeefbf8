"""The Python package on the GPU: populations and tissue on the CUDA backend against the
cpu. Skipped, with the reason, where no usable GPU and driver are found (CI);
tools/device/python-check.sh runs them on the device machine."""
import copy

import numpy as np
import pytest

import heartwave as hw
from conftest import SMALL_CASE


def _case(tmp_path, **time):
    d = copy.deepcopy(SMALL_CASE)
    d["output"]["directory"] = str(tmp_path / "out")
    d["time"].update(time)
    return hw.Case.from_dict(d)


@pytest.fixture
def gpu(tmp_path):
    try:
        hw.Simulation(_case(tmp_path), backend="cuda")
    except hw.HeartwaveError as e:
        pytest.skip(f"no usable GPU: {str(e).splitlines()[0]}")


def test_population_gpu_matches_cpu(gpu):
    kw = dict(grid={"g_Kr": (0.5, 1.5, 4), "g_Ks": (0.5, 1.5, 2)}, integrator="rl2", beats=2)
    cpu = hw.population("tentusscher_2006_epi", backend="cpu", **kw)
    cuda = hw.population("tentusscher_2006_epi", backend="cuda", **kw)
    assert "GPU" in cuda.backend or "cuda" in cuda.backend.lower()
    np.testing.assert_array_equal(cpu.parameters, cuda.parameters)
    for k in ("apd90", "apd50", "v_peak", "dvdt_max"):
        np.testing.assert_allclose(cuda[k], cpu[k], rtol=1e-9, err_msg=k)


def test_simulation_gpu_matches_cpu(gpu, tmp_path):
    case = _case(tmp_path)
    a, b = hw.Simulation(case, backend="cpu"), hw.Simulation(case, backend="cuda")
    assert "cuda" in b.describe()
    a.run(10, progress=False)
    b.run(10, progress=False)
    np.testing.assert_allclose(b.voltage(), a.voltage(), atol=2e-3)
    np.testing.assert_allclose(b.state("v"), a.state("v"), atol=2e-3)


def test_gpu_fields_state_and_maps(gpu, tmp_path):
    s = hw.Simulation(_case(tmp_path), backend="cuda")
    v = np.full(s.shape, np.nan)
    v[0, :, 30:] = 0.25
    s.set_voltage(v)
    got = s.voltage()
    assert np.all(got[0, :, 30:] == 0.25)
    s.track_activation(threshold=0.5, apd=True)
    s.add_probe("mid", (6, 4.5, 0))
    s.run(8, progress=False)
    state = s.save_state()
    s.run(16, progress=False)
    after = s.voltage()
    on_cpu = hw.Simulation(_case(tmp_path), backend="cpu")  # a GPU state continues on the cpu
    on_cpu.load_state(state)
    on_cpu.run(16, progress=False)
    np.testing.assert_allclose(on_cpu.voltage(), after, atol=2e-3)
    act = s.activation_map()
    assert np.isfinite(act[0, 15, :25]).all()
    assert len(np.asarray(s.probes()["t"])) == s.steps


def test_run_on_gpu_writes_outputs(gpu, tmp_path):
    d = copy.deepcopy(SMALL_CASE)
    d["output"].update({"directory": str(tmp_path / "run"), "activation_map": True, "activation_threshold": 0.5})
    res = hw.Run(hw.Case.from_dict(d), backend="cuda").run(progress=False)
    assert res["outcome"] == "finished"
    assert any("activation" in p.name for p in (tmp_path / "run").iterdir())
