// See wall_time.hpp.
#include "run/wall_time.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "parallel/team.hpp"
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
  if (k.fibres.kind != FibreSpec::Kind::none) {
    FibreSpec uniform;
    uniform.kind = FibreSpec::Kind::uniform;
    uniform.loc = k.fibres.loc;
    k.fibres = uniform;
  }
  ModelRegion everywhere = region;
  everywhere.where = Region{};
  k.models = {everywhere};
  k.gradients.clear();
  k.stimuli.clear();
  k.initial.clear();
  k.output = OutputSpec{};
  k.time.integrator = integrator_name(s.integrator);  // "auto" was decided once already
  k.time.t_end = s.tcase.time.t_end;
  return k;
}

}  // namespace

namespace {

struct Measured {
  double per_cell_step = 0;  // s
  long steps = 0;
  double seconds = 0;
  int threads = 0;
  std::array<int, 3> box{};
};

// Steps the calibration case: one untimed step (first touch of the fields, a kernel's first
// use), then batches as a run steps them when nobody looks between steps
// (Simulation::run_until), doubling; the rate is the last batch's, which took at least a
// third of the time, since the first steps are slower.
Measured measure(const TissueCase& k, const SimulationOptions& opt, double seconds) {
  using clock = std::chrono::steady_clock;
  Simulation sim(k, opt);
  sim.step();
  const auto t_start = clock::now();
  Measured m;
  for (long batch = 4;; batch *= 2) {
    const auto t0 = clock::now();
    const long before = sim.steps_done();
    sim.run_until(sim.time() + (double(batch) - 0.5) * sim.dt());
    m.steps = sim.steps_done() - before;
    m.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    const double total = std::chrono::duration<double>(clock::now() - t_start).count();
    if ((m.seconds >= seconds / 3 && total >= seconds) || batch >= (1L << 20)) break;
  }
  m.per_cell_step = m.seconds / (double(m.steps) * double(sim.tissue_cells()));
  m.threads = int(std::lround(sim.mean_threads()));
  m.box = sim.grid().n;
  return m;
}

}  // namespace

WallTimeEstimate estimate_wall_time(const SimSetup& s, Backend backend, int threads, int device,
                                    double seconds_per_model) {
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
    // On the cpu, a run's governor settles on the faster of one thread and all of them
    // within its first second (parallel/governor.hpp); a calibration shorter than that
    // measures both, without adapting, and takes the faster.
    SimulationOptions opt;
    opt.backend = backend;
    opt.device = device;
    opt.adapt_threads = false;
    const TissueCase k = calibration_case(s, *region, cap);
    const int most = threads > 0 ? threads : par::usable_cores();
    opt.threads = most;
    Measured m = measure(k, opt, backend == Backend::cpu && most > 1 ? seconds_per_model / 2 : seconds_per_model);
    if (backend == Backend::cpu && most > 1) {
      opt.threads = 1;
      const Measured one = measure(k, opt, seconds_per_model / 2);
      if (one.per_cell_step < m.per_cell_step) m = one;
    }
    const double model_s = m.per_cell_step * double(cells) * steps;
    w.seconds += model_s;
    w.basis.push_back(fmt::format("{}: {:.3g} µs per cell-step ({} steps of {}×{}×{} cells in {:.2f} s{}) "
                                  "→ {:.3g} s for {} cells × {:.0f} steps",
                                  part.model.substr(part.model.find_last_of('/') + 1), m.per_cell_step * 1e6, m.steps,
                                  m.box[0], m.box[1], m.box[2], m.seconds,
                                  backend == Backend::cpu ? fmt::format(", {} thread{}", m.threads, m.threads == 1 ? "" : "s") : "",
                                  model_s, cells, steps));
  }
  return w;
}

}  // namespace hw::run
