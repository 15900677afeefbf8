"""Single cells: paced runs with numpy traces and per-beat biomarkers, steady states and
S1-S2 restitution. The same runners as `heartwave cell` and `heartwave restitution`."""
from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from . import _check, _core
from .model import Model, _source

INTEGRATORS = ("auto", "fe", "rk2", "rk4", "rl1", "rl2", "sbe", "grl1", "grl2", "cvode")


@dataclass(frozen=True)
class Beat:
    """Biomarkers of one beat (times in ms, V in mV; NaN where not reached)."""
    beat: int
    t_start: float
    t_activation: float
    apd90: float
    apd50: float
    apd30: float
    dvdt_max: float
    v_peak: float
    v_rest: float
    cat_amplitude: float
    catd90: float


def _frame(records: list[dict]):
    try:
        import pandas as pd
    except ImportError:
        return records
    return pd.DataFrame.from_records(records)


def _options(model, *, integrator="rl2", dt=0.01, bcl=1000.0, beats=3, stim_amplitude=None,
             stim_duration=None, stim_start=0.0, params=None, precision="double", kernel="auto",
             rtol=1e-8, atol=1e-10, model_stimulus=False, initial_state=None,
             cell_maths="exact") -> _core.CellOptions:
    source, roles = _source(model)
    o = _core.CellOptions()
    o.model = source
    o.set_roles(roles)
    o.integrator = _check.choice("integrator", integrator, INTEGRATORS)
    o.dt_ms = _check.number("dt", dt, positive=True)
    o.bcl_ms = _check.number("bcl", bcl, positive=True)
    o.beats = _check.integer("beats", beats, minimum=1)
    if stim_amplitude is not None:
        o.stim_amplitude = _check.number("stim_amplitude", stim_amplitude)
    if stim_duration is not None:
        o.stim_duration_ms = _check.number("stim_duration", stim_duration, positive=True)
    o.stim_start_ms = _check.number("stim_start", stim_start, nonnegative=True)
    o.params = _check.params(params)
    o.single_precision = _check.choice("precision", precision, ("double", "float")) == "float"
    o.cell_maths = _check.choice("cell_maths", cell_maths, ("exact", "tables", "fast", "tables+fast"))
    o.kernel = _check.choice("kernel", kernel, ("auto", "interpreter", "compiled"))
    o.rtol = _check.number("rtol", rtol, positive=True)
    o.atol = _check.number("atol", atol, positive=True)
    o.model_stimulus = bool(model_stimulus)
    if _is_path(initial_state):
        o.initial_state = os.fspath(initial_state)
    elif initial_state is not None:
        raise TypeError("initial_state here must be a state file's path (written by CellResult.save_state or "
                        "heartwave cell --save-state)")
    return o


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


def _warn_all(messages) -> None:
    for m in messages:
        if m:
            warnings.warn(m, RuntimeWarning, stacklevel=3)


