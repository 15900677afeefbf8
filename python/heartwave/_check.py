"""Argument checks with messages that say what was given and what is expected.

Every public function checks its arguments here before the C++ library sees them, so a
wrong type or value is a Python exception naming the argument, never a crash.
"""
from __future__ import annotations

import math
import numbers
import os

import numpy as np


def number(name: str, value, *, positive: bool = False, nonnegative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if positive and not v > 0:
        raise ValueError(f"{name} must be > 0, got {v}")
    if nonnegative and v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v


def integer(name: str, value, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def choice(name: str, value, options) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(options)}; got {value!r}")
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def path_or_name(name: str, value) -> str:
    if isinstance(value, (str, os.PathLike)):
        s = os.fspath(value)
        if not s:
            raise ValueError(f"{name} must not be empty")
        return s
    raise TypeError(f"{name} must be a file path or a built-in model's name, got {type(value).__name__}")


def array(name: str, value, *, shape: tuple[int, ...] | None = None, allow_nan: bool = False) -> np.ndarray:
    """value as a C-contiguous float64 array (scalars broadcast to `shape`)."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be numbers (an array or a scalar): {e}") from None
    if shape is not None:
        if a.ndim == 0:
            a = np.full(shape, float(a))
        elif a.shape != tuple(shape):
            raise ValueError(f"{name} has shape {a.shape}, expected {tuple(shape)}")
    if not allow_nan and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has values that are not finite")
    if allow_nan and np.any(np.isinf(a)):
        raise ValueError(f"{name} has infinite values (NaN means 'leave as it is')")
    return np.ascontiguousarray(a)


def params(value) -> list[tuple[str, float]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise TypeError(f"params must be a dict of parameter name -> value, got {type(value).__name__}")
    out = []
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"params: parameter names must be strings, got {k!r}")
        out.append((k, number(f"params[{k!r}]", v)))
    return out
