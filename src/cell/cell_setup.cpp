// See cell_setup.hpp.
#include "cell/cell_setup.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hw::cell {

namespace {
// Edit distance, for "did you mean" suggestions on unknown parameter names.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> d(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = d[0];
    d[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cur = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1,
                       prev + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0u : 1u)});
      prev = cur;
    }
  }
  return d[b.size()];
}
}  // namespace

int CellSetup::param_index(const std::string& name) const {
  auto it = std::find(param_names.begin(), param_names.end(), name);
  return it == param_names.end() ? -1 : static_cast<int>(it - param_names.begin());
}

void CellSetup::set_param(const std::string& name, double value) {
  const int i = param_index(name);
  if (i < 0) {
    std::vector<std::pair<std::size_t, std::string>> near;
    for (const auto& p : param_names)
      if (p.rfind("_hw_", 0) != 0) near.emplace_back(distance(name, p), p);
    std::sort(near.begin(), near.end());
    std::string hint;
    for (std::size_t k = 0; k < near.size() && k < 5; ++k)
      hint += (k ? ", " : "") + near[k].second;
    throw InputError(SourceLoc{},
                     fmt::format("--param: model '{}' has no parameter '{}'{}", model_name, name,
                                 hint.empty() ? "" : "; closest: " + hint));
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
