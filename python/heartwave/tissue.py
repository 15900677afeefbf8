"""Tissue: cases from TOML files or dicts, a Simulation to step and look into with numpy, and
a Run that writes the case's outputs as `heartwave run` does."""
from __future__ import annotations

import os
import signal
import time as _time
from typing import Callable

import numpy as np

from . import _check, _core, _progress, _toml

BACKENDS = ("auto", "reference", "cpu", "cuda")


def _overrides(overrides) -> list[str]:
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        raise TypeError("overrides must be a dict of dotted key -> value, e.g. {'time.t_end': 50}")
    out = []
    for k, v in overrides.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"overrides: keys must be dotted key names, got {k!r}")
        out.append(f"{k}={_toml.literal(v)}")
    return out


class Case:
    """A tissue case, validated as `heartwave run` validates a file: every problem raises
    heartwave.InputError naming the key (and file:line:column).

    Case.from_file("examples/spiral2d.toml", overrides={"time.t_end": 50})
    Case.from_dict({"grid": {...}, "model": [...], ...})   # the same keys as a case file
    """

    def __init__(self, core: _core.Case):
        self._c = core

    @staticmethod
    def from_file(path: str | os.PathLike, overrides: dict | None = None) -> "Case":
        return Case(_core.Case.from_file(_check.path_or_name("path", path), _overrides(overrides)))

    @staticmethod
    def from_toml(text: str, filename: str = "<case>", overrides: dict | None = None) -> "Case":
        """From TOML text; relative paths in it resolve against the working directory."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string of TOML, got {type(text).__name__}")
        return Case(_core.Case.from_text(text, os.path.join(os.getcwd(), filename), _overrides(overrides)))

    @staticmethod
    def from_dict(case: dict, overrides: dict | None = None) -> "Case":
        return Case.from_toml(_toml.dumps(case), "<dict>", overrides)

    name = property(lambda self: self._c.name)
    dt = property(lambda self: self._c.dt, doc="PDE step, ms")
    t_end = property(lambda self: self._c.t_end, doc="end time, ms")
    output_directory = property(lambda self: self._c.output_directory)
    text = property(lambda self: self._c.text, doc="the TOML the case was read from")

    def describe(self) -> str:
        return self._c.describe()

    def __repr__(self) -> str:
        return f"<heartwave.Case {self.name!r}: dt {self.dt} ms, t_end {self.t_end} ms>"


def _as_case(case) -> Case:
    if isinstance(case, Case):
        return case
    if isinstance(case, dict):
        return Case.from_dict(case)
    if isinstance(case, (str, os.PathLike)):
        return Case.from_file(case)
    raise TypeError(f"case must be a heartwave.Case, a dict or a case file path, got {type(case).__name__}")


class Simulation:
    """A monodomain simulation to step from Python.

    sim = heartwave.Simulation(case, backend="auto")   # auto: the GPU where one is found
    sim.run(100)                                         # to t = 100 ms
    v = sim.voltage()                                    # (nz, ny, nx) mV, NaN off tissue
    sim.set_voltage(np.where(x < 5, 20.0, np.nan))       # NaN: leave the cell as it is

    Stepping releases the GIL; Ctrl-C raises KeyboardInterrupt between chunks of steps and
    leaves the simulation usable at the last completed step.
    """

    def __init__(self, case, backend: str = "auto", threads: int = 0):
        self.case = _as_case(case)
        self._s = _core.Simulation(self.case._c, _check.choice("backend", backend, BACKENDS),
                                   _check.integer("threads", threads, minimum=0))
        self.backend_note: str = self._s.backend_note
        self._probe_names: list[str] = []

    # --- time -----------------------------------------------------------------------------
    time = property(lambda self: self._s.time, doc="ms")
    steps = property(lambda self: self._s.steps, doc="steps done")
    dt = property(lambda self: self._s.dt, doc="ms")
    shape = property(lambda self: tuple(self._s.shape), doc="(nz, ny, nx)")
    spacing = property(lambda self: tuple(self._s.spacing), doc="(hz, hy, hx), mm")
    tissue_cells = property(lambda self: self._s.tissue_cells)

    def step(self, n: int = 1) -> None:
        """n PDE steps (every splitting stage and ODE sub-step)."""
        self._s.advance(_check.integer("n", n, minimum=0))

    def run(self, t_end: float | None = None, *, every: int | None = None,
            callback: Callable[["Simulation"], object] | None = None, progress: bool | None = None) -> None:
        """Steps to t_end ms (the case's t_end when None). callback(sim) runs every `every`
        steps (default: every step when a callback is given). progress: a progress bar
        (default: on in terminals and notebooks)."""
        t_end = self.case.t_end if t_end is None else _check.number("t_end", t_end, nonnegative=True)
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable (it gets the simulation)")
        every = None if every is None else _check.integer("every", every, minimum=1)
        if callback is not None and every is None:
            every = 1
        left = int(np.ceil((t_end - self.time) / self.dt - 1e-3))
        bar = _progress.Progress(self.time, t_end, _progress.wanted(progress))
        chunk = every or 16
        try:
            while left > 0:
                n = min(chunk, left)
                start = _time.monotonic()
                self._s.advance(n)
                left -= n
                if callback is not None:
                    callback(self)
                elif every is None:  # chunks of about a tenth of a second, for Ctrl-C and the bar
                    took = _time.monotonic() - start
                    chunk = max(1, min(chunk * 2, int(chunk * 0.1 / took))) if took > 0 else chunk * 2
                bar.update(self.time)
        finally:
            bar.close(self.time)

    def live(self, seconds: float | None = None, *, port: int = 0, host: str = "127.0.0.1", fps: float = 30.0,
             paused: bool = False, log: str | None = None,
             on_ready: Callable[[str], object] | None = None) -> dict:
        """Serves the live view of this simulation (docs/live.md) from its current state: a
        page at the printed link (a random token in it) shows V as it steps, and clicks,
        parameters, pause and saves steer it. Returns after `seconds` of wall time, or raises
        KeyboardInterrupt on Ctrl-C; either way the simulation goes on from where the view
        left it. on_ready(url) replaces the printed link (a notebook can show it); log: a
        file for the controls' log (heartwave run CASE --replay LOG). Returns
        {"url", "time", "steps"}."""
        if seconds is not None:
            seconds = _check.number("seconds", seconds, nonnegative=True)
        if on_ready is not None and not callable(on_ready):
            raise TypeError("on_ready must be callable (it gets the page's URL)")
        if not isinstance(host, str) or not host:
            raise TypeError("host must be an address such as '127.0.0.1'")
        return self._s.live(host, _check.integer("port", port, minimum=0), _check.number("fps", fps, positive=True),
                            seconds, bool(paused), "" if log is None else str(log), on_ready)

    # --- fields ---------------------------------------------------------------------------
    def _grid(self, flat: np.ndarray) -> np.ndarray:
        return flat.reshape(self.shape)

    def mask(self) -> np.ndarray:
        """True on tissue cells, (nz, ny, nx)."""
        return self._grid(self._s.mask()).astype(bool)

    def voltage(self) -> np.ndarray:
        """V in mV, (nz, ny, nx) float32, NaN off tissue."""
        return self._grid(self._s.field("V"))

    def state(self, name: str) -> np.ndarray:
        """A state by name in the model's units, (nz, ny, nx); NaN where the cell's model has none."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a state's name, got {name!r}")
        return self._grid(self._s.field(name))

    def set_voltage(self, values) -> None:
        """Sets V (mV) from a (nz, ny, nx) array or a scalar; NaN leaves a cell as it is."""
        self.set_state("V", values)

    def set_state(self, name: str, values) -> None:
        """Sets a state (model units) from a (nz, ny, nx) array or a scalar; NaN leaves a cell
        as it is."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a state's name, got {name!r}")
        a = _check.array(name, values, shape=self.shape, allow_nan=True)
        self._s.set_field(name, a.ravel())

    # --- what a run follows ---------------------------------------------------------------
    def track_activation(self, threshold: float = -20.0, apd: bool = True) -> None:
        """Follows activation times (first upward crossing of threshold, mV) and, with apd,
        APD90 from now on; read them with activation_map() and apd_map()."""
        self._s.track_activation(_check.number("threshold", threshold), bool(apd))

    def activation_map(self) -> np.ndarray:
        """Activation time per cell (ms), NaN where not activated or off tissue."""
        return self._grid(self._s.activation())

    def apd_map(self) -> np.ndarray:
        """APD90 per cell (ms), NaN where not available."""
        return self._grid(self._s.apd90())

    def add_probe(self, name: str, position) -> None:
        """Records V after every step at the tissue cell nearest `position` (x, y, z) in mm."""
        if not isinstance(name, str) or not name:
            raise TypeError("a probe needs a name (a non-empty string)")
        if name in self._probe_names:
            raise ValueError(f"there is a probe named {name!r} already")
        p = _check.array("position", position).ravel()
        if p.size != 3:
            raise ValueError(f"position must be (x, y, z) in mm, got {p.size} numbers")
        self._s.add_probe(p.tolist(), name)
        self._probe_names.append(name)

    def stimulate(self, lo, hi, amplitude: float = 50.0, *, start: float | None = None,
                  duration: float = 1.0, period: float = 0.0, count: int = 1) -> None:
        """Adds a stimulus on the box [lo, hi] (x, y, z in mm, cell centres inside) while the
        run goes on: amplitude µA/mm³ for duration ms from `start` (default: now), again every
        `period` ms (0: once) `count` times, as a case's [[stimulus]] table would. Any number
        may be added; save_state() keeps them. A box with no tissue cell, or bad numbers,
        raise heartwave.InputError."""
        lo_a = _check.array("lo", lo).ravel()
        hi_a = _check.array("hi", hi).ravel()
        if lo_a.size != 3 or hi_a.size != 3:
            raise ValueError("lo and hi must be (x, y, z) in mm")
        t0 = self.time if start is None else _check.number("start", start, nonnegative=True)
        self._s.stimulate(lo_a.tolist(), hi_a.tolist(), _check.number("amplitude", amplitude), t0,
                          _check.number("duration", duration, positive=True),
                          _check.number("period", period, nonnegative=True), _check.integer("count", count, minimum=1))

    def probes(self):
        """The probes' traces: a DataFrame with t and a column per probe (a dict of arrays
        without pandas). Adding a probe starts the record again."""
        t, v = self._s.probe_data()
        cols = {"t": t}
        cols.update({n: v[:, j] for j, n in enumerate(self._probe_names)})
        try:
            import pandas as pd
            return pd.DataFrame(cols)
        except ImportError:
            return cols

    # --- state ----------------------------------------------------------------------------
    def save_state(self) -> bytes:
        """The whole dynamic state; load_state on a simulation of the same case (any backend)
        continues bit-identically."""
        return self._s.save_state()

    def load_state(self, state: bytes) -> None:
        if not isinstance(state, (bytes, bytearray)):
            raise TypeError(f"state must be bytes from save_state(), got {type(state).__name__}")
        self._s.load_state(bytes(state))

    def describe(self) -> str:
        return self._s.describe()

    def __repr__(self) -> str:
        return f"<heartwave.Simulation {self.case.name!r} t = {self.time:g} ms; {self.backend_note}>"


class Run:
    """A run of a case as `heartwave run` does it: the outputs (fields, probes, maps, ECG,
    pictures) written at their cadence, checkpoints, and on a NaN the last good state kept.

    run = heartwave.Run(case); result = run.run()
    Ctrl-C stops it with a checkpoint and raises KeyboardInterrupt; restart=PATH continues.
    The output folder is checked first, as `heartwave run` checks it: a folder holding another
    run's outputs (its run.json) raises InputError unless overwrite=True (that run's outputs
    are removed first; other files stay) or restart= continues that run.
    """

    def __init__(self, case, backend: str = "auto", threads: int = 0, restart: str | os.PathLike | None = None,
                 overwrite: bool = False):
        self.case = _as_case(case)
        self._r = _core.Run(self.case._c, _check.choice("backend", backend, BACKENDS),
                            _check.integer("threads", threads, minimum=0),
                            "" if restart is None else _check.path_or_name("restart", restart), bool(overwrite))
        self.notes: list[str] = list(self._r.notes)

    time = property(lambda self: self._r.time)

    def run(self, t_end: float | None = None, *, progress: bool | None = None) -> dict:
        """Runs to t_end (the case's when None). Returns the outcome: "finished" with a
        summary of the outputs written, or raises NumericalError (the run failed: .time,
        .cell, .variable) or KeyboardInterrupt (stopped by a signal, checkpoint written)."""
        t_end = self.case.t_end if t_end is None else _check.number("t_end", t_end, nonnegative=True)
        bar = _progress.Progress(self.time, t_end, _progress.wanted(progress))
        try:
            r = self._r.advance(t_end, bar.update if bar.enabled else None, max(t_end - self.time, 1e-9) / 200)
        finally:
            bar.close(self.time)
        if r["outcome"] == "failed":
            e = _core.NumericalError(f"the solution blew up at t = {r['failed_at']} ms in cell {r['cell']}, "
                                     f"variable {r['variable']}: {r['message']}; the last good state is in "
                                     f"{r['last_good']} and {r['checkpoint']}")
            e.time, e.cell, e.variable = r["failed_at"], r["cell"], r["variable"]
            raise e
        if r["outcome"] == "stopped" and r["signal"] == signal.SIGINT:
            raise KeyboardInterrupt(f"stopped at t = {r['time']} ms; checkpoint {r['checkpoint']}")
        return r

    def voltage(self) -> np.ndarray:
        """V in mV as it stands, flat in grid order (x fastest), NaN off tissue."""
        return self._r.field("V")

    def describe(self) -> str:
        return self._r.describe()
