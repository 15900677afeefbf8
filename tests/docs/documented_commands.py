#!/usr/bin/env python3
"""Runs every shell command of the ```sh blocks of README.md and docs/*.md, as written.

    python3 tests/docs/documented_commands.py [--build-dir build] [PAGE.md ...]

ctest runs it once per page (tests/CMakeLists.txt, label "integration"); with no PAGE it
checks every page that has a ```sh block. The markers that shorten or skip a command, and
what is checked, are described in docs/doc-tests.md.

Where the commands run. A user stands in the repository root, with the shared data
beside it (../shared) and the binary under build/. Each page gets a fresh temporary
directory T laid out the same way:

    T/repo/<entry>  -> a symlink to each tracked top-level entry of the checkout
                       (examples, docs, tools, ...; not build*/ or a user's out/)
    T/repo/build    -> a symlink to the build directory under test (so the README's
                       hw=./build/apps/heartwave/heartwave is the binary under test)
    T/shared        -> the shared data directory, when there is one
    T/bin/heartwave -> the binary, first on PATH (docs/*.md write `heartwave ...`)

and the commands run with T/repo as the working directory. Symlinks rather than a copy:
the checkout holds a large build directory, and every documented command writes only to
its working directory (trace.csv, out/, out_<case>/, ...), which is the fresh T/repo, so
nothing lands in the checkout and pages cannot see each other's files. Commands of one
page run in order and share that directory (a later command reads what an earlier one
wrote, e.g. lr91.hwm); shell variables set by an assignment line (hw=...) hold for the
rest of the page.

Only the standard library is used. Exit status: 0 when every command ran (or was
skipped with its printed reason) and every promised output was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_S = 240  # one command; the page's ctest TIMEOUT (300 s) bounds the whole page

# ---------------------------------------------------------------------------------------
# Reading the pages


@dataclass
class Directive:
    verb: str  # append | replace | skip
    pattern: str  # Python regular expression, searched in the command (without comment)
    text: str  # append/replace: the text; skip: the reason
    reason: str  # optional words printed with the change
    line: int
    used: bool = False


@dataclass
class Command:
    page: str
    line: int
    written: str  # as on the page (continuations joined)
    code: str  # without the trailing comment
    comment: str  # the trailing comment, '' if none
    directives: list[Directive] = field(default_factory=list)


DIRECTIVE_RE = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE_RE = re.compile(r"^\s*```\s*(\S*)\s*$")
ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def split_comment(line: str) -> tuple[str, str]:
    """Splits a shell line into code and trailing '# comment' (quote-aware)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i:]
        i += 1
    return line.rstrip(), ""


def parse_directive(text: str, page: str, line: int) -> Directive:
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise SystemExit(f"{page}:{line}: doc-test marker: {e}")
    if not words or words[0] not in ("append", "replace", "skip"):
        raise SystemExit(f"{page}:{line}: doc-test marker: expected append, replace or skip, "
                         f"got {text!r}")
    verb = words[0]
    if len(words) < 3 or len(words) > 4 or (verb == "skip" and len(words) != 3):
        raise SystemExit(f"{page}:{line}: doc-test marker: '{verb} REGEX TEXT"
                         f"{'' if verb == 'skip' else ' [REASON]'}' (quote words with spaces), "
                         f"got {text!r}")
    try:
        re.compile(words[1])
    except re.error as e:
        raise SystemExit(f"{page}:{line}: doc-test marker: bad regular expression "
                         f"{words[1]!r}: {e}")
    return Directive(verb, words[1], words[2], words[3] if len(words) == 4 else "", line)


