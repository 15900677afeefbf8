// Validation and resolution of a tissue case into parts (see reaction.hpp).
#include "tissue/reaction.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cell/auto_integrator.hpp"
#include "model/emit/interpreter.hpp"

#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "core/suggest.hpp"
#include "tissue/case_codes.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "mesh/geometry.hpp"
#include "mesh/phase_field.hpp"
#include "tissue/regions.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/simulation.hpp"

namespace hw::tissue {

namespace {

bool finite_pos(double x) { return std::isfinite(x) && x > 0; }

cell::Integrator parse_integrator(const TimeSpec& t) {
  cell::Integrator i{};
  if (cell::integrator_from_name(t.integrator.c_str(), i)) return i;
  throw InputError(t.loc, fmt::format("time.integrator = \"{}\" is not one of auto, {}", t.integrator,
                                      cell::integrator_list()));
}

// time.integrator = "auto": each part's model is probed at the ODE step (cell/auto_integrator)
// and the case takes the most robust scheme and the most sub-steps any part needs (one
// scheme per case: the engines step every part with it).
void resolve_auto_integrator(SimSetup& s) {
  const double dt_ode = s.time.dt / s.time.ode_substeps;
  const bool f32 = s.time.precision == Precision::f32;
  cell::Integrator method = cell::Integrator::rl2;
  int sub = 1;
  std::string why;
  for (const Part& p : s.parts) {
    cell::CellSetup setup = p.setup;
    setup.params = p.params;
    const double amp = setup.stimulus_value();
    const auto dur = setup.stimulus.default_duration_ms;
    if (setup.stim_on < 0 || setup.stimulus.unusable || !std::isfinite(amp) || amp == 0 || !dur || !(*dur > 0)) {
      why += fmt::format("{}{}: rl2 (the model has no stimulus of its own to probe with)", why.empty() ? "" : "; ",
                         p.model);
      continue;
    }
    std::unique_ptr<cell::CellKernel> interpreter;
    const cell::CellKernel* k = p.kernel.get();
    if (!k) k = (interpreter = model::make_interpreter(*p.analysed)).get();
    cell::AutoOptions o;
    o.dt_ms = dt_ode;
    o.single_precision = f32;
    o.stim_duration_ms = *dur;
    cell::AutoChoice ch;
    try {
      ch = cell::choose_integrator(*p.analysed, *k, setup, o);
    } catch (const InputError& e) {
      throw InputError(s.time.loc, fmt::format("time.integrator = \"auto\", model \"{}\": {}", p.model, e.what()));
    }
    if (ch.method == cell::Integrator::grl2) method = cell::Integrator::grl2;
    sub = std::max(sub, ch.substeps);
    why += fmt::format("{}{}: {}{}", why.empty() ? "" : "; ", p.model, ch.why, ch.from_cache ? " (cached)" : "");
  }
  s.integrator = method;
  s.time.ode_substeps *= sub;
  s.integrator_note = fmt::format("integrator auto: {}{} ({})", cell::integrator_name(method),
                                  sub > 1 ? fmt::format(", {} ODE sub-steps", s.time.ode_substeps) : "", why);
}

// Grid, mask and labels from build_geometry (geometry.hpp), called at most once: a box
// needs it only for per-voxel fibres, which go to `fibres` (uniform and rotating fibres
// become σ without a field, so no memory).
SimGeometry make_geometry(const TissueCase& c, std::optional<FibreField>* fibres = nullptr) {
  SimGeometry g;
  const bool box = c.geometry.kind == GeometrySpec::Kind::box;
  const bool per_voxel_fibres =
      c.fibres.kind == FibreSpec::Kind::file || c.fibres.kind == FibreSpec::Kind::rule_based ||
      c.fibres.kind == FibreSpec::Kind::mesh;
  g.grid = c.grid;  // a box has no fields to build
  const bool coordinates = c.coordinates || uses_ventricular_coordinates(c);
  if (!box || (fibres && per_voxel_fibres) || coordinates) {
    MeshSpec spec = c;  // the mesh part, asking for the coordinates where the case uses them
    spec.coordinates = coordinates;
    Geometry geo = build_geometry(spec);
    if (!box) {
      g.grid = geo.grid;
      g.mask = std::move(geo.mask);
      g.labels = std::move(geo.labels);
      if (c.geometry.phase_field) g.phase = std::move(geo.phase);
      g.mesh = std::move(geo.mesh);
      g.mesh_note = std::move(geo.mesh_note);
    }
    if (coordinates) {
      g.transmural = std::move(geo.transmural);
      g.apex_base = std::move(geo.apex_base);
    }
    if (geo.long_axis) g.long_axis_note = geo.long_axis->describe();
    if (!geo.surfaces_note.empty()) g.long_axis_note = geo.surfaces_note + "\n" + g.long_axis_note;
    if (fibres && per_voxel_fibres) *fibres = std::move(geo.fibres);
  }
  try {
    g.grid.validate();
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(c.geometry.loc, e.what());
  }
  if (g.grid.size() > 0xFFFFFFF0ull)
    throw InputError(c.geometry.loc, fmt::format("grid: {} cells exceed the 2^32 limit of cell "
                                                 "indices", g.grid.size()));
  return g;
}

Conductivity make_sigma(const TissueCase& c, const SimGeometry& g,
                        const std::optional<FibreField>& per_voxel) {
  const Conductivities& k = c.conductivity;
  const SourceLoc& loc = c.fibres.loc;
  switch (c.fibres.kind) {
    case FibreSpec::Kind::none: return Conductivity::isotropic(k.sigma_l);
    case FibreSpec::Kind::uniform: {
      auto f = c.fibres.direction;
      const double len = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
      if (!(len > 0) || !std::isfinite(len))
        throw InputError(loc, "fibres.direction must be a non-zero finite vector");
      for (auto& x : f) x /= len;
      // σ = σ_t I + (σ_l − σ_t) f fᵀ, one tensor for the whole grid
      std::array<double, 6> t{};
      for (int a = 0; a < 3; ++a)
        for (int b = a; b < 3; ++b)
          t[tensor_comp(a, b)] = (a == b ? k.sigma_t : 0.0) + (k.sigma_l - k.sigma_t) * f[a] * f[b];
      // Round-off in f fᵀ must not create a spurious off-diagonal term (19-point stencil).
      for (int q = 3; q < 6; ++q)
        if (std::fabs(t[q]) < 1e-14 * std::max(k.sigma_l, k.sigma_t)) t[q] = 0.0;
      return Conductivity::uniform_tensor(t);
    }
    case FibreSpec::Kind::rotating: {
      if (c.fibres.axis != 2)
        throw InputError(loc, "fibres: rotating fibres need axis = 2 (z) in this build");
      FibreConductivities fc{k.sigma_l, k.sigma_t, k.sigma_n};
      auto ff = FibreField::rotating_through_z(g.grid, c.fibres.angle_from, c.fibres.angle_to);
      return Conductivity::from_fibres(g.grid, ff, fc, g.mask.empty() ? nullptr : &g.mask);
    }
    default: {
      if (!per_voxel) throw InputError(loc, "fibres: the geometry built no fibre field");
      FibreConductivities fc{k.sigma_l, k.sigma_t, k.sigma_n};
      try {
        return Conductivity::from_fibres(g.grid, *per_voxel, fc, g.mask.empty() ? nullptr : &g.mask);
      } catch (const InputError&) {
        throw;
      } catch (const Error& e) {
        throw InputError(loc, e.what());
      }
    }
  }
}

std::string resolve_model_path(const TissueCase& c, const std::string& m) {
  namespace fs = std::filesystem;
  const fs::path p(m);
  const std::string ext = p.extension().string();
  const bool file_like = ext == ".hwm" || ext == ".cellml" || ext == ".xml";
  if (!file_like || p.is_absolute() || c.source_file.empty()) return m;
  return (fs::path(c.source_file).parent_path() / p).string();
}

// The case's numbers, every problem collected (a case built in C++ or from Python has not
// been through the case-file reader). The one check of dt > 0 in a set-up.
// A stimulus's numbers (`what`: "stimulus[2]").
void check_stimulus_numbers(const Stimulus& st, const std::string& what, DiagnosticSink& sink) {
  auto bad = [&](std::string msg) { sink.add(case_code::problem(st.loc, std::move(msg), case_code::out_of_range)); };
  if (!std::isfinite(st.amplitude)) bad(fmt::format("{}.amplitude must be finite", what));
  if (!finite_pos(st.duration)) bad(fmt::format("{}.duration = {} ms must be > 0", what, st.duration));
  if (!(st.start >= 0) || !std::isfinite(st.start)) bad(fmt::format("{}.start = {} ms must be >= 0", what, st.start));
  if (!(st.period >= 0) || !std::isfinite(st.period))
    bad(fmt::format("{}.period = {} ms must be >= 0", what, st.period));
  if (st.count < 1) bad(fmt::format("{}.count = {} must be >= 1", what, st.count));
}

void check_numbers(const TissueCase& c, DiagnosticSink& sink) {
  auto bad = [&](const SourceLoc& loc, std::string msg) {
    sink.add(case_code::problem(loc, std::move(msg), case_code::out_of_range));
  };
  const TimeSpec& t = c.time;
  if (!finite_pos(t.dt)) bad(t.loc, fmt::format("time.dt = {} ms must be > 0", t.dt));
  if (!(t.t_end >= 0) || !std::isfinite(t.t_end)) bad(t.loc, fmt::format("time.t_end = {} ms must be >= 0", t.t_end));
  if (t.ode_substeps < 1) bad(t.loc, fmt::format("time.ode_substeps = {} must be >= 1", t.ode_substeps));
  if (!finite_pos(t.cg_tolerance)) bad(t.loc, fmt::format("time.cg_tolerance = {} must be > 0", t.cg_tolerance));
  if (t.cg_max_iterations < 1)
    bad(t.loc, fmt::format("time.cg_max_iterations = {} must be >= 1", t.cg_max_iterations));
  const Conductivities& k = c.conductivity;
  const SourceLoc& cl = c.fibres.loc;
  if (!finite_pos(k.chi)) bad(cl, fmt::format("conductivity chi = {} 1/mm must be > 0", k.chi));
  if (!finite_pos(k.cm)) bad(cl, fmt::format("conductivity cm = {} uF/mm^2 must be > 0", k.cm));
  if (!(k.sigma_l >= 0) || !std::isfinite(k.sigma_l))
    bad(cl, fmt::format("conductivity sigma_l = {} mS/mm must be >= 0", k.sigma_l));
  if (!(k.sigma_t >= 0) || !std::isfinite(k.sigma_t))
    bad(cl, fmt::format("conductivity sigma_t = {} mS/mm must be >= 0", k.sigma_t));
  if (k.sigma_n && (!(*k.sigma_n >= 0) || !std::isfinite(*k.sigma_n)))
    bad(cl, fmt::format("conductivity sigma_n = {} mS/mm must be >= 0", *k.sigma_n));
  for (std::size_t q = 0; q < c.stimuli.size(); ++q)
    check_stimulus_numbers(c.stimuli[q], fmt::format("stimulus[{}]", q), sink);
  for (std::size_t q = 0; q < c.gradients.size(); ++q) {
    const ParameterGradient& gr = c.gradients[q];
    if (gr.axis < 0 || gr.axis > 2) bad(gr.loc, fmt::format("gradient[{}].axis = {} must be 0, 1 or 2", q, gr.axis));
    if (!std::isfinite(gr.from) || !std::isfinite(gr.to)) bad(gr.loc, fmt::format("gradient[{}].from/to must be finite", q));
  }
  for (std::size_t q = 0; q < c.initial.size(); ++q)
    if (!std::isfinite(c.initial[q].value))
      bad(c.initial[q].loc, fmt::format("initial[{}].value must be finite", q));
}

std::vector<std::string> parameter_names(const model::Model& m) {
  std::vector<std::string> v;
  for (const auto& p : m.parameters)
    if (p.name.rfind("_hw_", 0) != 0) v.push_back(p.name);
  return v;
}

std::vector<std::string> state_names(const model::Model& m) {
  std::vector<std::string> v;
  for (const auto& st : m.states) v.push_back(st.name);
  return v;
}

// Names the case gives that its models must have: parameters of params/scale and of
// gradients, states of initial conditions. Every unknown one collected.
void check_names(const SimSetup& s, DiagnosticSink& sink) {
  const TissueCase& c = s.tcase;
  auto model_of = [&](const ModelRegion& mr) -> const model::LoadedModel* {
    auto it = s.models.find(resolve_model_path(c, mr.model));
    return it == s.models.end() ? nullptr : it->second.get();
  };
  auto has_param = [](const model::Model& m, const std::string& name) { return m.find_parameter(name).has_value(); };
  auto has_state = [](const model::Model& m, const std::string& name) { return m.find_state(name).has_value(); };
  for (std::size_t r = 0; r < c.models.size(); ++r) {
    const ModelRegion& mr = c.models[r];
    const model::LoadedModel* lm = model_of(mr);
    if (!lm) continue;  // not loaded: reported already
    for (const auto* list : {&mr.params, &mr.scales})
      for (const auto& [name, value] : *list) {
        const char* key = list == &mr.params ? "params" : "scale";
        if (!has_param(lm->analysed, name))
          sink.add(case_code::problem(mr.loc, fmt::format("model[{}].{}.{}: model \"{}\" has no parameter \"{}\" ({}){}",
                                                          r, key, name, mr.model, name, list == &mr.params ? "params" : "scales",
                                                          did_you_mean(name, parameter_names(lm->analysed), 3)),
                                      case_code::unknown_name));
        else if (!std::isfinite(value))
          sink.add(case_code::problem(mr.loc, fmt::format("model[{}].{}.{} must be finite", r, key, name),
                                      case_code::out_of_range));
      }
  }
  auto all_names = [&](std::vector<std::string> (*names_of)(const model::Model&)) {
    std::vector<std::string> all{"V"};
    for (const ModelRegion& mr : c.models)
      if (const model::LoadedModel* lm = model_of(mr))
        for (auto& n : names_of(lm->analysed)) all.push_back(std::move(n));
    if (names_of == &parameter_names) all.erase(all.begin());
    return all;
  };
  auto any_model = [&](auto&& has) {
    for (const ModelRegion& mr : c.models)
      if (const model::LoadedModel* lm = model_of(mr); lm && has(lm->analysed)) return true;
    return false;
  };
  for (const ModelRegion& mr : c.models)
    if (!model_of(mr)) return;  // a name may belong to the model that failed to load
  for (std::size_t q = 0; q < c.gradients.size(); ++q) {
    const ParameterGradient& gr = c.gradients[q];
    if (!any_model([&](const model::Model& m) { return has_param(m, gr.param); }))
      sink.add(case_code::problem(gr.loc, fmt::format("gradient[{}].param: no model of the case has a parameter \"{}\"{}", q, gr.param,
                                                      did_you_mean(gr.param, all_names(parameter_names), 3)),
                                  case_code::unknown_name));
  }
  for (std::size_t q = 0; q < c.initial.size(); ++q) {
    const InitialCondition& ic = c.initial[q];
    if (ic.variable == "V") continue;
    if (!any_model([&](const model::Model& m) { return has_state(m, ic.variable); }))
      sink.add(case_code::problem(ic.loc, fmt::format("initial[{}].variable: initial condition: no model of the case has a state \"{}\"{}", q, ic.variable,
                                                      did_you_mean(ic.variable, all_names(state_names), 3)),
                                  case_code::unknown_name));
  }
}

// The largest eigenvalue bound of −L. A uniform tensor on a box has the same Gershgorin
// row sums on a grid of at most 4 cells per axis (interior rows are all alike), so no
// full-size operator is built for it.
// [[model]] initial_state: every state of the region's model from the file; a file of
// another model, or one lacking states, is an error at the case's key, and the warnings
// (model changed since, states it does not have) are the case's too.
void apply_region_state(cell::CellSetup& setup, const cell::SavedState& saved, const model::LoadedModel& lm,
                        const ModelRegion& mr, std::size_t r, DiagnosticSink& sink, std::vector<std::string>& notes) {
  const std::string key = fmt::format("model[{}].initial_state", r);
  try {
    const auto warnings = cell::apply_saved_state(setup, saved, cell::model_fingerprint(lm.source));
    notes.push_back(fmt::format("{}: every state from {} (paced {} beats at BCL {} ms{})", key, saved.source, saved.beats,
                                saved.bcl_ms, saved.steady_beat > 0 ? ", steady" : ""));
    for (const std::string& w : warnings) notes.push_back(key + ": warning: " + w);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) sink.add(case_code::problem(mr.loc, key + ": " + d.message, case_code::conflict));
  }
}

double diffusion_bound(const TissueCase& c, const SimGeometry& geo, const Conductivity& sigma) {
  DiffusionSetup ds;
  ds.sigma = sigma;
  ds.order = c.conductivity.order;
  ds.grid = geo.grid;
  if (sigma.uniform() && geo.mask.empty()) {
    for (int a = 0; a < 3; ++a) ds.grid.n[a] = std::min(ds.grid.n[a], 5);
  } else {
    ds.mask = geo.mask;
  }
  try {
    return make_diffusion_operator(std::move(ds), Backend::reference)->spectral_bound();
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(c.fibres.loc, e.what());
  }
}

// The phase-field form of diffusion (phase_field.hpp, docs/tissue.md): σ becomes φσ, the
// mask φ > 0 and phi receives φ. Returns the spectral bound of Φ⁻¹L for the explicit limit,
// or −1 when the case has no phase field (geometry.phase_field off, or a box: no boundary).
double apply_phase_field(const TissueCase& c, SimGeometry& geo, Conductivity& sigma,
                         Field<double>& phi) {
  if (!c.geometry.phase_field || geo.phase.empty()) return -1;
  // Explicit and implicit (Φ-weighted CG) diffusion both take φ; the fourth-order stencil
  // exists only for constant isotropic σ on a box, and φσ is neither.
  if (c.conductivity.order != StencilOrder::second)
    throw InputError(c.geometry.loc,
                     "geometry.phase_field = true needs the second-order stencil "
                     "(conductivity.order = 2): the phase field makes the conductivity phi*sigma "
                     "vary in space and puts a boundary inside the grid, and the fourth-order "
                     "stencil holds only for constant isotropic sigma on a box");
  try {
    PhaseFieldDiffusion d = phase_field_diffusion(geo.grid, geo.phase, sigma, 0.0);
    const double bound = phase_field_rate_bound(geo.grid, d);
    sigma = std::move(d.sigma);
    geo.mask = std::move(d.mask);
    phi = std::move(d.phi);
    geo.phase = Field<float>();
    return bound;
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(c.geometry.loc, fmt::format("geometry.phase_field: {}", e.what()));
  }
}

}  // namespace

