#!/usr/bin/env python3
"""Regenerates docs/gallery.md and docs/gallery/*.png: one picture from each example case.

    python3 tools/make_gallery.py [--heartwave BINARY] [--work DIR] [--threads N]
                                  [--only CASE...] [--markdown-only]

Runs every examples/*.toml with `heartwave run` in a scratch folder (outputs go to the
working directory, docs/outputs.md), takes one PNG that the case writes through its own
[output] settings, copies it to docs/gallery/<case>.png (each must stay under 300 kB) and
writes docs/gallery.md with a caption per picture: the case, what it shows, and the exact
command. A case is shortened (time.t_end) or given a PNG output it lacks (output.*) only
where the table below says so, and the caption then says so too. The pig cases need the shared
data beside the checkout (../shared); without it the old picture and caption are kept.

Time on 2 cores (no GPU): five cases about 1-2 minutes (72 s in the run that made the pictures),
karma3d about 10-40 more (256³ cells, 12 000 steps = 2e11 cell-steps, at the 1e8-3e8
cell-steps/s that `bench karma3d --threads 2` measured here at different loads: an estimate,
not timed end to end). `--backend auto` uses a GPU where one is found
(karma3d: about 2 minutes on an H100). Only the standard library is used.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_BYTES = 300_000

# case: (extra arguments, picture in the output folder ("last:V" = the last V frame),
#        why the arguments were added ('' when the case runs as it is), caption)
GALLERY = {
    "spiral2d": (
        [], "last:V", "",
        "The built-in default case of `heartwave run`: an Aliev-Panfilov spiral wave in a "
        "120 × 120 mm sheet (400 × 400 cells), started by the S1-S2 cross-field initial "
        "condition (left half excited, bottom half refractory). The last frame (t = 2000 ms): "
        "the spiral has rotated for two seconds and keeps its shape. Dimensionless u shown "
        "as V (0..1)."),
    "transmural_slab": (
        [], "activation.png", "",
        "The activation map (ms) of a 12 × 4 mm transmural sheet of ten Tusscher 2006 endo, "
        "M and epi cells (left to right) with a g_Ks gradient, stimulated at the endocardial "
        "face (left). The front crosses the wall, transverse to the fibres, in about 75 ms. "
        "The case has no PNG frames of its own; `activation.png` is what its `activation_map` "
        "writes."),
    "niederer": (
        ["--set", "output.png_interval=10"], "V_00003.png",
        "the case writes no PNG of its own, so a frame every 10 ms was asked for",
        "The N-version benchmark slab (Niederer et al. 2011; 20 × 7 × 3 mm, ten Tusscher 2006 "
        "epi, fibres along x): V (mV) on the middle z slice at t = 30 ms. The front spreads "
        "from the stimulated corner (bottom left), fastest along the fibres."),
    "scroll3d": (
        [], "last:V", "",
        "A scroll wave in a 60 × 60 × 10 mm slab (Aliev-Panfilov): the middle z slice at the "
        "last frame, t = 300 ms. The cross-field initial condition is set through the whole "
        "thickness, so the filament runs straight through the slab and every z slice looks "
        "like this one."),
    "pig_scroll": (
        [], "last:V", "",
        "A scroll wave in the pig ventricles (128³ phase field from ../shared, Aliev-Panfilov): "
        "V on the z = 40 mm slice at the last frame, t = 400 ms. Light grey is outside the "
        "tissue. Several wave fragments travel around both ventricles, the cross-section of "
        "a scroll whose filament runs through the wall."),
    "karma3d": (
        ["--set", "time.t_end=600", "--set", "output.field_interval=0"], "V_00024.png",
        "stopped at the 600 ms frame instead of 1000 ms, and without the HDF5 fields "
        "(2.7 GB for the full run); the PNG frames are the case's own",
        "Seed 004's 256³ Karma cube: the x-z plane through the middle (y = 128) at t = 600 ms. "
        "The plane wave started at the bottom has left the cube; the second stimulus, given at "
        "180 ms in the band 60 < z < 100, 117 ≤ x ≤ 137 while the wave's refractory tail lay "
        "across it, could only run back down, and its two free ends curled into a pair of "
        "counter-rotating scroll waves (straight filaments along y) that keep sending waves "
        "through the cube. The case file says why it starts n at 0 and the second stimulus at "
        "180 ms rather than the thesis's n = 0.5 and 425 ms (with those, the plane wave dies "
        "within 25 ms on this model)."),
    "tt06_spiral2d": (
        [], "last:V", "",
        "A ten Tusscher 2006 epi spiral in a 60 × 60 mm sheet (200 × 200 cells), started by an "
        "S1-S2 cross-field stimulus: S1 at the left edge at 0 ms, S2 on the lower-left quarter "
        "at 330 ms in the S1 wave's refractory tail. The last frame, t = 1200 ms: the spiral "
        "turns about a core near (15, 25) mm once every 250 ms; ecg.png and probes.png beside "
        "it show the same period (docs/worked-examples.md)."),
    "rabbit_layers": (
        [], "activation.png", "",
        "The UCSD rabbit ventricles with rule-based fibres along the heart's long axis (x), "
        "TT06 endo/M/epi layers by the transmural coordinate and a g_Ks gradient across the "
        "wall, stimulated at the apex: the activation map (ms) on three slices through the "
        "earliest cell, in the image's own coordinates (mm). The front climbs from the apex "
        "(right) to the base in 103 ms."),
    "pig_layers": (
        [], "activation.png", "",
        "The pig ventricles, which come with no labels and no fibres: their endo and epi "
        "surfaces, the LV and RV and the long axis are found from the shape (docs/geometry.md), "
        "and from them rule-based fibres and three layers of recovery rate through the wall. "
        "The apex is stimulated at 0 ms: the activation map (ms) on three slices through the "
        "earliest cell. The front reaches the top of the base at 99 ms."),
}

BACKEND_RE = re.compile(r"backend auto: (.*)")


def newest(folder: Path, var: str) -> Path:
    frames = sorted(folder.glob(f"{var}_[0-9][0-9][0-9][0-9][0-9].png"))
    if not frames:
        raise SystemExit(f"no {var}_NNNNN.png in {folder}")
    return frames[-1]


def output_dir(case: Path) -> str:
    m = re.search(r'^\s*directory\s*=\s*"([^"]+)"', case.read_text(), re.M)
    return m.group(1) if m else "out"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--heartwave", type=Path, default=REPO / "build/apps/heartwave/heartwave")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--threads", type=int, help="OpenMP threads (default: all)")
    ap.add_argument("--only", nargs="+", metavar="CASE",
                    help="run only these cases; the others keep their pictures and notes")
    ap.add_argument("--markdown-only", action="store_true",
                    help="run nothing; rewrite docs/gallery.md from the table and the last runs")
    args = ap.parse_args()
    hw = args.heartwave.resolve()
    if not hw.is_file():
        print(f"no binary at {hw}", file=sys.stderr)
        return 1
    present = sorted(p.stem for p in (REPO / "examples").glob("*.toml"))
    missing = [c for c in present if c not in GALLERY]
    cases = [c for c in GALLERY if c in present]  # the gallery's order
    if missing:
        print(f"examples without a gallery entry: {', '.join(missing)} (add them to GALLERY)",
              file=sys.stderr)
        return 1
    shared = (REPO.parent / "shared").is_dir()
    out_dir = REPO / "docs" / "gallery"
    out_dir.mkdir(exist_ok=True)
    tmp = None
    work = args.work
    if work is None:
        tmp = tempfile.TemporaryDirectory(prefix="hw-gallery-")
        work = Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    entries = []
    for name in cases:
        extra, picture, why, caption = GALLERY[name]
        case = REPO / "examples" / f"{name}.toml"
        shown = ["heartwave", "run", f"examples/{name}.toml"] + extra
        if args.markdown_only or (args.only and name not in args.only):
            entries.append((name, shown, why, caption, None))
            continue
        if name.startswith("pig_") and not shared:
            print(f"{name}: skipped, ../shared is absent (the old picture stays)")
            entries.append((name, shown, why, caption, None))
            continue
        cmd = [str(hw), "run", str(case)] + extra
        if args.threads:
            cmd += ["--threads", str(args.threads)]
            shown += ["--threads", str(args.threads)]
        print(f"{name}: {' '.join(shown)}", flush=True)
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        wall = time.monotonic() - t0
        (work / f"{name}.log").write_text(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"{name}: exit status {r.returncode}; log in {work / (name + '.log')}\n"
                  f"{r.stderr[-2000:]}", file=sys.stderr)
            return 1
        folder = work / output_dir(case)
        src = newest(folder, picture[5:]) if picture.startswith("last:") else folder / picture
        size = src.stat().st_size
        if size > MAX_BYTES:
            print(f"{name}: {src.name} is {size} bytes (> {MAX_BYTES})", file=sys.stderr)
            return 1
        shutil.copyfile(src, out_dir / f"{name}.png")
        m = BACKEND_RE.search(r.stdout + r.stderr)
        backend = m.group(1).split(" (")[0] if m else "?"
        run_note = f"{wall:.0f} s wall, backend {backend}; the picture is `{folder.name}/{src.name}`"
        print(f"{name}: {src.name} ({size} bytes), {run_note}", flush=True)
        entries.append((name, shown, why, caption, run_note))
    write_markdown(entries)
    if tmp is not None:
        tmp.cleanup()
    return 0


def old_run_notes() -> dict[str, str]:
    """Run notes of the current gallery.md, for pictures that are kept."""
    md = REPO / "docs" / "gallery.md"
    notes = {}
    if md.exists():
        for m in re.finditer(r"^## `(\w+)`.*?^Last run: (.*?)\.$", md.read_text(), re.M | re.S):
            notes[m.group(1)] = m.group(2)
    return notes


def write_markdown(entries) -> None:
    old = old_run_notes()
    lines = [
        "# Gallery",
        "",
        "One picture from each example case in `examples/`, each a PNG the case writes "
        "itself through its `[output]` settings (docs/outputs.md: viridis, the time at the top "
        "left, the colour bar with its unit). Regenerate all of them with "
        "`python3 tools/make_gallery.py` (on 2 cores 1-2 minutes for five cases and an "
        "estimated 10-40 for karma3d; about 2 minutes on an H100). Commands are written from the repository root; a case "
        "that is shortened or given an output it lacks says so. Each picture's last run names "
        "its backend (`--backend auto`: the GPU where one is found); the cpu and GPU engines "
        "draw the same pictures up to float rounding.",
        "",
    ]
    for name, shown, why, caption, note in entries:
        note = note or old.get(name, "not run here (an earlier picture)")
        lines += [
            f"## `{name}`",
            "",
            f"![{name}](gallery/{name}.png)",
            "",
            caption,
            "",
            f"Command: `{' '.join(shown)}`" + (f" ({why})." if why else " (the case as it is)."),
            f"Last run: {note}.",
            "",
        ]
    # The live view's screenshots (tests/browser/test_live_browser.py --gallery) are not an
    # example's own pictures: their section, at the end, is kept as it is.
    md = REPO / "docs" / "gallery.md"
    live = md.read_text().find("\n## The live view") if md.exists() else -1
    text = "\n".join(lines)
    if live >= 0:
        text = text.rstrip("\n") + "\n" + md.read_text()[live:]
    md.write_text(text)
    print("wrote docs/gallery.md")


if __name__ == "__main__":
    sys.exit(main())
