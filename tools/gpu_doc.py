#!/usr/bin/env python3
"""Regenerates the GPU tables of docs/benchmarks.md from a recorded device run.

Why: GPU numbers come from the device machine (tools/device/gpu-check.sh), which this
machine cannot reproduce; the run's own logs are kept in docs/data/gpu/ (summary.txt,
bench.log, gpu-tests.log) and the tables are written from them, never typed.

Usage: python3 tools/gpu_doc.py [--data docs/data/gpu] [--doc docs/benchmarks.md]
Replaces the text between <!-- gpu-bench:begin --> and <!-- gpu-bench:end -->.
"""
import argparse
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

# name -> (what the issue asks, a function of the row that says whether it is met)
TARGETS = {
    'karma3d-256': ('>= 10,000 steps/s (0.89 of the roof at 16 B/cell-step)', lambda r: r['steps_s'] >= 10000),
    'karma3d-512': ('>= 1,250 steps/s', lambda r: r['steps_s'] >= 1250),
    'tt06-3d-256': ('>= 0.70 of the roof', lambda r: r['ach'] >= 0.70),
    'niederer-0.05': ('>= 0.70 of the roof; 20 ms in < 0.5 s', lambda r: r['ach'] >= 0.70 and 2000 / r['steps_s'] < 0.5),
    'rabbit-tt06': ('>= 0.70 of the roof (real time: 50,000 steps/s)', lambda r: r['ach'] >= 0.70),
    'ord-pig128': ('(the same heart at 128³: 0.56 M cells; no target)', None),
    'ord-heart': ('>= 1,000 steps/s (6.6 M cells; a P100 ran 75)', lambda r: r['steps_s'] >= 1000),
}


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def bench_rows(text):
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) == 11 and re.match(r'^[a-z]', f[0]) and f[1].isdigit():
            rows.append({'name': f[0], 'cells': int(f[1]), 'steps': int(f[2]), 's': float(f[3]),
                         'cs': float(f[4]), 'steps_s': float(f[5]), 'wall': float(f[6]),
                         'bpc': float(f[7]), 'gbs': float(f[8]), 'roof': float(f[9]), 'ach': float(f[10])})
    notes = {}
    for line in text.splitlines():
        m = re.match(r'^([a-z0-9.\-]+): (float|double), (.*)$', line)
        if m:
            notes[m.group(1)] = m.group(2) + ', ' + m.group(3)
    return rows, notes


def summary(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r'^(\S.*?)\s{2,}(.*)$', line)
        if m:
            out[m.group(1).strip()] = m.group(2).strip()
    return out


