"""A case as a Python dict written as TOML text, which the case reader then validates
exactly as a file (the same keys, the same located errors)."""
from __future__ import annotations

import json
import math
import numbers


def _key(k) -> str:
    if not isinstance(k, str):
        raise TypeError(f"case keys must be strings, got {k!r}")
    return k if k and all(c.isalnum() or c in "-_" for c in k) else json.dumps(k)


def _value(v, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return _value(v.tolist(), where)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x, f'{where}.{k}')}" for k, x in v.items()) + "}"
    raise TypeError(f"case key {where}: {type(v).__name__} is not a TOML value (numbers, strings, booleans, "
                    f"lists and dicts are)")


def _is_table_array(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, dict) for x in v)


def dumps(case: dict) -> str:
    if not isinstance(case, dict):
        raise TypeError(f"a case must be a dict, got {type(case).__name__}")
    lines: list[str] = []

    def table(d: dict, path: str) -> None:
        plain = [(k, v) for k, v in d.items() if not isinstance(v, dict) and not _is_table_array(v)]
        for k, v in plain:
            lines.append(f"{_key(k)} = {_value(v, f'{path}{k}')}")
        for k, v in d.items():
            name = f"{path}{_key(k)}"
            if isinstance(v, dict):
                lines.append(f"\n[{name}]")
                table(v, name + ".")
            elif _is_table_array(v):
                for item in v:
                    lines.append(f"\n[[{name}]]")
                    table(item, name + ".")

    table(case, "")
    return "\n".join(lines) + "\n"


def literal(v) -> str:
    """A --set value: key=VALUE with VALUE as TOML."""
    return _value(v, "override")
