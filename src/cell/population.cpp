// See population.hpp.
#include "cell/population.hpp"
#include "parallel/team.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>

#include <fmt/format.h>

namespace hw::cell {

namespace {

double parse_number(const std::string& text, const std::string& context) {
  double v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(*b))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(e[-1]))) --e;
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || ptr != e || !std::isfinite(v))
    throw InputError(SourceLoc{}, fmt::format("{}: '{}' is not a number", context, text));
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

template <class Real>
void run_chunk(const CellKernel& k, const CellSetup& s, const PopulationDesign& d,
               const StepSchedule& sched, const SolverOptions& solver, std::size_t n_cells,
               std::size_t first, std::size_t count, std::vector<Real>& y,
               std::vector<Real>& p, std::vector<BeatBiomarkers>& out) {
  Batch<Real> b;
  b.n = count;
  b.stride = n_cells;
  b.y = y.data() + first;
  b.p = p.data() + first;
  b.per_cell_params = true;
  const double dt_model = solver.dt_ms / s.time_to_ms;
  auto set_on = [&](bool on) {
    if (s.stim_on < 0) return;
    Real* row = p.data() + static_cast<std::size_t>(s.stim_on) * n_cells + first;
    std::fill(row, row + count, static_cast<Real>(on ? 1 : 0));
  };
  const long total = sched.total_steps();
  const long last_onset = sched.onset_steps().back();
  // Before the last beat: whole intervals of constant stimulus per call.
  const auto edges = sched.edges();
  for (std::size_t e = 0; e + 1 < edges.size() && edges[e] < last_onset; ++e) {
    const long a = edges[e], z = std::min(edges[e + 1], last_onset);
    set_on(sched.on(a));
    k.step(solver.method, static_cast<Real>(a * dt_model), static_cast<Real>(dt_model),
           static_cast<int>(z - a), b);
  }
  // The last beat: one step at a time, every cell's V into its tracker.
  std::vector<BeatTracker> tr(count);
  const std::size_t vrow = static_cast<std::size_t>(s.voltage) * n_cells + first;
  const std::size_t crow = s.calcium >= 0 ? static_cast<std::size_t>(s.calcium) * n_cells + first : 0;
  auto ca = [&](std::size_t i) {
    return s.calcium >= 0 ? static_cast<double>(y[crow + i]) : std::nan("");
  };
  const int beat = static_cast<int>(sched.onset_steps().size());
  for (std::size_t i = 0; i < count; ++i)
    tr[i].begin(beat, last_onset * solver.dt_ms, y[vrow + i] * s.voltage_to_mV, ca(i));
  int on_state = -1;
  for (long n = last_onset; n < total; ++n) {
    const int on = sched.on(n) ? 1 : 0;
    if (on != on_state) set_on(on), on_state = on;
    k.step(solver.method, static_cast<Real>(n * dt_model), static_cast<Real>(dt_model), 1, b);
    const double t = (n + 1) * solver.dt_ms;
    for (std::size_t i = 0; i < count; ++i)
      tr[i].sample(t, static_cast<double>(y[vrow + i]) * s.voltage_to_mV, ca(i));
  }
  for (std::size_t i = 0; i < count; ++i) out[first + i] = tr[i].finish();
}

template <class Real>
PopulationResult run_typed(const CellKernel& k, const CellSetup& s, const PopulationDesign& d,
                           const StimulusTrain& train, const PopulationOptions& o) {
  const std::size_t n = d.cells();
  if (k.n_states() != static_cast<int>(s.initial_states.size()) ||
      k.n_params() != static_cast<int>(s.params.size()))
    throw Error(fmt::format("population: the kernel ({} states, {} parameters) does not match "
                            "the setup of model '{}'", k.n_states(), k.n_params(), s.model_name));
  std::vector<Real> y, p;
  population_arrays(s, d, y, p);
  const StepSchedule sched(train, o.solver.dt_ms);
  PopulationResult r;
  r.last_beat.resize(n);
  const std::size_t chunk = std::max<std::size_t>(1, o.chunk);
  const long n_chunks = static_cast<long>((n + chunk - 1) / chunk);
  const int threads = o.threads > 0 ? o.threads : par::usable_cores();
  std::string failure;
  if (o.stop) r.done.assign(n, 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long ch = 0; ch < n_chunks; ++ch) {
    const std::size_t first = static_cast<std::size_t>(ch) * chunk;
    const std::size_t count = std::min(chunk, n - first);
    if (o.stop && o.stop()) continue;  // Ctrl-C: the chunks not begun stay undone
    try {
      run_chunk<Real>(k, s, d, sched, o.solver, n, first, count, y, p, r.last_beat);
      if (o.stop) std::fill(r.done.begin() + long(first), r.done.begin() + long(first + count), 1);
    } catch (const std::exception& e) {
#pragma omp critical
      failure = e.what();
    }
  }
  if (!failure.empty()) throw Error(failure);
  r.nonfinite = count_nonfinite_cells(y.data(), n, s.initial_states.size(), r.done);
  return r;
}

}  // namespace

