// See cell_setup.hpp.
#include "cell/cell_setup.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/suggest.hpp"

namespace hw::cell {

int CellSetup::param_index(const std::string& name) const {
  auto it = std::find(param_names.begin(), param_names.end(), name);
  return it == param_names.end() ? -1 : static_cast<int>(it - param_names.begin());
}

void CellSetup::set_param(const std::string& name, double value) {
  const int i = param_index(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (const auto& p : param_names)
      if (p.rfind("_hw_", 0) != 0) names.push_back(p);
    const auto near = nearest_names(name, names, 3);
    std::string hint;
    for (std::size_t k = 0; k < near.size(); ++k) hint += (k ? "', '" : "") + near[k];
    throw InputError(SourceLoc{},
                     fmt::format("--param: model '{}' has no parameter '{}'{}", model_name, name,
                                 near.empty() ? "; `heartwave model inspect MODEL` lists its parameters"
                                              : " (did you mean '" + hint + "'?)"));
  }
  if (!std::isfinite(value))
    throw InputError(SourceLoc{}, fmt::format("--param {}: value must be finite", name));
  params[i] = value;
}

double CellSetup::stimulus_value() const {
  if (stim_amplitude < 0) return std::nan("");
  return stimulus.amplitude_scale * params[stim_amplitude];
}

void CellSetup::set_stimulus_magnitude(double x) {
  if (stim_amplitude < 0)
    throw InputError(SourceLoc{}, "--stim-amplitude: this run keeps the model's own stimulus");
  if (!std::isfinite(x))
    throw InputError(SourceLoc{}, "--stim-amplitude must be a finite number");
  // A magnitude: the parameter gets the sign that depolarises (StimulusInfo).
  params[stim_amplitude] = stimulus.depolarising_sign * std::fabs(x) / std::fabs(stimulus.amplitude_scale);
}

CellSetup make_cell_setup(const model::Model& m, const model::StimulusInfo& info) {
  CellSetup s;
  s.model_name = m.name;
  for (const auto& st : m.states) {
    s.state_names.push_back(st.name);
    s.initial_states.push_back(st.initial);
  }
  for (const auto& p : m.parameters) {
    s.param_names.push_back(p.name);
    s.params.push_back(p.value);
  }
  for (const auto& a : m.algebraics) s.algebraic_names.push_back(a.name);
  if (!m.roles.voltage_state)
    throw InputError(SourceLoc{m.source_file, 0, 0},
                     "no membrane voltage found: name it with --voltage NAME");
  s.voltage = static_cast<int>(*m.roles.voltage_state);
  if (m.roles.calcium_state) s.calcium = static_cast<int>(*m.roles.calcium_state);
  s.time_to_ms = m.roles.time_to_ms > 0 ? m.roles.time_to_ms : 1.0;
  s.voltage_to_mV = m.roles.voltage_to_mV != 0 ? m.roles.voltage_to_mV : 1.0;
  s.stimulus = info;
  if (info.kind != model::StimulusInfo::Kind::none) {
    s.stim_on = s.param_index(info.on_param);
    s.stim_amplitude = s.param_index(info.amplitude_param);
    if (s.stim_on < 0 || s.stim_amplitude < 0)
      throw Error(fmt::format("model '{}': the passes removed the pacing parameters {} / {}",
                              m.name, info.on_param, info.amplitude_param));
  }
  return s;
}

}  // namespace hw::cell
