"""Every example of examples/python runs as it is, headless, and writes its picture."""
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "python").glob("*.py"))
ARGS = {"population_ord.py": ["200"]}  # 1,000 O'Hara-Rudy cells take minutes on 2 cores


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(tmp_path, script):
    pytest.importorskip("matplotlib")
    env = dict(os.environ, MPLBACKEND="Agg", HEARTWAVE_PROGRESS="0")
    r = subprocess.run([sys.executable, str(script), *ARGS.get(script.name, [])], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    png = tmp_path / (script.stem + ".png")
    assert png.exists() and png.stat().st_size > 5000, r.stdout
