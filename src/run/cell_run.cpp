#include "run/cell_run.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cell/auto_integrator.hpp"
#include "model/emit/interpreter.hpp"
#include "model/jit/jit.hpp"
#include "run/state_file.hpp"

namespace hw::run {

cell::Integrator parse_integrator(const std::string& s) {
  cell::Integrator i{};
  if (cell::integrator_from_name(s.c_str(), i)) return i;
  throw InputError(SourceLoc{}, fmt::format("unknown integrator '{}': expected one of {}, auto or cvode", s,
                                            cell::integrator_list()));
}

namespace {

// The stimulus amplitude and duration: given, else the model's own, else a located error.
void apply_stimulus(const CellRunOptions& o, PreparedCell& r) {
  const auto& st = r.loaded.stimulus;
  if (st.kind == model::StimulusInfo::Kind::none) return;
  const std::string name = r.setup.model_name.empty() ? o.model : r.setup.model_name;
  if (st.unusable && !o.stim_amplitude) throw InputError(st.stimulus_loc, st.warning);
  if (o.stim_amplitude) {
    r.setup.set_stimulus_magnitude(*o.stim_amplitude);
  } else {
    const double v = r.setup.stimulus_value();
    if (!std::isfinite(v) || v == 0.0)
      throw InputError(SourceLoc{o.model, 0, 0},
                       st.kind == model::StimulusInfo::Kind::additive
                           ? fmt::format("model '{}' has no stimulus current, so Heartwave adds "
                                         "amplitude x on to dV/dt; give {} (model voltage "
                                         "units per model time unit) and {} MS",
                                         name, o.amplitude_option, o.duration_option)
                           : fmt::format("model '{}': could not find its stimulus amplitude; give {}", name,
                                         o.amplitude_option));
  }
  if (o.stim_duration_ms)
    r.stim_duration_ms = *o.stim_duration_ms;
  else if (st.default_duration_ms && *st.default_duration_ms > 0)
    r.stim_duration_ms = *st.default_duration_ms;
  else
    throw InputError(SourceLoc{o.model, 0, 0},
                     fmt::format("model '{}': no stimulus duration found; give {} MS", name, o.duration_option));
}

}  // namespace

PreparedCell prepare_cell(const CellRunOptions& o, bool cpu_kernel) {
  const bool is_auto = o.integrator == "auto", is_cvode = o.integrator == "cvode";
  const cell::Integrator method = is_auto || is_cvode ? cell::Integrator::rl2 : parse_integrator(o.integrator);
  if (!(o.dt_ms > 0) || !std::isfinite(o.dt_ms))
    throw InputError(SourceLoc{}, fmt::format("dt must be a positive number of ms, got {}", o.dt_ms));
  if (o.cell_maths.fast && (!o.single_precision || is_cvode))
    throw InputError(SourceLoc{}, fmt::format("cell maths '{}': the fast intrinsics are float only; choose float precision "
                                              "(--precision float) and a fixed-step integrator, or use '{}'",
                                              model::to_string(o.cell_maths), o.cell_maths.tables ? "tables" : "exact"));
  PreparedCell r;
  model::LoadOptions lo;
  lo.roles = o.roles;
  lo.keep_model_stimulus = o.model_stimulus;
  r.loaded = model::load_model(o.model, lo);
  const auto choice = o.kernel == "interpreter" ? model::KernelChoice::interpreter
                      : o.kernel == "compiled"  ? model::KernelChoice::compiled
                      : o.kernel == "auto"
                          ? model::KernelChoice::automatic
                          : throw InputError(SourceLoc{}, fmt::format("unknown kernel '{}': expected auto, "
                                                                      "interpreter or compiled", o.kernel));
  // A run-time compile builds only what this run steps with (CVODE steps nothing).
  const bool f32 = o.single_precision;
  model::KernelNeeds needs = is_auto    ? model::KernelNeeds::only({cell::Integrator::rl2, cell::Integrator::grl2}, f32)
                                   : is_cvode ? model::KernelNeeds::only({}, false)
                                              : model::KernelNeeds::only({method}, f32);
  needs.cell_maths = o.cell_maths;
  if (cpu_kernel)
    r.kernel = model::make_kernel(r.loaded.analysed, choice, &r.how, needs);
  else
    r.how = "CUDA printed from the model";
  r.setup = cell::make_cell_setup(r.loaded.analysed, r.loaded.stimulus);
  for (const auto& [name, value] : o.params) r.setup.set_param(name, value);
  apply_stimulus(o, r);
  if (!o.initial_state.empty()) {
    const cell::SavedState saved = read_state_file(o.initial_state);
    r.state_warnings = cell::apply_saved_state(r.setup, saved, cell::model_fingerprint(r.loaded.source));
    for (auto& w : cell::pacing_differences(saved, r.setup, o.params, o.bcl_ms, r.stim_duration_ms))
      r.state_warnings.push_back(std::move(w));
  }
  r.solver.cvode = is_cvode;
  r.solver.method = method;
  r.solver.single_precision = f32;
  r.solver.cell_maths = o.cell_maths;
  r.solver.dt_ms = o.dt_ms;
  if (is_auto) {
    std::unique_ptr<cell::CellKernel> interpreter;
    const cell::CellKernel* probe = r.kernel.get();
    if (!probe) probe = (interpreter = model::make_interpreter(r.loaded.analysed)).get();
    cell::AutoOptions ao;
    ao.dt_ms = o.dt_ms;
    ao.single_precision = f32;
    ao.bcl_ms = o.bcl_ms;
    ao.stim_duration_ms = r.stim_duration_ms;
    const cell::AutoChoice ch = cell::choose_integrator(r.loaded.analysed, *probe, r.setup, ao);
    r.solver.method = ch.method;
    r.solver.dt_ms = o.dt_ms / ch.substeps;
    r.integrator_note = fmt::format("integrator auto{}: {}", ch.from_cache ? " (cached)" : "", ch.why);
  }
  r.solver.rtol = o.rtol;
  r.solver.atol = o.atol;
  r.train = cell::StimulusTrain::periodic(o.bcl_ms, o.beats, r.stim_duration_ms, o.stim_start_ms);
  return r;
}

cell::SavedState saved_state(const PreparedCell& p, const CellRunOptions& o, const std::vector<double>& final_states,
                             int beats) {
  cell::SavedState s = cell::make_saved_state(p.setup, final_states, cell::model_fingerprint(p.loaded.source));
  s.bcl_ms = o.bcl_ms;
  s.beats = beats;
  s.stim_duration_ms = p.stim_duration_ms;
  s.stim_amplitude = p.setup.stimulus_value();
  s.params = o.params;
  return s;
}

}  // namespace hw::run
