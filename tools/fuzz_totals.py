#!/usr/bin/env python3
"""Adds up tools/fuzz.sh summaries (runs of the same targets in pieces) into one Markdown
table per target: CPU seconds, executions, the most coverage any piece reached and the crash
inputs found, with the pieces each total came from. docs/fuzzing.md's hour-scale table is
this script's output.

    python3 tools/fuzz_totals.py docs/data/fuzz/farm-1127-1.txt docs/data/fuzz/farm-1127-2.txt ...
"""
import sys
from collections import OrderedDict


def rows(path):
    """The summary table of one fuzz.sh output: target -> (cpu_s, executions, edges, features, crashes)."""
    out, inside = {}, False
    for line in open(path, encoding="utf-8", errors="replace"):
        w = line.split()
        if w[:2] == ["target", "wall_s"]:
            inside = True
            continue
        if inside and len(w) >= 7 and w[0].startswith("fuzz_") and w[1].isdigit():
            # target wall_s cpu_s executions [per_cpu_s] edges/features corpus crashes
            cov = next(x for x in w if "/" in x)
            edges, features = (int(x) for x in cov.split("/"))
            out[w[0]] = (int(w[2]), int(w[3]), edges, features, int(w[-1]))
    return out


def main(paths):
    total = OrderedDict()
    for i, p in enumerate(paths, 1):
        for t, (cpu, execs, edges, feats, crashes) in rows(p).items():
            a = total.setdefault(t, {"cpu": 0, "execs": 0, "edges": 0, "feats": 0, "crashes": 0, "pieces": []})
            a["cpu"] += cpu
            a["execs"] += execs
            a["edges"] = max(a["edges"], edges)
            a["feats"] = max(a["feats"], feats)
            a["crashes"] += crashes
            a["pieces"].append(f"{i}: {cpu}")
    print("| target | CPU s (piece: s) | CPU hours | executions | most coverage (edges / features) | crash, timeout inputs |")
    print("|---|---|---|---|---|---|")
    for t, a in total.items():
        print(f"| `{t}` | {a['cpu']} ({'; '.join(a['pieces'])}) | {a['cpu'] / 3600:.2f} | {a['execs']:,} | "
              f"{a['edges']} / {a['feats']} | {a['crashes']} |")
    short = [t for t, a in total.items() if a["cpu"] < 3600]
    print()
    print("Under one CPU-hour: " + (", ".join(f"`{t}`" for t in short) if short else "none") + ".")


if __name__ == "__main__":
    main(sys.argv[1:])