DiffusionSetup make_case_diffusion(const TissueCase& c) {
  std::optional<FibreField> fibres;
  SimGeometry geo = make_geometry(c, &fibres);
  Conductivity sigma = make_sigma(c, geo, fibres);
  fibres.reset();
  Field<double> phi;
  apply_phase_field(c, geo, sigma, phi);
  DiffusionSetup ds{geo.grid, std::move(sigma), std::move(geo.mask), c.conductivity.order, {}};
  ds.layout = row_layout(ds.grid, ds.mask);
  return ds;
}

DiffusionSetup diffusion_setup(const SimSetup& s, RowLayout layout) {
  DiffusionSetup ds{s.geo.grid, s.sigma, s.geo.mask, s.order, {}};
  ds.layout = std::move(layout);
  return ds;
}

SimSetup prepare_setup(const TissueCase& c) {
  DiagnosticSink sink;
  SimSetup s = prepare_setup(c, sink);
  sink.throw_if_errors();
  return s;
}

SimSetup prepare_setup(const TissueCase& c, DiagnosticSink& sink) {
  SimSetup s;
  s.tcase = c;
  check_numbers(c, sink);
  s.time = c.time;
  s.chi = c.conductivity.chi;
  s.cm = c.conductivity.cm;
  s.order = c.conductivity.order;
  // The geometry's and the integrator's problems join the others (the geometry does not
  // read the numbers above).
  try {
    if (c.time.integrator != "auto") s.integrator = parse_integrator(c.time);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) sink.add(case_code::with_code(d, case_code::bad_choice));
  }
  try {
    s.geo = make_geometry(c, &s.fibres);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) sink.add(case_code::with_code(d, case_code::geometry));
  }
  // Each distinct model once, however many regions name it; every one that fails is
  // reported, with the model's own diagnostics after it.
  std::set<std::string> failed;
  for (const ModelRegion& mr : c.models) {
    const std::string path = resolve_model_path(c, mr.model);
    if (s.models.count(path) || failed.count(path)) continue;
    try {
      s.models.emplace(path, std::make_shared<const model::LoadedModel>(model::load_model(path)));
    } catch (const InputError& e) {
      failed.insert(path);
      sink.add(case_code::problem(mr.loc, fmt::format("model = \"{}\" could not be loaded", mr.model),
                                  case_code::model_error));
      for (const Diagnostic& d : e.diagnostics()) sink.add(d);
    }
  }
  check_names(s, sink);
  if (!sink.has_errors()) s.stage = SetupStage::prepared;
  return s;
}

