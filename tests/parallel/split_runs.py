#!/usr/bin/env python3
"""One simulation split over MPI ranks gives one rank's bits (docs/parallel.md).

Each check runs a small case with `heartwave run` on one rank (no mpirun) and under
`mpirun -np 2` and `-np 3 --oversubscribe`, and compares what the runs wrote byte for byte:
the checkpoint's canonical state (every state and V in the run's precision) and its outputs'
accumulators (maps, probe and ECG text), probes.csv, ecg.csv, maps.vti and the field frames.
Also: restarts onto another rank count (2 -> 1, 1 -> 3), a rank killed mid-run and a rank
stopped mid-run (the others stop, no hang), more ranks than slabs, and `heartwave run --ranks N` starting mpirun itself.

Usage: split_runs.py --heartwave BIN CHECK   (CHECK: box, heart, implicit (and the fourth-order
stencil), restart, faults,
ranks-flag, sweep (a population's cells over ranks), or all). Exit 77 (skipped) when mpirun is missing or the build has no MPI.

On GPUs (tools/device/multi-gpu.sh): --backend cuda --ranks 2,4 runs the same checks with one
GPU per rank (one rank: the unsplit CUDA engine) and, for faults, more ranks than GPUs.
"""
import argparse
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77

# Open MPI as root in a container: allowed, shared memory without CMA (ptrace is often denied).
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "HEARTWAVE_PROGRESS": "0",
}

BOX = """
name = "split-box"
[grid]
length = [10, 8, 6]
spacing = 0.5
boundary = "no-flux"
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[[model]]                     # a region with its own parameters: a second part
name = "aliev_panfilov_1996"
region = { kind = "box", lo = [0, 4, 0], hi = [10, 8, 3] }
params = { k = 7.0 }
[[gradient]]                  # per-cell parameters along z, across the slabs
param = "k"
axis = "z"
from = 1.0
to = 1.3
[[stimulus]]                  # S1
region = { kind = "face", face = "x-", depth = 0.5 }
amplitude = 1
duration = 1
[[stimulus]]                  # S2, later, in one corner
region = { kind = "sphere", centre = [5, 2, 3], radius = 1.5 }
amplitude = 1
start = 6
duration = 1
[time]
dt = 0.04
t_end = 10
[output]
directory = "out"
fields = ["V", "v"]
field_interval = 2.5
probes = [{ name = "a", position = [2, 2, 1] }, { name = "b", position = [8, 6, 5] }]
probe_interval = 0.4
activation_map = true
activation_threshold = 0.5   # the model is dimensionless (V from 0 to 1)
apd_map = true
electrodes = [{ name = "e1", position = [12, 4, 3] }, { name = "e2", position = [-2, 4, 3] }]
"""

HEART = """
name = "split-heart"
[grid]
length = [12, 12, 12]
spacing = 0.4
boundary = "no-flux"
[geometry]
kind = "ellipsoid-shell"
centre = [6, 6, 6]
radii_outer = [5.5, 5.5, 5.8]
radii_inner = [3.5, 3.5, 4.0]
[fibres]
kind = "rotating"
axis = "z"
[conductivity]
sigma_l = 0.3
sigma_t = 0.1
[[model]]
name = "aliev_panfilov_1996"
[[stimulus]]
region = { kind = "sphere", centre = [6, 1, 6], radius = 1.5 }
amplitude = 1
duration = 1
[time]
dt = 0.02
t_end = 6
splitting = "strang"
[output]
directory = "out"
fields = ["V"]
field_interval = 3
format = "hdf5"   # the HDF5 series (fields.h5, fields.xdmf), compared byte for byte like the rest
probes = [{ name = "wall", position = [6, 1.2, 6] }]
probe_interval = 0.2
activation_map = true
activation_threshold = 0.5   # the model is dimensionless (V from 0 to 1)
"""

IMPLICIT = """
name = "split-implicit"
[grid]
length = [8, 6, 4]
spacing = 0.25
boundary = "no-flux"
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[[stimulus]]
region = { kind = "face", face = "x-", depth = 0.5 }
amplitude = 1
duration = 1
[time]
dt = 0.1
t_end = 5
diffusion = "crank-nicolson"
precision = "double"
cg_tolerance = 1e-10
[output]
directory = "out"
fields = ["V"]
field_interval = 2.5
probes = [{ name = "a", position = [4, 3, 2] }]
probe_interval = 0.5
activation_map = true
activation_threshold = 0.5   # the model is dimensionless (V from 0 to 1)
"""

