"""docs/python.md's API reference is what the docstrings give (tools/python_api_doc.py)."""
import subprocess
import sys

from conftest import ROOT


def test_api_reference_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "python_api_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_tour_runs(tmp_path, monkeypatch):
    """The tour's code block runs as written (from a directory with examples/ and ../shared)."""
    text = (ROOT / "docs" / "python.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(work)
    exec(compile(code, "docs/python.md (tour)", "exec"), {"__name__": "tour"})
    assert (work / "out").is_dir()  # hw.Run(case).run() wrote the case's outputs
