"""Bad input raises a Python exception with a clear message; none crashes the interpreter.
A corpus of wrong calls, then a seeded fuzz of the case-dict API."""
import copy
import random

import numpy as np
import pytest

import heartwave as hw
from conftest import SMALL_CASE

ERRORS = (hw.HeartwaveError, TypeError, ValueError, KeyError)

TT = "tentusscher_2006_epi"


def _sim(tmp):
    d = copy.deepcopy(SMALL_CASE)
    d["output"]["directory"] = str(tmp / "o")
    return hw.Simulation(hw.Case.from_dict(d), backend="cpu")


CORPUS = [
    # models
    ("model: number", lambda t: hw.Model(42), TypeError),
    ("model: empty", lambda t: hw.Model(""), ValueError),
    ("model: unknown", lambda t: hw.Model("nope"), hw.InputError),
    ("model: missing file", lambda t: hw.Model(t / "missing.cellml"), hw.InputError),
    ("model: wrong extension", lambda t: (t / "m.txt").write_text("x") and hw.Model(t / "m.txt"), hw.InputError),
    ("model: roles not dict", lambda t: hw.Model(TT, roles=["V"]), TypeError),
    ("model: role value not str", lambda t: hw.Model(TT, roles={"voltage": 1}), TypeError),
    ("model: hwm garbage", lambda t: (t / "g.hwm").write_text("state V = ;;\n") and hw.Model(t / "g.hwm"),
     hw.InputError),
    # single cells
    ("pace: dt zero", lambda t: hw.pace(TT, dt=0), ValueError),
    ("pace: dt negative", lambda t: hw.pace(TT, dt=-0.01), ValueError),
    ("pace: dt nan", lambda t: hw.pace(TT, dt=float("nan")), ValueError),
    ("pace: dt string", lambda t: hw.pace(TT, dt="0.01"), TypeError),
    ("pace: bcl inf", lambda t: hw.pace(TT, bcl=float("inf")), ValueError),
    ("pace: beats float", lambda t: hw.pace(TT, beats=1.5), TypeError),
    ("pace: beats zero", lambda t: hw.pace(TT, beats=0), ValueError),
    ("pace: beats bool", lambda t: hw.pace(TT, beats=True), TypeError),
    ("pace: integrator unknown", lambda t: hw.pace(TT, integrator="euler"), ValueError),
    ("pace: integrator number", lambda t: hw.pace(TT, integrator=2), TypeError),
    ("pace: precision", lambda t: hw.pace(TT, precision="half"), ValueError),
    ("pace: kernel", lambda t: hw.pace(TT, kernel="gpu"), ValueError),
    ("pace: unknown parameter", lambda t: hw.pace(TT, params={"g_Krr": 1.0}), hw.InputError),
    ("pace: parameter nan", lambda t: hw.pace(TT, params={"g_Kr": float("nan")}), ValueError),
    ("pace: params list", lambda t: hw.pace(TT, params=[("g_Kr", 1)]), TypeError),
    ("pace: param name int", lambda t: hw.pace(TT, params={1: 1.0}), TypeError),
    ("pace: initial state short", lambda t: hw.pace(TT, initial_state=[1.0, 2.0]), hw.InputError),
    ("pace: initial state nan", lambda t: hw.pace(TT, initial_state=[np.nan] * 19), ValueError),
    ("pace: initial state strings", lambda t: hw.pace(TT, initial_state=["a"] * 19), TypeError),
    ("pace: record interval 0", lambda t: hw.pace(TT, record_interval=0), ValueError),
    ("pace: stim duration negative", lambda t: hw.pace(TT, stim_duration=-1), ValueError),
    ("pace: stim start negative", lambda t: hw.pace(TT, stim_start=-5), ValueError),
    ("pace: unknown keyword", lambda t: hw.pace(TT, bpm=60), TypeError),
    ("restitution: empty coupling", lambda t: hw.restitution(TT, coupling=[]), ValueError),
    ("restitution: negative coupling", lambda t: hw.restitution(TT, coupling=[-5]), ValueError),
    ("restitution: n_s1 zero", lambda t: hw.restitution(TT, n_s1=0), ValueError),
    # populations
    ("population: no design", lambda t: hw.population(TT), ValueError),
    ("population: two designs", lambda t: hw.population(TT, grid={"g_Kr": (1, 2, 2)}, lhs={"g_Kr": (1, 2)}),
     ValueError),
    ("population: grid tuple length", lambda t: hw.population(TT, grid={"g_Kr": (1, 2)}), ValueError),
    ("population: grid hi < lo", lambda t: hw.population(TT, grid={"g_Kr": (2, 1, 3)}), ValueError),
    ("population: random without cells", lambda t: hw.population(TT, random={"g_Kr": (1, 2)}), ValueError),
    ("population: cells zero", lambda t: hw.population(TT, lhs={"g_Kr": (1, 2)}, cells=0), ValueError),
    ("population: unknown parameter", lambda t: hw.population(TT, grid={"nope": (1, 2, 2)}, backend="cpu",
                                                              beats=1, integrator="rl2"), hw.InputError),
    ("population: backend", lambda t: hw.population(TT, grid={"g_Kr": (1, 2, 2)}, backend="tpu"), ValueError),
    ("population: ragged table", lambda t: hw.population(TT, table={"g_Kr": [1, 2], "g_Ks": [1]}), ValueError),
    ("population: table type", lambda t: hw.population(TT, table=5), TypeError),
    ("population: csv missing", lambda t: hw.population(TT, table=t / "none.csv"), hw.InputError),
    # cases
    ("case: not a dict", lambda t: hw.Case.from_dict([1, 2]), TypeError),
    ("case: unknown key", lambda t: hw.Case.from_dict({**SMALL_CASE, "gird": {}}), hw.InputError),
    ("case: negative dt", lambda t: hw.Case.from_dict({**SMALL_CASE, "time": {"dt": -1, "t_end": 1}}),
     hw.InputError),
    ("case: object value", lambda t: hw.Case.from_dict({**SMALL_CASE, "name": object()}), TypeError),
    ("case: missing file", lambda t: hw.Case.from_file(t / "none.toml"), hw.InputError),
    ("case: bad TOML", lambda t: hw.Case.from_toml("[grid\nlength = 3"), hw.InputError),
    ("case: override unknown key", lambda t: hw.Case.from_dict(SMALL_CASE, overrides={"time.tend": 3}),
     hw.InputError),
    ("case: overrides not dict", lambda t: hw.Case.from_dict(SMALL_CASE, overrides=["time.t_end=3"]), TypeError),
    ("simulation: backend", lambda t: hw.Simulation(SMALL_CASE, backend="gpu0"), ValueError),
    ("simulation: case type", lambda t: hw.Simulation(3), TypeError),
    # simulations
    ("sim: step negative", lambda t: _sim(t).step(-1), ValueError),
    ("sim: run to nan", lambda t: _sim(t).run(float("nan")), ValueError),
    ("sim: callback not callable", lambda t: _sim(t).run(1, callback=3), TypeError),
    ("sim: every zero", lambda t: _sim(t).run(1, every=0), ValueError),
    ("sim: unknown state", lambda t: _sim(t).state("Cai"), hw.InputError),
    ("sim: set wrong shape", lambda t: _sim(t).set_voltage(np.zeros((3, 3))), ValueError),
    ("sim: set inf", lambda t: _sim(t).set_voltage(np.inf), ValueError),
    ("sim: set strings", lambda t: _sim(t).set_voltage("hot"), TypeError),
    ("sim: set unknown state", lambda t: _sim(t).set_state("Cai", 1.0), hw.InputError),
    ("sim: load garbage", lambda t: _sim(t).load_state(b"garbage"), hw.HeartwaveError),
    ("sim: load str", lambda t: _sim(t).load_state("state"), TypeError),
    ("sim: load truncated", lambda t: (lambda s: s.load_state(s.save_state()[:-7]))(_sim(t)), hw.HeartwaveError),
    ("sim: probe outside", lambda t: _sim(t).add_probe("far", (500, 500, 0)), hw.InputError),
    ("sim: probe position size", lambda t: _sim(t).add_probe("p", (1, 2)), ValueError),
    ("sim: maps not tracked", lambda t: _sim(t).activation_map(), hw.InputError),
]


