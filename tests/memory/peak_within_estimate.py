#!/usr/bin/env python3
"""The memory `heartwave run` says a case needs (run --check, the plan that refuses a case
larger than MemAvailable) bounds what the run really takes at its peak: a Karma box of 8 M
cells (float) run for ten steps and checkpointed, its peak resident memory (the kernel's
count, wait4) less that of the same case on 8³ cells (the program, its libraries, the
compiler's kernel cache), against the estimate. The estimate must not be below it (a case
it lets through would be killed), nor more than 2.5 times it (it would refuse cases that
fit). Usage: peak_within_estimate.py --heartwave PATH"""
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


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--heartwave", required=True)
    args = a.parse_args()
    hw = str(Path(args.heartwave).resolve())
    with tempfile.TemporaryDirectory(prefix="hw-memory-") as work:
        work = Path(work)
        rss = {}
        for n in (8, 200):
            d = work / str(n)
            d.mkdir()
            (d / "case.toml").write_text(CASE.format(n=n))
            rss[n] = peak_rss_bytes([hw, "run", "case.toml", "--backend", "cpu", "--threads", "2", "--quiet"], d)
        check = subprocess.run([hw, "run", str(work / "200" / "case.toml"), "--check", "--backend", "cpu"],
                               capture_output=True, text=True)
        said = re.search(r"memory\s+\S+ \S+ \((\d+) bytes\) needed", check.stdout)
        if said is None:
            sys.exit(f"FAIL: run --check printed no memory line:\n{check.stdout}\n{check.stderr}")
        estimate = int(said.group(1))
        measured = rss[200] - rss[8]
        print(f"[measured] Karma 200^3 float: peak RSS {rss[200] / 1e6:.1f} MB, of which {measured / 1e6:.1f} MB "
              f"above the 8^3 run's {rss[8] / 1e6:.1f} MB; run --check says {estimate / 1e6:.1f} MB "
              f"({estimate / measured:.2f} times)")
        if estimate < measured:
            sys.exit("FAIL: the estimate is below the measured peak")
        if estimate > 2.5 * measured:
            sys.exit("FAIL: the estimate is more than 2.5 times the measured peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
