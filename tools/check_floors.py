#!/usr/bin/env python3
"""Checks that the code in src/ keeps to its floors (src/floors.txt).

Every `#include "..."` of a file in src/<floor>/ that names a file of another floor must
name one that floors.txt lets <floor> use; floors.txt itself must list each floor after the
floors it uses (so there is no cycle), and every folder of src/ must be a floor. Prints one
line per offending include (file:line, the include, the floors allowed) and exits 1; with
--graph, prints the folder-level include graph (counts of includes per edge) instead.

Run by the build (target check_floors, part of ALL) and by ctest (floors.includes).
"""
import argparse
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_EXT = ('.cpp', '.hpp', '.cuh', '.cu', '.h')


def read_floors(path):
    floors = collections.OrderedDict()
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        name, uses = line[0], line[1:]
        for u in uses:
            if u not in floors:
                sys.exit(f'{path}:{n}: floor {name} uses {u}, which is not listed above it')
        if name in floors:
            sys.exit(f'{path}:{n}: floor {name} is listed twice')
        floors[name] = set(uses)
    return floors


def includes(src):
    """Yields (file, line number, floor of the file, floor of the included file, text)."""
    for d, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(SOURCE_EXT):
                continue
            p = os.path.join(d, f)
            floor = os.path.relpath(p, src).split(os.sep)[0]
            with open(p, encoding='utf-8', errors='replace') as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if os.path.exists(os.path.join(src, inc)):
                        target = inc.split('/')[0]
                    elif os.path.exists(os.path.join(d, inc)):  # relative to the file
                        target = os.path.relpath(os.path.join(d, inc), src).split(os.sep)[0]
                    else:
                        continue  # a generated header or one of a library
                    yield p, n, floor, target, inc


def self_test():
    """Plants each kind of problem in a scratch src/ and expects the check to report it."""
    import subprocess
    import tempfile
    cases = {
        'upward': ('a/x.hpp', '#include "b/y.hpp"\n', 'goes up a floor'),
        'sideways': ('c/w.hpp', '#include "b/y.hpp"\n', 'across'),
        'unlisted folder': ('d/w.hpp', '', 'no floor'),
        'relative upward': ('a/sub/x.cpp', '#include "../../b/y.hpp"\n', 'goes up a floor'),
    }
    failures = 0
    for name, (path, text, expect) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            src = os.path.join(root, 'src')
            for d in ('a', 'b', 'c'):
                os.makedirs(os.path.join(src, d))
                open(os.path.join(src, d, {'a': 'x.hpp', 'b': 'y.hpp', 'c': 'z.hpp'}[d]), 'w').close()
            with open(os.path.join(src, 'floors.txt'), 'w') as f:
                f.write('a\nb a\nc a\n')
            os.makedirs(os.path.dirname(os.path.join(src, path)), exist_ok=True)
            with open(os.path.join(src, path), 'w') as f:
                f.write(text)
            clean = subprocess.run([sys.executable, __file__, '--src', src], capture_output=True, text=True)
            ok = clean.returncode == 1 and expect in clean.stdout
            print(f'{"ok  " if ok else "FAIL"} {name}: {clean.stdout.strip().splitlines()[0] if clean.stdout else clean.stderr}')
            failures += not ok
    print(f'{len(cases) - failures} passed, {failures} failed')
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument('--src', default=os.path.join(root, 'src'))
    ap.add_argument('--graph', action='store_true', help='print the folder-level include graph')
    ap.add_argument('--self-test', action='store_true',
                    help='check that the check catches an upward, a sideways and an unlisted folder')
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    floors = read_floors(os.path.join(a.src, 'floors.txt'))
    problems = []
    for d in sorted(os.listdir(a.src)):
        if os.path.isdir(os.path.join(a.src, d)) and d not in floors:
            problems.append(f'src/{d}/: a folder that is no floor (add it to src/floors.txt)')
    edges = collections.Counter()
    for p, n, floor, target, inc in includes(a.src):
        if floor == target:
            continue
        edges[(floor, target)] += 1
        if floor in floors and target not in floors[floor]:
            above = list(floors).index(target) > list(floors).index(floor) if target in floors else True
            how = 'up a floor' if above else 'across, to a floor it does not list'
            allowed = ' '.join(sorted(floors[floor], key=list(floors).index)) or 'none'
            problems.append(f'{os.path.relpath(p, os.path.dirname(a.src))}:{n}: #include "{inc}" goes {how} '
                            f'({floor} -> {target}; {floor} may use: {allowed})')
    if a.graph:
        order = list(floors)
        for (s, t), c in sorted(edges.items(), key=lambda e: (order.index(e[0][0]), order.index(e[0][1]))):
            print(f'{s:9s} -> {t:9s} {c}')
        return 0
    for line in problems:
        print(line)
    if problems:
        print(f'check_floors: {len(problems)} problem(s); the floors are in src/floors.txt, '
              'docs/architecture.md says where things go')
        return 1
    print(f'check_floors: {len(floors)} floors, {sum(edges.values())} includes across floors, all downward')
    return 0


if __name__ == '__main__':
    sys.exit(main())
