#!/usr/bin/env python3
"""Runs the N-version benchmark (Niederer et al. 2011) over the dx × dt grid of issue 4 and
records each run as docs/data/niederer/dx<DX>_dt<DT>.csv plus a .json of how it was run.
With --backend cuda (on the GPU host) it records into docs/data/niederer-gpu/ and adds
dx 0.05 mm (3.36 M cells), which the cpu cannot afford.

Why recorded: the finest runs (dx 0.1 mm, dt 0.005 ms: 420 000 cells × 26 000 steps) take
tens of minutes, too long for every regeneration of docs/verification.md; that script
(tools/make_verification_doc.py) reads these files. Rerun a point with --force.

Usage: python3 tools/run_niederer.py [--heartwave build/apps/heartwave/heartwave]
           [--threads N] [--precision f64] [--backend cpu|cuda] [--only DX:DT ...]
           [--force] [--out DIR]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
DXS = ['0.5', '0.2', '0.1']
GPU_DXS = DXS + ['0.05']
DTS = ['0.05', '0.01', '0.005']


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def gpu_name():
    try:
        out = subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'],
                             capture_output=True, text=True).stdout.strip()
        return out.splitlines()[0] if out else None
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--heartwave', default=os.path.join(ROOT, 'build', 'apps', 'heartwave', 'heartwave'))
    ap.add_argument('--threads', type=int, default=0)
    ap.add_argument('--precision', default='f64', choices=['f32', 'f64'])
    ap.add_argument('--only', nargs='*', default=None, help='DX:DT pairs, e.g. 0.1:0.005')
    ap.add_argument('--force', action='store_true', help='rerun points already recorded')
    ap.add_argument('--backend', default='cpu', choices=['cpu', 'cuda'])
    ap.add_argument('--out', default=None,
                    help='default docs/data/niederer (cpu) or docs/data/niederer-gpu (cuda)')
    ap.add_argument('--commit', default=None, help='commit to record (default: git rev-parse HEAD)')
    args = ap.parse_args()
    if not os.path.exists(args.heartwave):
        sys.exit(f'{args.heartwave} not found: build first (bash tools/build.sh)')
    if args.out is None:
        args.out = os.path.join(ROOT, 'docs', 'data', 'niederer' if args.backend == 'cpu' else 'niederer-gpu')
    os.makedirs(args.out, exist_ok=True)
    pairs = [(dx, dt) for dx in (DXS if args.backend == 'cpu' else GPU_DXS) for dt in DTS]
    if args.only:
        pairs = [tuple(p.split(':')) for p in args.only]
    commit = args.commit
    if commit is None:
        try:
            commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                                    capture_output=True, text=True).stdout.strip()
        except OSError:
            commit = ''
    commit = commit or 'unknown'
    for dx, dt in pairs:
        stem = os.path.join(args.out, f'dx{dx}_dt{dt}')
        if os.path.exists(stem + '.csv') and not args.force:
            print(f'dx {dx} dt {dt}: recorded, skipped (--force reruns)')
            continue
        cmd = [args.heartwave, 'bench', 'niederer', '--dx', dx, '--dt', dt, '--precision',
               args.precision, '--backend', args.backend, '--threads', str(args.threads), '-q',
               '-o', stem + '.csv.part']
        print(' '.join(cmd), flush=True)
        t0 = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - t0
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            sys.exit(f'dx {dx} dt {dt}: heartwave exited {proc.returncode}')
        os.replace(stem + '.csv.part', stem + '.csv')
        device = gpu_name() if args.backend == 'cuda' else None
        meta = {
            'command': 'heartwave ' + ' '.join(cmd[1:-2]) + f' -o dx{dx}_dt{dt}.csv',
            'commit': commit,
            'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
            'cpu': cpu_model(),
            'nproc': os.cpu_count(),
            'threads': args.threads,
            'backend': args.backend,
            'wall_s': round(wall, 1),
        }
        if device:
            meta['device'] = device
        with open(stem + '.json', 'w') as f:
            json.dump(meta, f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    main()