class CellResult:
    """A paced cell's trace and biomarkers.

    res.t and res.V are numpy arrays (ms, mV); res["Cai"] is any state (or algebraic, when
    run with algebraics=True) by name; res.beats lists a Beat per beat and
    res.biomarkers() gives them as a pandas DataFrame (a list of dicts without pandas).
    """

    def __init__(self, d: dict):
        self.columns: list[str] = list(d["columns"])
        self.data: np.ndarray = d["data"]
        self.beats = [Beat(**b) for b in d["beats"]]
        self.final_state: np.ndarray = d["final_state"]
        self.state_names: list[str] = list(d["state_names"])
        self.model: str = d["model"]
        self.kernel: str = d["kernel"]
        self.integrator: str = d["integrator"]
        self.dt: float = d["dt"]
        self.stim_amplitude: float = d["stim_amplitude"]
        self.stim_duration: float = d["stim_duration"]
        self.note: str = d["note"]
        self.steps: int = d["steps"]
        self.seconds: float = d["seconds"]  # inside the library: loading, compiling, running
        # Per beat: max over states of |x_n - x_(n-1)| / max(|x_n|, |x_(n-1)|) at its end.
        self.state_changes: np.ndarray = np.asarray(d["state_changes"], dtype=float)
        self.steady_beat: int = d["steady_beat"]  # the first beat below until_steady; 0: none
        self.pacing_warning: str = d["pacing_warning"]  # "" when one upstroke per stimulus
        self._state_file: str = d["state_file"]

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise KeyError(f"no column {name!r} in the trace; columns: {', '.join(self.columns)}")
        return self.data[:, self.columns.index(name)]

    @property
    def t(self) -> np.ndarray:
        return self["t"]

    @property
    def V(self) -> np.ndarray:
        return self["V"]

    @property
    def last_beat(self) -> Beat | None:
        return self.beats[-1] if self.beats else None

    def biomarkers(self):
        return _frame([asdict(b) for b in self.beats])

    def final_states(self) -> dict[str, float]:
        return dict(zip(self.state_names, self.final_state.tolist()))

    @property
    def steady(self) -> bool:
        return self.steady_beat > 0

    def save_state(self, path) -> None:
        """Writes the state at the end of the last beat to a state file (TOML: the model's
        name and fingerprint, how it was paced, every state by name), atomically. Start from it
        with pace(initial_state=path), heartwave cell --initial-state path or a case's
        [[model]] initial_state = "path"."""
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".state.")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(self._state_file)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __repr__(self) -> str:
        last = self.last_beat
        apd = f", last APD90 {last.apd90:.2f} ms" if last else ""
        return f"<heartwave.CellResult {self.model} ({self.integrator}), {len(self.beats)} beats{apd}>"


def pace(model: Model | str, *, bcl: float = 1000.0, beats: int = 3, dt: float = 0.01,
         integrator: str = "rl2", precision: str = "double", stim_amplitude: float | None = None,
         stim_duration: float | None = None, stim_start: float = 0.0, params: dict | None = None,
         initial_state=None, record_interval: float = 1.0, algebraics: bool = False,
         kernel: str = "auto", rtol: float = 1e-8, atol: float = 1e-10,
         model_stimulus: bool = False, until_steady: float | None = None,
         cell_maths: str = "exact") -> CellResult:
    """Paces one cell and returns its trace and per-beat biomarkers.

    model: a Model, a file path or a built-in's name. integrator: fe, rk2, rk4, rl1, rl2, sbe,
    grl1, grl2, auto (the cheapest scheme measured to hold the model at dt) or cvode (then
    dt is the sampling interval). params: parameter name -> absolute value.
    initial_state: the states to start from: an array (model units, e.g. a previous
    result's final_state) or a state file's path (CellResult.save_state, heartwave cell
    --save-state; another model's file or one lacking states raises, a different pacing
    warns); default the model's initial values. until_steady: stop after the first beat
    whose state change (max over states of |x_n - x_(n-1)| / max(|x_n|, |x_(n-1)|) at the
    same phase) is below it, with `beats` as the cap; see steady_beat and state_changes.
    A RuntimeWarning says when the cell did not follow the pacing in its last beats
    (self-oscillating or blocked). record_interval: ms between trace rows. cell_maths:
    "tables" looks up functions of V in tables, "fast" (precision="float" only) evaluates the
    GPU's fast intrinsics (__expf, __logf, __powf, __fdividef), "tables+fast" both, each within
    the bounds of docs/cell-maths.md; "exact" (the default) computes the model's own maths.
    The GIL is released while the cell runs.
    """
    o = _options(model, integrator=integrator, dt=dt, bcl=bcl, beats=beats, stim_amplitude=stim_amplitude,
                 stim_duration=stim_duration, stim_start=stim_start, params=params, precision=precision,
                 kernel=kernel, rtol=rtol, atol=atol, model_stimulus=model_stimulus,
                 initial_state=initial_state if _is_path(initial_state) else None, cell_maths=cell_maths)
    y0 = None
    if initial_state is not None and not _is_path(initial_state):
        y0 = _check.array("initial_state", initial_state).ravel()
    interval = _check.number("record_interval", record_interval, positive=True)
    tol = 0.0 if until_steady is None else _check.number("until_steady", until_steady, positive=True)
    d = _core.pace(o, y0, interval, bool(algebraics), True, tol)
    _warn_all(list(d["state_warnings"]) + [d["pacing_warning"]])
    return CellResult(d)


