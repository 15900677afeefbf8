#!/usr/bin/env python3
"""Regenerates docs/verification.md from the verification tests' own output.

Why: numbers in a verification document must come from the code that is checked in, not
from someone's typing. This script runs the test binary (which drives the `heartwave`
CLI), parses the lines the tests print (HW_CONVERGENCE, HW_VERIFY) and each test's
pass/fail status, reads the Myokit goldens' metadata, and writes the tables. The metrics
are computed once, in C++ (tests/unit/verify_support.hpp), so the doc and the tests
cannot disagree.

Usage: python3 tools/make_verification_doc.py [--build-dir build] [--out docs/verification.md]
(the build directory must hold heartwave_tests and heartwave; only the standard library
is needed).
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
FILTER = ('AllIntegrators/ConvergenceTest.ObservedOrder*:SharedCellml/VsCvode.*:Goldens/VsMyokit.*:'
          'Tissue*:Geometry*:IoMaps*:IoOutputManager*:StiffIntegrators.*:LinearBlocks.*:Models/StiffSet.*:'
          'Models/RestitutionVsMyokit.*:Models/TablesBounds.*:Tables.*:Models/FastMathsBounds.*:FastMaths.*')
TABLES_FILTER = 'Models/TablesBounds.*:Tables.*:Models/FastMathsBounds.*:FastMaths.*'
# Tissue tests whose "[measured] ..." lines go into section 4, by suite, in this order.
TISSUE_SUITES = [
    ('TissueDiffusion', 'Diffusion operators: convergence, symmetry, cpu vs reference'),
    ('TissueStepping', 'Time stepping of diffusion: charge, explicit vs implicit'),
    ('TissueCg', 'Conjugate gradients: the Poisson problem of seed 003'),
    ('TissueReferenceImplicit', "The reference engine's own implicit solver (the oracle's oracle): "
                                'dense and exact answers'),
    ('Engines/Backends', 'Monodomain: each engine against the reference (tests/backends; V compared as float fields)'),
    ('TissueSim', 'Monodomain: conduction velocity, fronts, memory, N-version'),
    ('TissuePhase', 'Phase-field boundaries'),
    ('Geometry', 'Geometry: shapes, phase field, fibres, real hearts'),
    ('IoMaps', 'Maps: activation, APD90, conduction velocity'),
    ('IoOutputManager', 'Outputs and restart'),
]
VERIFY_OUT = os.path.join('/tmp', f'hw-verify-{os.getpid()}')
RESTITUTION_GOLDEN = os.path.join(ROOT, 'tests', 'golden', 'restitution')
RESTITUTION_FIGURES = os.path.join(ROOT, 'docs', 'data', 'restitution')
NIEDERER_DIR = os.path.join(ROOT, 'docs', 'data', 'niederer')
NIEDERER_GPU_DIR = os.path.join(ROOT, 'docs', 'data', 'niederer-gpu')
NIEDERER_LABELS = ['P1 (0,0,0)', 'P2 (20,0,0)', 'P3 (0,7,0)', 'P4 (20,7,0)', 'P5 (0,0,3)',
                   'P6 (20,0,3)', 'P7 (0,7,3)', 'P8 (20,7,3)', 'centre (10,3.5,1.5)']


def run_tests(build_dir, test_filter=FILTER, backends=True):
    exe = os.path.join(build_dir, 'tests', 'heartwave_tests')
    if not os.path.exists(exe):
        found = glob.glob(os.path.join(build_dir, '**', 'heartwave_tests'), recursive=True)
        if not found:
            sys.exit(f'heartwave_tests not found under {build_dir}: build it first')
        exe = found[0]
    cmd = [exe, f'--gtest_filter={test_filter}', '--gtest_color=no']
    # The restitution test writes its rows there for section 3's curves.
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, HW_VERIFY_OUT=VERIFY_OUT))
    out = proc.stdout + proc.stderr
    if not backends:
        return os.path.relpath(exe, ROOT), out
    # The cross-backend tests (label backends) live in their own binary.
    backends = os.path.join(os.path.dirname(exe), 'heartwave_backend_tests')
    if not os.path.exists(backends):
        sys.exit(f'{backends} not found: build it first')
    b = subprocess.run([backends, '--gtest_color=no'], cwd=ROOT, capture_output=True, text=True)
    return os.path.relpath(exe, ROOT), out + b.stdout + b.stderr


def parse(output):
    orders = []
    for m in re.finditer(r'HW_CONVERGENCE integrator=(\w+) expected=(\d+) observed=([-\d.eE+naif]+)', output):
        orders.append((m.group(1), int(m.group(2)), float(m.group(3))))
    rows = {}
    for m in re.finditer(r'HW_VERIFY model=(\S+) pair=(\S+) rrms=(\S+) apd90_max_diff_ms=(\S+) '
                         r'apd90=(\S+) ref_apd90=(\S+)', output):
        rows[(m.group(1), m.group(2))] = {
            'rrms': float(m.group(3)), 'apd_diff': float(m.group(4)),
            'apd': m.group(5), 'ref_apd': m.group(6)}
    stiff = {}
    for m in re.finditer(r'HW_STIFF model=(\S+) states=(\d+) blocks=(\d+) block_states=(\d+) integrator=(\S+) '
                         r'dt=(\S+) chosen=(\S+) apd90_diff_ms=(\S+) rrms=(\S+) apd90=(\S+) ref_apd90=(\S+)', output):
        row = stiff.setdefault(m.group(1), {'states': int(m.group(2)), 'blocks': int(m.group(3)),
                                            'block_states': int(m.group(4)), 'ref_apd': m.group(11)})
        row[(m.group(5), m.group(6))] = {'chosen': m.group(7), 'apd_diff': float(m.group(8)),
                                         'rrms': float(m.group(9))}
    status = {}
    for m in re.finditer(r'\[\s+(OK|FAILED|SKIPPED)\s+\] ([^\s,]+)', output):
        status[m.group(2)] = m.group(1)
    # "[measured] ..." lines, attributed to the test that is running when they are printed
    measured = []
    current = None
    for line in output.splitlines():
        m = re.match(r'\[ RUN\s+\] (\S+)', line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r'\[measured\] (.*)', line.strip())
        if m and current:
            measured.append((current, m.group(1)))
    return orders, rows, status, measured, stiff


def device_stiff_records():
    """The stiff-set models measured on the GPU host's cores (tools/device/stiff-set.sh: the whole
    set side by side), from docs/data/stiff/*.txt: (stiff, status, header lines)."""
    text, heads = '', []
    for p in sorted(glob.glob(os.path.join(ROOT, 'docs', 'data', 'stiff', '*.txt'))):
        with open(p, encoding='utf-8') as f:
            t = f.read()
        heads += [l[2:] for l in t.splitlines() if l.startswith('# ')][:1] + [os.path.relpath(p, ROOT)]
        text += t + '\n'
    _, _, status, _, stiff = parse(text)
    return stiff, status, heads


def stiff_section(L, stiff, status):
    # Models the local run skipped come from the device records, marked as such.
    dev_stiff, dev_status, heads = device_stiff_records()
    recorded = set()
    for model, row in dev_stiff.items():
        name = 'Models/StiffSet.FixedStepsHoldAgainstCvode/' + re.sub(r'[^A-Za-z0-9]', '_', model)
        if model not in stiff:
            stiff[model] = row
            status[name] = dev_status.get(name, 'not run') + ' (recorded)'
            recorded.add(model)
    L.append('## 7. Stiff models at fixed steps')
    L.append('')
    L.append('Every model of the stiff test set (tests/data/stiff, provenance in its SOURCES.md) and every '
             'shared CellML model, 3 beats at BCL 1000 ms with its own stimulus, against CVODE (BDF, rtol '
             '1e-8); test `Models/StiffSet` (tests/unit/test_stiff_set.cpp). `auto` picks the cheapest of '
             'rl2/grl2 with 1, 2, 4, ... sub-steps that matches CVODE on two probe beats (docs/stiff-models.md); '
             '"x2" means two sub-steps per dt. The bar: last-beat APD90 within 1 ms and RRMS of V <= 1 %; '
             'float runs (grl2 and auto at 0.01 ms) must finish finite. Blocks: linear blocks (Markov '
             'chains) found by the model compiler, and the states in them. APD90 "-": the model is not '
             'paced (no APD to compare).')
    L.append('')
    L.append('| model | states | blocks (states) | CVODE APD90 (ms) | auto 0.01: scheme, ΔAPD90, RRMS | '
             'auto 0.02: scheme, ΔAPD90, RRMS | grl2 0.01: ΔAPD90, RRMS | test |')
    L.append('|---|---|---|---|---|---|---|---|')
    for model in sorted(stiff):
        r = stiff[model]

        def cell(key, with_scheme=True):
            c = r.get(key)
            if not c:
                return '(not run)'
            apd = '-' if c['apd_diff'] != c['apd_diff'] else f"{c['apd_diff']:.3f} ms"
            text = f"{apd}, {100 * c['rrms']:.3f} %"
            return f"{c['chosen']}, {text}" if with_scheme else text
        name = re.sub(r'[^A-Za-z0-9]', '_', model)
        st = test_status(status, f'Models/StiffSet.FixedStepsHoldAgainstCvode/{name}')
        L.append(f"| {model} | {r['states']} | {r['blocks']} ({r['block_states']}) | {r['ref_apd']} | "
                 f"{cell(('auto', '0.01'))} | {cell(('auto', '0.02'))} | {cell(('grl2', '0.01'), False)} | {st} |")
    if not stiff:
        L.append('| (no output: the stiff-set test did not run) | | | | | | | |')
    L.append('')
    if recorded:
        L.append(f"\"(recorded)\": {len(recorded)} models the run behind this page did not run, measured with "
                 f"tools/device/stiff-set.sh on {heads[0] if heads else '?'}; the test's own output is in "
                 f"{', '.join('`' + h + '`' for h in heads[1::2])}.")
        L.append('')


def read_niederer(folder=NIEDERER_DIR):
    """{(dx, dt): {'points': [9 activation times], 'meta': {...}, 'scheme':..., ...}}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, 'dx*_dt*.csv'))):
        with open(path) as f:
            head = f.readline().strip().split(',')
            rows = [dict(zip(head, line.strip().split(','))) for line in f if line.strip()]
        if len(rows) != 9:
            continue
        dx, dt = rows[0]['dx_mm'], rows[0]['dt_ms']
        meta = {}
        if os.path.exists(path[:-4] + '.json'):
            with open(path[:-4] + '.json') as f:
                meta = json.load(f)
        runs[(dx, dt)] = {'points': [float(r['activation_ms']) for r in rows],
                          'scheme': rows[0].get('diffusion', '?'),
                          'precision': rows[0].get('precision', '?'),
                          'meta': meta}
    return runs


def niederer_tables(L, runs, level='###'):
    dxs = sorted({k[0] for k in runs}, key=float, reverse=True)
    dts = sorted({k[1] for k in runs}, key=float, reverse=True)
    L.append(f'{level} Activation time of the far corner P8 (20, 7, 3) mm, ms')
    L.append('')
    L.append('| dx (mm) \\ dt (ms) | ' + ' | '.join(dts) + ' |')
    L.append('|---|' + '---|' * len(dts))
    for dx in dxs:
        cells = []
        for dt in dts:
            r = runs.get((dx, dt))
            cells.append('—' if r is None else f"{r['points'][7]:.2f}" +
                         (' (CN)' if r['scheme'] == 'crank-nicolson' else ''))
        L.append(f'| {dx} | ' + ' | '.join(cells) + ' |')
    L.append('')
    L.append(f'{level} All nine points, ms')
    L.append('')
    keys = [(dx, dt) for dx in dxs for dt in dts if (dx, dt) in runs]
    L.append('| point | ' + ' | '.join(f'dx {dx} / dt {dt}' for dx, dt in keys) + ' |')
    L.append('|---|' + '---|' * len(keys))
    for q, label in enumerate(NIEDERER_LABELS):
        L.append(f'| {label} | ' + ' | '.join(f"{runs[k]['points'][q]:.2f}" for k in keys) + ' |')
    L.append('')
    L.append(f'{level} How each run was made')
    L.append('')
    L.append('| dx | dt | diffusion | precision | commit | host | threads | wall (s) |')
    L.append('|---|---|---|---|---|---|---|---|')
    for k in keys:
        r = runs[k]
        m = r['meta']
        host = m.get('device') or f"{m.get('cpu', '?')} ({m.get('nproc', '?')} cores)"
        threads = '—' if m.get('backend') == 'cuda' else (m.get('threads', '?') or 'all')
        L.append(f"| {k[0]} | {k[1]} | {r['scheme']} | {r['precision']} | `{m.get('commit', '?')}` | "
                 f"{host} | {threads} | {m.get('wall_s', '?')} |")
    L.append('')


def niederer_monotone(runs):
    """Per dt with at least three dx: (points whose activation never rises as dx refines, 9)."""
    out = {}
    dxs = sorted({k[0] for k in runs}, key=float, reverse=True)
    for dt in sorted({k[1] for k in runs}, key=float, reverse=True):
        have = [dx for dx in dxs if (dx, dt) in runs]
        if len(have) < 3:
            continue
        ok, rises = 0, []
        for q in range(9):
            seq = [runs[(dx, dt)]['points'][q] for dx in have]
            if all(b <= a + 1e-9 for a, b in zip(seq, seq[1:])):
                ok += 1
            else:
                rise = max(b - a for a, b in zip(seq, seq[1:]))
                rises.append(f"{NIEDERER_LABELS[q].split(' ')[0]} rises by {rise:.1e} ms "
                             f"({' → '.join(f'{x:.4f}' for x in seq)})")
        out[dt] = (have, ok, rises)
    return out


def niederer_section(L):
    runs = read_niederer()
    L.append('## 5. The N-version benchmark (Niederer et al. 2011)')
    L.append('')
    L.append('Slab 20 × 7 × 3 mm, ten Tusscher 2006 epi, σl 0.1334 / σt 0.0176 S/m, χ 1400 /cm, '
             'Cm 1 µF/cm², 50 000 µA/cm³ for 2 ms in the 1.5 mm corner cube, rl1 cell steps, '
             'Godunov splitting; activation = first upward crossing of 0 mV, linear in time. '
             'Each (dx, dt) is one run of `heartwave bench niederer`, recorded by '
             '`python3 tools/run_niederer.py` in docs/data/niederer/ (command, commit, host and '
             'wall time in the .json beside each CSV) and read from there by this script. '
             'Diffusion is explicit where dt is within the stability limit, else Crank-Nicolson '
             '(`--diffusion auto`).')
    L.append('')
    if not runs:
        L.append('No runs recorded yet: run `python3 tools/run_niederer.py`.')
        L.append('')
        return
    niederer_tables(L, runs)
    gpu = read_niederer(NIEDERER_GPU_DIR)
    if not gpu:
        return
    L.append('### On the GPU, down to dx 0.05 mm')
    L.append('')
    L.append('The same runs with `--backend cuda` on the device machine, in double precision like '
             'the cpu runs, adding dx 0.05 mm (400 × 140 × 60 = 3.36 M cells), which the cpu cannot '
             'afford: `python3 tools/run_niederer.py --backend cuda` (gpu-check.sh part `niederer`), '
             'recorded in docs/data/niederer-gpu/.')
    L.append('')
    mono = niederer_monotone(gpu)
    if mono:
        L.append('Activation times under refinement (dx from coarse to fine, at each dt): '
                 'a point is monotone when its activation time never rises as dx shrinks.')
        L.append('')
        L.append('| dt (ms) | dx (mm) | points monotone | P8 (ms) | the others |')
        L.append('|---|---|---|---|---|')
        for dt, (have, ok, rises) in mono.items():
            p8 = ' → '.join(f"{gpu[(dx, dt)]['points'][7]:.2f}" for dx in have)
            L.append(f"| {dt} | {', '.join(have)} | {ok} of 9 | {p8} | {'; '.join(rises) or '—'} |")
        L.append('')
        L.append('P1 is the corner inside the stimulated cube, activated by the stimulus itself: its time '
                 'settles once the cube is resolved, and what is left is within 1e-4 ms.')
        L.append('')
    common = [k for k in gpu if k in runs]
    if common:
        L.append('GPU against the cpu engine at the same (dx, dt): the largest difference over the '
                 'nine points, against dt.')
        L.append('')
        L.append('| dx | dt | max abs difference (ms) | within one dt |')
        L.append('|---|---|---|---|')
        for k in sorted(common, key=lambda k: (-float(k[0]), -float(k[1]))):
            d = max(abs(a - b) for a, b in zip(gpu[k]['points'], runs[k]['points']))
            shown = '0 (equal to the records\' 6 decimals)' if d < 5e-7 else f'{d:.2g}'
            L.append(f"| {k[0]} | {k[1]} | {shown} | {'yes' if d <= float(k[1]) + 1e-9 else 'no'} |")
        L.append('')
    niederer_tables(L, gpu, '####')


GPU_DIR = os.path.join(ROOT, 'docs', 'data', 'gpu')


def gpu_section(L):
    """Section 6 from the recorded device run (tools/device/gpu-check.sh's logs)."""
    L.append('## 6. The CUDA backend on a GPU')
    L.append('')
    summ = os.path.join(GPU_DIR, 'summary.txt')
    tests = os.path.join(GPU_DIR, 'gpu-tests.log')
    if not (os.path.exists(summ) and os.path.exists(tests)):
        L.append('No recorded device run in docs/data/gpu/.')
        L.append('')
        return
    summary = {}
    log = ''
    # gpu-check.sh `rest` writes summary.txt and gpu-tests.log; `cell` (the printed cell
    # step, sharded over processes) writes summary-cell.txt and gpu-tests-cell.log.
    for s_name, l_name in (('summary.txt', 'gpu-tests.log'), ('summary-cell.txt', 'gpu-tests-cell.log')):
        if os.path.exists(os.path.join(GPU_DIR, s_name)):
            with open(os.path.join(GPU_DIR, s_name)) as f:
                for m in (re.match(r'^(\S.*?)\s{2,}(.*)$', x) for x in f):
                    if m and m.group(1).strip() not in summary:
                        summary[m.group(1).strip()] = m.group(2).strip()
        if os.path.exists(os.path.join(GPU_DIR, l_name)):
            with open(os.path.join(GPU_DIR, l_name)) as f:
                log += f.read()
    L.append(f"Recorded on the device machine ({summary.get('device', '?')}) at commit "
             f"`{summary.get('commit', '?')}` by `bash tools/device/gpu-check.sh`, which runs the `gpu` "
             "test label (tests/gpu) and compute-sanitizer; CI has no GPU, so these lines are read from "
             "`docs/data/gpu/`, not rerun here.")
    L.append('')
    L.append('| check | result |')
    L.append('|---|---|')
    for k in [k for k in summary if k.startswith('gpu tests')] + ['sanitizer memcheck', 'sanitizer racecheck',
                                                                  'sanitizer initcheck']:
        L.append(f"| {k} | {summary.get(k, 'not recorded')} |")
    L.append('')
    status = {m.group(2): m.group(1).strip() for m in re.finditer(r'^\[\s*(OK|FAILED)\s*\] (\S+) \(', log, re.M)}
    suites = {}
    for m in re.finditer(r'^\[ RUN      \] (\S+)\n((?:(?!\[ RUN).*\n)*)', log, re.M):
        name = m.group(1)
        suites.setdefault(name.split('.')[0].split('/')[-1], []).append((name, [x[len('[measured] '):] for x in m.group(2).splitlines()
                                                            if x.startswith('[measured] ')]))
    titles = {'CudaTissue': 'Tissue: GPU against the reference engine (double: V after 100 steps, activation; float: activation within dt)',
              'CudaCell': 'The printed CUDA cell step against the interpreter, one step, every model and integrator',
              'CudaPopulation': 'Populations: GPU against the cpu'}
    for suite, tests_ in suites.items():
        L.append(f'### {titles.get(suite, suite)}')
        L.append('')
        if suite == 'CudaCell':  # one test per model and precision: the table below says it all
            ok = sum(1 for name, _ in tests_ if status.get(name) == 'OK')
            L.append(f'{ok} of {len(tests_)} tests (one per model and precision) OK; the log is '
                     '`docs/data/gpu/gpu-tests-cell.log`.')
            L.append('')
            continue
        for name, lines in tests_:
            L.append(f"- `{name}`: {status.get(name, '?')}")
            shown = lines if len(lines) <= 12 else lines[:3] + [f'... {len(lines) - 6} more lines in docs/data/gpu/gpu-tests.log ...'] + lines[-3:]
            for x in shown:
                L.append(f'  - {x}')
        L.append('')
    if 'CudaCell' in suites:
        worst = {}
        for _, lines in suites['CudaCell']:
            for x in lines:
                m = re.match(r'cuda cell step vs interpreter, (\S+) (\S+) (float|double): (\S+) of scale', x)
                if m:
                    key = (m.group(1), m.group(3))
                    worst[key] = max(worst.get(key, 0.0), float(m.group(4)))
        L.append('Largest error of one step over every integrator, relative to each state\'s scale:')
        L.append('')
        L.append('| model | double | float |')
        L.append('|---|---|---|')
        for model in sorted({k[0] for k in worst}):
            L.append(f"| {model} | {worst.get((model, 'double'), float('nan')):.2g} | {worst.get((model, 'float'), float('nan')):.2g} |")
        L.append('')


def tissue_section(L, measured, status):
    L.append('## 4. Tissue')
    L.append('')
    L.append('Every line is printed by a tissue test as `[measured] ...` and copied here with the '
             "test's name and result (tests/unit/test_tissue_*.cpp, test_geometry.cpp, "
             'test_io_*.cpp). The tests assert the bounds; these are the values they saw.')
    L.append('')
    for prefix, title in TISSUE_SUITES:
        lines = [(t, m) for t, m in measured if t.split('.')[0].startswith(prefix)]
        if not lines:
            continue
        L.append(f'### {title}')
        L.append('')
        last = None
        for t, m in lines:
            if t != last:
                L.append(f'- `{t}` ({test_status(status, t)})')
                last = t
            L.append(f'  - {m}')
        L.append('')


def read_rows(path):
    """A restitution CSV (tests/golden/restitution or the test's own rows): header, then numbers."""
    rows = []
    with open(path) as f:
        lines = [x.strip() for x in f if x.strip() and not x.startswith('#')]
    head = lines[0].split(',')
    for x in lines[1:]:
        rows.append(dict(zip(head, (float(v) for v in x.split(',')))))
    return rows


def svg_curves(path, title, xlabel, series):
    """A small SVG line chart (no plotting library needed): series = [(label, colour, dashed, [(x, y)])]."""
    pts = [p for _, _, _, ps in series for p in ps]
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    pad = 0.05 * (y1 - y0 or 1)
    y0, y1 = y0 - pad, y1 + pad
    W, H, l, r, t, b = 560, 340, 60, 20, 30, 45
    X = lambda x: l + (x - x0) / ((x1 - x0) or 1) * (W - l - r)
    Y = lambda y: H - b - (y - y0) / ((y1 - y0) or 1) * (H - t - b)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14">{title}</text>',
         f'<line x1="{l}" y1="{H - b}" x2="{W - r}" y2="{H - b}" stroke="black"/>',
         f'<line x1="{l}" y1="{t}" x2="{l}" y2="{H - b}" stroke="black"/>',
         f'<text x="{(l + W - r) / 2}" y="{H - 8}" text-anchor="middle">{xlabel}</text>',
         f'<text x="14" y="{(t + H - b) / 2}" text-anchor="middle" transform="rotate(-90 14 {(t + H - b) / 2})">APD90 (ms)</text>']
    for k in range(6):
        xv, yv = x0 + k * (x1 - x0) / 5, y0 + k * (y1 - y0) / 5
        o.append(f'<text x="{X(xv):.1f}" y="{H - b + 16}" text-anchor="middle">{xv:.0f}</text>')
        o.append(f'<text x="{l - 6}" y="{Y(yv) + 4:.1f}" text-anchor="end">{yv:.0f}</text>')
        o.append(f'<line x1="{l}" y1="{Y(yv):.1f}" x2="{W - r}" y2="{Y(yv):.1f}" stroke="#ddd"/>')
    for i, (label, colour, dashed, ps) in enumerate(series):
        d = ' '.join(f'{X(x):.1f},{Y(y):.1f}' for x, y in sorted(ps))
        dash = ' stroke-dasharray="5,4"' if dashed else ''
        o.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>')
        for x, y in ps:
            o.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="{3 if dashed else 2}" fill="{"none" if dashed else colour}" stroke="{colour}"/>')
        o.append(f'<text x="{W - r - 150}" y="{H - b - 14 - 16 * i}" fill="{colour}">{label}</text>')
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')


def restitution_section(L, status):
    L.append('### Restitution curves against Myokit')
    L.append('')
    L.append('`heartwave restitution` (cell/restitution.hpp, RL2 dt 0.01 ms) against Myokit (CVODES, rtol 1e-8, '
             'atol 1e-10) on the same protocols: S1-S2 with 10 S1 beats at BCL 1000 ms, and the dynamic protocol '
             'with 20 beats per cycle length (references made by `python3 tools/myokit_restitution.py` into '
             'tests/golden/restitution; compared by tests/unit/test_restitution_vs_myokit.cpp). Both sides use '
             'the APD90 rule above and call an S2 captured when it rose at least 80 % of the S1 upstroke and '
             'repolarised to 90 %. Bars: APD90 within 1 ms; capture the same at every interval except within '
             "1 ms of Myokit's threshold.")
    L.append('')
    os.makedirs(RESTITUTION_FIGURES, exist_ok=True)
    for golden in sorted(glob.glob(os.path.join(RESTITUTION_GOLDEN, '*.s1s2.csv'))):
        model = os.path.basename(golden)[:-len('.s1s2.csv')]
        ours_path = os.path.join(VERIFY_OUT, 'restitution', model + '.s1s2.csv')
        dyn_ours_path = os.path.join(VERIFY_OUT, 'restitution', model + '.dynamic.csv')
        st = test_status(status, f'Models/RestitutionVsMyokit.S1S2RowsMatch/{model}')
        st_dyn = test_status(status, f'Models/RestitutionVsMyokit.DynamicRowsMatch/{model}')
        L.append(f'#### {model}')
        L.append('')
        if not (os.path.exists(ours_path) and os.path.exists(dyn_ours_path)):
            L.append(f'(the test did not write its rows: S1-S2 {st}, dynamic {st_dyn})')
            L.append('')
            continue
        ref, ours = read_rows(golden), read_rows(ours_path)
        dref = read_rows(os.path.join(RESTITUTION_GOLDEN, model + '.dynamic.csv'))
        dours = read_rows(dyn_ours_path)
        L.append(f"APD90(S1): Heartwave {ours[0]['apd90_s1']:.2f} ms, Myokit {ref[0]['apd90_s1']:.2f} ms. "
                 f'S1-S2 test: {st}; dynamic test: {st_dyn}.')
        L.append('')
        L.append('| CI (ms) | DI (ms) | APD90(S2) Heartwave | APD90(S2) Myokit | captured (Heartwave / Myokit) |')
        L.append('|---|---|---|---|---|')
        show = lambda x: '—' if x != x else f'{x:.2f}'
        for a, g in zip(ours, ref):
            L.append(f"| {a['coupling_ms']:g} | {a['coupling_ms'] - a['apd90_s1']:.2f} | {show(a['apd90_s2'])} | "
                     f"{show(g['apd90_s2'])} | {'yes' if a['captured'] else 'no'} / {'yes' if g['captured'] else 'no'} |")
        L.append('')
        L.append('| BCL (ms) | APD90 Heartwave | APD90 Myokit | 1:1 (Heartwave / Myokit) |')
        L.append('|---|---|---|---|')
        for a, g in zip(dours, dref):
            L.append(f"| {a['bcl_ms']:g} | {show(a['apd90'])} | {show(g['apd90'])} | "
                     f"{'yes' if a['captured'] else 'no'} / {'yes' if g['captured'] else 'no'} |")
        L.append('')
        di = lambda rows: [(r['coupling_ms'] - r['apd90_s1'], r['apd90_s2']) for r in rows if r['captured']]
        svg_curves(os.path.join(RESTITUTION_FIGURES, model + '.s1s2.svg'), f'{model}: S1-S2 restitution',
                   'DI (ms)', [('Heartwave (RL2)', '#c0392b', False, di(ours)),
                               ('Myokit (CVODES)', '#2c3e50', True, di(ref))])
        dyn = lambda rows: [(r['bcl_ms'], r['apd90']) for r in rows if r['captured']]
        svg_curves(os.path.join(RESTITUTION_FIGURES, model + '.dynamic.svg'), f'{model}: dynamic restitution',
                   'BCL (ms)', [('Heartwave (RL2)', '#c0392b', False, dyn(dours)),
                                ('Myokit (CVODES)', '#2c3e50', True, dyn(dref))])
        L.append(f'![S1-S2 restitution of {model}](data/restitution/{model}.s1s2.svg) '
                 f'![dynamic restitution of {model}](data/restitution/{model}.dynamic.svg)')
        L.append('')


def test_status(status, name):
    # A test name appears in the final FAILED summary too; any FAILED wins.
    return status.get(name, 'not run')


def fmt_apd(s):
    return ' / '.join('—' if x == 'nan' else f'{float(x):.2f}' for x in s.split('/'))


def parse_model_lines(output, tag):
    """The `TAG model=NAME key=value ...` lines a test prints, by model: {name: {key: value}}."""
    rows = {}
    for m in re.finditer(tag + r' model=(\S+)(.*)', output):
        rows[m.group(1)] = {k: v.strip('"') for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', m.group(2))}
    return rows


def tables_section(L, output, status, measured):
    """Section 8: lookup tables (time.cell_maths = "tables") against the exact maths."""
    rows = parse_model_lines(output, 'HW_TABLES')
    L.append('## 8. Lookup tables against the exact maths')
    L.append('')
    L.append('`--cell-maths tables` / `time.cell_maths = "tables"` ([cell-maths.md](cell-maths.md)): functions '
             'of V alone looked up in tables over -150 ... 100 mV, each within a relative tolerance of 1e-4 at '
             'every quarter point of its grid. Test `Models/TablesBounds` (tests/unit/test_tables_bounds.cpp): '
             'one beat at BCL 1000 ms, GRL2 at dt 0.01 ms in double, the run-time compiled kernel with tables '
             'against the same model printed exactly. The bounds (issue 29): APD90 within 0.1 ms, RRMS of V '
             '<= 0.1 %. Models whose voltage is dimensionless have no tables.')
    L.append('')
    L.append('| model | functions tabulated | tables (entries) | worst table error | exact APD90 (ms) | '
             'ΔAPD90 (ms) | RRMS of V | test |')
    L.append('|---|---|---|---|---|---|---|---|')
    for model in sorted(rows):
        r = rows[model]
        name = 'Models/TablesBounds.OneBeatWithinTheBoundsOfTheExactModel/' + re.sub(r'[^A-Za-z0-9]', '_', model)
        st = test_status(status, name)
        if int(r['functions']) == 0:
            L.append(f"| {model} | 0 ({r.get('why') or 'no function of V alone worth a table'}) | | | | | | {st} |")
            continue
        d = r.get('apd90_diff_ms', 'nan')
        L.append(f"| {model} | {r['functions']} | {r.get('groups')} ({r.get('entries')}) | "
                 f"{float(r.get('worst_table_error', 'nan')):.1e} | {float(r.get('apd90', 'nan')):.2f} | "
                 f"{'-' if d == 'nan' else f'{float(d):.4f}'} | {float(r.get('rrms', 'nan')):.1e} | {st} |")
    if not rows:
        L.append('| (no output: the test did not run) | | | | | | | |')
    L.append('')
    L.append('In tissue (test `Tables.TissueWithinOneDtAndHalfAPercentOfCv`, a ten Tusscher strip 20 mm long; '
             'bounds: activation within one dt, conduction velocity within 0.5 %):')
    L.append('')
    for test, line in measured:
        if test.startswith('Tables.'):
            L.append(f'- {line} ({test_status(status, test)})')
    L.append('')


def fast_section(L, output, status, measured):
    """Section 9: the GPU's fast intrinsics (time.cell_maths = "fast") against the exact maths."""
    rows = parse_model_lines(output, 'HW_FAST')
    L.append('## 9. Fast intrinsics against the exact maths')
    L.append('')
    L.append('`--cell-maths fast` / `time.cell_maths = "fast"` ([cell-maths.md](cell-maths.md)): in float kernels, '
             'exp, log, log10 and pow by the GPU\'s fast intrinsics (__expf, __logf, __log10f, __powf) and division '
             'by __fdividef. On the CPU the C++ printer evaluates the same approximations (the rounding of their '
             'arguments, which is nearly all of their error; the hardware\'s ex2, lg2 and rcp are within 2 ulp and '
             'taken as correctly rounded), so this table bounds what the GPU runs. Test `Models/FastMathsBounds` '
             '(tests/unit/test_fast_maths_bounds.cpp): one beat at BCL 1000 ms, GRL2 at dt 0.01 ms in float, the '
             'kernel with the fast intrinsics against the same model\'s float kernel printed exactly. The bounds '
             '(issue 29): APD90 within 0.1 ms, RRMS of V <= 0.1 %. For scale, the last two columns are float '
             'against double with the exact maths. Where that float-against-double RRMS is 5e-4 or more, two float '
             'kernels cannot be compared to 0.1 % (their difference is float\'s rounding, amplified), and the fast '
             'kernel is held to the exact double model instead, at most 0.1 % beyond float\'s own distance from it: '
             'its RRMS against double is then given in brackets. "Replaced" counts one evaluation of the rates with '
             'their Jacobian diagonal (`heartwave model inspect MODEL --fast`).')
    L.append('')
    L.append('| model | replaced: exp / log / pow / div | exact APD90 (ms) | ΔAPD90 (ms) | RRMS of V | '
             'float vs double: ΔAPD90 (ms) | RRMS | test |')
    L.append('|---|---|---|---|---|---|---|---|')
    def num(r, k, f):
        v = r.get(k, 'nan')
        return '—' if v == 'nan' else format(float(v), f)
    for model in sorted(rows):
        r = rows[model]
        name = 'Models/FastMathsBounds.OneBeatInFloatWithinTheBoundsOfTheExactModel/' + re.sub(r'[^A-Za-z0-9]', '_', model)
        st = test_status(status, name)
        if 'skipped' in r:
            L.append(f"| {model} | {r.get('replaced')} | {r['skipped']} | | | | | {st} |")
            continue
        L.append(f"| {model} | {r.get('exp')} / {r.get('log')} / {r.get('pow')} / {r.get('div')} | "
                 f"{num(r, 'apd90', '.2f')} | {num(r, 'apd90_diff_ms', '.4f')} | {num(r, 'rrms', '.1e')}"
                 f"{' (' + num(r, 'fast_vs_double_rrms', '.1e') + ' against double)' if r.get('bound') == 'double' else ''} | "
                 f"{num(r, 'float_vs_double_apd90_ms', '.4f')} | {num(r, 'float_vs_double_rrms', '.1e')} | {st} |")
    if not rows:
        L.append('| (no output: the test did not run) | | | | | | | |')
    L.append('')
    L.append('In tissue (test `FastMaths.TissueWithinOneDtAndHalfAPercentOfCv`, the strip of section 8 in float; '
             'the GPU\'s own kernels are checked the same way on the device by '
             '`CudaTissue.FastMathsWithinOneDtAndHalfAPercentOfCv`, docs/benchmarks.md):')
    L.append('')
    for test, line in measured:
        if test.startswith('FastMaths.'):
            L.append(f'- {line} ({test_status(status, test)})')
    L.append('')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build-dir', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'docs', 'verification.md'))
    ap.add_argument('--tables-only', action='store_true',
                    help='rerun only the cell-maths tests (tables, fast intrinsics) and rewrite sections 8 and 9 '
                         'in the existing document')
    ap.add_argument('--stiff-only', action='store_true',
                    help='rerun only the stiff-set test and rewrite section 7 in the existing document')
    ap.add_argument('--from-log', metavar='LOG',
                    help='with --tables-only or --stiff-only: read the tests\' output from LOG (ctest\'s '
                         'Testing/Temporary/LastTest.log of a run, e.g. a fresh-clone CI run) instead of running '
                         'them; the rewritten sections say so, with --log-commit')
    ap.add_argument('--log-commit', default='?', help='the commit the run behind --from-log built')
    ap.add_argument('--gpu-only', action='store_true',
                    help='rewrite only section 6 (read from docs/data/gpu/) in the existing document: '
                         'a new device record needs no rerun of the cpu tests')
    args = ap.parse_args()
    if args.gpu_only:
        with open(args.out) as f:
            doc = f.read()
        start, end = doc.index('## 6. The CUDA backend on a GPU'), doc.index('## 7. ')
        L = []
        gpu_section(L)
        with open(args.out, 'w') as f:
            f.write(doc[:start] + '\n'.join(L).rstrip('\n') + '\n\n' + doc[end:])
        return
    def partial_output(test_filter):
        if args.from_log:
            with open(args.from_log, encoding='utf-8', errors='replace') as f:
                return f.read()
        return run_tests(os.path.abspath(args.build_dir), test_filter, backends=False)[1]

    def from_log_note(L):
        if args.from_log:
            L.insert(2, f'This section was regenerated from the output of a test run at commit `{args.log_commit}` '
                        f'(ctest\'s LastTest.log, read by `--from-log`), not by a run of its own.')
            L.insert(3, '')

    if args.stiff_only:
        with open(args.out) as f:
            doc = f.read()
        _, _, status, _, stiff = parse(partial_output('Models/StiffSet.*'))
        L = []
        stiff_section(L, stiff, status)
        from_log_note(L)
        start, end = doc.index('## 7. Stiff models'), doc.index('## 8. ')
        with open(args.out, 'w') as f:
            f.write(doc[:start] + '\n'.join(L).rstrip('\n') + '\n\n' + doc[end:])
        return
    if args.tables_only:
        with open(args.out) as f:
            doc = f.read()
        output = partial_output(TABLES_FILTER)
        _, _, status, measured, _ = parse(output)
        L = []
        tables_section(L, output, status, measured)
        from_log_note(L)
        F = []
        fast_section(F, output, status, measured)
        from_log_note(F)
        L += F
        start = doc.find('## 8. Lookup tables')
        end = doc.find('## Failing tests at generation time')
        if start < 0:
            start = end if end >= 0 else len(doc)
        if end < start:
            end = len(doc)
        with open(args.out, 'w') as f:
            f.write(doc[:start].rstrip('\n') + '\n\n' + '\n'.join(L).rstrip('\n') + '\n\n' + doc[end:])
        return
    exe, output = run_tests(os.path.abspath(args.build_dir))
    orders, rows, status, measured, stiff = parse(output)
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or 'unknown'
    dirty = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    date = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    goldens = {}
    for p in sorted(glob.glob(os.path.join(ROOT, 'tests', 'golden', 'traces', '*.json'))):
        with open(p) as f:
            g = json.load(f)
        goldens[g['model']] = g
    models = sorted(set(goldens) | {m for m, _ in rows})

    L = []
    L.append('# Verification')
    L.append('')
    L.append('<!-- Generated by tools/make_verification_doc.py; do not edit by hand. -->')
    L.append('')
    L.append(f'- Generated: {date}, commit `{commit}`' + (' (with uncommitted changes)' if dirty else ''))
    L.append(f'- Command: `python3 tools/make_verification_doc.py --build-dir '
             f'{os.path.relpath(os.path.abspath(args.build_dir), ROOT)}`, which runs '
             f'`{exe} --gtest_filter={FILTER}` and `{os.path.join(os.path.dirname(exe), "heartwave_backend_tests")}`')
    L.append('- Every number below is printed by a test (tests/unit/test_convergence.cpp, '
             'test_vs_cvode.cpp, test_vs_myokit.cpp, the tissue tests) and copied here by the '
             'script; the N-version table is read from the recorded runs in docs/data/niederer/.')
    L.append('')
    L.append('## 1. Convergence order of the fixed-step integrators')
    L.append('')
    L.append('Manufactured problem with a known exact solution (a gate whose a, b depend on t and '
             'on a second, nonlinear non-gate state; see test_convergence.cpp). Observed order = '
             'mean of log2(e(dt)/e(dt/2)) over the two finest halvings; the test requires it '
             'within ±0.2 of the formal order.')
    L.append('')
    L.append('| Integrator | Formal order | Observed order | Test |')
    L.append('|---|---|---|---|')
    for name, p, q in orders:
        st = test_status(status, 'StiffIntegrators.BlockPathKeepsFormalOrder' if name.endswith('_block')
                         else f'AllIntegrators/ConvergenceTest.ObservedOrderMatchesFormalOrder/{name}')
        L.append(f'| {name} | {p} | {q:.3f} | {st} |')
    if not orders:
        L.append('| (no output: the convergence test did not run) | | | |')
    L.append('')
    L.append('## 2. Single cells: RL2, CVODE and Myokit')
    L.append('')
    L.append('**Pacing convention** (the same in Heartwave and in tools/myokit_golden.py): the '
             "model's own stimulus protocol is replaced; the stimulus current is the model's own "
             'amplitude while on and 0 otherwise; it is on for k·BCL ≤ t < k·BCL + duration '
             "(the model's own duration), k = 0, 1, 2, i.e. stimuli at t = 0, 1000, 2000 ms; "
             'the run starts from the model\'s initial values at t = 0 and lasts 3000 ms. '
             'Heartwave aligns the pulse edges to its step grid (exact at dt 0.01 ms for the '
             'durations used here); CVODE (ours and Myokit\'s) restarts at the edges.')
    L.append('')
    L.append('**Runs.** Heartwave: `heartwave cell MODEL.cellml --integrator rl2 --dt 0.01 '
             '--bcl 1000 --beats 3 --json --output-interval 0.5 --output trace.csv`, and the same '
             'with `--integrator cvode --rtol 1e-8 --atol 1e-10` (CVODE reports at every 0.01 ms '
             'for the biomarkers); FitzHugh-Nagumo adds `--stimulus I` (its pulse variable has no '
             'name a role rule could safely match) and Noble 1962 `--stim-amplitude 0` (its own '
             'amplitude, which the CLI does not take as a default). Myokit: committed golden traces '
             '(tests/golden/traces, made by `python3 tools/myokit_golden.py`), CVODES rtol 1e-8, '
             'atol 1e-10.')
    L.append('')
    L.append('**Metrics.** RRMS = sqrt(Σ(V − V_ref)² / Σ V_ref²) (seed 000 Eq. 2.1) on '
             't = 0, 0.5, …, 2999.5 ms (both traces linearly interpolated there). APD90 per beat: '
             'beat window [k·BCL, (k+1)·BCL), V_rest = V at the window start, activation at the '
             'largest upstroke slope, repolarisation at the first interpolated crossing of '
             'V_peak − 0.9 (V_peak − V_rest) after the peak (cell/biomarkers.hpp; the goldens use '
             'the same rule on a 0.01 ms log). "—" = no repolarisation in that window. Noble 1962 '
             'is not paced (its own stimulus amplitude is 0; it self-oscillates), so a 1000 ms '
             'window holds any number of upstrokes and per-beat APD90 is not defined: it is '
             'compared on RRMS only. Bars: RRMS ≤ 1 %, |ΔAPD90| ≤ 1 ms '
             'in every beat.')
    L.append('')
    pairs = [('rl2_vs_cvode', 'RL2 dt 0.01 vs CVODE', 'SharedCellml/VsCvode.Rl2AtDt001MatchesCvode/{m}'),
             ('cvode_vs_myokit', 'CVODE vs Myokit', 'Goldens/VsMyokit.TraceAndApd90MatchGolden/{m}_cvode'),
             ('rl2_vs_myokit', 'RL2 dt 0.01 vs Myokit', 'Goldens/VsMyokit.TraceAndApd90MatchGolden/{m}_rl2')]
    for key, title, test in pairs:
        L.append(f'### {title}')
        L.append('')
        L.append('| Model | RRMS(V) (fraction; bar 1e-2) | max \\|ΔAPD90\\| (ms) | APD90 per beat (ms) | reference APD90 (ms) | Test |')
        L.append('|---|---|---|---|---|---|')
        for m in models:
            st = test_status(status, test.format(m=m))
            r = rows.get((m, key))
            if r is None:
                L.append(f'| {m} | — | — | — | — | {st} (no result line) |')
                continue
            diff = ('not compared (unpaced)' if r['apd_diff'] != r['apd_diff']
                    else f"{r['apd_diff']:.3f}")
            L.append(f"| {m} | {r['rrms']:.2e} | {diff} | {fmt_apd(r['apd'])} | "
                     f"{fmt_apd(r['ref_apd'])} | {st} |")
        L.append('')
    L.append('## 3. Myokit goldens')
    L.append('')
    L.append('Made by `python3 tools/myokit_golden.py` (pins in tools/requirements.txt) with '
             "Myokit's own CellML importer and its compiled CVODES `myokit.Simulation` (built "
             'with the system C compiler against Debian libsundials-dev). The script names the '
             'voltage and stimulus variables itself (oxmeta annotations read from the raw XML, '
             'else name rules, else the only time-dependent piecewise), independently of '
             "Heartwave's code.")
    L.append('')
    L.append('Each golden is also run at 100x tighter tolerances (rtol 1e-10, atol 1e-12); the '
             'RRMS between the two is the golden\'s own error.')
    L.append('')
    L.append('| Model | Myokit | V variable | stimulus variable | amplitude | duration (ms) | '
             'RRMS vs 100x tighter | made |')
    L.append('|---|---|---|---|---|---|---|---|')
    for m, g in goldens.items():
        L.append(f"| {m} | {g['myokit']} | `{g['voltage_variable']}` | `{g['stimulus_variable']}` | "
                 f"{g['stimulus_amplitude']:g} {g['stimulus_amplitude_units']} | "
                 f"{g['stimulus_duration_ms']:g} | "
                 f"{g.get('rrms_vs_100x_tighter_tolerances', float('nan')):.1e} | {g['date']} |")
    L.append('')
    restitution_section(L, status)
    tissue_section(L, measured, status)
    niederer_section(L)
    gpu_section(L)
    stiff_section(L, stiff, status)
    tables_section(L, output, status, measured)
    fast_section(L, output, status, measured)
    failed = sorted(n for n, s in status.items() if s == 'FAILED')
    if failed:
        L.append('## Failing tests at generation time')
        L.append('')
        for n in failed:
            L.append(f'- `{n}`')
        L.append('')
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w') as f:
        f.write('\n'.join(L))
    print(f'wrote {args.out}: {len(orders)} integrators, {len(rows)} comparisons, '
          f'{len(failed)} failing tests')


if __name__ == '__main__':
    main()