# The fourth-order stencil (a whole-field operator on the cpu: V gathered, ghost width 2).
FOURTH = IMPLICIT.replace('diffusion = "crank-nicolson"', 'diffusion = "explicit"').replace(
    "dt = 0.1", "dt = 0.005").replace("cm = 0.01", 'cm = 0.01\nstencil = "fourth"').replace("t_end = 5", "t_end = 4")

# The heart in compressed rows with oblique fibres, Crank-Nicolson: the split CG on rows of
# unequal length (cpu) or the whole-field CG on every GPU.
HEART_IMPLICIT = HEART.replace('splitting = "strang"', 'splitting = "strang"\ndiffusion = "crank-nicolson"\n'
                               'precision = "double"\ncg_tolerance = 1e-10').replace("dt = 0.02", "dt = 0.1")

# The shell with a phase-field boundary (explicit): V + a·(L_{φσ} V)/φ, a whole-field
# operator on the cpu applied to each rank's rows.
HEART_PHASE = HEART.replace('radii_inner = [3.5, 3.5, 4.0]', 'radii_inner = [3.5, 3.5, 4.0]\nphase_field = true')

# Two planes across y: at most two slabs.
THIN = """
[grid]
length = [10, 1]
spacing = 0.5
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.04
t_end = 1
"""


def canonical(ckpt: Path):
    """The checkpoint's state and outputs blocks (its header and origin carry run ids)."""
    b = ckpt.read_bytes()
    state_size = struct.unpack_from("<Q", b, 56)[0]
    origin = struct.unpack_from("<Q", b, 72)[0]
    start = 80 + origin
    return b[start:start + state_size], b[start + state_size:]


class Runner:
    def __init__(self, heartwave, work, backend="cpu", ranks=(2, 3)):
        self.hw = heartwave
        self.work = Path(work)
        self.env = dict(os.environ, **MPI_ENV)
        self.backend = backend
        self.ranks = ranks

    def run(self, case_text, name, ranks, extra=(), expect=0):
        d = self.work / name
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        (d / "case.toml").write_text(case_text)
        return self.run_in(d, ranks, ["case.toml", *extra], expect)

    def run_in(self, d, ranks, args, expect=0, backend=None):
        # Split on GPUs, the run's description is kept: it says what carried the halos.
        on_gpus = (backend or self.backend) == "cuda" and ranks > 1
        cmd = [self.hw, "run", "--backend", backend or self.backend, *([] if on_gpus else ["--quiet"]), *args]
        if ranks > 1:
            cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", *cmd]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=d, env=self.env, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
        if p.returncode != expect:
            sys.exit(f"FAIL: {' '.join(map(str, cmd))} in {d}: exit {p.returncode} (expected {expect})\n"
                     f"{p.stdout}\n{p.stderr}")
        carrier = re.search(r"halos by (peer stores|NCCL [0-9.]+|host memory)", p.stdout) if on_gpus else None
        print(f"  {ranks} rank(s): {took:.1f} s  ({' '.join(args)})" + (f"; halos by {carrier.group(1)}" if carrier else ""))
        return d, p


def same_outputs(one: Path, other: Path, what: str):
    a_state, a_out = canonical(one / "out" / "checkpoint.hwck")
    b_state, b_out = canonical(other / "out" / "checkpoint.hwck")
    problems = []
    if a_state != b_state:
        problems.append(f"the canonical state differs ({len(a_state)} bytes)")
    if a_out != b_out:
        problems.append("the outputs' accumulators differ (maps, probe/ECG text)")
    files = sorted(f.name for f in (one / "out").iterdir()
                   if f.name not in ("run.json", "checkpoint.hwck") and not f.name.endswith(".png"))
    for name in files:
        fb = other / "out" / name
        if not fb.exists():
            problems.append(f"{name} missing")
        elif (one / "out" / name).read_bytes() != fb.read_bytes():
            problems.append(f"{name} differs")
    if problems:
        sys.exit(f"FAIL: {what}: " + "; ".join(problems))
    print(f"  {what}: bit-identical (state {len(a_state)} bytes; {', '.join(files)})")


def excited(d: Path):
    """The wave reached some cells (maps_summary.csv counts them): the comparison is not of rest states."""
    for line in (d / "out" / "maps_summary.csv").read_text().splitlines():
        parts = line.split(",")
        if parts[0] == "activated_cells" and float(parts[1]) > 0:
            return float(parts[1])
    sys.exit(f"FAIL: no cell activated in {d} (the case tests nothing)")