def read_page(path: Path, name: str) -> list[Command]:
    """The commands of the page's ```sh blocks, each with the markers of its block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    commands: list[Command] = []
    pending: list[Directive] = []
    i = 0
    while i < len(lines):
        m = DIRECTIVE_RE.match(lines[i])
        if m:
            pending.append(parse_directive(m.group(1), name, i + 1))
            i += 1
            continue
        f = FENCE_RE.match(lines[i])
        if f:
            lang = f.group(1)
            j = i + 1
            while j < len(lines) and not FENCE_RE.match(lines[j]):
                j += 1
            if lang == "sh":
                block = [c for c in block_commands(lines, i + 1, j, name)]
                for d in pending:
                    for c in block:
                        if re.search(d.pattern, c.code):
                            c.directives.append(d)
                            d.used = True
                    if not d.used:
                        raise SystemExit(f"{name}:{d.line}: doc-test marker {d.verb} "
                                         f"{d.pattern!r} matches no command of the block "
                                         f"below it (a stale marker)")
                commands += block
            elif pending:
                raise SystemExit(f"{name}:{pending[0].line}: doc-test marker before a "
                                 f"```{lang} block; markers go just before a ```sh block")
            pending = []
            i = j + 1
            continue
        if pending and lines[i].strip():
            raise SystemExit(f"{name}:{pending[0].line}: doc-test marker not followed by a "
                             f"```sh block")
        i += 1
    if pending:
        raise SystemExit(f"{name}:{pending[0].line}: doc-test marker at the end of the page")
    return commands


def block_commands(lines: list[str], start: int, end: int, name: str):
    i = start
    while i < end:
        first = i
        text = lines[i]
        while text.rstrip().endswith("\\") and i + 1 < end:
            i += 1
            text = text.rstrip()[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        code, comment = split_comment(text.strip())
        if not code:
            continue  # blank line or a comment line
        yield Command(name, first + 1, text.strip(), code, comment)


# ---------------------------------------------------------------------------------------
# Expectations: what a command promises (docs/cli.md, docs/single-cell.md, docs/outputs.md)

# `heartwave cell --json` (docs/cli.md, the JSON block).
CELL_JSON_KEYS = ["model", "kernel", "integrator", "dt", "bcl", "stim_duration",
                  "stim_amplitude", "beats"]
BEAT_JSON_KEYS = ["beat", "t_start", "apd90", "apd50", "apd30", "dvdt_max", "v_peak",
                  "v_rest", "cat_amplitude", "catd90"]
# The sweep CSV (docs/single-cell.md "Populations"): cell, the parameters, the biomarkers.
SWEEP_BIOMARKERS = ["apd90", "apd50", "apd30", "dvdt_max", "v_peak", "v_rest",
                    "cat_amplitude", "catd90"]
# `bench niederer -o` (docs/cli.md, options of bench niederer).
NIEDERER_COLUMNS = ["x_mm", "y_mm", "z_mm", "activation_ms", "dx_mm", "dt_ms", "diffusion",
                    "precision", "wall_s", "cell_steps_per_s"]
# The cpu rows of `bench all` (docs/cli.md, the bench table).
BENCH_ALL_ROWS = ["karma2d", "karma3d", "tt06-3d", "niederer-0.2"]
# Built-in models that the docs and examples name.
BUILTINS_NAMED = ["aliev_panfilov_1996", "karma1993", "mfhn", "ohara_rudy_2011_endo",
                  "tentusscher_2006_endo", "tentusscher_2006_m", "tentusscher_2006_epi"]


class CheckError(Exception):
    pass


def need(cond: bool, what: str):
    if not cond:
        raise CheckError(what)


def nonempty_file(cwd: Path, rel: str) -> Path:
    p = cwd / rel
    need(p.is_file(), f"{rel} was not written")
    need(p.stat().st_size > 0, f"{rel} is empty")
    return p


def csv_rows(text: str, what: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    need(len(rows) >= 1 and len(rows[0]) >= 2, f"{what}: no CSV header")
    return rows


def words_after(args: list[str], *names: str) -> list[str]:
    """Values of the options `names` (as `--x V` or `--x=V`), in order."""
    out = []
    for k, a in enumerate(args):
        for n in names:
            if a == n and k + 1 < len(args):
                out.append(args[k + 1])
            elif n.startswith("--") and a.startswith(n + "="):
                out.append(a[len(n) + 1:])
    return out


def check_cell(args: list[str], stdout: str, cwd: Path):
    steady = "--until-steady" in args  # stops at the first steady beat; the table shows the last 5
    beats = int((words_after(args, "--beats") or ["1000" if steady else "3"])[-1])
    for state in words_after(args, "--save-state"):
        need('format = "heartwave-cell-state"' in nonempty_file(cwd, state).read_text(),
             f"{state}: not a state file")
    if stdout is None:
        pass
    elif steady:
        n = len(json.loads(stdout)["beats"]) if "--json" in args else \
            len([l for l in stdout.splitlines() if re.match(r"^\s*\d+\s+\S", l)])
        need(1 <= n <= beats, f"--until-steady: {n} beats shown, expected 1 to {beats}")
    elif "--json" in args:
        try:
            j = json.loads(stdout)
        except json.JSONDecodeError as e:
            raise CheckError(f"--json: stdout is not JSON ({e})")
        for k in CELL_JSON_KEYS:
            need(k in j, f"--json: key '{k}' missing")
        need(len(j["beats"]) == beats, f"--json: {len(j['beats'])} beats, expected {beats}")
        for k in BEAT_JSON_KEYS:
            need(k in j["beats"][0], f"--json: beat key '{k}' missing")
    else:
        rows = [l for l in stdout.splitlines() if re.match(r"^\s*\d+\s+\S", l)]
        need(len(rows) == beats, f"{len(rows)} beat rows on stdout, expected {beats}")
    for out in words_after(args, "-o", "--output"):
        rows = csv_rows(nonempty_file(cwd, out).read_text(), out)
        need(rows[0][:2] == ["t", "V"], f"{out}: header starts {rows[0][:2]}, expected t,V")
        need(len(rows) > 2, f"{out}: no rows")


def check_sweep(args: list[str], stdout: str, cwd: Path):
    outs = words_after(args, "-o", "--output")
    if not outs and stdout is None:
        return
    text = nonempty_file(cwd, outs[-1]).read_text() if outs else stdout
    rows = csv_rows(text, outs[-1] if outs else "stdout")
    grids = words_after(args, "--grid")
    names = [g.split("=")[0] for g in grids + words_after(args, "--lhs", "--random")]
    need(rows[0] == ["cell"] + names + SWEEP_BIOMARKERS,
         f"CSV header {rows[0]}, expected {['cell'] + names + SWEEP_BIOMARKERS}")
    if grids:
        n = 1
        for g in grids:
            n *= int(g.rsplit(":", 1)[1])
    else:
        n = int((words_after(args, "--cells") or ["0"])[-1])
    need(len(rows) - 1 == n, f"{len(rows) - 1} cells in the CSV, expected {n}")


def set_values(args: list[str]) -> dict[str, str]:
    return dict(s.split("=", 1) for s in words_after(args, "--set") if "=" in s)


def check_run(args: list[str], stdout: str, cwd: Path, stderr: str):
    """The outputs docs/outputs.md promises for the case's [output] table."""
    cases = [a for a in args[args.index("run") + 1:] if a.endswith(".toml")]
    case_file = cwd / (cases[0] if cases else "examples/spiral2d.toml")  # the built-in case
    case = tomllib.loads(case_file.read_text())
    out = case.get("output", {})
    sets = set_values(args)
    d = sets.get("output.directory", out.get("directory", "out")).strip('"')
    if "--check" in args:
        need("memory" in (stdout or "") + stderr, "--check: no memory estimate printed")
        need(not (cwd / d / "checkpoint.hwck").exists(), f"--check wrote {d}/checkpoint.hwck")
        return
    nonempty_file(cwd, f"{d}/checkpoint.hwck")
    fields = out.get("fields", ["V"])
    if float(sets.get("output.png_interval", out.get("png_interval", 0))) > 0:
        for v in fields:
            nonempty_file(cwd, f"{d}/{v}_00000.png")
        if out.get("movie") and shutil.which("ffmpeg"):
            for v in fields:
                nonempty_file(cwd, f"{d}/{v}.mp4")
    if float(sets.get("output.field_interval", out.get("field_interval", 0))) > 0:
        if out.get("format", "vtk") == "vtk":
            nonempty_file(cwd, f"{d}/fields.pvd")
            nonempty_file(cwd, f"{d}/fields_000000.vti")
        else:
            nonempty_file(cwd, f"{d}/fields.h5")
            nonempty_file(cwd, f"{d}/fields.xdmf")
    for key, file in (("probes", "probes.csv"), ("electrodes", "ecg.csv")):
        if out.get(key):
            rows = csv_rows(nonempty_file(cwd, f"{d}/{file}").read_text(), file)
            names = [p["name"] for p in out[key]]
            # t_ms, then <name>_<units> (V only) or <name>.<variable>_<units> per column.
            ok = rows[0][0] == "t_ms" and len(rows[0]) >= 1 + len(names) and all(
                col.startswith(names[i % len(names)] + ("_" if len(rows[0]) == 1 + len(names) else "."))
                for i, col in enumerate(rows[0][1:]))
            need(ok, f"{file}: header {rows[0]}, expected t_ms,<name>_<units> for {','.join(names)}")
            need(len(rows) > 2, f"{file}: no rows")
            nonempty_file(cwd, f"{d}/{file[:-4]}.png")
    if out.get("activation_map") or out.get("apd_map") or out.get("conduction_velocity"):
        nonempty_file(cwd, f"{d}/maps.vti")
        rows = csv_rows(nonempty_file(cwd, f"{d}/maps_summary.csv").read_text(), "maps_summary.csv")
        need(rows[0] == ["name", "value", "unit"], f"maps_summary.csv: header {rows[0]}")
        names = {r[0] for r in rows[1:] if r}
        need("activated_cells" in names, "maps_summary.csv: no activated_cells row")
        if out.get("apd_map"):
            need("apd90_median" in names, "maps_summary.csv: no apd90_median row")
        if out.get("conduction_velocity"):
            need("cv_median" in names, "maps_summary.csv: no cv_median row")
        nonempty_file(cwd, f"{d}/activation.png")


