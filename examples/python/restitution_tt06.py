"""APD restitution of the ten Tusscher 2006 epicardial cell: S1-S2 protocol, APD90 of the S2
beat against the diastolic interval. Writes restitution_tt06.png.

    python examples/python/restitution_tt06.py
"""
import matplotlib.pyplot as plt
import numpy as np

import heartwave as hw

curve = hw.restitution("tentusscher_2006_epi", bcl=1000, n_s1=10, coupling=np.arange(280, 1001, 20))
di, apd = np.asarray(curve["di_ms"]), np.asarray(curve["apd90_s2"])
ok = np.isfinite(apd)

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(di[ok], apd[ok], "o-", ms=3)
ax.set_xlabel("diastolic interval (ms)")
ax.set_ylabel("APD90 of S2 (ms)")
ax.set_title("ten Tusscher 2006 epi: S1-S2 restitution, S1 1000 ms", fontsize=10)
fig.tight_layout()
fig.savefig("restitution_tt06.png", dpi=120)
print(f"{ok.sum()} points, APD90 {apd[ok].min():.1f} to {apd[ok].max():.1f} ms -> restitution_tt06.png")
