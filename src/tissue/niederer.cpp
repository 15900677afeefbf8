// The N-version benchmark case and its activation times (see niederer.hpp).
#include "tissue/niederer.hpp"

#include "tissue/sinks.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace hw::tissue {

TissueCase niederer_case(double dx_mm, double dt_ms) {
  TissueCase c;
  c.name = "niederer2011";
  const double L[3] = {20, 7, 3};
  for (int a = 0; a < 3; ++a) {
    c.grid.n[a] = std::max(1, int(std::lround(L[a] / dx_mm)));
    c.grid.h[a] = dx_mm;
  }
  c.fibres.kind = FibreSpec::Kind::uniform;
  c.fibres.direction = {1, 0, 0};
  c.conductivity.sigma_l = 0.1334;  // S/m = mS/mm
  c.conductivity.sigma_t = 0.0176;
  c.conductivity.chi = 140;         // 1/mm
  c.conductivity.cm = 0.01;         // µF/mm²
  ModelRegion m;
  m.model = "tentusscher_2006_epi";
  c.models.push_back(m);
  Stimulus s;
  s.where.kind = Region::Kind::box;
  s.where.lo = {0, 0, 0};
  s.where.hi = {1.5, 1.5, 1.5};
  s.amplitude = 50;  // µA/mm³ = 50 000 µA/cm³
  s.start = 0;
  s.duration = 2;
  c.stimuli.push_back(s);
  c.time.dt = dt_ms;
  c.time.t_end = 150;
  c.time.integrator = "rl1";
  return c;
}

std::vector<std::array<double, 3>> niederer_points() {
  std::vector<std::array<double, 3>> p;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) p.push_back({20.0 * i, 7.0 * j, 3.0 * k});
  p.push_back({10, 3.5, 1.5});
  return p;
}

DiffusionScheme niederer_auto_scheme(const TissueCase& c) {
  return c.time.dt <= stable_dt_limit(c) ? DiffusionScheme::forward_euler
                                         : DiffusionScheme::crank_nicolson;
}

NiedererResult run_niederer(const TissueCase& c, const SimulationOptions& opt,
                            std::function<void(double t, bool warming)> progress, NiedererReads reads) {
  Simulation sim(c, opt);
  const Grid& g = sim.grid();
  const auto pts = niederer_points();
  std::vector<std::size_t> cell;
  for (const auto& p : pts) {
    int idx[3];
    for (int a = 0; a < 3; ++a)
      idx[a] = std::clamp(int(std::floor(p[a] / g.h[a])), 0, g.n[a] - 1);
    cell.push_back(g.index(idx[0], idx[1], idx[2]));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> act(pts.size(), nan), prev, v;
  ActivationMaps m;
  m.threshold = 0;
  m.act.assign(g.size(), std::numeric_limits<float>::quiet_NaN());
  const std::shared_ptr<ActivationSink> maps =
      reads == NiedererReads::map_after_batches ? sim.attach_activation(m) : nullptr;
  sim.voltages_at(cell, prev);
  std::size_t left = pts.size();
  // With the map: batches of steps; V at the nine points after each says when to stop
  // (each point's first V ≥ 0 mV: it has crossed), the map the times. Why: reading V
  // after every step made each step wait for the host (a GPU's steps then ran one by one,
  // and an implicit one could not run as a CUDA graph).
  const long batch = std::max(1L, std::lround(0.2 / c.time.dt));
  std::vector<bool> crossed(pts.size(), false);
  const auto t0 = std::chrono::steady_clock::now();
  while (left > 0 && sim.time() < c.time.t_end) {
    if (maps) {
      sim.run_until(std::min(c.time.t_end, sim.time() + double(batch) * c.time.dt));
      sim.voltages_at(cell, v);
      for (std::size_t q = 0; q < pts.size(); ++q)
        if (!crossed[q] && v[q] >= 0) crossed[q] = true, --left;
    } else {
      sim.step();
      sim.voltages_at(cell, v);  // one read of the nine points a step
      for (std::size_t q = 0; q < pts.size(); ++q) {
        const double now = v[q];
        if (std::isnan(act[q]) && prev[q] < 0 && now >= 0) {
          // linear interpolation of the 0 mV crossing within the step
          act[q] = sim.time() - sim.dt() + sim.dt() * (0 - prev[q]) / (now - prev[q]);
          --left;
        }
        prev[q] = now;
      }
    }
    if (progress) progress(sim.time(), sim.warming_up());
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (maps) {
    maps->read(m);
    for (std::size_t q = 0; q < pts.size(); ++q) act[q] = double(m.act[cell[q]]);
  }
  NiedererResult r;
  for (std::size_t q = 0; q < pts.size(); ++q) r.activation.emplace_back(pts[q], act[q]);
  r.wall_seconds = wall;
  r.cell_steps_per_second = wall > 0 ? double(sim.tissue_cells()) * sim.steps_done() / wall : 0;
  r.cg_iterations = sim.cg_iterations();
  return r;
}

}  // namespace hw::tissue