void prepare_diffusion(SimSetup& s) {
  if (s.stage == SetupStage::none) throw Error("prepare_diffusion: the set-up was not prepared (prepare_setup)");
  if (s.stage != SetupStage::prepared) return;
  const TissueCase& c = s.tcase;
  s.sigma = make_sigma(c, s.geo, s.fibres);
  s.fibres.reset();
  const double phase_bound = apply_phase_field(c, s.geo, s.sigma, s.phi);
  // The explicit limit, checked here only: the plan shows it, the run trusts it.
  if (c.time.diffusion == DiffusionScheme::forward_euler) {
    const double bound = phase_bound >= 0 ? phase_bound : diffusion_bound(c, s.geo, s.sigma);
    s.stable_dt = bound > 0 ? 2.0 * s.chi * s.cm / bound : INFINITY;
    if (c.time.dt > s.stable_dt)
      throw InputError({case_code::problem(c.time.loc, unstable_dt_message(c.time.dt, s.stable_dt), case_code::unstable_dt)});
  }
  s.stage = SetupStage::diffusion;
}

SimSetup make_sim_setup(const TissueCase& c, bool cpu_kernels) {
  SimSetup s = prepare_setup(c);
  resolve_setup(s, cpu_kernels);
  return s;
}

void resolve_setup(SimSetup& s, bool cpu_kernels) {
  if (s.stage == SetupStage::resolved) return;
  prepare_diffusion(s);
  const TissueCase& c = s.tcase;
  const Grid& g = s.geo.grid;
  const bool have_labels = !s.geo.labels.empty();
  const CellCoordinates coords{&s.geo.transmural, &s.geo.apex_base};
  DiagnosticSink sink;  // problems of regions: all collected, thrown at the end

  // Which model region owns each tissue cell: the last one that contains it.
  if (c.models.empty())
    throw InputError({case_code::problem(SourceLoc{c.source_file}, "the case has no [[model]] region", case_code::missing)});
  std::vector<std::int16_t> owner(g.size(), -1);
  if (c.models.size() > 32000)
    throw InputError(c.models.back().loc, "more than 32000 model regions");
  for (std::size_t r = 0; r < c.models.size(); ++r) {
    const ModelRegion& mr = c.models[r];
    validate_region(mr.where, g, have_labels, "model region", coords);
    for (std::uint32_t n : region_cells(mr.where, g, s.geo.mask, s.geo.labels, coords)) owner[n] = std::int16_t(r);
  }
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!is_tissue(&s.geo.mask, n)) continue;
    ++s.tissue_cells;
    if (owner[n] < 0) {
      const int i = int(n % g.nx()), j = int((n / g.nx()) % g.ny()), k = int(n / (std::size_t(g.nx()) * g.ny()));
      throw InputError({case_code::problem(c.models.front().loc,
                                           fmt::format("tissue cell ({}, {}, {}) lies in no model region; add a "
                                                       "region covering all tissue",
                                                       i, j, k),
                                           case_code::uncovered)});
    }
  }
  if (s.tissue_cells == 0)
    throw InputError({case_code::problem(c.geometry.loc, "geometry: the case has no tissue cell", case_code::uncovered)});

  // One part per region that owns cells, on the models prepare_setup loaded.
  std::vector<int> part_of(c.models.size(), -1);
  for (std::size_t r = 0; r < c.models.size(); ++r) {
    const ModelRegion& mr = c.models[r];
    const model::LoadedModel& lm = *s.models.at(resolve_model_path(c, mr.model));
    Part p;
    p.model = mr.model;
    p.loc = mr.loc;
    p.setup = cell::make_cell_setup(lm.analysed, lm.stimulus);
    if (p.setup.voltage < 0)
      throw InputError(mr.loc, fmt::format("model \"{}\" has no membrane voltage state", mr.model));
    if (mr.initial_state) apply_region_state(p.setup, *mr.initial_state, lm, mr, r, sink, s.state_notes);
    p.ns = int(p.setup.state_names.size());
    p.np = int(p.setup.param_names.size());
    p.kv = p.setup.voltage;
    p.v2mV = p.setup.voltage_to_mV;
    p.t2ms = p.setup.time_to_ms;
    p.params = p.setup.params;
    // The model's own stimulus stays off: tissue stimuli are injected by the stepper.
    if (p.setup.stim_on >= 0) p.params[p.setup.stim_on] = 0.0;
    // Names and values were checked by prepare_setup (check_names).
    for (const auto& [name, value] : mr.params) p.params[p.setup.param_index(name)] = value;
    for (const auto& [name, factor] : mr.scales) p.params[p.setup.param_index(name)] *= factor;
    for (std::size_t n = 0; n < g.size(); ++n)
      if (owner[n] == std::int16_t(r)) p.cells.push_back(std::uint32_t(n));
    p.n = p.cells.size();
    if (p.n == 0) continue;  // wholly overridden by later regions
    p.analysed = std::make_shared<const model::Model>(lm.analysed);
    if (cpu_kernels) {
      std::string how;
      const bool f32 = c.time.precision == Precision::f32;
      model::KernelNeeds needs =
          c.time.integrator == "auto" ? model::KernelNeeds::only({cell::Integrator::rl2, cell::Integrator::grl2}, f32)
                                      : model::KernelNeeds::only({s.integrator}, f32);
      needs.cell_maths = c.time.cell_maths;
      p.kernel = model::make_kernel(lm.analysed, model::KernelChoice::automatic, &how, needs);
      p.how = how;
    }
    p.identity = p.n == g.size();
    const std::size_t rows = std::size_t(g.ny()) * g.nz();
    if (p.identity) {
      p.cells.clear();
      p.cells.shrink_to_fit();
    } else {
      p.row_start.resize(rows + 1);
      std::size_t i = 0;
      for (std::size_t rr = 0; rr <= rows; ++rr) {
        while (i < p.n && p.cells[i] < rr * g.nx()) ++i;
        p.row_start[rr] = std::uint32_t(i);
      }
    }
    part_of[r] = int(s.parts.size());
    s.parts.push_back(std::move(p));
  }

  if (c.time.integrator == "auto") resolve_auto_integrator(s);

  // Compact index of grid cell n in its part.
  auto compact = [&](const Part& p, std::uint32_t n) -> std::uint32_t {
    if (p.identity) return n;
    return std::uint32_t(std::lower_bound(p.cells.begin(), p.cells.end(), n) - p.cells.begin());
  };
  auto part_index = [&](std::uint32_t n) { return part_of[owner[n]]; };

  // Parameter gradients: value(s) = from + (to − from)·s, multiplying or replacing.
  for (const ParameterGradient& gr : c.gradients) {
    bool any = false;  // axis, from/to and the name: checked by prepare_setup
    for (Part& p : s.parts) {
      const int k = p.setup.param_index(gr.param);
      if (k < 0) continue;
      any = true;
      if (!p.per_cell) {
        p.per_cell = true;
        p.pcell.resize(std::size_t(p.np) * p.n);
        for (int q = 0; q < p.np; ++q)
          std::fill_n(p.pcell.begin() + std::size_t(q) * p.n, p.n, p.params[q]);
      }
      for (std::size_t i = 0; i < p.n; ++i) {
        const std::size_t n = p.grid_index(i);
        const int idx[3] = {int(n % g.nx()), int((n / g.nx()) % g.ny()), int(n / (std::size_t(g.nx()) * g.ny()))};
        const double sfrac = gr.along == ParameterGradient::Along::transmural ? double(s.geo.transmural[n])
                             : gr.along == ParameterGradient::Along::apex_base ? double(s.geo.apex_base[n])
                                                                                : axis_fraction(g, gr.axis, idx[gr.axis]);
        const double v = gr.from + (gr.to - gr.from) * sfrac;
        double& dst = p.pcell[std::size_t(k) * p.n + i];
        dst = gr.scale ? dst * v : v;
      }
    }
    if (!any)  // the parameter's model owns no cell (wholly overridden by later regions)
      throw InputError({case_code::problem(gr.loc, fmt::format("gradient: no model region that owns cells has a parameter \"{}\"",
                                                               gr.param), case_code::unknown_name)});
  }
  for (Part& p : s.parts) {
    p.uniform.assign(std::size_t(p.np), std::nullopt);
    for (int k = 0; k < p.np; ++k) {
      if (!p.per_cell) {
        p.uniform[std::size_t(k)] = p.params[std::size_t(k)];
        continue;
      }
      const double* v = p.pcell.data() + std::size_t(k) * p.n;
      if (std::all_of(v, v + p.n, [&](double x) { return x == v[0]; })) p.uniform[std::size_t(k)] = v[0];
    }
  }

  // Stimuli: cells per part and the rate dV/dt = amplitude/(χ Cm) in model units.
  for (std::size_t q = 0; q < c.stimuli.size(); ++q) {
    try {
      s.stimuli.add(resolve_stimulus(s, c.stimuli[q], fmt::format("stimulus[{}]", q)));
    } catch (const InputError& e) {
      for (const Diagnostic& d : e.diagnostics()) sink.add(d);
    }
  }

  // Initial conditions, resolved to cells now and applied by the engine in order.
  for (const InitialCondition& ic : c.initial) {
    validate_region(ic.where, g, have_labels, "initial condition", coords);
    const auto cells = region_cells(ic.where, g, s.geo.mask, s.geo.labels, coords);
    if (cells.empty()) {
      sink.add(case_code::problem(ic.loc, "initial condition: its region contains no tissue cell", case_code::outside));
      continue;
    }
    if (ic.variable == "V") {
      s.initial.push_back({-1, -1, ic.value, cells});
      continue;
    }
    bool any = false;
    std::vector<ResolvedInitial> per(s.parts.size());
    for (std::size_t q = 0; q < s.parts.size(); ++q) {
      const auto& names = s.parts[q].setup.state_names;
      auto it = std::find(names.begin(), names.end(), ic.variable);
      if (it == names.end()) continue;
      any = true;
      per[q].part = int(q);
      per[q].state = int(it - names.begin());
      per[q].value = ic.value;
      if (per[q].state == s.parts[q].kv) {  // the voltage by its own name: model units
        per[q].part = -1;
        per[q].value = ic.value * s.parts[q].v2mV;
      }
    }
    if (!any) {  // the state's model owns no cell (wholly overridden by later regions)
      sink.add(case_code::problem(ic.loc, fmt::format("initial condition: no model region that owns cells has a state \"{}\"",
                                                      ic.variable), case_code::unknown_name));
      continue;
    }
    for (std::uint32_t n : cells) {
      const int q = part_index(n);
      if (per[q].state < 0) continue;
      per[q].cells.push_back(per[q].part < 0 ? n : compact(s.parts[q], n));
    }
    for (auto& r : per)
      if (r.state >= 0 && !r.cells.empty()) s.initial.push_back(std::move(r));
  }
  sink.throw_if_errors();
  s.stage = SetupStage::resolved;
}

