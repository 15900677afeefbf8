"""A population of 1,000 O'Hara-Rudy 2011 cells with I_Kr, I_CaL and I_Ks scaled by Latin
hypercube sampling, and the histogram of their APD90. Runs on the GPU where one is found.
Writes population_ord.png.

    python examples/python/population_ord.py [cells]
"""
import sys

import matplotlib.pyplot as plt
import numpy as np

import heartwave as hw

cells = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
model = hw.Model("ohara_rudy_2011_endo")
names = {p.name for p in model.parameters}
varied = [n for n in ("GKr_b", "PCa_b", "GKs_b", "GKr", "PCa", "GKs") if n in names][:3]
pop = hw.population(model, lhs={n: (0.5, 1.5) for n in varied}, cells=cells, seed=7, bcl=1000, beats=3)
apd = pop["apd90"][np.isfinite(pop["apd90"])]

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.hist(apd, bins=40)
ax.set_xlabel("APD90 (ms)")
ax.set_ylabel("cells")
ax.set_title(f"O'Hara-Rudy endo, {cells} cells ({', '.join(varied)} x 0.5-1.5)")
fig.tight_layout()
fig.savefig("population_ord.png", dpi=120)
print(f"{pop.backend}; {pop.integrator}")
print(f"{len(apd)} of {cells} cells with an APD90: median {np.median(apd):.1f} ms, "
      f"5-95% {np.percentile(apd, 5):.1f}-{np.percentile(apd, 95):.1f} ms -> population_ord.png")
