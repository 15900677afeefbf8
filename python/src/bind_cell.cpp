// Single cells, populations and restitution: run/cell_run.hpp prepares them as the CLI does,
// then the same runners run them. Every run releases the GIL.
#include <chrono>
#include <cmath>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "cell/population.hpp"
#include "cell/population_gpu.hpp"
#include "cell/restitution.hpp"
#include "run/cell_run.hpp"
#include "run/state_file.hpp"

namespace hw::py {

namespace {

nb::dict beat_dict(const cell::BeatBiomarkers& b) {
  nb::dict d;
  d["beat"] = b.beat;
  d["t_start"] = b.t_start;
  d["t_activation"] = b.t_activation;
  d["apd90"] = b.apd90;
  d["apd50"] = b.apd50;
  d["apd30"] = b.apd30;
  d["dvdt_max"] = b.dvdt_max;
  d["v_peak"] = b.v_peak;
  d["v_rest"] = b.v_rest;
  d["cat_amplitude"] = b.cat_amplitude;
  d["catd90"] = b.catd90;
  return d;
}

// The prepared run's description for the Python side.
nb::dict describe(const run::PreparedCell& p) {
  nb::dict d;
  d["model"] = p.setup.model_name;
  d["kernel"] = p.how;
  d["integrator"] = cell::solver_name(p.solver);
  d["dt"] = p.solver.dt_ms;
  d["stim_amplitude"] = p.setup.stimulus_value();
  d["stim_duration"] = p.stim_duration_ms;
  d["note"] = p.integrator_note;
  d["state_names"] = p.setup.state_names;
  return d;
}

void set_initial(run::PreparedCell& p, const std::optional<DoubleArray>& y0) {
  if (!y0) return;
  const std::vector<double> y = to_vector(*y0);
  if (y.size() != p.setup.initial_states.size())
    throw InputError(SourceLoc{}, "initial state: " + std::to_string(y.size()) + " values given, the model has " +
                                      std::to_string(p.setup.initial_states.size()) + " states");
  for (std::size_t k = 0; k < y.size(); ++k)
    if (!std::isfinite(y[k]))
      throw InputError(SourceLoc{}, "initial state: state '" + p.setup.state_names[k] + "' is not finite");
  p.setup.initial_states = y;
}

nb::dict pace(const run::CellRunOptions& o, const std::optional<DoubleArray>& y0, double interval_ms, bool algebraics,
              bool record, double until_steady) {
  // The time inside the library (model, kernel, run), so a caller can tell what the
  // binding itself costs: the wall time of the call less this.
  const auto t0 = std::chrono::steady_clock::now();
  run::PreparedCell p;
  cell::SingleCellResult r;
  {
    nb::gil_scoped_release release;
    p = run::prepare_cell(o);
  }
  set_initial(p, y0);
  cell::TraceOptions t;
  t.interval_ms = interval_ms;
  t.algebraics = algebraics;
  t.record = record;
  cell::PacingControl control;
  control.steady_tolerance = until_steady;
  {
    nb::gil_scoped_release release;
    r = cell::run_single_cell(*p.kernel, p.setup, p.train, p.solver, t, control);
  }
  // The state file's text, for CellResult.save_state (run/state_file.hpp).
  cell::SavedState saved = run::saved_state(p, o, r.final_states, int(r.beats.size()));
  saved.tolerance = until_steady > 0 ? until_steady : 0;
  saved.steady_beat = r.steady_beat;
  saved.last_change = r.beat_changes.empty() ? std::nan("") : r.beat_changes.back();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nb::dict d = describe(p);
  d["seconds"] = seconds;
  const std::size_t rows = r.trace.rows(), cols = r.trace.columns.size();
  d["columns"] = r.trace.columns;
  d["data"] = to_numpy(std::move(r.trace.data), {rows, cols});
  nb::list beats;
  for (const auto& b : r.beats) beats.append(beat_dict(b));
  d["beats"] = beats;
  const std::size_t ns = r.final_states.size();
  d["final_state"] = to_numpy(std::move(r.final_states), {ns});
  d["steps"] = r.steps;
  d["state_changes"] = r.beat_changes;
  d["steady_beat"] = r.steady_beat;
  d["pacing_warning"] = r.response.warning(o.bcl_ms);
  d["state_warnings"] = p.state_warnings;
  d["state_file"] = run::format_state_file(saved);
  return d;
}

nb::dict population(const run::CellRunOptions& o, const std::vector<std::string>& names, const DoubleArray& values,
                    bool scaling, const std::string& backend, int threads) {
  cell::PopulationDesign design;
  design.names = names;
  design.values = to_vector(values);
  design.scaling = scaling;
  if (names.empty() || design.values.size() % names.size() != 0)
    throw InputError(SourceLoc{}, "population: the values must have one column per parameter name");
  for (double v : design.values)
    if (!std::isfinite(v)) throw InputError(SourceLoc{}, "population: a parameter value is not finite");
  cell::PopulationResult r;
  std::string note;
  run::PreparedCell p;
  {
    nb::gil_scoped_release release;
    cell::SolverOptions probe;
    probe.cvode = o.integrator == "cvode";
    const bool gpu = cell::choose_population_gpu(backend, probe, &note);
    p = run::prepare_cell(o, !gpu);
    cell::PopulationOptions opt;
    opt.solver = p.solver;
    opt.threads = threads;
    r = gpu ? cell::run_population_gpu(p.loaded.analysed, p.setup, design, p.train, opt)
            : cell::run_population(*p.kernel, p.setup, design, p.train, opt);
  }
  nb::dict d = describe(p);
  d["backend"] = note;
  const std::size_t n = r.last_beat.size();
  const char* keys[] = {"apd90", "apd50", "apd30", "dvdt_max", "v_peak", "v_rest", "cat_amplitude", "catd90"};
  std::vector<std::vector<double>> cols(8, std::vector<double>(n));
  for (std::size_t c = 0; c < n; ++c) {
    const auto& b = r.last_beat[c];
    const double v[] = {b.apd90, b.apd50, b.apd30, b.dvdt_max, b.v_peak, b.v_rest, b.cat_amplitude, b.catd90};
    for (int k = 0; k < 8; ++k) cols[k][c] = v[k];
  }
  nb::dict bio;
  for (int k = 0; k < 8; ++k) bio[keys[k]] = to_numpy(std::move(cols[k]), {n});
  d["biomarkers"] = bio;
  // The absolute values used (scaled designs multiply the model's defaults).
  std::vector<double> absolute = design.values;
  if (scaling)
    for (std::size_t j = 0; j < names.size(); ++j) {
      const int k = p.setup.param_index(names[j]);
      for (std::size_t c = 0; c < n; ++c) absolute[c * names.size() + j] *= p.setup.params[std::size_t(k)];
    }
  d["parameters"] = to_numpy(std::move(absolute), {n, names.size()});
  return d;
}

std::vector<cell::ParameterRange> ranges(const std::vector<std::pair<std::string, std::vector<double>>>& spec) {
  std::vector<cell::ParameterRange> out;
  for (const auto& [name, v] : spec) {
    cell::ParameterRange r;
    r.name = name;
    r.lo = v.at(0);
    r.hi = v.at(1);
    r.n = v.size() > 2 ? int(v[2]) : 1;
    out.push_back(r);
  }
  return out;
}

nb::tuple design_tuple(cell::PopulationDesign&& d) {
  const std::size_t n = d.cells(), k = d.names.size();
  return nb::make_tuple(d.names, to_numpy(std::move(d.values), {n, k}));
}

}  // namespace

void bind_cell(nb::module_& m) {
  nb::class_<run::CellRunOptions>(m, "CellOptions")
      .def_rw("model", &run::CellRunOptions::model)
      .def_rw("integrator", &run::CellRunOptions::integrator)
      .def_rw("dt_ms", &run::CellRunOptions::dt_ms)
      .def_rw("bcl_ms", &run::CellRunOptions::bcl_ms)
      .def_rw("beats", &run::CellRunOptions::beats)
      .def_rw("stim_amplitude", &run::CellRunOptions::stim_amplitude)
      .def_rw("stim_duration_ms", &run::CellRunOptions::stim_duration_ms)
      .def_rw("stim_start_ms", &run::CellRunOptions::stim_start_ms)
      .def_rw("params", &run::CellRunOptions::params)
      .def_rw("single_precision", &run::CellRunOptions::single_precision)
      .def_prop_rw(
          "cell_maths", [](const run::CellRunOptions& o) { return model::to_string(o.cell_maths); },
          [](run::CellRunOptions& o, const std::string& v) {
            const auto m = model::parse_cell_maths(v);
            if (!m) throw nb::value_error(("cell_maths must be one of " + std::string(model::kCellMathsChoices)).c_str());
            o.cell_maths = *m;
          })
      .def_rw("kernel", &run::CellRunOptions::kernel)
      .def_rw("rtol", &run::CellRunOptions::rtol)
      .def_rw("atol", &run::CellRunOptions::atol)
      .def_rw("model_stimulus", &run::CellRunOptions::model_stimulus)
      .def_rw("initial_state", &run::CellRunOptions::initial_state)
      .def("set_roles", [](run::CellRunOptions& o, const nb::dict& roles) { o.roles = role_overrides(roles); })
      .def("__init__", [](run::CellRunOptions* o) {
        new (o) run::CellRunOptions();
        o->amplitude_option = "stim_amplitude=";
        o->duration_option = "stim_duration=";
      });

  m.def("pace", &pace, nb::arg("options"), nb::arg("initial_state").none() = nb::none(),
        nb::arg("interval_ms") = 1.0, nb::arg("algebraics") = false, nb::arg("record") = true,
        nb::arg("until_steady") = 0.0);
  m.def(
      "read_state",
      [](const std::string& path) {
        const cell::SavedState s = run::read_state_file(path);
        nb::dict d, states, params;
        d["model"] = s.model;
        d["model_sha256"] = s.model_sha256;
        d["bcl_ms"] = s.bcl_ms;
        d["beats"] = s.beats;
        d["stim_duration_ms"] = s.stim_duration_ms;
        d["stim_amplitude"] = s.stim_amplitude;
        d["tolerance"] = s.tolerance;
        d["steady_beat"] = s.steady_beat;
        d["last_change"] = s.last_change;
        for (const auto& [k, v] : s.params) params[k.c_str()] = v;
        for (const auto& [k, v] : s.states) states[k.c_str()] = v;
        d["parameters"] = params;
        d["states"] = states;
        return d;
      },
      nb::arg("path"));
  m.def("population", &population, nb::arg("options"), nb::arg("names"), nb::arg("values"), nb::arg("scaling"),
        nb::arg("backend") = "auto", nb::arg("threads") = 0);
  m.def(
      "grid_design", [](const std::vector<std::pair<std::string, std::vector<double>>>& spec) {
        return design_tuple(cell::grid_design(ranges(spec)));
      },
      nb::arg("ranges"));
  m.def(
      "random_design",
      [](const std::vector<std::pair<std::string, std::vector<double>>>& spec, std::size_t n, unsigned long long seed,
         bool lhs) { return design_tuple(cell::random_design(ranges(spec), n, seed, lhs)); },
      nb::arg("ranges"), nb::arg("cells"), nb::arg("seed"), nb::arg("latin_hypercube"));
  m.def(
      "csv_design", [](const std::string& path) { return design_tuple(cell::csv_design(path)); }, nb::arg("path"));
  m.def(
      "restitution",
      [](const run::CellRunOptions& o, int n_s1, const std::vector<double>& coupling) {
        std::vector<cell::RestitutionPoint> pts;
        {
          nb::gil_scoped_release release;
          run::PreparedCell p = run::prepare_cell(o);
          cell::RestitutionOptions r;
          r.s1_bcl_ms = o.bcl_ms;
          r.n_s1 = n_s1;
          r.duration_ms = p.stim_duration_ms;
          r.coupling_ms = coupling;
          pts = cell::run_s1s2(*p.kernel, p.setup, r, p.solver);
        }
        std::vector<double> flat;
        for (const auto& q : pts)
          flat.insert(flat.end(), {q.coupling_ms, q.di_ms, q.apd90_s1, q.apd90_s2, q.captured ? 1.0 : 0.0});
        return to_numpy(std::move(flat), {pts.size(), 5});
      },
      nb::arg("options"), nb::arg("n_s1"), nb::arg("coupling_ms"));
  m.def(
      "dynamic_restitution",
      [](const run::CellRunOptions& o, int beats, const std::vector<double>& bcls) {
        std::vector<cell::DynamicPoint> pts;
        {
          nb::gil_scoped_release release;
          run::PreparedCell p = run::prepare_cell(o);
          cell::DynamicOptions d;
          d.bcl_ms = bcls;
          d.beats = beats;
          d.duration_ms = p.stim_duration_ms;
          pts = cell::run_dynamic(*p.kernel, p.setup, d, p.solver);
        }
        std::vector<double> flat;
        for (const auto& q : pts) flat.insert(flat.end(), {q.bcl_ms, q.di_ms, q.apd90, q.captured ? 1.0 : 0.0});
        return to_numpy(std::move(flat), {pts.size(), 4});
      },
      nb::arg("options"), nb::arg("beats"), nb::arg("bcl_ms"));
}

}  // namespace hw::py
