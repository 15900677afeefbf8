import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("HEARTWAVE_SHARED_DIR", ROOT.parent / "shared"))
CLI = pathlib.Path(os.environ.get("HEARTWAVE_CLI", ROOT / "build" / "apps" / "heartwave" / "heartwave"))


@pytest.fixture
def shared_models():
    d = SHARED / "models" / "cellml"
    if not d.is_dir():
        pytest.skip(f"../shared is absent ({d}): the shared CellML models are not here")
    return d


@pytest.fixture
def cli():
    """Runs the heartwave command (the same build) and returns its stdout."""
    if not CLI.exists():
        pytest.skip(f"no heartwave binary at {CLI}")

    def run(*args, json_out=False):
        out = subprocess.run([str(CLI), *map(str, args)], check=True, capture_output=True, text=True).stdout
        return json.loads(out) if json_out else out
    return run


# A small 2D case for the tissue tests: Aliev-Panfilov on 40 x 30 cells.
SMALL_CASE = {
    "name": "small",
    "grid": {"length": [12.0, 9.0], "spacing": 0.3, "boundary": "no-flux"},
    "conductivity": {"diffusivity": 1.0, "chi": 140, "cm": 0.01},
    "model": [{"name": "aliev_panfilov_1996"}],
    "stimulus": [{"region": {"kind": "box", "lo": [0, 0], "hi": [1.5, 9]}, "start": 0, "duration": 1,
                  "amplitude": 1.0}],
    "time": {"dt": 0.02, "t_end": 20, "integrator": "rl1"},
    "output": {"directory": "out-small", "field_interval": 0},
}