double sim_stable_dt(const TissueCase& c) {
  std::optional<FibreField> fibres;
  SimGeometry geo = make_geometry(c, &fibres);
  Conductivity sigma = make_sigma(c, geo, fibres);
  Field<double> phi;
  double bound = -1;
  if (c.time.diffusion == DiffusionScheme::forward_euler && c.conductivity.order == StencilOrder::second)
    bound = apply_phase_field(c, geo, sigma, phi);
  if (bound < 0) bound = diffusion_bound(c, geo, sigma);
  return bound > 0 ? 2.0 * c.conductivity.chi * c.conductivity.cm / bound : INFINITY;
}

ResolvedStimulus resolve_stimulus(const SimSetup& s, const Stimulus& st, const std::string& what) {
  DiagnosticSink sink;
  check_stimulus_numbers(st, what, sink);
  sink.throw_if_errors();
  const Grid& g = s.geo.grid;
  const CellCoordinates coords{&s.geo.transmural, &s.geo.apex_base};
  validate_region(st.where, g, !s.geo.labels.empty(), "stimulus", coords);
  const std::vector<std::uint32_t> cells = region_cells(st.where, g, s.geo.mask, s.geo.labels, coords);
  if (cells.empty())
    throw InputError({case_code::problem(st.where.loc.line ? st.where.loc : st.loc,
                                         fmt::format("{}.region contains no tissue cell (outside the domain?)", what),
                                         case_code::outside)});
  // The parts own disjoint cells, each list ascending: one merge per part.
  std::vector<std::vector<std::uint32_t>> per_part;
  for (const Part& p : s.parts) {
    std::vector<std::uint32_t>& mine = per_part.emplace_back();
    if (p.identity) {
      mine = cells;
      continue;
    }
    auto it = p.cells.begin();
    for (std::uint32_t n : cells) {
      it = std::lower_bound(it, p.cells.end(), n);
      if (it == p.cells.end()) break;
      if (*it == n) mine.push_back(std::uint32_t(it - p.cells.begin()));
    }
  }
  return stimulus_on_cells(s, st, std::move(per_part), what);
}

