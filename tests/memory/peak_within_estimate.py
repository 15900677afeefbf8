#!/usr/bin/env python3
"""The memory `heartwave run` says a case needs (run --check, the plan that refuses a case
larger than MemAvailable) bounds what the run really takes at its peak. Two cases, each
run for a few steps and checkpointed: a Karma box of 8 M cells (2 states) and the
N-version slab at 0.1 mm (TT06, 19 states, probes and maps), both in float. Each one's
peak resident memory (the kernel's count, wait4), less that of the same case on a tiny
grid (the program, its libraries, the compiled kernels), is held against the estimate. The
estimate must not be below it (a case it lets through would be killed), nor more than 2.5
times it (it would refuse cases that fit). Usage: peak_within_estimate.py --heartwave PATH"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = """[grid]
size = [{n}, {n}, {n}]
spacing = 0.6
[[model]]
name = "karma1993"
[time]
dt = 0.05
t_end = 0.5
integrator = "fe"
precision = "float"
[output]
directory = "out"
"""


def peak_rss_bytes(cmd, cwd):
    """Runs cmd and returns its exit code and its peak resident set (ru_maxrss, KiB on Linux)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    out = p.stdout.read()
    p.stdout.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {code}\n{out}")
    return usage.ru_maxrss * 1024


def estimate_bytes(hw, case, extra):
    check = subprocess.run([hw, "run", str(case), "--check", "--backend", "cpu", *extra], capture_output=True, text=True)
    said = re.search(r"memory\s+\S+ \S+ \((\d+) bytes\) needed", check.stdout)
    if said is None:
        sys.exit(f"FAIL: run --check printed no memory line:\n{check.stdout}\n{check.stderr}")
    return int(said.group(1))


def check(hw, work, name, case, big, small):
    """case: the case file; big, small: --set overrides of the measured and the tiny run."""
    rss = {}
    for label, sets in (("big", big), ("small", small)):
        d = work / f"{name}-{label}"
        d.mkdir()
        args = [a for kv in sets for a in ("--set", kv)]
        rss[label] = peak_rss_bytes([hw, "run", str(case), "--backend", "cpu", "--threads", "2", "--quiet",
                                     "--set", f"output.directory={d / 'out'}", *args], d)
    estimate = estimate_bytes(hw, case, [a for kv in big for a in ("--set", kv)])
    measured = rss["big"] - rss["small"]
    print(f"[measured] {name}: peak RSS {rss['big'] / 1e6:.1f} MB, of which {measured / 1e6:.1f} MB above the tiny "
          f"run's {rss['small'] / 1e6:.1f} MB; run --check says {estimate / 1e6:.1f} MB ({estimate / measured:.2f} times)")
    if estimate < measured:
        sys.exit(f"FAIL: {name}: the estimate is below the measured peak")
    if estimate > 2.5 * measured:
        sys.exit(f"FAIL: {name}: the estimate is more than 2.5 times the measured peak")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--heartwave", required=True)
    args = a.parse_args()
    hw = str(Path(args.heartwave).resolve())
    niederer = Path(__file__).resolve().parents[2] / "examples" / "niederer.toml"
    with tempfile.TemporaryDirectory(prefix="hw-memory-") as work:
        work = Path(work)
        (work / "karma.toml").write_text(CASE.format(n=200))
        check(hw, work, "Karma 200^3 float", work / "karma.toml", [], ["grid.size=[8, 8, 8]"])
        slab = ["time.t_end=0.1", "time.dt=0.01", "time.precision=float"]
        check(hw, work, "N-version slab 0.1 mm, TT06 float", niederer, ["grid.spacing=0.1", *slab],
              ["grid.spacing=1", *slab])
    return 0


if __name__ == "__main__":
    sys.exit(main())
