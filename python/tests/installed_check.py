"""The package as `pip install .` put it into the environment (not the build tree's copy):
it imports from site-packages and paces a built-in cell. Exit 77 (skipped) where it was not
installed, e.g. a build made with cmake alone rather than tools/build.sh."""
import os
import sys
import sysconfig

sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.getcwd()]
try:
    import heartwave
except ImportError as e:
    print(f"heartwave is not installed in {sys.prefix} ({e}); tools/build.sh installs it")
    sys.exit(77)
site = sysconfig.get_paths()["platlib"]
assert heartwave.__file__.startswith(site), f"imported {heartwave.__file__}, not from {site}"
r = heartwave.pace(
    "tentusscher_2006_epi", beats=1, record_interval=10)
assert 250 < r.last_beat.apd90 < 350, r.last_beat
print(f"installed package {heartwave.__file__}: {r}")