ResolvedStimulus stimulus_on_cells(const SimSetup& s, const Stimulus& st,
                                   std::vector<std::vector<std::uint32_t>> cells, const std::string& what) {
  DiagnosticSink sink;
  check_stimulus_numbers(st, what, sink);
  if (cells.size() != s.parts.size())
    sink.add(case_code::problem(st.loc, fmt::format("{}: cell lists for {} model regions, the case has {}", what,
                                                    cells.size(), s.parts.size()),
                                case_code::out_of_range));
  for (std::size_t q = 0; q < cells.size() && q < s.parts.size(); ++q)
    for (std::uint32_t c : cells[q])
      if (c >= s.parts[q].n) {
        sink.add(case_code::problem(st.loc, fmt::format("{}: cell {} is outside its model region ({} cells)", what, c,
                                                        s.parts[q].n),
                                    case_code::out_of_range));
        break;
      }
  sink.throw_if_errors();
  ResolvedStimulus r{st, StimulusSchedule(st, s.time.dt), std::move(cells), {}};
  for (const Part& p : s.parts) r.rate.push_back(st.amplitude / (s.chi * s.cm) / p.v2mV);
  return r;
}

MemoryEstimate estimate_memory(const TissueCase& c) { return estimate_memory(prepare_setup(c)); }

