"""Populations of cells that differ in parameters: the designs of `heartwave sweep` (a grid,
uniform random, Latin hypercube, a table), on the cpu or the GPU."""
from __future__ import annotations

import os

import numpy as np

from . import _check, _core
from .cell import _options
from .model import Model

BIOMARKERS = ("apd90", "apd50", "apd30", "dvdt_max", "v_peak", "v_rest", "cat_amplitude", "catd90")


class PopulationResult:
    """names: the varied parameters; parameters: (cells, len(names)) absolute values;
    biomarkers: name -> (cells,) array of the last beat; to_dataframe() joins them."""

    def __init__(self, names: list[str], d: dict):
        self.names = list(names)
        self.parameters: np.ndarray = d["parameters"]
        self.biomarkers: dict[str, np.ndarray] = {k: d["biomarkers"][k] for k in BIOMARKERS}
        self.backend: str = d["backend"]
        self.integrator: str = d["integrator"]
        self.kernel: str = d["kernel"]
        self.note: str = d["note"]

    @property
    def cells(self) -> int:
        return self.parameters.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.biomarkers:
            return self.biomarkers[name]
        if name in self.names:
            return self.parameters[:, self.names.index(name)]
        raise KeyError(f"{name!r} is neither a biomarker ({', '.join(BIOMARKERS)}) nor a varied parameter "
                       f"({', '.join(self.names)})")

    def to_dataframe(self):
        import pandas as pd
        cols = {n: self.parameters[:, j] for j, n in enumerate(self.names)}
        cols.update(self.biomarkers)
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        return f"<heartwave.PopulationResult {self.cells} cells, varied {', '.join(self.names)}; {self.backend}>"


def _ranges(name: str, spec, with_count: bool) -> list[tuple[str, list[float]]]:
    if not isinstance(spec, dict) or not spec:
        raise TypeError(f"{name} must be a non-empty dict of parameter name -> "
                        f"{'(lo, hi, n)' if with_count else '(lo, hi)'}")
    out = []
    for k, v in spec.items():
        if not isinstance(k, str):
            raise TypeError(f"{name}: parameter names must be strings, got {k!r}")
        if not isinstance(v, (tuple, list)) or len(v) != (3 if with_count else 2):
            raise ValueError(f"{name}[{k!r}] must be {'(lo, hi, n)' if with_count else '(lo, hi)'}, got {v!r}")
        lo = _check.number(f"{name}[{k!r}] lo", v[0])
        hi = _check.number(f"{name}[{k!r}] hi", v[1])
        if hi < lo:
            raise ValueError(f"{name}[{k!r}]: hi {hi} is below lo {lo}")
        vals = [lo, hi]
        if with_count:
            vals.append(float(_check.integer(f"{name}[{k!r}] n", v[2], minimum=1)))
        out.append((k, vals))
    return out


def _table(table) -> tuple[list[str], np.ndarray]:
    if isinstance(table, (str, os.PathLike)):
        names, values = _core.csv_design(os.fspath(table))
        return list(names), values
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):  # a pandas DataFrame
        names = [str(c) for c in table.columns]
        return names, _check.array("table", table.to_numpy(dtype=np.float64))
    if isinstance(table, dict) and table:
        names = list(table)
        cols = [_check.array(f"table[{n!r}]", table[n]).ravel() for n in names]
        if len({c.size for c in cols}) != 1:
            raise ValueError("table: every column must have the same number of cells")
        return names, np.stack(cols, axis=1)
    raise TypeError("table must be a CSV path, a pandas DataFrame or a dict of name -> values")


def population(model: Model | str, *, grid: dict | None = None, random: dict | None = None,
               lhs: dict | None = None, table=None, cells: int | None = None, seed: int = 1,
               backend: str = "auto", threads: int = 0, integrator: str = "auto", dt: float = 0.01,
               bcl: float = 1000.0, beats: int = 3, **kwargs) -> PopulationResult:
    """Runs a population and returns the last beat's biomarkers of every cell.

    Give exactly one design: grid={"g_Kr": (0.5, 1.5, 5), ...} (all combinations, scaling the
    defaults), random= or lhs={"g_Kr": (0.5, 1.5)} with cells=N (scalings, uniform or Latin
    hypercube from seed), or table= absolute values (a CSV path, a DataFrame or a dict of
    arrays). backend: auto (the GPU where one is found), cpu or cuda. Other keyword arguments
    as heartwave.pace().
    """
    given = [k for k, v in (("grid", grid), ("random", random), ("lhs", lhs), ("table", table)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one design of grid, random, lhs and table (given: {', '.join(given) or 'none'})")
    scaling = True
    if grid is not None:
        names, values = _core.grid_design(_ranges("grid", grid, True))
    elif table is not None:
        names, values = _table(table)
        scaling = False
    else:
        if cells is None:
            raise ValueError("random and lhs designs need cells=N")
        n = _check.integer("cells", cells, minimum=1)
        s = _check.integer("seed", seed, minimum=0)
        names, values = _core.random_design(_ranges("random" if random is not None else "lhs",
                                                    random if random is not None else lhs, False),
                                            n, s, lhs is not None)
    o = _options(model, integrator=integrator, dt=dt, bcl=bcl, beats=beats, **kwargs)
    backend = _check.choice("backend", backend, ("auto", "cpu", "cuda"))
    d = _core.population(o, list(names), np.ascontiguousarray(values, dtype=np.float64).ravel(), scaling,
                         backend, _check.integer("threads", threads, minimum=0))
    return PopulationResult(list(names), d)
