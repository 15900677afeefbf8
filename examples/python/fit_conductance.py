"""Fits one conductance to a target: the I_Kr scaling that gives the ten Tusscher 2006 epi
cell an APD90 of 330 ms at 1 Hz, with scipy.optimize. Writes fit_conductance.png.

    python examples/python/fit_conductance.py
"""
import matplotlib.pyplot as plt
from scipy.optimize import brentq

import heartwave as hw

TARGET = 330.0
model = hw.Model("tentusscher_2006_epi")
gkr = next(p for p in model.parameters if p.name.lower() in ("g_kr", "gkr"))
start = hw.steady_state(model, bcl=1000, beats=20)


def apd90(scale: float) -> float:
    r = hw.pace(model, bcl=1000, beats=3, initial_state=start, params={gkr.name: scale * gkr.value},
                record_interval=10)
    return r.last_beat.apd90


scale = brentq(lambda s: apd90(s) - TARGET, 0.3, 1.5, xtol=1e-4)
fitted = hw.pace(model, bcl=1000, beats=3, initial_state=start, params={gkr.name: scale * gkr.value},
                 record_interval=0.5)
default = hw.pace(model, bcl=1000, beats=3, initial_state=start, record_interval=0.5)

fig, ax = plt.subplots(figsize=(5, 3.5))
last = default.t >= 2000
ax.plot(default.t[last] - 2000, default.V[last], label=f"default: APD90 {default.last_beat.apd90:.1f} ms")
ax.plot(fitted.t[last] - 2000, fitted.V[last], label=f"{gkr.name} x {scale:.3f}: {fitted.last_beat.apd90:.1f} ms")
ax.set_xlim(0, 500)
ax.set_xlabel("t (ms)")
ax.set_ylabel("V (mV)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig("fit_conductance.png", dpi=120)
print(f"{gkr.name} scaled by {scale:.4f} gives APD90 {fitted.last_beat.apd90:.2f} ms "
      f"(target {TARGET}) -> fit_conductance.png")
