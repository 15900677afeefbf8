#!/usr/bin/env python3
"""Runs every example line of every `heartwave ... --help` (the lines under "Example:" or
"Examples:" that start with `heartwave `), so that a help never shows a command that fails.

    python3 tests/docs/help_examples.py --build-dir build --heartwave build/apps/heartwave/heartwave

The commands are found from the helps themselves: `heartwave --help`, then `--help` of each
command listed under "Subcommands:", recursively. Each example runs as written, in a fresh
directory laid out as tests/docs/documented_commands.py lays out a page's (the repository's
entries, ../shared beside it, `heartwave` first on PATH), in the order the helps list them
(a later example may read what an earlier one wrote). Three exceptions, each printed:
  - `heartwave run ...` and `heartwave live ...` get `--check` appended: the full pre-run check (models, names,
    geometry, memory, dt, regions) without the minutes of stepping;
  - an example that needs a GPU (`--backend cuda`, `--gpus`, `bench population`) is skipped without one;
An example shown by two helps (a group's and its command's) runs once.
  - an example that names ../shared is skipped when the shared data is absent;
  - `run ... --restart CKPT` is skipped when CKPT is absent (the run that writes it ran
    with --check).
Also checked: a command's help shows its own examples, not the top-level ones.
Exit status 0 when every example ran with exit 0, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from documented_commands import gpu_present, make_farm, tail  # noqa: E402

TIMEOUT_S = 240


def help_text(hw: Path, words: list[str], env: dict) -> str:
    r = subprocess.run([str(hw), *words, "--help"], capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        raise SystemExit(f"heartwave {' '.join(words)} --help exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def subcommands(text: str) -> list[str]:
    m = re.search(r"^Subcommands:\n((?:  \S.*\n)+)", text, re.M | re.I)
    return [line.split()[0] for line in m.group(1).splitlines()] if m else []


def examples(text: str) -> list[str]:
    """The example commands of a help: the lines after "Example(s):" that start with
    `heartwave ` (indented or inline), without their # comments."""
    out = []
    m = re.search(r"^Examples?:(.*)$", text, re.M)
    if not m:
        return out
    rest = [m.group(1)] + text[m.end():].splitlines()
    for line in rest:
        line = line.strip()
        if not line.startswith("heartwave "):
            if out:
                break
            continue
        out.append(line.split("  #")[0].split(" #")[0].strip())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True, type=Path)
    ap.add_argument("--heartwave", required=True, type=Path)
    ap.add_argument("--shared", type=Path, default=None)
    a = ap.parse_args()
    shared = a.shared.resolve() if a.shared and a.shared.is_dir() else None
    gpu = gpu_present()
    failed = ran = skipped = 0
    with tempfile.TemporaryDirectory(prefix="hw_help_") as tmp:
        root = make_farm(Path(tmp), a.build_dir.resolve(), a.heartwave.resolve(), shared)
        env = dict(os.environ, PATH=f"{Path(tmp) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        hw = Path(tmp) / "bin" / "heartwave"
        top = help_text(hw, [], env)
        top_examples = set(examples(top))
        todo: list[tuple[list[str], str]] = [([], top)]
        queue = [[c] for c in subcommands(top)]
        while queue:
            words = queue.pop(0)
            text = help_text(hw, words, env)
            todo.append((words, text))
            queue += [words + [c] for c in subcommands(text)]
        seen: set[str] = set()  # an example shown by two helps runs once
        for words, text in todo:
            mine = examples(text)
            name = " ".join(["heartwave", *words])
            if words and mine and set(mine) == top_examples:
                print(f"FAIL {name} --help shows the top-level examples, not its own")
                failed += 1
            for ex in mine:
                argv = shlex.split(ex)
                if argv[1] in ("run", "live") and "--check" not in argv:
                    argv.append("--check")
                shown = shlex.join(argv)
                if shown in seen:
                    continue
                seen.add(shown)
                if not gpu and (shown.find("--backend cuda") >= 0 or "--gpus" in argv or argv[1:3] == ["bench", "population"]):
                    print(f"skip {shown}  (needs a GPU)")
                    skipped += 1
                    continue
                if argv[1] == "run" and "--restart" in argv[:-1] \
                        and not (root / argv[argv.index("--restart") + 1]).exists():
                    print(f"skip {shown}  (its checkpoint comes from the example before, which ran with --check)")
                    skipped += 1
                    continue
                if shared is None and "../shared" in ex:
                    print(f"skip {shown}  (needs ../shared)")
                    skipped += 1
                    continue
                try:
                    r = subprocess.run(argv, cwd=root, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
                    rc, out = r.returncode, r.stdout + r.stderr
                except subprocess.TimeoutExpired:
                    rc, out = -1, f"timed out after {TIMEOUT_S} s"
                ran += 1
                if rc != 0:
                    failed += 1
                    print(f"FAIL {shown}  (from {name} --help): exit {rc}\n{tail(out)}")
                else:
                    print(f"ok   {shown}")
    print(f"{ran} examples ran, {skipped} skipped, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
