// See single_cell.hpp.
#include "cell/single_cell.hpp"

#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "cell/cvode.hpp"
#include "cell/recorder.hpp"

namespace hw::cell {

namespace {

template <class Real>
void run_fixed(const CellKernel& k, const CellSetup& s, const StepSchedule& sched,
               const SolverOptions& solver, detail::Recorder& rec, SingleCellResult& out) {
  const int ns = k.n_states();
  std::vector<Real> y(s.initial_states.begin(), s.initial_states.end());
  std::vector<Real> p(s.params.begin(), s.params.end());
  std::vector<double> pd = s.params, yd(ns);
  Batch<Real> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  const double dt_model = solver.dt_ms / s.time_to_ms;
  const long total = sched.total_steps();
  int on_state = -1;
  for (long n = 0;; ++n) {
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
    if (n == total) break;
    k.step(solver.method, static_cast<Real>(n * dt_model), static_cast<Real>(dt_model), 1, b);
  }
  out.steps = total;
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
                                 const TraceOptions& trace) {
  if (k.n_states() != static_cast<int>(s.initial_states.size()) ||
      k.n_params() != static_cast<int>(s.params.size()))
    throw Error(fmt::format("kernel '{}' does not match the model's sizes ({} states, {} "
                            "parameters vs {} and {})",
                            k.describe(), k.n_states(), k.n_params(), s.initial_states.size(),
                            s.params.size()));
  if (solver.cvode) return run_cvode(k, s, train, solver, trace);
  const StepSchedule sched(train, solver.dt_ms);
  SingleCellResult out;
  detail::Recorder rec(k, s, sched, trace, solver.dt_ms, out);
  if (solver.single_precision)
    run_fixed<float>(k, s, sched, solver, rec, out);
  else
    run_fixed<double>(k, s, sched, solver, rec, out);
  rec.finish();
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
