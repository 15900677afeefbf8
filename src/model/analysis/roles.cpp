// Role detection: overrides, then oxmeta terms, then name rules (docs/cellml.md lists
// the rules). Never throws except for an override that names nothing.
#include "model/analysis/roles.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace hw::model {

namespace {

// The name without a "component__" prefix.
std::string base_name(const std::string& n) {
  auto p = n.rfind("__");
  return p == std::string::npos ? n : n.substr(p + 2);
}

std::string squash(const std::string& n) {  // lower case, no underscores
  std::string s;
  for (char c : n)
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class T>
std::optional<std::uint32_t> by_ontology(const std::vector<T>& list, const std::string& term) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].ontology == term) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

// First name of `names` (in priority order) that some symbol has, exactly, either as its
// full name or after its component prefix.
template <class T>
std::optional<std::uint32_t> by_names(const std::vector<T>& list,
                                      std::initializer_list<const char*> names) {
  for (const char* want : names) {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].name == want) return static_cast<std::uint32_t>(i);
    for (std::size_t i = 0; i < list.size(); ++i)
      if (base_name(list[i].name) == want) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

// A stimulus-protocol parameter: its squashed name contains "stim" and one of `keys`.
std::optional<std::uint32_t> stim_param(const std::vector<Parameter>& ps,
                                        std::initializer_list<const char*> keys) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    std::string s = squash(base_name(ps[i].name));
    if (s.find("stim") == std::string::npos) continue;
    for (const char* k : keys)
      if (s.find(k) != std::string::npos) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

template <class T>
std::uint32_t override_index(const std::vector<T>& list, const std::string& name,
                             const char* role, const char* kind) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<std::uint32_t>(i);
  std::string all;
  for (const auto& s : list) all += (all.empty() ? "" : ", ") + s.name;
  throw InputError(SourceLoc{}, std::string("no ") + kind + " named '" + name + "' for the " +
                                    role + " role; the " + kind + "s are: " +
                                    (all.empty() ? "(none)" : all));
}

double to_unit_factor(const std::optional<Units>& u, const char* target) {
  if (!u || u->dimensionless()) return 1.0;
  auto t = builtin_units(target);
  auto f = conversion_factor(*u, *t);
  return f ? *f : 1.0;
}

}  // namespace

void detect_roles(Model& m, const RoleOverrides& o) {
  Roles r;
  // Voltage: a state.
  if (o.voltage) r.voltage_state = override_index(m.states, *o.voltage, "voltage", "state");
  else if (auto i = by_ontology(m.states, "membrane_voltage")) r.voltage_state = i;
  else r.voltage_state = by_names(m.states, {"V", "Vm", "V_m", "membrane_V", "membrane_potential",
                                             "E_m", "u", "v", "vm"});

  if (o.stimulus_current)
    r.stimulus_current = override_index(m.algebraics, *o.stimulus_current, "stimulus current",
                                        "algebraic variable");
  else if (auto i = by_ontology(m.algebraics, "membrane_stimulus_current"))
    r.stimulus_current = i;
  else
    r.stimulus_current = by_names(m.algebraics, {"i_stim", "I_stim", "i_Stim", "I_Stim", "Istim",
                                                 "IStim", "istim", "i_st", "I_st", "J_stim",
                                                 "I_app", "i_app", "Iapp", "stim_current"});

  auto param_role = [&](const std::optional<std::string>& ov, const char* role, const char* term,
                        std::initializer_list<const char*> keys) -> std::optional<std::uint32_t> {
    if (ov) return override_index(m.parameters, *ov, role, "parameter");
    if (auto i = by_ontology(m.parameters, term)) return i;
    return stim_param(m.parameters, keys);
  };
  r.stimulus_amplitude = param_role(o.stimulus_amplitude, "stimulus amplitude",
                                    "membrane_stimulus_current_amplitude", {"amplitude", "amp"});
  r.stimulus_duration = param_role(o.stimulus_duration, "stimulus duration",
                                   "membrane_stimulus_current_duration", {"duration", "dur"});
  r.stimulus_period = param_role(o.stimulus_period, "stimulus period",
                                 "membrane_stimulus_current_period", {"period", "bcl"});
  r.stimulus_start = param_role(o.stimulus_start, "stimulus start",
                                "membrane_stimulus_current_offset", {"start", "offset"});

  if (o.calcium) r.calcium_state = override_index(m.states, *o.calcium, "calcium", "state");
  else if (auto i = by_ontology(m.states, "cytosolic_calcium_concentration")) r.calcium_state = i;
  else r.calcium_state = by_names(m.states, {"Cai", "Ca_i", "cai", "ca_i", "Ca_in", "Cai_",
                                             "Ca_cyt", "Ca_myo"});

  if (o.capacitance)
    r.capacitance = override_index(m.parameters, *o.capacitance, "capacitance", "parameter");
  else if (auto i = by_ontology(m.parameters, "membrane_capacitance")) r.capacitance = i;
  else r.capacitance = by_names(m.parameters, {"Cm", "C_m", "cm", "C_mem", "Cap"});

  r.time_to_ms = to_unit_factor(m.time.units, "millisecond");
  if (m.time.units && !m.time.units->dimensionless() &&
      !m.time.units->same_dimension(*builtin_units("second")))
    r.time_to_ms = 1.0;
  if (r.voltage_state) {
    const auto& u = m.states[*r.voltage_state].units;
    r.voltage_to_mV = (u && u->same_dimension(*builtin_units("volt")))
                          ? to_unit_factor(u, "millivolt")
                          : 1.0;
  }
  m.roles = r;
}

std::string describe_roles(const Model& m) {
  std::ostringstream os;
  auto line = [&](const char* role, const std::optional<std::uint32_t>& idx, VarKind kind,
                  const char* kind_name, double scale, const char* unit) {
    os << role << ": ";
    if (!idx) {
      os << "(not found)\n";
      return;
    }
    const Symbol& s = m.symbol(kind, *idx);
    os << s.name << " (" << kind_name;
    if (!s.ontology.empty()) os << ", oxmeta " << s.ontology;
    if (!s.units_name.empty()) os << ", " << s.units_name;
    if (unit) os << "; x" << scale << " to " << unit;
    os << ")\n";
  };
  const Roles& r = m.roles;
  line("voltage", r.voltage_state, VarKind::state, "state", r.voltage_to_mV, "mV");
  line("stimulus current", r.stimulus_current, VarKind::algebraic, "algebraic", 1, nullptr);
  line("stimulus amplitude", r.stimulus_amplitude, VarKind::param, "parameter", 1, nullptr);
  line("stimulus duration", r.stimulus_duration, VarKind::param, "parameter", 1, nullptr);
  line("stimulus period", r.stimulus_period, VarKind::param, "parameter", 1, nullptr);
  line("stimulus start", r.stimulus_start, VarKind::param, "parameter", 1, nullptr);
  line("calcium", r.calcium_state, VarKind::state, "state", 1, nullptr);
  line("capacitance", r.capacitance, VarKind::param, "parameter", 1, nullptr);
  os << "time: " << m.time.name;
  if (!m.time.units_name.empty()) os << " (" << m.time.units_name << ")";
  os << "; x" << r.time_to_ms << " to ms\n";
  return os.str();
}

}  // namespace hw::model