def check_command(cmd: Command, ran: str, stdout: str, stderr: str, cwd: Path):
    try:
        args = shlex.split(ran)
    except ValueError:
        return
    # A pipeline or redirection: check the heartwave part's files, not what stdout holds.
    for k, a in enumerate(args):
        if a in ("|", "||", "&&", ";", ">", ">>", "2>", "&>"):
            if a in ("|", ">", ">>", "&>"):
                stdout = None
            args = args[:k]
            break
    if not args or ("heartwave" not in args[0] and args[0] != "$hw"):
        return
    sub = args[1:3]
    if sub[:1] == ["cell"]:
        check_cell(args, stdout, cwd)
    elif sub[:1] == ["sweep"]:
        check_sweep(args, stdout, cwd)
    elif sub[:1] == ["run"]:
        check_run(args, stdout, cwd, stderr)
    elif stdout is None:
        pass
    elif sub == ["model", "list"]:
        for m in BUILTINS_NAMED:
            need(re.search(rf"^{m}\s", stdout, re.M), f"model list: no built-in {m}")
    elif sub == ["model", "inspect"]:
        need("states (" in stdout and "roles:" in stdout, "model inspect: no states or roles")
    elif sub == ["model", "convert"]:
        for out in words_after(args, "-o"):
            text = nonempty_file(cwd, out).read_text()
            if Path(out).suffix in (".sbml", ".xml", ".cellml"):
                # SBML / CellML 2.0: the XML declaration, then a comment naming the source.
                need(Path(args[3]).name in "\n".join(text.splitlines()[:2]),
                     f"{out}: the header comment does not name {Path(args[3]).name}")
                need(re.search(r"<(sbml|model) xmlns=", text), f"{out}: no <sbml> or <model> root")
                continue
            need(Path(args[3]).name in text.splitlines()[0],
                 f"{out}: the header does not name {Path(args[3]).name}")
            need(re.search(r"^model \w+", text, re.M), f"{out}: no 'model' line")
    elif sub == ["model", "compile"]:
        target = (words_after(args, "--target") or ["cpp"])[-1]
        for out in words_after(args, "-o"):
            text = nonempty_file(cwd, out).read_text()
            if target == "cuda":
                need("__device__" in text, f"{out}: no __device__ function")
    elif sub == ["bench", "niederer"]:
        need(len([l for l in stdout.splitlines() if re.match(r"^\s*-?\d+\.\d+\s", l)]) == 9,
             "bench niederer: not 9 activation rows on stdout")
        for out in words_after(args, "-o"):
            rows = csv_rows(nonempty_file(cwd, out).read_text(), out)
            need(rows[0] == NIEDERER_COLUMNS, f"{out}: header {rows[0]}, expected {NIEDERER_COLUMNS}")
            need(len(rows) == 10, f"{out}: {len(rows) - 1} rows, expected 9 points")
    elif sub == ["bench", "all"]:
        need("copy roof" in stdout, "bench all: no roof line")
        for r in BENCH_ALL_ROWS:
            need(re.search(rf"^{re.escape(r)}\s+\d", stdout, re.M), f"bench all: no {r} row")
    # Any other command: the exit status only, and -o/--output targets below.
    if sub[:1] not in (["cell"], ["sweep"], ["run"]):
        for out in words_after(args, "-o", "--output"):
            nonempty_file(cwd, out)


