// See wall_time.hpp.
#include "run/wall_time.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "tissue/simulation.hpp"

namespace hw::run {

using namespace hw::tissue;

namespace {

// The calibration box: the case's spacing, boundaries and time stepping, one model
// everywhere, at most `cap` cells per active axis (the case's own size when smaller).
TissueCase calibration_case(const SimSetup& s, const ModelRegion& region, int cap) {
  TissueCase k = s.tcase;
  k.grid = s.geo.grid;
  for (int a = 0; a < 3; ++a) k.grid.n[a] = std::min(k.grid.n[a], cap);
  k.geometry = GeometrySpec{};
  k.geometry.loc = s.tcase.geometry.loc;
  // Fibres cost the same wherever they come from: a uniform direction stands for a file or
  // a rule (which need the heart's labels).
  if (k.fibres.kind != FibreSpec::Kind::none) k.fibres = FibreSpec{FibreSpec::Kind::uniform, {1, 0, 0}, 60, -60, 2, "", k.fibres.loc};
  ModelRegion everywhere = region;
  everywhere.where = Region{};
  k.models = {everywhere};
  k.gradients.clear();
  k.stimuli.clear();
  k.initial.clear();
  k.output = OutputSpec{};
  k.time.integrator = integrator_name(s.integrator);  // "auto" was decided once already
  k.time.t_end = 1e12;
  return k;
}

}  // namespace

WallTimeEstimate estimate_wall_time(const SimSetup& s, Backend backend, int threads, int device,
                                    double seconds_per_model) {
  using clock = std::chrono::steady_clock;
  WallTimeEstimate w;
  const TissueCase& c = s.tcase;
  const double steps = std::ceil(c.time.t_end / c.time.dt - 1e-9);
  const int cap = backend == Backend::cuda ? 64 : 32;
  std::set<std::string> done;
  for (const Part& part : s.parts) {
    if (part.n == 0 || done.count(part.model)) continue;
    done.insert(part.model);
    std::size_t cells = 0;  // every part of this model
    for (const Part& q : s.parts)
      if (q.model == part.model) cells += q.n;
    const ModelRegion* region = nullptr;
    for (const ModelRegion& mr : c.models)
      if (mr.model == part.model && !region) region = &mr;
    if (!region) continue;
    SimulationOptions opt;
    opt.backend = backend;
    opt.threads = threads;
    opt.device = device;
    Simulation sim(calibration_case(s, *region, cap), opt);
    sim.step();  // untimed: first touch of the fields, a kernel's first use
    const auto t0 = clock::now();
    long n = 0;
    double elapsed = 0;
    while ((elapsed < seconds_per_model || n < 3) && n < 100000) {
      sim.step();
      ++n;
      elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    }
    const double per_cell_step = elapsed / (double(n) * double(sim.tissue_cells()));
    const double model_s = per_cell_step * double(cells) * steps;
    w.seconds += model_s;
    const Grid& g = sim.grid();
    w.basis.push_back(fmt::format("{}: {:.3g} µs per cell-step, measured over {} steps of {}×{}×{} cells in {:.2f} s "
                                  "→ {:.3g} s for {} cells × {:.0f} steps",
                                  part.model.substr(part.model.find_last_of('/') + 1), per_cell_step * 1e6, n, g.n[0],
                                  g.n[1], g.n[2], elapsed, model_s, cells, steps));
  }
  return w;
}

}  // namespace hw::run