MemoryEstimate estimate_memory(const SimSetup& s) {
  if (s.stage != SetupStage::prepared)
    throw Error("estimate_memory: the set-up must be prepared and not further (prepare_setup)");
  const TissueCase& c = s.tcase;
  const SimGeometry& geo = s.geo;
  const Grid& g = geo.grid;
  const std::size_t N = g.size();
  const std::size_t bytes = c.time.precision == Precision::f32 ? 4 : 8;
  // Fields and operator weights live in compressed rows around the tissue (the cpu
  // backend's layout; the box when every row is stored whole).
  const RowLayout layout = row_layout(g, geo.mask);
  const std::size_t S = layout.size();
  MemoryEstimate m;
  std::size_t tissue = N;
  if (!geo.mask.empty()) {
    tissue = 0;
    for (std::size_t n = 0; n < N; ++n) tissue += geo.mask[n] != 0;
    m.run += N;  // the mask (outputs need it)
  }
  m.run += geo.labels.size() * sizeof(std::int16_t);
  m.run += (geo.transmural.size() + geo.apex_base.size()) * sizeof(float);
  m.run += layout.rows() * (sizeof(std::size_t) + 4 * sizeof(std::uint32_t));
  // Phase field: φ and φσ on the box during set-up, 1/φ (or Φ) in the engine's storage.
  if (!geo.phase.empty()) {
    m.setup += N * (sizeof(float) + sizeof(double) + 6 * sizeof(double));
    m.run += S * bytes;
  }
  // V twice (three times with Strang splitting).
  m.run += (c.time.splitting == Splitting::strang ? 3 : 2) * S * bytes;
  // The canonical state (checkpoint.hpp: V and every state, in double, per tissue cell): the
  // initial state is made so before the engine takes it, and a checkpoint is written from
  // it. Measured above the run's own arrays (cpu, float): about 1.7 times it on a Karma box
  // (256³ and 512³, 2 states), about 2.2 times on the N-version slab at 0.1 mm (TT06, 19
  // states; probes, maps and outputs included); counted as 3
  // (memory.peak_within_estimate).
  std::size_t canonical = tissue * 8;
  // States but V, per region; a region covering everything stores no cell list. Regions are
  // sized by their selection (an overestimate where later regions override).
  for (const ModelRegion& mr : c.models) {
    const model::Model& m_ir = s.models.at(resolve_model_path(c, mr.model))->analysed;
    const int states = int(m_ir.states.size()), params = int(m_ir.parameters.size());
    std::size_t n = tissue;
    if (mr.where.kind != Region::Kind::all)
      n = region_cells(mr.where, g, geo.mask, geo.labels, {&geo.transmural, &geo.apex_base}).size();
    m.run += std::size_t(std::max(0, states - 1)) * n * bytes;
    canonical += std::size_t(std::max(0, states - 1)) * n * 8;
    if (n != N) {
      // Grid index and (compressed layout) storage index per cell, row starts.
      m.run += n * sizeof(std::uint32_t) * (layout.box ? 1 : 2) + (std::size_t(g.ny()) * g.nz() + 1) * 4;
    }
    if (!c.gradients.empty()) m.run += std::size_t(params) * n * bytes;
  }
  // Diffusion weights: none for a uniform diagonal tensor on a box (fused cpu path).
  const bool uniform_fibres = c.fibres.kind == FibreSpec::Kind::none || c.fibres.kind == FibreSpec::Kind::uniform;
  const bool diag = c.fibres.kind == FibreSpec::Kind::none ||
                    (c.fibres.kind == FibreSpec::Kind::uniform &&
                     int(c.fibres.direction[0] != 0) + int(c.fibres.direction[1] != 0) +
                             int(c.fibres.direction[2] != 0) <= 1);
  const bool expl = c.time.diffusion == DiffusionScheme::forward_euler;
  // The pseudo-ECG applies the run's operator on the host: the Simulation keeps σ for it,
  // box-sized when it varies per voxel (fibres from a field, or φσ).
  if (!c.output.electrodes.empty() && (!uniform_fibres || !geo.phase.empty())) m.run += 6 * N * 8;
  if (!(uniform_fibres && diag && geo.mask.empty() && expl)) {
    // The fused explicit step keeps them in the run's precision, the operator in double.
    const std::size_t wb = expl ? bytes : 8;
    m.run += std::size_t(g.dim()) * S * wb;                      // face weights
    if (!diag) m.run += std::size_t(g.dim() == 3 ? 3 : 1) * S * wb;  // edge weights
    if (!uniform_fibres) m.setup += 6 * N * 8 + 3 * N * 8;         // tensor per voxel + fibres
    if (!expl) m.run += S * 8 + 6 * S * bytes;                   // diagonal, CG vectors
  }
  // Field and PNG outputs are snapshots written by a thread (outputs/write_queue.hpp): one being
  // written, two waiting, and the one the run has just taken while it waits for room. Field
  // frames and pictures share that queue, so at worst all four are the larger kind: a copy
  // of every variable written, or the one picture's variable.
  std::size_t vars = 0;
  if (c.output.field_interval > 0) vars = c.output.variables.size();
  if (c.output.png_interval > 0) vars = std::max<std::size_t>(vars, 1);
  m.snapshots = 4 * vars * S * bytes;
  m.setup += 3 * canonical;
  m.checkpoint = 3 * canonical;
  return m;
}

}  // namespace hw::tissue