# ---------------------------------------------------------------------------------------
# Running


def gpu_present() -> bool:
    forced = os.environ.get("HW_DOC_TEST_GPU")
    if forced in ("0", "1"):
        return forced == "1"
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        r = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "GPU" in r.stdout


def needs_shared(code: str, cwd: Path) -> bool:
    if "../shared" in code:
        return True
    for w in code.split():
        if w.endswith(".toml") and (cwd / w).is_file():
            if "shared/" in (cwd / w).read_text():
                return True
    return False


def top_level_entries() -> list[str]:
    """The checkout's tracked top-level files and folders: not build*/, out/ or other
    outputs a user's own runs left there (a command writing out/ must not reach them)."""
    try:
        r = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                           text=True, check=True)
        names = {p.split("/")[0] for p in r.stdout.split("\0") if p}
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        names = {e.name for e in REPO.iterdir()
                 if not re.match(r"(build|out|\.git$|\.devrun$|\.cache$)", e.name)}
    names.discard("build")
    return sorted(names)


def make_farm(tmp: Path, build_dir: Path, heartwave: Path, shared: Path | None) -> Path:
    root = tmp / "repo"
    root.mkdir()
    for e in top_level_entries():
        (root / e).symlink_to(REPO / e)
    (root / "build").symlink_to(build_dir)
    if shared is not None:
        (tmp / "shared").symlink_to(shared)
    (tmp / "bin").mkdir()
    (tmp / "bin" / "heartwave").symlink_to(heartwave)
    in_build = root / "build" / "apps" / "heartwave" / "heartwave"
    if not (in_build.exists() and os.path.samefile(in_build, heartwave)):
        raise SystemExit(f"{heartwave} is not {build_dir}/apps/heartwave/heartwave: give "
                         f"--build-dir the build directory that holds the binary")
    return root


