// See single_cell.hpp.
#include "cell/single_cell.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "cell/cvode.hpp"
#include "cell/recorder.hpp"

namespace hw::cell {

namespace {

template <class Real>
[[noreturn]] void throw_divergence(const CellKernel& k, const CellSetup& s, const SolverOptions& solver,
                                   long n, const std::vector<Real>& before, const std::vector<Real>& after,
                                   const std::vector<double>& pd) {
  const int ns = k.n_states();
  std::vector<double> y(before.begin(), before.end()), f(ns), J(ns), c(std::max(1, k.n_constants()));
  k.constants(pd.data(), c.data());
  const double dt_model = solver.dt_ms / s.time_to_ms;
  k.rhs_jac(double(n) * dt_model, y.data(), pd.data(), c.data(), f.data(), J.data());
  // Among the states that went, the one moving fastest relative to its size; and the
  // stiffest state overall (|J|·dt beyond ~2 is past an explicit scheme's stability).
  int worst = -1, stiffest = 0;
  double worst_rate = -1;
  for (int i = 0; i < ns; ++i) {
    if (std::fabs(J[i]) > std::fabs(J[stiffest])) stiffest = i;
    if (std::isfinite(after[i])) continue;
    const double rel = std::fabs(f[i]) * dt_model / std::max(std::fabs(y[i]), 1e-30);
    if (worst < 0 || rel > worst_rate || !std::isfinite(rel)) {
      worst = i;
      worst_rate = rel;
    }
  }
  const double t_ms = double(n + 1) * solver.dt_ms;
  const std::string& name = s.state_names[std::size_t(worst)];
  const bool stiff = std::fabs(J[stiffest]) * dt_model > 1;
  std::string fix;
  if (solver.method == Integrator::grl2 || solver.method == Integrator::grl1)
    fix = fmt::format("try --dt {:g} or -i cvode", solver.dt_ms / 10);
  else if (stiff)
    fix = fmt::format("the model is stiff at this dt: try -i grl2 (or -i auto), --dt {:g}, or -i cvode",
                      solver.dt_ms / 10);
  else
    fix = fmt::format("try --dt {:g}, -i grl2, or -i cvode", solver.dt_ms / 10);
  throw DivergenceError(
      fmt::format("numerical error: state '{}' is not finite at t = {:g} ms (step {}, {} at dt = {:g} ms); "
                  "just before, {} = {:.6g} with d/dt = {:.6g} per model time unit ({} of {} states went); "
                  "stiffest state there: '{}', |df/dy|·dt = {:.3g}; {}",
                  name, t_ms, n + 1, solver_name(solver), solver.dt_ms, name, y[std::size_t(worst)],
                  f[std::size_t(worst)],
                  std::count_if(after.begin(), after.end(), [](Real v) { return !std::isfinite(v); }), ns,
                  s.state_names[std::size_t(stiffest)], std::fabs(J[stiffest]) * dt_model, fix),
      t_ms, name);
}

template <class Real>
void run_fixed(const CellKernel& k, const CellSetup& s, const StepSchedule& sched,
               const SolverOptions& solver, detail::Recorder& rec, SingleCellResult& out, const StopCheck& stop) {
  const int ns = k.n_states();
  std::vector<Real> y(s.initial_states.begin(), s.initial_states.end());
  std::vector<Real> p(s.params.begin(), s.params.end());
  std::vector<double> pd = s.params, yd(ns);
  std::vector<Real> yprev(ns);
  Batch<Real> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  const double dt_model = solver.dt_ms / s.time_to_ms;
  const long total = sched.total_steps();
  int on_state = -1;
  long n = 0;
  for (;; ++n) {
    if (s.stim_on >= 0 && n < total) {
      const int on = sched.on(n) ? 1 : 0;
      if (on != on_state) {
        on_state = on;
        p[s.stim_on] = static_cast<Real>(on);
        pd[s.stim_on] = on;
        rec.params_changed();
      }
    }
    for (int i = 0; i < ns; ++i) yd[i] = static_cast<double>(y[i]);
    rec.observe(n, yd.data(), pd.data());
    if (n == total || rec.stopped()) break;
    if (stop && n > 0 && n % 1024 == 0 && stop()) {
      out.stopped = true;
      out.t_stopped_ms = double(n) * solver.dt_ms;
      out.steps = n;
      out.final_states = yd;
      return;
    }
    for (int i = 0; i < ns; ++i) yprev[i] = y[i];
    k.step(solver.method, static_cast<Real>(n * dt_model), static_cast<Real>(dt_model), 1, b);
    bool finite = true;
    for (int i = 0; i < ns; ++i) finite = finite && std::isfinite(y[i]);
    if (!finite) throw_divergence(k, s, solver, n, yprev, y, pd);
  }
  out.steps = n;
  out.final_states = yd;
}

}  // namespace

std::string solver_name(const SolverOptions& s) {
  if (s.cvode) return "cvode";
  std::string n = integrator_name(s.method);
  if (s.single_precision) n += " (float)";
  return n;
}

SingleCellResult run_single_cell(const CellKernel& k, const CellSetup& s,
                                 const StimulusTrain& train, const SolverOptions& solver,
                                 const TraceOptions& trace, const PacingControl& control,
                                 const StopCheck& stop) {
  if (k.n_states() != static_cast<int>(s.initial_states.size()) ||
      k.n_params() != static_cast<int>(s.params.size()))
    throw Error(fmt::format("kernel '{}' does not match the model's sizes ({} states, {} "
                            "parameters vs {} and {})",
                            k.describe(), k.n_states(), k.n_params(), s.initial_states.size(),
                            s.params.size()));
  if (solver.cvode) return run_cvode(k, s, train, solver, trace, control, stop);
  const StepSchedule sched(train, solver.dt_ms);
  SingleCellResult out;
  detail::Recorder rec(k, s, sched, trace, solver.dt_ms, out, control);
  if (solver.single_precision)
    run_fixed<float>(k, s, sched, solver, rec, out, stop);
  else
    run_fixed<double>(k, s, sched, solver, rec, out, stop);
  if (!out.stopped) rec.finish();  // stopped: the beat under way is not finished
  return out;
}

void write_trace_csv(const Trace& t, std::ostream& out) {
  for (std::size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << t.columns[c];
  out << '\n';
  const std::size_t nc = t.columns.size();
  std::string line;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    line.clear();
    for (std::size_t c = 0; c < nc; ++c) {
      if (c) line += ',';
      fmt::format_to(std::back_inserter(line), "{}", t.data[r * nc + c]);
    }
    line += '\n';
    out << line;
  }
}

void write_trace_csv(const Trace& t, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw InputError(SourceLoc{path, 0, 0}, "cannot open the trace file for writing");
  write_trace_csv(t, f);
  if (!f) throw InputError(SourceLoc{path, 0, 0}, "writing the trace file failed");
}

}  // namespace hw::cell