def block(data):
    s = summary(read(os.path.join(data, 'summary.txt')))
    rows, notes = bench_rows(read(os.path.join(data, 'bench.log')))
    roof = s.get('roof', '?')
    lines = [
        f"Device: {s.get('device', '?')}. Commit {s.get('commit', '?')}. Command: `{s.get('command', '?')}`, "
        f"logs in `docs/data/gpu/`. Roof: {roof}.",
        '',
        '| case | tissue cells | cell-steps/s | steps/s | wall s per simulated s | B/cell-step | GB/s | achieved/roof |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for r in rows:
        lines.append(f"| {r['name']} | {r['cells']:,} | {r['cs']:.3g} | {r['steps_s']:,.0f} | {r['wall']:.3g} | "
                     f"{r['bpc']:.0f} | {r['gbs']:.0f} | {r['ach']:.3f} |")
    lines += ['', 'Against the targets of the CUDA issue:', '',
              '| case | target | measured | met |', '|---|---|---|---|']
    for r in rows:
        if r['name'] not in TARGETS:
            continue
        what, ok = TARGETS[r['name']]
        extra = ''
        if r['name'] == 'niederer-0.05':
            extra = f"; 20 ms in {2000 / r['steps_s']:.2f} s (MonoAlg3D on an H100: 95.6 s)"
        if r['name'] == 'rabbit-tt06':
            extra = f"; {50000 / r['steps_s']:.1f}x from real time"
        met = '—' if ok is None else ('yes' if ok(r) else 'no')
        lines.append(f"| {r['name']} | {what} | {r['steps_s']:,.0f} steps/s, {r['ach']:.3f} of the roof{extra} | {met} |")
    if 'population ord-1m' in s:
        lines += ['', f"Population: 10^6 O'Hara-Rudy cells (`heartwave sweep ohara_rudy_2011_endo --lhs GKr_b=0.5:1.5 "
                      f"--cells 1000000 --bcl 400 --beats 1 --precision float --integrator rl1 --backend cuda`): "
                      f"{s['population ord-1m']}."]
    roof_log = os.path.join(data, 'population-roof.log')
    if os.path.exists(roof_log):
        lines += ['', "The same population on the device against its compute roof (`heartwave bench population "
                      "ohara_rudy_2011_endo --cells 1000000 --vary GKr_b=0.5:1.5 --bcl 400 --beats 1 --precision float "
                      "--integrator rl1`, log `population-roof.log`):", '', '```'] + read(roof_log).strip().split('\n') + ['```']
    busy = os.path.join(data, 'busy.txt')
    if os.path.exists(busy):
        q, b, load = {}, {}, ''
        for line in read(busy).splitlines():
            f = line.split()
            if line.startswith('load:'):
                load = line[len('load:'):].strip()
            elif len(f) == 12 and f[0] in ('quiet', 'busy'):
                (q if f[0] == 'quiet' else b)[f[1]] = float(f[6])
        lines += ['', f"With the host's CPUs busy ({load}; the same cases, quiet then beside one busy loop per host "
                      "core, `busy.txt`):", '', '| case | quiet steps/s | busy steps/s | change |', '|---|---|---|---|']
        for name in q:
            if name in b:
                lines.append(f"| {name} | {q[name]:,.0f} | {b[name]:,.0f} | {100 * (b[name] - q[name]) / q[name]:+.1f} % |")
    forced = [(k[len('kernels '):], v) for k, v in s.items() if k.startswith('kernels ')]
    if forced:
        lines += ['', 'The box kernels forced one at a time (`HEARTWAVE_CUDA_KERNEL=cell|window|tower heartwave bench '
                      'CASE --backend cuda`, each tuning its own block shapes and depths; `variants.txt`): steps/s, '
                      'and achieved/roof in brackets:', '', '| case | a thread per cell | sliding window | tower |',
                  '|---|---|---|---|']
        for name, v in forced:
            m = re.findall(r'(cell|window|tower) (\S+) \(([\d.]+)\)', v)
            cells = {k: f'{float(n):,.0f} ({r})' for k, n, r in m}
            lines.append(f"| {name} | {cells.get('cell', '?')} | {cells.get('window', '?')} | {cells.get('tower', '?')} |")
    lines += ['', 'Kernels (from `describe()`; registers per thread from the loaded module):', '']
    for name, n in notes.items():
        lines.append(f'- {name}: {n}')
    return '\n'.join(lines)


def python_block(data):
    """The Python package's overhead against the heartwave command: on this kind of 2-core
    machine (docs/data/python-overhead-cpu.md) and on the device (python-check.sh)."""
    lines = ['Made by `bench/python_overhead.py --markdown` (Python against the `heartwave` command doing the '
             'same work; "of which the binding" is the wall time of the call less the time inside the '
             'library, so what Python to C++ and back costs).', '']
    cpu = os.path.join(ROOT, 'docs', 'data', 'python-overhead-cpu.md')
    if os.path.exists(cpu):
        text = read(cpu).strip().split('\n')
        lines += [f'On the 2-core development machine (cpu backend; {text[0].lstrip("# ")}):', ''] + text[1:] + ['']
    gpu = os.path.join(data, 'python-overhead.md')
    if os.path.exists(gpu):
        s = summary(read(os.path.join(data, 'summary-python.txt')))
        lines += [f"On the device ({s.get('device', '?')}; {s.get('python', '?')}; commit {s.get('commit', '?')}; "
                  f"`bash tools/device/python-check.sh`; the package's tests there: {s.get('python tests', '?')}):",
                  ''] + read(gpu).strip().split('\n')
    return '\n'.join(lines)


def replace_block(doc, begin, end, text, path):
    if begin not in doc or end not in doc:
        sys.exit(f'{path} has no {begin} ... {end} block')
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + '\n' + text + '\n' + end + tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', default=os.path.join(ROOT, 'docs', 'data', 'gpu'))
    ap.add_argument('--doc', default=os.path.join(ROOT, 'docs', 'benchmarks.md'))
    a = ap.parse_args()
    doc = read(a.doc)
    doc = replace_block(doc, '<!-- gpu-bench:begin -->', '<!-- gpu-bench:end -->', block(a.data), a.doc)
    doc = replace_block(doc, '<!-- python-overhead:begin -->', '<!-- python-overhead:end -->', python_block(a.data),
                        a.doc)
    with open(a.doc, 'w', encoding='utf-8') as f:
        f.write(doc)
    print(f'wrote the GPU tables of {os.path.relpath(a.doc, ROOT)} from {os.path.relpath(a.data, ROOT)}')


if __name__ == '__main__':
    main()
