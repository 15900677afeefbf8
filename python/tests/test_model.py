import numpy as np
import pytest

import heartwave as hw


def test_builtin_list_and_load():
    names = hw.builtin_models()
    assert "tentusscher_2006_epi" in names and len(names) >= 10
    m = hw.Model("tentusscher_2006_epi")
    assert m.builtin and len(m.states) == 19
    assert "V" in m.state_names or any(s.units for s in m.states)
    assert set(m.gates) <= set(m.state_names) and len(m.gates) >= 10
    assert m.initial_state.shape == (19,)
    assert all(isinstance(p.value, float) for p in m.parameters)
    assert "tentusscher" in repr(m)


def test_cellml_file(shared_models):
    m = hw.Model(shared_models / "luo_rudy_1991.cellml")
    assert len(m.states) == 8
    # LR1991 has removable singularities (0/0 in the voltage) that the compiler repairs.
    assert m.repairs and all(r.method for r in m.repairs)
    assert "V" in m.role_summary or "voltage" in m.role_summary
    d = m.defaults()
    assert all(np.isfinite(v) for v in d.values())


def test_printers():
    m = hw.Model("luo_rudy_1991")
    assert "rhs" in m.to_cpp()
    cu = m.to_cuda()
    assert "__device__" in cu and "#include" not in cu.split("\n", 5)[-1][:0] + ""  # standalone
    hwm = m.to_hwm()
    assert "state" in hwm.lower() or "d/dt" in hwm


def test_bad_file_located(tmp_path):
    f = tmp_path / "broken.cellml"
    f.write_text('<?xml version="1.0"?>\n<model xmlns="http://www.cellml.org/cellml/1.0#" name="x">\n<component name="c">\n')
    with pytest.raises(hw.InputError) as e:
        hw.Model(f)
    assert e.value.file.endswith("broken.cellml")
    assert e.value.line >= 1
    assert e.value.diagnostics and e.value.diagnostics[0][0] == "error"


def test_unknown_builtin_lists_names():
    with pytest.raises(hw.InputError, match="tentusscher"):
        hw.Model("no_such_model")


def test_roles_override_checked():
    with pytest.raises(hw.InputError, match="unknown role"):
        hw.Model("luo_rudy_1991", roles={"volts": "V"})


def test_user_model_compiles_against_the_packaged_headers(tmp_path):
    """A user's model is compiled to C++ at run time against the headers the package carries
    (HEARTWAVE_RUNTIME_INCLUDE), so an installed copy needs no checkout."""
    import os
    import pathlib
    import subprocess
    import sys
    include = pathlib.Path(hw.__file__).with_name("include")
    assert (include / "runtime" / "integrators.hpp").is_file()
    assert os.environ["HEARTWAVE_RUNTIME_INCLUDE"] == str(include)
    model = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "hwm" / "markov_channel.hwm"
    code = ("import heartwave as hw; r = hw.pace(%r, kernel='compiled', beats=1, bcl=500, stim_amplitude=1, "
            "stim_duration=1); print(r.kernel)" % str(model))
    env = dict(os.environ, HEARTWAVE_CACHE=str(tmp_path / "cache"))
    env.pop("HEARTWAVE_RUNTIME_INCLUDE")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("compiled C++"), out.stdout
    assert any(tmp_path.joinpath("cache").glob("model_*.so"))