def numbers(path: Path):
    out = []
    for line in path.read_text().splitlines()[1:]:
        for x in line.split(",")[1:]:
            try:
                out.append(float(x))
            except ValueError:
                pass
    return out


def within_cg_tolerance(one: Path, other: Path, what: str, bound: float):
    """The GPU's CG sums its dot products with atomics, in no fixed order: two runs of one GPU
    differ by the solver's tolerance, and so do N ranks and one (docs/parallel.md)."""
    a, b = numbers(one / "out" / "probes.csv"), numbers(other / "out" / "probes.csv")
    if len(a) != len(b) or not a:
        sys.exit(f"FAIL: {what}: probes.csv has {len(a)} and {len(b)} values")
    worst = max(abs(x - y) for x, y in zip(a, b))
    ma, mb = (one / "out" / "maps_summary.csv").read_text(), (other / "out" / "maps_summary.csv").read_text()
    act = lambda t: next(l for l in t.splitlines() if l.startswith("activated_cells"))
    if worst > bound or act(ma) != act(mb):
        sys.exit(f"FAIL: {what}: probes differ by {worst:.3g} (bound {bound:g}) or activated cells "
                 f"{act(ma)} vs {act(mb)}")
    print(f"  {what}: probes within {worst:.3g} (bound {bound:g}), {act(ma)} in both")


def check_same_as_one_rank(r: Runner, case_text, name):
    one, _ = r.run(case_text, f"{name}-1", 1)
    print(f"  {excited(one):.0f} cells activated")
    if r.backend == "cuda" and "crank-nicolson" in case_text:
        again, _ = r.run(case_text, f"{name}-1b", 1)
        within_cg_tolerance(one, again, f"{name}: one GPU twice", 1e-6)
        for n in r.ranks:
            d, _ = r.run(case_text, f"{name}-{n}", n)
            within_cg_tolerance(one, d, f"{name}: {n} ranks against 1", 1e-6)
        return
    for n in r.ranks:
        d, _ = r.run(case_text, f"{name}-{n}", n)
        same_outputs(one, d, f"{name}: {n} ranks against 1")
        for f in (d / "out").iterdir():
            if f.name.startswith("heartwave-rank"):
                sys.exit(f"FAIL: {f} left behind")


def check_restart(r: Runner):
    whole, _ = r.run(BOX, "restart-whole", 1)
    for first, second in ((r.ranks[0], 1), (1, r.ranks[-1])):
        d, _ = r.run(BOX, f"restart-{first}-{second}", first, ["--set", "time.t_end=5"])
        r.run_in(d, second, ["--restart", "out/checkpoint.hwck", "--set", "time.t_end=10"])
        same_outputs(whole, d, f"restart {first} -> {second} ranks against one uninterrupted rank")
    # Onto another backend: a split run's checkpoint continues on one rank of the reference
    # engine as the one-rank run's checkpoint does (the canonical state is the same bytes).
    for first in (1, r.ranks[0]):
        d, _ = r.run(BOX, f"restart-{first}-reference", first, ["--set", "time.t_end=5"])
        r.run_in(d, 1, ["--restart", "out/checkpoint.hwck", "--set", "time.t_end=6"], backend="reference")
    same_outputs(r.work / "restart-1-reference", r.work / f"restart-{r.ranks[0]}-reference",
                 f"restart {r.ranks[0]} ranks ({r.backend}) -> 1 rank (reference) against 1 -> 1")


def children(pid):
    kids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(p.name))
    return kids


