#include "cell/auto_integrator.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "cell/single_cell.hpp"
#include "core/atomic_file.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/jit/jit.hpp"
#include "core/sha256.hpp"

namespace hw::cell {

namespace {

constexpr int kProbeVersion = 3;  // bump when the probe or its tolerances change

std::string cache_key(const model::Model& m, const CellSetup& s, const AutoOptions& o) {
  std::string text = model::print_cpp(m);
  text += fmt::format("\n//probe {} dt {} f32 {} bcl {} beats {} dur {} apd {} rrms {} max {}\n", kProbeVersion,
                      o.dt_ms, o.single_precision, o.bcl_ms, o.beats, o.stim_duration_ms, o.apd_tolerance_ms,
                      o.rrms_tolerance, o.max_substeps);
  for (double p : s.params) text += fmt::format("{} ", p);
  for (double y : s.initial_states) text += fmt::format("{} ", y);
  text += model::runtime_headers_text();  // the integrators the probe measured
  return model::sha256_hex(text);
}

std::filesystem::path cache_file(const std::string& key) {
  return std::filesystem::path(model::jit_cache_dir()) / ("auto_integrator_" + key + ".txt");
}

bool read_cached(const std::filesystem::path& f, AutoChoice& c) {
  std::ifstream in(f);
  std::string name;
  if (!(in >> name >> c.substeps >> c.apd90_error_ms >> c.rrms)) return false;
  if (!integrator_from_name(name.c_str(), c.method) || c.substeps < 1) return false;
  std::getline(in >> std::ws, c.why);
  c.from_cache = true;
  return true;
}

struct Probe {
  std::vector<double> v;  // V every sample
  double apd90 = NAN;
};

Probe run_probe(const CellKernel& k, const CellSetup& s, const StimulusTrain& train, const SolverOptions& solver,
                double sample_ms) {
  TraceOptions t;
  t.interval_ms = sample_ms;
  const SingleCellResult r = run_single_cell(k, s, train, solver, t);
  Probe p;
  for (std::size_t row = 0; row < r.trace.rows(); ++row) p.v.push_back(r.trace.at(row, 1));
  if (!r.beats.empty()) p.apd90 = r.beats.back().apd90;
  return p;
}

double rrms(const std::vector<double>& a, const std::vector<double>& ref) {
  const std::size_t n = std::min(a.size(), ref.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}

}  // namespace

std::vector<StateStiffness> measure_stiffness(const CellKernel& k, const CellSetup& s, double bcl_ms,
                                              double stim_duration_ms) {
  SolverOptions ref;
  ref.cvode = true;
  ref.dt_ms = 0.1;
  TraceOptions t;
  t.interval_ms = 0.1;
  const SingleCellResult r = run_single_cell(k, s, StimulusTrain::periodic(bcl_ms, 1, stim_duration_ms), ref, t);
  const int ns = k.n_states();
  std::vector<StateStiffness> out(static_cast<std::size_t>(ns));
  for (int i = 0; i < ns; ++i) out[std::size_t(i)].state = i;
  const std::size_t n = static_cast<std::size_t>(ns);
  std::vector<double> c(static_cast<std::size_t>(std::max(1, k.n_constants()))), f(n), J(n), p = s.params;
  if (s.stim_on >= 0) p[std::size_t(s.stim_on)] = 0;
  k.constants(p.data(), c.data());
  for (std::size_t row = 0; row < r.trace.rows(); ++row) {
    const double* y = &r.trace.data[row * r.trace.columns.size() + 2];
    const double t_ms = r.trace.at(row, 0);
    k.rhs_jac(t_ms / s.time_to_ms, y, p.data(), c.data(), f.data(), J.data());
    for (int i = 0; i < ns; ++i)
      if (std::isfinite(J[std::size_t(i)]) && J[std::size_t(i)] < out[std::size_t(i)].most_negative) {
        out[std::size_t(i)].most_negative = J[std::size_t(i)];
        out[std::size_t(i)].at_ms = t_ms;
      }
  }
  return out;
}

AutoChoice choose_integrator(const model::Model& analysed, const CellKernel& kernel, const CellSetup& setup,
                             const AutoOptions& o) {
  if (!(o.dt_ms > 0) || !std::isfinite(o.dt_ms))
    throw InputError(SourceLoc{}, fmt::format("integrator auto: dt = {} ms must be positive", o.dt_ms));
  const std::string key = o.use_cache ? cache_key(analysed, setup, o) : std::string();
  AutoChoice c;
  if (o.use_cache && read_cached(cache_file(key), c)) return c;

  // The probe: paced beats from the model's initial state, sampled every 0.5 ms or every
  // step; APD90 of the last. Two beats, not one: the second starts from where the scheme
  // left the first (calcium loads, slow gates), and that is where a marginal scheme fails:
  // Li-Niederer 2010 passed a one-beat rl2 probe at 0.01 ms and diverged 37 ms into beat 2.
  const StimulusTrain train = StimulusTrain::periodic(o.bcl_ms, std::max(1, o.beats), o.stim_duration_ms);
  SolverOptions ref;
  ref.cvode = true;
  ref.rtol = 1e-8;
  ref.atol = 1e-10;
  const int max_sub = std::max(1, o.max_substeps);
  const double sample = std::max(0.5, o.dt_ms);
  ref.dt_ms = sample;
  const Probe reference = run_probe(kernel, setup, train, ref, sample);
  const bool has_apd = std::isfinite(reference.apd90);

  std::vector<std::string> rejected;
  for (int sub = 1; sub <= max_sub; sub *= 2) {
    for (Integrator m : {Integrator::rl2, Integrator::grl2}) {
      // Accuracy is the scheme's and is measured in double. Float adds its own rounding,
      // which no scheme or sub-step removes (sub-steps add to it): Winslow 1999's float grl2
      // lands 0.55 ms from CVODE where double grl2 is within 0.11 ms, and 8 float sub-steps
      // 4.5 ms. A float run then only has to finish.
      SolverOptions s;
      s.method = m;
      s.dt_ms = o.dt_ms / sub;
      const std::string name = fmt::format("{}{}", integrator_name(m), sub > 1 ? fmt::format(" x{}", sub) : "");
      Probe p;
      try {
        p = run_probe(kernel, setup, train, s, sample);
        if (o.single_precision) {
          s.single_precision = true;
          run_probe(kernel, setup, train, s, sample);
        }
      } catch (const DivergenceError& e) {
        rejected.push_back(fmt::format("{} diverged at {:g} ms{}", name, e.time_ms, s.single_precision ? " in float" : ""));
        continue;
      }
      const double err = has_apd ? std::fabs(p.apd90 - reference.apd90) : NAN;
      const double r = rrms(p.v, reference.v);
      const bool apd_ok = !has_apd || err <= o.apd_tolerance_ms;
      if (!apd_ok || !(r <= o.rrms_tolerance)) {
        rejected.push_back(has_apd ? fmt::format("{}: APD90 off by {:.2g} ms, RRMS {:.2g}%", name, err, 100 * r)
                                   : fmt::format("{}: RRMS {:.2g}%", name, 100 * r));
        continue;
      }
      c.method = m;
      c.substeps = sub;
      c.apd90_error_ms = err;
      c.rrms = r;
      std::string why = fmt::format("{} at dt {:g} ms{}: {} beat{} at BCL {:g} ms against CVODE, ", name,
                                    o.dt_ms, sub > 1 ? fmt::format(" ({} sub-steps of {:g} ms)", sub, o.dt_ms / sub) : "",
                                    std::max(1, o.beats), o.beats > 1 ? "s" : "", o.bcl_ms);
      why += has_apd ? fmt::format("APD90 within {:.2g} ms, RRMS {:.2g}%", err, 100 * r)
                     : fmt::format("RRMS {:.2g}% (no APD90 in the probe)", 100 * r);
      if (o.single_precision) why += " in double; finite in float";
      if (!rejected.empty()) {
        why += "; rejected: ";
        for (std::size_t i = 0; i < rejected.size(); ++i) why += (i ? "; " : "") + rejected[i];
      }
      c.why = why;
      if (o.use_cache) {
        try {
          io::write_file_atomic(cache_file(key).string(),
                                fmt::format("{} {} {} {}\n{}\n", integrator_name(c.method), c.substeps,
                                            c.apd90_error_ms, c.rrms, c.why));
        } catch (const Error&) {
          // A read-only cache costs a probe per run, nothing else.
        }
      }
      return c;
    }
  }
  std::string all;
  for (std::size_t i = 0; i < rejected.size(); ++i) all += (i ? "; " : "") + rejected[i];
  throw InputError(SourceLoc{}, fmt::format("integrator auto: no fixed-step scheme up to {} sub-steps holds model "
                                            "'{}' at dt {:g} ms ({}); use a smaller dt",
                                            max_sub, setup.model_name, o.dt_ms, all));
}

}  // namespace hw::cell