@pytest.mark.parametrize("name,call,error", CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_call_raises(tmp_path, name, call, error):
    with pytest.raises(error) as e:
        call(tmp_path)
    assert str(e.value)  # every error says something


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 40


def _mutate(rng: random.Random, d):
    """One random change: drop, rename or retype a key, or put a strange value in."""
    strange = [None, -1, 0, 1e308, float("nan"), "", "x" * 300, [], {}, [1, "a"], True, -0.0, 2**63, "../../etc"]
    paths = []

    def walk(x, p):
        if isinstance(x, dict):
            for k, v in x.items():
                paths.append(p + [k])
                walk(v, p + [k])
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, p + [i])
    walk(d, [])
    path = rng.choice(paths)
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    op = rng.randrange(3)
    if isinstance(parent, list):
        if op == 0:
            parent.pop(key)
        else:
            parent[key] = rng.choice(strange)
    elif op == 0:
        del parent[key]
    elif op == 1:
        parent[key + "_"] = parent.pop(key)
    else:
        parent[key] = rng.choice(strange)


def test_fuzz_case_dicts(tmp_path):
    rng = random.Random(20261124)
    outcomes = {"valid": 0, "rejected": 0}
    for _ in range(300):
        d = copy.deepcopy(SMALL_CASE)
        d["output"]["directory"] = str(tmp_path / "fuzz")
        for _ in range(rng.randint(1, 3)):
            _mutate(rng, d)
        try:
            c = hw.Case.from_dict(d)
        except ERRORS as e:
            assert str(e)
            outcomes["rejected"] += 1
            continue
        outcomes["valid"] += 1
        if c.t_end <= 50 and rng.random() < 0.2:  # some valid cases also build and step
            try:
                s = hw.Simulation(c, backend="cpu")
                s.step(2)
            except ERRORS:
                pass
    assert outcomes["rejected"] > 50 and outcomes["valid"] > 0, outcomes