template <class Real>
std::size_t count_nonfinite_cells(const Real* y, std::size_t n, std::size_t ns, const std::vector<std::uint8_t>& done) {
  std::size_t bad = 0;
  for (std::size_t c = 0; c < n; ++c) {
    if (!done.empty() && !done[c]) continue;
    for (std::size_t q = 0; q < ns; ++q)
      if (!std::isfinite(y[q * n + c])) {
        ++bad;
        break;
      }
  }
  return bad;
}
template std::size_t count_nonfinite_cells<float>(const float*, std::size_t, std::size_t,
                                                  const std::vector<std::uint8_t>&);
template std::size_t count_nonfinite_cells<double>(const double*, std::size_t, std::size_t,
                                                   const std::vector<std::uint8_t>&);

ParameterRange parse_range(const std::string& spec, bool with_count) {
  const auto eq = spec.find('=');
  const char* form = with_count ? "NAME=LO:HI:N" : "NAME=LO:HI";
  if (eq == std::string::npos || eq == 0)
    throw InputError(SourceLoc{}, fmt::format("'{}': expected {}", spec, form));
  ParameterRange r;
  r.name = spec.substr(0, eq);
  const auto parts = split(spec.substr(eq + 1), ':');
  if (parts.size() != (with_count ? 3u : 2u))
    throw InputError(SourceLoc{}, fmt::format("'{}': expected {}", spec, form));
  r.lo = parse_number(parts[0], spec);
  r.hi = parse_number(parts[1], spec);
  if (with_count) {
    const double n = parse_number(parts[2], spec);
    if (n < 1 || n != std::floor(n) || n > 1e6)
      throw InputError(SourceLoc{}, fmt::format("'{}': N must be a whole number >= 1", spec));
    r.n = static_cast<int>(n);
  }
  return r;
}

PopulationDesign grid_design(const std::vector<ParameterRange>& ranges) {
  PopulationDesign d;
  std::size_t total = 1;
  for (const auto& r : ranges) {
    d.names.push_back(r.name);
    total *= static_cast<std::size_t>(r.n);
    if (total > 100000000)
      throw InputError(SourceLoc{}, "the grid has more than 10^8 cells");
  }
  d.values.resize(total * ranges.size());
  for (std::size_t c = 0; c < total; ++c) {
    std::size_t rest = c;
    for (std::size_t j = ranges.size(); j-- > 0;) {
      const auto& r = ranges[j];
      const std::size_t idx = rest % r.n;
      rest /= r.n;
      d.values[c * ranges.size() + j] = r.n == 1 ? r.lo : r.lo + (r.hi - r.lo) * idx / (r.n - 1);
    }
  }
  return d;
}

PopulationDesign random_design(const std::vector<ParameterRange>& ranges, std::size_t n,
                               unsigned long long seed, bool lhs) {
  if (n < 1) throw InputError(SourceLoc{}, "--cells must be at least 1");
  PopulationDesign d;
  for (const auto& r : ranges) d.names.push_back(r.name);
  d.values.resize(n * ranges.size());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t j = 0; j < ranges.size(); ++j) {
    std::vector<std::size_t> strata(n);
    std::iota(strata.begin(), strata.end(), 0);
    if (lhs) std::shuffle(strata.begin(), strata.end(), rng);
    for (std::size_t c = 0; c < n; ++c) {
      const double x = lhs ? (strata[c] + u(rng)) / n : u(rng);
      d.values[c * ranges.size() + j] = ranges[j].lo + (ranges[j].hi - ranges[j].lo) * x;
    }
  }
  return d;
}

