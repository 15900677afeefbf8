import csv
import io

import numpy as np
import pytest

import heartwave as hw


def test_grid_matches_cli(cli):
    pop = hw.population("tentusscher_2006_epi", grid={"g_Kr": (0.5, 1.5, 3)}, backend="cpu", integrator="rl2",
                        beats=1)
    out = cli("sweep", "tentusscher_2006_epi", "--grid", "g_Kr=0.5:1.5:3", "--backend", "cpu", "-i", "rl2",
              "--beats", 1)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert pop.cells == len(rows) == 3
    np.testing.assert_array_equal(pop["apd90"], [float(r["apd90"]) for r in rows])
    np.testing.assert_allclose(pop["g_Kr"], [float(r["g_Kr"]) for r in rows])
    assert np.all(np.diff(pop["apd90"]) < 0)  # more I_Kr, shorter APD


def test_random_and_lhs():
    for kind in ("random", "lhs"):
        pop = hw.population("luo_rudy_1991", **{kind: {"g_K_max": (0.8, 1.2)}}, cells=8, seed=3, backend="cpu",
                            integrator="rl2", beats=1)
        assert pop.parameters.shape == (8, 1) and np.all(np.isfinite(pop["apd90"]))
        default = hw.Model("luo_rudy_1991").defaults()["g_K_max"]
        assert np.all((pop["g_K_max"] >= 0.8 * default - 1e-12) & (pop["g_K_max"] <= 1.2 * default + 1e-12))


def test_table_and_frame():
    pd = pytest.importorskip("pandas")
    default = hw.Model("luo_rudy_1991").defaults()["g_K_max"]
    table = pd.DataFrame({"g_K_max": [default, 2 * default]})
    pop = hw.population("luo_rudy_1991", table=table, backend="cpu", integrator="rl2", beats=1)
    df = pop.to_dataframe()
    assert list(df.columns[:1]) == ["g_K_max"] and len(df) == 2
    single = hw.pace("luo_rudy_1991", beats=1).last_beat.apd90
    assert df["apd90"].iloc[0] == pytest.approx(single, abs=1e-6)
    assert df["apd90"].iloc[1] < df["apd90"].iloc[0]
