// A paced single-cell V trace straight from a loaded model, for tests that compare two
// encodings of one model (CellML 1.0 vs 2.0, CellML vs SBML, a file vs its round trip).
//
// It runs the IR interpreter (the oracle, model/emit/interpreter.hpp) with RL2 at a fixed
// step and Heartwave's pacing switch on for the stimulus' default duration from t = 0, so
// it needs nothing of the cell runner that the comparisons are meant to isolate.
#pragma once

#include <cmath>
#include <vector>

#include "model/emit/interpreter.hpp"
#include "model/load.hpp"
#include "runtime/integrators.hpp"

namespace hw::test {

// V in mV every `every` steps of `dt_ms` over `steps` steps.
inline std::vector<double> paced_v_trace(const model::LoadedModel& lm, double dt_ms, int steps,
                                         int every = 100) {
  const auto& m = lm.analysed;
  auto kernel = model::make_interpreter(m);
  std::vector<double> y, p;
  for (const auto& s : m.states) y.push_back(s.initial);
  for (const auto& q : m.parameters) p.push_back(q.value);
  const auto on = m.find_parameter("_hw_stim_on");
  const double dt = dt_ms / m.roles.time_to_ms;
  const int on_steps = static_cast<int>(std::lround(lm.stimulus.default_duration_ms.value_or(1.0) / dt_ms));
  cell::Batch<double> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  std::vector<double> v;
  for (int s = 0; s < steps; ++s) {
    if (on) p[*on] = s < on_steps ? 1.0 : 0.0;
    kernel->step(cell::Integrator::rl2, s * dt, dt, 1, b);
    if (s % every == 0) v.push_back(y[*m.roles.voltage_state] * m.roles.voltage_to_mV);
  }
  return v;
}

// max |a_i − b_i| (infinity when the lengths differ or a value is not finite).
inline double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    if (!std::isfinite(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace hw::test