PopulationDesign csv_design(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError(SourceLoc{path, 0, 0}, "cannot open the parameter CSV");
  PopulationDesign d;
  d.scaling = false;
  std::string line;
  int line_no = 0;
  while (std::getline(f, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto cells = split(line, ',');
    if (d.names.empty()) {
      for (auto& c : cells) {
        c.erase(0, c.find_first_not_of(" \t"));
        c.erase(c.find_last_not_of(" \t") + 1);
        if (c.empty()) throw InputError(SourceLoc{path, line_no, 0}, "empty column name");
        d.names.push_back(c);
      }
      continue;
    }
    if (cells.size() != d.names.size())
      throw InputError(SourceLoc{path, line_no, 0},
                       fmt::format("expected {} values, found {}", d.names.size(), cells.size()));
    for (std::size_t j = 0; j < cells.size(); ++j) {
      try {
        d.values.push_back(parse_number(cells[j], d.names[j]));
      } catch (const InputError& e) {
        throw InputError(SourceLoc{path, line_no, static_cast<int>(j + 1)},
                         e.diagnostics().front().message);
      }
    }
  }
  if (d.names.empty() || d.values.empty())
    throw InputError(SourceLoc{path, line_no, 0}, "the CSV needs a header and at least one row");
  return d;
}

template <class Real>
void population_arrays(const CellSetup& s, const PopulationDesign& d, std::vector<Real>& y,
                       std::vector<Real>& p) {
  const std::size_t n = d.cells();
  const int ns = static_cast<int>(s.initial_states.size());
  const int np = static_cast<int>(s.params.size());
  std::vector<int> cols;
  for (const auto& name : d.names) {
    const int i = s.param_index(name);
    if (i < 0) {
      CellSetup probe = s;
      probe.set_param(name, 0.0);  // throws the located "no such parameter" message
    }
    cols.push_back(i);
  }
  y.assign(static_cast<std::size_t>(ns) * n, Real(0));
  p.assign(static_cast<std::size_t>(np) * n, Real(0));
  for (int k2 = 0; k2 < ns; ++k2)
    std::fill_n(y.begin() + k2 * n, n, static_cast<Real>(s.initial_states[k2]));
  for (int k2 = 0; k2 < np; ++k2)
    std::fill_n(p.begin() + k2 * n, n, static_cast<Real>(s.params[k2]));
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const double v = d.values[c * cols.size() + j];
      p[cols[j] * n + c] = static_cast<Real>(d.scaling ? v * s.params[cols[j]] : v);
    }
}

template void population_arrays<float>(const CellSetup&, const PopulationDesign&,
                                       std::vector<float>&, std::vector<float>&);
template void population_arrays<double>(const CellSetup&, const PopulationDesign&,
                                        std::vector<double>&, std::vector<double>&);

PopulationResult run_population(const CellKernel& k, const CellSetup& s,
                                const PopulationDesign& d, const StimulusTrain& train,
                                const PopulationOptions& o) {
  if (o.solver.cvode)
    throw InputError(SourceLoc{}, "populations run fixed-step integrators only (not cvode)");
  if (d.cells() == 0) throw InputError(SourceLoc{}, "the population has no cells");
  return o.solver.single_precision ? run_typed<float>(k, s, d, train, o)
                                   : run_typed<double>(k, s, d, train, o);
}

std::size_t PopulationResult::cells_done() const {
  return done.empty() ? last_beat.size() : std::size_t(std::count(done.begin(), done.end(), 1));
}

std::string population_csv_header(const PopulationDesign& d) {
  std::string h = "cell";
  for (const auto& n : d.names) h += ',' + n;
  return h + ',' + biomarker_csv_header();
}

std::string population_csv_row(const CellSetup& s, const PopulationDesign& d, std::size_t c,
                               const BeatBiomarkers& b, std::size_t label) {
  std::string row = std::to_string(label);
  for (std::size_t j = 0; j < d.names.size(); ++j) {
    double v = d.values[c * d.names.size() + j];
    if (d.scaling) v *= s.params[s.param_index(d.names[j])];
    row += ',' + fmt::format("{}", v);
  }
  return row + ',' + biomarker_csv_row(b);
}

void write_population_csv(const CellSetup& s, const PopulationDesign& d,
                          const PopulationResult& r, std::ostream& out) {
  out << population_csv_header(d) << '\n';
  for (std::size_t c = 0; c < d.cells(); ++c)
    if (r.finished(c)) out << population_csv_row(s, d, c, r.last_beat[c], c) << '\n';
}

}  // namespace hw::cell
