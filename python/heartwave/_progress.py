"""A progress bar for long runs, in terminals and notebooks, off in scripts by a flag."""
from __future__ import annotations

import os
import sys
import time


def wanted(progress: bool | None) -> bool:
    """progress=None: on where someone watches (a terminal or a notebook), unless
    HEARTWAVE_PROGRESS=0."""
    if progress is not None:
        return bool(progress)
    if os.environ.get("HEARTWAVE_PROGRESS", "") == "0":
        return False
    return "ipykernel" in sys.modules or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


class Progress:
    def __init__(self, t0: float, t_end: float, enabled: bool, label: str = "t"):
        self.t0, self.t_end, self.enabled, self.label = t0, t_end, enabled, label
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, t: float, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        span = max(self.t_end - self.t0, 1e-12)
        frac = min(max((t - self.t0) / span, 0.0), 1.0)
        width = 30
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        sys.stderr.write(f"\r[{bar}] {100 * frac:5.1f}%  {self.label} = {t:.1f} / {self.t_end:.1f} ms"
                         f"  elapsed {elapsed:.1f} s  left {eta:.1f} s ")
        sys.stderr.flush()

    def close(self, t: float) -> None:
        if self.enabled:
            self.update(t, force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()