def steady_state(model: Model | str, *, bcl: float = 1000.0, beats: int = 100, **kwargs) -> np.ndarray:
    """The states after `beats` beats at `bcl` (model units), no trace kept; with
    until_steady=TOL, after the first beat whose state change is below TOL (`beats` the cap;
    a RuntimeWarning if none was). Other keyword arguments as pace()."""
    y0 = kwargs.pop("initial_state", None)
    tol = kwargs.pop("until_steady", None)
    tol = 0.0 if tol is None else _check.number("until_steady", tol, positive=True)
    o = _options(model, bcl=bcl, beats=beats, initial_state=y0 if _is_path(y0) else None, **kwargs)
    y0 = None if y0 is None or _is_path(y0) else _check.array("initial_state", y0).ravel()
    d = _core.pace(o, y0, 1.0, False, False, tol)
    _warn_all(list(d["state_warnings"]) + [d["pacing_warning"]])
    if tol > 0 and d["steady_beat"] == 0:
        _warn_all([f"not steady within {beats} beats: the last beat's state change is {d['state_changes'][-1]:.3g} "
                   f"(until_steady={tol:g})"])
    return d["final_state"]


def read_state(path) -> dict:
    """A state file as a dict: model, model_sha256, bcl_ms, beats, stim_duration_ms,
    stim_amplitude, tolerance, steady_beat, last_change, parameters (name -> value) and
    states (name -> value, model units)."""
    return _core.read_state(os.fspath(path))


def restitution(model: Model | str, *, bcl: float = 1000.0, n_s1: int = 10, coupling=None, **kwargs):
    """S1-S2 restitution: n_s1 beats at bcl, then one S2 at each coupling interval (ms).

    Returns a DataFrame (a dict of arrays without pandas) with columns coupling_ms, di_ms
    (CI - APD90 of the last S1, negative when S2 came before it repolarised), apd90_s1 (its
    whole beat, the same in every row), apd90_s2 (NaN where S2 did not capture) and captured
    (S2 made a full action potential). initial_state: a state file's path to start the S1
    beats from (e.g. a steady state, so a few S1 beats do). Other keyword arguments as pace().
    """
    if coupling is None:
        coupling = np.arange(250.0, 1000.0 + 1e-9, 50.0)
    c = _check.array("coupling", coupling).ravel()
    if c.size == 0 or np.any(c <= 0):
        raise ValueError("coupling must be one or more intervals > 0 ms")
    o = _options(model, bcl=bcl, **kwargs)
    rows = _core.restitution(o, _check.integer("n_s1", n_s1, minimum=1), c.tolist())
    cols = {"coupling_ms": rows[:, 0], "di_ms": rows[:, 1], "apd90_s1": rows[:, 2], "apd90_s2": rows[:, 3],
            "captured": rows[:, 4] != 0}
    return _frame_of(cols)


def dynamic_restitution(model: Model | str, *, bcls=None, beats: int = 50, **kwargs):
    """Dynamic (steady-state) restitution: `beats` beats at each cycle length of `bcls` (ms;
    run longest first, each continuing from the state the one before left).

    Returns a DataFrame (a dict of arrays without pandas) with columns bcl_ms, di_ms (BCL -
    APD90), apd90 (of the last beat; NaN where the last two beats were not both full action
    potentials, as at 2:1 block) and captured. Other keyword arguments as pace().
    """
    if bcls is None:
        bcls = np.arange(1000.0, 299.0, -50.0)
    b = np.sort(_check.array("bcls", bcls).ravel())[::-1]
    if b.size == 0 or np.any(b <= 0):
        raise ValueError("bcls must be one or more cycle lengths > 0 ms")
    o = _options(model, bcl=float(b[0]), **kwargs)
    rows = _core.dynamic_restitution(o, _check.integer("beats", beats, minimum=2), b.tolist())
    return _frame_of({"bcl_ms": rows[:, 0], "di_ms": rows[:, 1], "apd90": rows[:, 2], "captured": rows[:, 3] != 0})


def _frame_of(cols: dict):
    try:
        import pandas as pd
        return pd.DataFrame(cols)
    except ImportError:
        return cols
