#!/usr/bin/env python3
"""Writes the API reference of docs/python.md from the package's docstrings and signatures
(between the markers <!-- api:begin --> and <!-- api:end -->). --check: exit 1 when the page
is not what the docstrings give (a test runs this).

    PYTHONPATH=build/python .venv/bin/python tools/python_api_doc.py [--check]
"""
import inspect
import pathlib
import sys

import heartwave as hw

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "python.md"
BEGIN, END = "<!-- api:begin -->", "<!-- api:end -->"


def doc(obj) -> str:
    d = inspect.getdoc(obj) or ""
    return d.strip()


def signature(obj) -> str:
    """The signature with its annotations as written (the modules postpone them: strings)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(annotation=p.annotation if not isinstance(p.annotation, str) else _Raw(p.annotation))
              for p in sig.parameters.values()]
    ret = sig.return_annotation
    sig = sig.replace(parameters=params, return_annotation=_Raw(ret) if isinstance(ret, str) else ret)
    return str(sig).replace("'", '"')


class _Raw:
    """An annotation printed as its text, without quotes."""

    def __init__(self, text: str):
        self.text = text.strip("'\"")

    def __repr__(self) -> str:
        return self.text


def reference() -> str:
    out = []
    for name in hw.__all__:
        obj = getattr(hw, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            out.append(f"### `heartwave.{name}` (exception)\n\n{doc(obj)}\n")
            continue
        if inspect.isclass(obj):
            out.append(f"### `heartwave.{name}{signature(obj)}`\n\n{doc(obj)}\n")
            for mname, m in inspect.getmembers(obj):
                if mname.startswith("_"):
                    continue
                if isinstance(inspect.getattr_static(obj, mname), property):
                    d = doc(inspect.getattr_static(obj, mname))
                    out.append(f"- `{mname}` (property){': ' + d if d and d != doc(property) else ''}")
                elif callable(m):
                    d = doc(m).split("\n\n")[0].replace("\n", " ")
                    out.append(f"- `{mname}{signature(m)}`{': ' + d if d else ''}")
            out.append("")
        elif callable(obj):
            out.append(f"### `heartwave.{name}{signature(obj)}`\n\n{doc(obj)}\n")
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    text = PAGE.read_text()
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:a] + "\n" + reference() + text[b:]
    if "--check" in sys.argv:
        if new != text:
            print(f"{PAGE} is out of date with the docstrings: run tools/python_api_doc.py")
            return 1
        return 0
    PAGE.write_text(new)
    print(f"wrote the API reference of {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