def rank_of(pid):
    try:
        env = (Path("/proc") / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for e in env:
        if e.startswith(b"OMPI_COMM_WORLD_RANK="):
            return int(e.split(b"=", 1)[1])
    return None


def check_faults(r: Runner):
    if r.backend == "cuda":
        # More ranks than GPUs: one clear line, exit 1. (More ranks than slabs is the cpu's
        # check: the decomposition is the same code.)
        many = r.ranks[-1] + 1
        d, p = r.run(THIN.replace("[10, 1]", "[10, 10]"), "too-many-gpus", many, expect=1)
        if "GPU" not in p.stderr or "per host" not in p.stderr:
            sys.exit(f"FAIL: more ranks than GPUs: no clear message:\n{p.stderr}")
        print(f"  {many} ranks on {r.ranks[-1]} GPUs: " + next(l for l in p.stderr.splitlines() if "per host" in l).strip())
    else:
        # More ranks than slabs: one clear line, exit 1, no hang.
        d, p = r.run(THIN, "too-many", 3, expect=1)
        if "cannot split the grid into 3 slabs" not in p.stderr:
            sys.exit(f"FAIL: more ranks than slabs: no clear message:\n{p.stderr}")
        print("  3 ranks on 2 planes: " + next(l for l in p.stderr.splitlines() if "cannot split" in l).strip())
    # A rank killed mid-run: mpirun ends the others and exits non-zero.
    mp, t0, err = signal_rank_1(r, "killed", signal.SIGKILL, {})
    if mp.returncode == 0:
        sys.exit("FAIL: rank 1 was killed and mpirun exited 0")
    line = next((l.strip() for l in err.splitlines() if "rank 1" in l or "signal 9" in l), err.strip()[:200])
    print(f"  rank 1 killed: mpirun exited {mp.returncode} after {time.monotonic() - t0:.1f} s: {line}")
    # A rank that hangs (stopped, not dead): the others stop waiting after HEARTWAVE_RANK_TIMEOUT
    # (MPI's waits on the cpu, the watchdog of comm/watchdog.hpp on GPUs).
    mp, t0, err = signal_rank_1(r, "stopped", signal.SIGSTOP, {"HEARTWAVE_RANK_TIMEOUT": "3"})
    line = next((l.strip() for l in err.splitlines() if "waited 3 s for the other ranks" in l), None)
    if mp.returncode == 0 or line is None:
        sys.exit(f"FAIL: rank 1 stopped: mpirun exited {mp.returncode} without the timeout's line:\n{err[-2000:]}")
    print(f"  rank 1 stopped: mpirun exited {mp.returncode} after {time.monotonic() - t0:.1f} s: {line}")


def check_interrupt(r: Runner):
    """Ctrl-C on mpirun: every rank stops at the same step with one checkpoint, as one rank
    does, and that checkpoint continues on one rank to the bits of an uninterrupted run."""
    d = r.work / "interrupt"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    case = BOX.replace("t_end = 10", "t_end = 100000").replace("field_interval = 2.5", "field_interval = 50")
    (d / "case.toml").write_text(case)
    n = r.ranks[0]
    mp = subprocess.Popen(["mpirun", "-np", str(n), "--oversubscribe", r.hw, "run", "--backend", r.backend, "--quiet",
                           "case.toml"], cwd=d, env=r.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Once the run steps: probes.csv has a row past its header and the one at t = 0 (the
    # file itself is written before the first step, while a GPU run may still be tuning).
    deadline = time.monotonic() + 60
    probes = d / "out" / "probes.csv"
    while time.monotonic() < deadline and not (probes.exists() and probes.read_text().count("\n") >= 3):
        time.sleep(0.2)
    t0 = time.monotonic()
    mp.send_signal(signal.SIGINT)
    try:
        out, err = mp.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        mp.kill()
        sys.exit("FAIL: Ctrl-C on mpirun: the ranks did not stop")
    said = re.search(r"stopped by signal \d+ at t = ([0-9.]+) ms; checkpoint out/checkpoint.hwck", out + err)
    if said is None or not (d / "out" / "checkpoint.hwck").exists():
        sys.exit(f"FAIL: Ctrl-C on mpirun (exit {mp.returncode}): no checkpoint line\n{out}\n{err[-2000:]}")
    print(f"  Ctrl-C on mpirun, {n} ranks: exit {mp.returncode} after {time.monotonic() - t0:.1f} s: {said.group(0)}")
    t_end = f"{float(said.group(1)) + 2:.6g}"
    r.run_in(d, 1, ["--restart", "out/checkpoint.hwck", "--set", f"time.t_end={t_end}"])
    whole, _ = r.run(case, "interrupt-whole", 1, ["--set", f"time.t_end={t_end}"])
    same_outputs(whole, d, f"interrupted on {n} ranks, continued on 1, against one uninterrupted rank")


def signal_rank_1(r: Runner, name, sig, env):
    """Starts the box on 2 ranks for long, sends rank 1 `sig` once it writes, and waits for mpirun."""
    d = r.work / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    (d / "case.toml").write_text(BOX.replace("t_end = 10", "t_end = 100000"))
    mp = subprocess.Popen(["mpirun", "-np", "2", "--oversubscribe", r.hw, "run", "--backend", r.backend, "--quiet",
                           "case.toml"], cwd=d, env=dict(r.env, **env), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    victim = None
    while time.monotonic() < deadline and victim is None:
        time.sleep(0.5)
        if (d / "out" / "probes.csv").exists():
            for k in children(mp.pid):
                if rank_of(k) == 1:
                    victim = k
    if victim is None:
        mp.kill()
        sys.exit("FAIL: the split run did not start")
    time.sleep(1)
    t0 = time.monotonic()
    os.kill(victim, sig)
    try:
        _, err = mp.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        mp.kill()
        os.kill(victim, signal.SIGKILL)
        sys.exit(f"FAIL: rank 1 got signal {sig} and the run hung")
    return mp, t0, err


def check_sweep(r: Runner):
    """A population split over ranks (each runs a share of the cells; rank 0 writes the rows)."""
    d = r.work / "sweep"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    # 70 cells: on the cpu a rank's share is whole batches of 64 (cmd_cell.cpp), so 2 ranks
    # each run one and 3 ranks leave one idle.
    base = [r.hw, "sweep", "luo_rudy_1991", "--random", "g_K_max=0.5:2", "--cells", "70", "--beats", "1",
            "--backend", r.backend]
    runs = {"one.csv": (base, [])}
    flag = "--gpus" if r.backend == "cuda" else "--ranks"
    for n in r.ranks:
        runs[f"flag-{n}.csv"] = (base, [flag, str(n)])
        if r.backend == "cpu":
            runs[f"mpirun-{n}.csv"] = (["mpirun", "-np", str(n), "--oversubscribe", *base], [])
    for out, (cmd, extra) in runs.items():
        p = subprocess.run([*cmd, "-o", out, *extra], cwd=d, env=r.env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            sys.exit(f"FAIL: {' '.join(cmd + extra)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    one = (d / "one.csv").read_text()
    for out in runs:
        if (d / out).read_text() != one:
            sys.exit(f"FAIL: sweep: {out} differs from one rank's rows")
    print(f"  sweep: {', '.join(o for o in runs if o != 'one.csv')} give one rank's {one.count(chr(10)) - 1} rows")


def check_ranks_flag(r: Runner):
    one, _ = r.run(BOX, "flag-1", 1)
    flag = "--gpus" if r.backend == "cuda" else "--ranks"
    d, p = r.run(BOX, "flag-2", 1, [flag, "2"])
    same_outputs(one, d, f"{flag} 2 against 1")


def gpu_count() -> int:
    if shutil.which("nvidia-smi") is None:
        return 0
    p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(1 for line in p.stdout.splitlines() if line.startswith("GPU ")) if p.returncode == 0 else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heartwave", required=True)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--ranks", default="2,3", help="the rank counts compared with one rank")
    ap.add_argument("check")
    a = ap.parse_args()
    if shutil.which("mpirun") is None:
        print("SKIP: no mpirun on PATH (install openmpi-bin)")
        return SKIP
    hw = str(Path(a.heartwave).resolve())
    probe = subprocess.run([hw, "run", "--help"], capture_output=True, text=True)
    if "--ranks" not in probe.stdout:
        print("SKIP: this heartwave has no --ranks")
        return SKIP
    ranks = tuple(int(x) for x in a.ranks.split(","))
    if a.backend == "cuda":
        # One GPU per rank: the rank counts this machine's GPUs allow (none: skip).
        gpus = gpu_count()
        ranks = tuple(n for n in ranks if n <= gpus)
        if not ranks:
            print(f"SKIP: split runs on GPUs need at least {min(int(x) for x in a.ranks.split(','))} GPUs; "
                  f"this machine has {gpus} (nvidia-smi -L)")
            return SKIP
    with tempfile.TemporaryDirectory(prefix="hw-split-") as work:
        r = Runner(hw, work, a.backend, ranks)
        checks = {
            "box": lambda: check_same_as_one_rank(r, BOX, "box"),
            "heart": lambda: check_same_as_one_rank(r, HEART, "heart"),
            "implicit": lambda: (check_same_as_one_rank(r, IMPLICIT, "implicit"),
                                 check_same_as_one_rank(r, HEART_IMPLICIT, "implicit-heart"),
                                 check_same_as_one_rank(r, HEART_PHASE, "phase-field"),
                                 check_same_as_one_rank(r, FOURTH, "fourth-order")),
            "restart": lambda: (check_restart(r), check_interrupt(r)),
            "faults": lambda: check_faults(r),
            "ranks-flag": lambda: check_ranks_flag(r),
            "sweep": lambda: check_sweep(r),
        }
        for name, f in checks.items():
            if a.check in (name, "all"):
                print(f"{name}:")
                f()
    return 0


if __name__ == "__main__":
    sys.exit(main())
