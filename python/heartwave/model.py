"""Cell models: a CellML or .hwm file, or a built-in by name, as the model compiler sees it."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import _check, _core


@dataclass(frozen=True)
class State:
    """A state variable: its initial value (model units) and whether it is a gate."""
    name: str
    units: str
    initial: float
    gate: bool
    component: str
    description: str


@dataclass(frozen=True)
class Parameter:
    """A parameter and its default value (model units)."""
    name: str
    units: str
    value: float
    component: str
    description: str


@dataclass(frozen=True)
class Algebraic:
    """A variable computed from the states and parameters."""
    name: str
    units: str
    component: str
    description: str


@dataclass(frozen=True)
class Repair:
    """A removable singularity the compiler repaired (0/0 at `point` in `variable`)."""
    where: str
    variable: str
    point: float
    half_width: float
    method: str


class Model:
    """A cell model, loaded and analysed.

    >>> m = heartwave.Model("tentusscher_2006_epi")        # a built-in
    >>> m = heartwave.Model("luo_rudy_1991.cellml")         # a CellML 1.0/1.1/2.0 file (or SBML, or .hwm)
    >>> [s.name for s in m.states if s.gate]

    `roles` overrides what metadata and name rules found, e.g. {"voltage": "V_m",
    "stimulus_current": "i_stim", "calcium": "Cai"}. Problems in the file raise
    heartwave.InputError with .file, .line and .column.
    """

    def __init__(self, source: str | os.PathLike, roles: dict[str, str] | None = None):
        self.source = _check.path_or_name("source", source)
        if roles is not None and not isinstance(roles, dict):
            raise TypeError(f"roles must be a dict of role -> variable name, got {type(roles).__name__}")
        self.roles = dict(roles or {})
        for k, v in self.roles.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"roles: names must be strings, got {k!r}: {v!r}")
        self._m = _core.LoadedModel.load(self.source, self.roles)
        self.name: str = self._m.name
        self.builtin: bool = bool(self._m.builtin)
        self.states = [State(d["name"], d["units"], d["initial"], d["gate"], d["component"], d["description"])
                       for d in self._m.states]
        self.parameters = [Parameter(d["name"], d["units"], d["value"], d["component"], d["description"])
                           for d in self._m.parameters]
        self.algebraics = [Algebraic(d["name"], d["units"], d["component"], d["description"])
                           for d in self._m.algebraics]
        self.repairs = [Repair(**d) for d in self._m.repairs]
        self.linear_blocks: list[list[str]] = self._m.linear_blocks
        self.warnings: list[str] = self._m.warnings
        self.role_summary: str = self._m.roles

    @property
    def state_names(self) -> list[str]:
        return [s.name for s in self.states]

    @property
    def parameter_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def gates(self) -> list[str]:
        """States whose equation is dy/dt = a - b*y (Rush-Larsen integrates them exactly)."""
        return [s.name for s in self.states if s.gate]

    @property
    def initial_state(self) -> np.ndarray:
        return np.array([s.initial for s in self.states])

    def defaults(self) -> dict[str, float]:
        """Parameter name -> default value."""
        return {p.name: p.value for p in self.parameters}

    def to_cpp(self) -> str:
        """The C++ the model compiler prints for this model (after its passes)."""
        return self._m.print_cpp()

    def to_cuda(self) -> str:
        """A standalone CUDA file (nvcc compiles it as it is)."""
        return self._m.print_cuda()

    def to_hwm(self) -> str:
        """The model in Heartwave's own model language (as read, before the passes)."""
        return self._m.print_hwm()

    def __repr__(self) -> str:
        return (f"<heartwave.Model {self.name!r}: {len(self.states)} states ({len(self.gates)} gates), "
                f"{len(self.parameters)} parameters, {len(self.algebraics)} algebraics>")


def builtin_models() -> list[str]:
    """The names of the built-in models (heartwave model list)."""
    return list(_core.builtin_models())


def _source(model) -> tuple[str, dict[str, str]]:
    if isinstance(model, Model):
        return model.source, model.roles
    return _check.path_or_name("model", model), {}