def tail(text: str, n: int = 16) -> str:
    """The first and last lines of an output (an error is often the first line)."""
    lines = text.rstrip().splitlines()
    if len(lines) > n + 2:
        lines = lines[:n // 2] + [f"... ({len(lines) - n} lines)"] + lines[-(n // 2):]
    return "\n".join("      | " + l for l in lines)


def run_page(page: Path, args, gpu: bool) -> tuple[int, int, int]:
    name = str(page.relative_to(REPO)) if page.is_relative_to(REPO) else str(page)
    commands = read_page(page, name)
    if not commands:
        print(f"{name}: no ```sh block")
        return 0, 0, 0
    ran = skipped = failed = 0
    page_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hw-doc-test-") as t:
        tmp = Path(t)
        shared = args.shared if args.shared and args.shared.is_dir() else None
        cwd = make_farm(tmp, args.build_dir, args.heartwave, shared)
        env = dict(os.environ)
        env["PATH"] = f"{tmp / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        prelude: list[str] = []
        unwritten: set[str] = set()  # the outputs of commands skipped for want of ../shared
        print(f"{name}: {len(commands)} command(s), in {cwd}")
        for c in commands:
            where = f"{name}:{c.line}"
            code = c.code
            notes = []
            skip_reason = None
            for d in c.directives:
                if d.verb == "skip":
                    skip_reason = f"marked not-run: {d.text}"
                elif d.verb == "append":
                    code = f"{code} {d.text}"
                    notes.append(f"appended '{d.text}'" + (f" ({d.reason})" if d.reason else ""))
                elif d.verb == "replace":
                    new = re.sub(d.pattern, d.text, code)
                    old = re.search(d.pattern, code).group(0)
                    notes.append(f"'{old}' -> '{d.text}'" + (f" ({d.reason})" if d.reason else ""))
                    code = new
            if ASSIGN_RE.match(code) and not c.directives:
                prelude.append(code)
                print(f"  set   {where}: {code}")
                continue
            if skip_reason is None and re.search(r"--backend[ =]cuda\b", code) and not gpu:
                skip_reason = "needs a GPU (--backend cuda) and none was found"
            if skip_reason is None and needs_shared(code, cwd) and shared is None:
                skip_reason = f"needs ../shared ({args.shared} is absent)"
                # What it would have written is absent too: the commands that read it skip.
                unwritten.update(re.findall(r"(?:^|\s)(?:-o|--output)\s+(\S+)", code))
            if skip_reason is None:
                reads = [f for f in unwritten if re.search(rf"(?:^|\s){re.escape(f)}(?:\s|$)", code)]
                if reads:
                    skip_reason = (f"reads {reads[0]}, which a skipped command (it needs ../shared) "
                                   "would have written")
            if skip_reason:
                skipped += 1
                print(f"  SKIP  {where}: {c.written}\n        {skip_reason}")
                continue
            if notes:
                print(f"  short {where}: {c.written}\n        runs as: {code}\n"
                      f"        ({'; '.join(notes)})")
            script = "set -eo pipefail\n" + "\n".join(prelude + [code]) + "\n"
            t0 = time.monotonic()
            try:
                r = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                                   text=True, timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
                rc, out, err = r.returncode, r.stdout, r.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = None, e.stdout or "", e.stderr or ""
                out = out.decode() if isinstance(out, bytes) else out
                err = err.decode() if isinstance(err, bytes) else err
            dt = time.monotonic() - t0
            ran += 1
            problem = None
            if rc is None:
                problem = f"did not finish in {COMMAND_TIMEOUT_S} s"
            elif rc != 0:
                problem = f"exit status {rc}"
            else:
                try:
                    # the expectations read the command as run (its -o, --beats, --set ...),
                    # with $hw standing for the binary
                    check_command(c, code.replace("$hw", "heartwave"), out, err, cwd)
                except CheckError as e:
                    problem = f"promised output missing: {e}"
            if problem:
                failed += 1
                print(f"  FAIL  {where} ({dt:.1f} s): {code}\n        {problem}\n"
                      f"      stderr:\n{tail(err)}\n      stdout:\n{tail(out, 5)}")
            else:
                print(f"  ok    {where} ({dt:.1f} s): {code}")
    print(f"{name}: {ran} ran, {failed} failed, {skipped} skipped, "
          f"{time.monotonic() - page_start:.1f} s")
    return ran, failed, skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", nargs="*", type=Path,
                    help="README.md, docs/cli.md, ... (relative to the repository root); "
                         "default: every page")
    ap.add_argument("--build-dir", type=Path, default=REPO / "build")
    ap.add_argument("--heartwave", type=Path, help="the binary (default: "
                    "BUILD_DIR/apps/heartwave/heartwave)")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared",
                    help="the shared data (default: ../shared beside the checkout)")
    args = ap.parse_args()
    args.build_dir = args.build_dir.resolve()
    args.heartwave = (args.heartwave or args.build_dir / "apps/heartwave/heartwave").resolve()
    if not args.heartwave.is_file():
        print(f"no binary at {args.heartwave}", file=sys.stderr)
        return 1
    pages = [REPO / p if not p.is_absolute() else p for p in args.pages]
    if not pages:
        pages = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
    gpu = gpu_present()
    print(f"binary {args.heartwave}; GPU {'found' if gpu else 'not found'}; shared data "
          f"{args.shared if args.shared.is_dir() else 'absent'}")
    total_failed = 0
    for p in pages:
        _, failed, _ = run_page(p.resolve(), args, gpu)
        total_failed += failed
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
