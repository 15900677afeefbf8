#!/usr/bin/env python3
"""What calling Heartwave from Python costs, against the heartwave command doing the same work.

  1. a single-cell beat: hw.pace() against `heartwave cell` (both load the model, run the
     beats and hand the biomarkers back; the command also starts a process);
  2. a tissue step on a small grid: Simulation.step() called once per step from Python
     against one call for all steps (the C++ loop), and against `heartwave run`;
  3. a population: hw.population() against `heartwave sweep`, in cell-steps/s.

Each is the median of --repeat runs, Python and the command timed in turn. Prints a table (markdown with --markdown).

    PYTHONPATH=build/python .venv/bin/python bench/python_overhead.py [--cells N] [--backend cpu|cuda]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import heartwave as hw

ROOT = pathlib.Path(__file__).resolve().parents[1]


def paired(f, g, repeat):
    """Medians of f and g timed in turn, so a change of load on the machine hits both."""
    tf, tg = [], []
    for _ in range(repeat):
        for fn, ts in ((f, tf), (g, tg)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return statistics.median(tf), statistics.median(tg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--heartwave", default=os.environ.get("HEARTWAVE_CLI", str(ROOT / "build/apps/heartwave/heartwave")))
    ap.add_argument("--cells", type=int, default=10_000, help="population size (TT06)")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    cli = a.heartwave
    rows = []

    def run_cli(*args):
        subprocess.run([cli, *map(str, args)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # 1. Single-cell beats: 1 and 10 beats of TT06 (rl2, dt 0.01 ms), no trace file. The
    #    binding's own cost is the call's wall time less the time inside the library.
    for beats in (1, 10):
        inside = []

        def call():
            inside.append(hw.pace("tentusscher_2006_epi", beats=beats, record_interval=1000).seconds)
        py, c = paired(call, lambda: run_cli("cell", "tentusscher_2006_epi", "--beats", beats, "--json"), a.repeat)
        rows.append((f"TT06 cell, {beats} beat(s)", f"{py * 1e3:.1f} ms", f"{c * 1e3:.1f} ms",
                     f"{100 * (py - c) / c:+.1f} %"))
        lib = statistics.median(inside)
        rows.append((f"  of which the binding (wall - library)", f"{(py - lib) * 1e3:.2f} ms",
                     "", f"{100 * (py - lib) / lib:+.2f} %"))

    # 2. Tissue steps: Aliev-Panfilov on 100 x 100 cells, 2000 steps.
    case = {"name": "overhead", "grid": {"length": [30.0, 30.0], "spacing": 0.3},
            "conductivity": {"diffusivity": 1.0, "chi": 140, "cm": 0.01}, "model": [{"name": "aliev_panfilov_1996"}],
            "stimulus": [{"region": {"kind": "box", "lo": [0, 0], "hi": [1.5, 30]}, "start": 0, "duration": 1,
                          "amplitude": 1.0}],
            "time": {"dt": 0.02, "t_end": 40, "integrator": "rl1"},
            "output": {"directory": tempfile.mkdtemp(), "field_interval": 0}}
    c = hw.Case.from_dict(case)
    steps = 2000

    def per_step():
        s = hw.Simulation(c, backend=a.backend)
        for _ in range(steps):
            s.step()

    def one_call():
        s = hw.Simulation(c, backend=a.backend)
        s.step(steps)

    loop, batch = paired(per_step, one_call, a.repeat)
    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "case.toml"
        p.write_text(c.text)
        _, cmd = paired(one_call, lambda: run_cli("run", p, "--backend", a.backend, "--quiet", "--set",
                                                  f"output.directory=\"{d}/out\""), a.repeat)
    rows.append((f"tissue 100x100, {steps} steps, one call", f"{batch * 1e3:.1f} ms", f"{cmd * 1e3:.1f} ms",
                 f"{100 * (batch - cmd) / cmd:+.1f} %"))
    rows.append((f"tissue 100x100, {steps} steps, a call per step", f"{loop * 1e3:.1f} ms",
                 f"{(loop - batch) / steps * 1e6:.2f} us/call more", f"{100 * (loop - batch) / batch:+.1f} %"))

    # 3. A population of TT06 cells, one beat, scaled g_Kr by LHS.
    n = a.cells
    cell_steps = n * 1000 / 0.01
    with tempfile.TemporaryDirectory() as d:
        py, c = paired(lambda: hw.population("tentusscher_2006_epi", lhs={"g_Kr": (0.5, 1.5)}, cells=n, seed=1,
                                             backend=a.backend, integrator="rl2", beats=1),
                       lambda: run_cli("sweep", "tentusscher_2006_epi", "--lhs", "g_Kr=0.5:1.5", "--cells", n,
                                       "--seed", 1, "--backend", a.backend, "-i", "rl2", "--beats", 1,
                                       "-o", f"{d}/bio.csv"), max(1, a.repeat // 2))
    rows.append((f"TT06 population, {n} cells, 1 beat ({a.backend})", f"{cell_steps / py:.3g} cell-steps/s",
                 f"{cell_steps / c:.3g} cell-steps/s", f"{100 * (py - c) / c:+.1f} %"))

    head = ("work", "Python", "heartwave command", "Python vs command (time)")
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        for r in (head, *rows):
            print("  ".join(str(x).ljust(k) for x, k in zip(r, w)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
