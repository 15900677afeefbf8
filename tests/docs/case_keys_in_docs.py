#!/usr/bin/env python3
"""Every case key and kind that docs/*.md spells is one the case reader accepts.

    python3 tests/docs/case_keys_in_docs.py --heartwave build/apps/heartwave/heartwave

What is read from the pages:
  - ```toml blocks: each is a case (or a part of one) and is read as it stands;
  - key tables: a table whose first header cell is `key` under a heading naming a section
    (`[grid]`, `[[model]]`, "Top level") gives the keys of that section; a first cell
    `section.key` names both; a key cell may hold several (`chi` / `chi_per_cm`);
  - choice rows: in such a table the `kind` row's quoted words are kinds of that section;
  - kind tables: a first header cell `section.kind` (docs/geometry.md) or `kind` under
    "Regions" gives kinds in its first column, and the region table's second column keys.
The accepted set is not kept here: each key or kind goes into a small case file that
`heartwave run FILE --check` reads, and the reader's own verdict decides — an unknown key is
[HW-CASE-002], a kind that is not one of the choices [HW-CASE-004]. Other problems (a
missing [[model]], a wrong type for the dummy value 0) are the point of neither and ignored.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNKNOWN_KEY, BAD_CHOICE = "HW-CASE-002", "HW-CASE-004"


def section_of(heading: str) -> str | None:
    if "Top level" in heading:
        return ""
    m = re.search(r"`\[\[?([a-z_]+)\]\]?`", heading)
    return m.group(1) if m else None


def is_array(heading: str) -> bool:
    return "[[" in heading


def cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def quoted(cell: str) -> list[str]:
    return re.findall(r'"([^"]+)"', cell)


def toml_for(section: str, array: bool, body: str) -> str:
    if section == "":
        return body + "\n"
    return f"[[{section}]]\n{body}\n" if array else f"[{section}]\n{body}\n"


def collect(page: Path):
    """(where, toml text, code that must not appear) for each key, kind and toml block."""
    out = []
    lines = page.read_text().splitlines()
    heading = ""
    arrays = {"model", "gradient", "stimulus", "initial"}
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{page.relative_to(REPO)}:{i + 1}"
        if line.startswith("```toml"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            text = "\n".join(lines[i + 1:j])
            out += [(where, text, UNKNOWN_KEY), (where, text, BAD_CHOICE)]
            i = j + 1
            continue
        if line.startswith("#"):
            heading = line
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[ -|]+\|$", lines[i + 1]):
            head = cells(line)
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, cells(lines[j])))
                j += 1
            first = head[0].strip("`")
            sec = section_of(heading)
            for n, row in rows:
                w = f"{page.relative_to(REPO)}:{n}"
                if first == "key":
                    for k in ticked(row[0]):
                        s, key = (k.split(".", 1) if "." in k else (sec, k))
                        if s is None or not re.fullmatch(r"[a-z_0-9]+", key):
                            continue
                        out.append((w, toml_for(s, s in arrays, f"{key} = 0"), UNKNOWN_KEY))
                        if key == "kind" and len(row) > 1:
                            for kind in quoted(row[1]):
                                out.append((w, toml_for(s, s in arrays, f'kind = "{kind}"'), BAD_CHOICE))
                elif first.endswith(".kind"):
                    s = first.split(".")[0]
                    for kind in ticked(row[0]):
                        out.append((w, toml_for(s, False, f'kind = "{kind.strip(chr(34))}"'), BAD_CHOICE))
                elif first == "kind" and "Regions" in heading:
                    for kind in quoted(row[0]):
                        region = f'region = {{ kind = "{kind}" }}'
                        out.append((w, toml_for("stimulus", True, region), BAD_CHOICE))
                        for key in ticked(row[1]) if len(row) > 1 else []:
                            if re.fullmatch(r"[a-z_]+", key):
                                out.append((w, toml_for("stimulus", True, f'region = {{ kind = "{kind}", {key} = 0 }}'),
                                            UNKNOWN_KEY))
            i = j
            continue
        i += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heartwave", required=True, type=Path)
    ap.add_argument("pages", nargs="*", type=Path)
    a = ap.parse_args()
    pages = a.pages or sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
    failed = checked = 0
    with tempfile.TemporaryDirectory(prefix="hw_keys_") as tmp:
        case = Path(tmp) / "case.toml"
        for page in pages:
            for where, text, code in collect(page.resolve()):
                case.write_text(text)
                r = subprocess.run([str(a.heartwave), "run", str(case), "--check", "-q"], capture_output=True,
                                   text=True, timeout=60)
                checked += 1
                bad = [l for l in r.stderr.splitlines() if f"[{code}]" in l]
                if bad:
                    failed += 1
                    what = "unknown key" if code == UNKNOWN_KEY else "kind not accepted"
                    print(f"FAIL {where}: {what}:\n  {text.strip()}\n  " + "\n  ".join(bad))
    print(f"{checked} keys, kinds and toml blocks checked against the case reader, {failed} refused")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
