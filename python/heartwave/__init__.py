"""Heartwave from Python: cardiac cell models, single cells, populations and tissue, with
numpy in and out, over the same C++ library as the `heartwave` command.

    import heartwave as hw
    m = hw.Model("tentusscher_2006_epi")           # a built-in, or a .cellml / .hwm file
    res = hw.pace(m, bcl=1000, beats=3)             # res.t, res.V, res.beats, res.biomarkers()
    pop = hw.population(m, lhs={"g_Kr": (0.5, 1.5)}, cells=1000)
    sim = hw.Simulation(hw.Case.from_file("examples/spiral2d.toml"))

docs/python.md has the tour and the reference.
"""
import os as _os
import pathlib as _pathlib

# A user model's C++ is compiled at run time against the headers this package carries.
_include = _pathlib.Path(__file__).with_name("include")
if _include.is_dir():
    _os.environ.setdefault("HEARTWAVE_RUNTIME_INCLUDE", str(_include))

from ._core import DivergenceError, HeartwaveError, InputError, NumericalError
from .cell import Beat, CellResult, dynamic_restitution, pace, read_state, restitution, steady_state
from .model import Algebraic, Model, Parameter, Repair, State, builtin_models
from .population import PopulationResult, population
from .tissue import Case, Run, Simulation

__version__ = "0.1.0"

__all__ = [
    "Algebraic", "Beat", "Case", "CellResult", "DivergenceError", "HeartwaveError", "InputError", "Model",
    "NumericalError", "Parameter", "PopulationResult", "Repair", "Run", "Simulation", "State", "builtin_models",
    "pace", "population", "read_state", "restitution", "dynamic_restitution", "steady_state",
]
