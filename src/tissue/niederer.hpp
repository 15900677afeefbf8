// The N-version benchmark of Niederer et al. (Phil Trans R Soc A 2011): a 20 × 7 × 3 mm
// slab of ten Tusscher 2006 epicardial tissue, activated from one corner.
//
// Why here: it is the standard check that a monodomain solver gets conduction right
// (activation times at eight corners and the centre), and `heartwave bench niederer`, the
// verification table and the performance comparison all run exactly this case.
#pragma once

#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "tissue/case.hpp"
#include "tissue/simulation.hpp"

namespace hw::tissue {

// The case at spacing dx_mm (all axes) and PDE step dt_ms; cells = round(L/dx) per axis.
TissueCase niederer_case(double dx_mm, double dt_ms);

struct NiedererResult {
  // Point (mm) → activation time (ms): first upward crossing of 0 mV, linear in time
  // between steps, at the cell whose centre is nearest the point. NaN if never activated.
  std::vector<std::pair<std::array<double, 3>, double>> activation;
  double wall_seconds = 0;
  double cell_steps_per_second = 0;
  double cg_iterations = 0;  // implicit diffusion: mean CG iterations per step (0: explicit)
};

// The nine points in the order P1..P8 (corners, x fastest) then the centre.
std::vector<std::array<double, 3>> niederer_points();

// The diffusion scheme `heartwave bench niederer --diffusion auto` picks: forward Euler
// where dt is within the explicit stability limit of the case, else Crank-Nicolson.
DiffusionScheme niederer_auto_scheme(const TissueCase& c);

// Runs c (a niederer_case, possibly with another scheme or precision) until every point
// has activated (or t_end). Where the engine keeps an activation map (cpu, cuda: 0 mV, the
// crossing interpolated within the step) the steps go in batches of about 0.2 ms, as a run
// steps between its outputs, and the nine times come from the map; otherwise (the reference
// engine, or `reads` every_step) V at the nine points is read after every step and
// interpolated the same way.
// progress(t, warming) after every batch; warming: the engine is still starting up.
enum class NiedererReads { map_after_batches, every_step };
NiedererResult run_niederer(const TissueCase& c, const SimulationOptions& opt,
                            std::function<void(double t, bool warming)> progress = {},
                            NiedererReads reads = NiedererReads::map_after_batches);

}  // namespace hw::tissue
