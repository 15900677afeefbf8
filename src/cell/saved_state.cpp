// See saved_state.hpp.
#include "cell/saved_state.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/sha256.hpp"
#include "model/frontend/hwm/hwm.hpp"

namespace hw::cell {

namespace {
bool differs(double a, double b) { return std::fabs(a - b) > 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

std::string list(const std::vector<std::string>& v, std::size_t most = 8) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < most; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > most) s += fmt::format(" and {} more", v.size() - most);
  return s;
}
}  // namespace

std::string model_fingerprint(const model::Model& source) {
  try {
    return model::sha256_hex(model::write_hwm(source));
  } catch (const Error&) {
    return "";  // a model the .hwm writer cannot print: identity by name and states only
  }
}

SavedState make_saved_state(const CellSetup& setup, const std::vector<double>& y, const std::string& fingerprint) {
  SavedState s;
  s.model = setup.model_name;
  s.model_sha256 = fingerprint;
  for (std::size_t i = 0; i < setup.state_names.size() && i < y.size(); ++i) s.states.emplace_back(setup.state_names[i], y[i]);
  return s;
}

std::vector<std::string> apply_saved_state(CellSetup& setup, const SavedState& s, const std::string& fingerprint) {
  const SourceLoc at{s.source, 0, 0};
  if (s.model != setup.model_name)
    throw InputError(at, fmt::format("this state belongs to model '{}', not to '{}': start from a state saved "
                                     "from '{}' (--save-state FILE)",
                                     s.model, setup.model_name, setup.model_name));
  std::map<std::string, double> by_name(s.states.begin(), s.states.end());
  std::vector<std::string> missing, bad, extra;
  std::vector<double> y = setup.initial_states;
  for (std::size_t i = 0; i < setup.state_names.size(); ++i) {
    auto it = by_name.find(setup.state_names[i]);
    if (it == by_name.end()) {
      missing.push_back(setup.state_names[i]);
      continue;
    }
    if (!std::isfinite(it->second)) bad.push_back(setup.state_names[i]);
    y[i] = it->second;
    by_name.erase(it);
  }
  if (!missing.empty())
    throw InputError(at, fmt::format("the state file lacks {} of model '{}''s {} states ({}); save the "
                                     "state again from this model",
                                     missing.size(), setup.model_name, setup.state_names.size(), list(missing)));
  if (!bad.empty())
    throw InputError(at, fmt::format("states not finite in the state file: {}", list(bad)));
  std::vector<std::string> warnings;
  for (const auto& [name, v] : by_name) extra.push_back(name);
  if (!extra.empty())
    warnings.push_back(fmt::format("{}: states that model '{}' does not have are ignored: {}", s.source,
                                   setup.model_name, list(extra)));
  if (!fingerprint.empty() && !s.model_sha256.empty() && fingerprint != s.model_sha256)
    warnings.push_back(fmt::format("{}: model '{}' has changed since this state was saved (other equations or "
                                   "default values); starting from it anyway",
                                   s.source, setup.model_name));
  setup.initial_states = std::move(y);
  return warnings;
}

std::vector<std::string> pacing_differences(const SavedState& s, const CellSetup& setup,
                                            const std::vector<std::pair<std::string, double>>& overrides,
                                            double bcl_ms, double stim_duration_ms) {
  std::vector<std::string> what;
  if (bcl_ms > 0 && s.bcl_ms > 0 && differs(bcl_ms, s.bcl_ms)) what.push_back(fmt::format("BCL {} ms (now {})", s.bcl_ms, bcl_ms));
  if (s.stim_duration_ms > 0 && differs(stim_duration_ms, s.stim_duration_ms))
    what.push_back(fmt::format("stimulus duration {} ms (now {})", s.stim_duration_ms, stim_duration_ms));
  const double amp = setup.stimulus_value();
  if (std::isfinite(amp) && s.stim_amplitude != 0 && differs(amp, s.stim_amplitude))
    what.push_back(fmt::format("stimulus {} (now {})", s.stim_amplitude, amp));
  // Parameters: those the state was paced with against the run's values, and the run's own
  // settings the state was paced without (it then had the model's default).
  std::map<std::string, double> then(s.params.begin(), s.params.end());
  for (const auto& [name, v] : then)
    if (const int i = setup.param_index(name); i >= 0 && differs(v, setup.params[std::size_t(i)]))
      what.push_back(fmt::format("{} = {} (now {})", name, v, setup.params[std::size_t(i)]));
  for (const auto& [name, v] : overrides)
    if (!then.count(name)) what.push_back(fmt::format("{} at the model's default (now {})", name, v));
  std::vector<std::string> out;
  if (!what.empty())
    out.push_back(fmt::format("{}: the state was paced with {}; this run paces otherwise, so it starts from a state "
                              "that is not its own steady state",
                              s.source, list(what)));
  return out;
}

}  // namespace hw::cell
