// See pacing.hpp for the model rewrite it guarantees.
#include "model/passes/pacing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "model/passes/eval.hpp"

namespace hw::model {

namespace {

// Evaluates model expressions at one point (the shared point evaluator of the passes);
// states and parameters default to the model's own values. A cycle among algebraics,
// which the sort pass reports properly later, reads as NaN here.
class Evaluator {
 public:
  Evaluator(const Model& m, const std::vector<double>* y, const std::vector<double>* p)
      : m_(m) {
    if (y) {
      y_ = *y;
    } else {
      for (const auto& s : m.states) y_.push_back(s.initial);
    }
    if (p) {
      p_ = *p;
    } else {
      for (const auto& q : m.parameters) p_.push_back(q.value);
    }
  }

  double at(ExprId e, double t) {
    try {
      return model::evaluate_point(m_, e, t, y_.data(), p_.data(), nullptr);
    } catch (const Error&) {
      return std::nan("");
    }
  }

 private:
  const Model& m_;
  std::vector<double> y_, p_;
};

std::uint32_t add_parameter(Model& m, const std::string& wanted, double value,
                            const std::string& description) {
  std::string name = wanted;
  for (int k = 2; m.find_parameter(name) || m.find_state(name) || m.find_algebraic(name); ++k)
    name = fmt::format("{}_{}", wanted, k);
  model::Parameter p;
  p.name = name;
  p.value = value;
  p.description = description;
  p.loc.file = m.source_file;
  m.parameters.push_back(p);
  return static_cast<std::uint32_t>(m.parameters.size() - 1);
}

bool active(double v) { return std::isfinite(v) && v != 0.0; }

// Finds the model's first stimulus pulse: its value while on, its start and duration (in
// model time units). Uses the start/duration parameters when the roles name them, else
// scans time finely and refines the edges by bisection.
struct Pulse {
  double value = 0, start = 0, duration = 0;
};

std::optional<Pulse> probe_pulse(const Model& m, ExprId stim) {
  Evaluator ev(m, nullptr, nullptr);
  const auto& r = m.roles;
  auto pval = [&](std::optional<std::uint32_t> i) -> std::optional<double> {
    if (!i) return std::nullopt;
    return m.parameters[*i].value;
  };
  if (auto s = pval(r.stimulus_start), d = pval(r.stimulus_duration); s && d && *d > 0) {
    const double v = ev.at(stim, *s + 0.5 * *d);
    if (active(v)) return Pulse{v, *s, *d};
  }
  const double to_ms = r.time_to_ms > 0 ? r.time_to_ms : 1.0;
  const double h = 0.01 / to_ms;
  double horizon = 5000.0 / to_ms;
  if (auto per = pval(r.stimulus_period); per && *per > 0)
    horizon = std::max(horizon, *per + pval(r.stimulus_start).value_or(0.0));
  const long n = static_cast<long>(horizon / h);
  long first = -1;
  for (long k = 0; k <= n; ++k)
    if (active(ev.at(stim, k * h))) {
      first = k;
      break;
    }
  if (first < 0) return std::nullopt;
  auto refine = [&](double lo, double hi, bool lo_active) {
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (active(ev.at(stim, mid)) == lo_active ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  };
  const double t_on = first == 0 ? 0.0 : refine((first - 1) * h, first * h, false);
  long last = first;
  while (last <= n + 1 && active(ev.at(stim, (last + 1) * h))) ++last;
  const double t_off = refine(last * h, (last + 1) * h, true);
  return Pulse{ev.at(stim, 0.5 * (t_on + t_off)), t_on, t_off - t_on};
}

}  // namespace

double evaluate(const Model& m, ExprId e, double t, const std::vector<double>* states,
                const std::vector<double>* params) {
  Evaluator ev(m, states, params);
  return ev.at(e, t);
}

namespace {

// +1 when a positive amplitude parameter (index amp) raises dV/dt with the stimulus on
// (parameter on = 1), −1 when it lowers it; +1 when dV/dt does not tell (not finite).
double depolarising_sign(const Model& m, std::uint32_t amp, std::uint32_t on) {
  std::vector<double> p;
  for (const auto& q : m.parameters) p.push_back(q.value);
  p[on] = 1;
  const ExprId dv = m.derivatives[*m.roles.voltage_state];
  p[amp] = 0;
  const double base = evaluate(m, dv, 0.0, nullptr, &p);
  p[amp] = 1;
  const double pushed = evaluate(m, dv, 0.0, nullptr, &p);
  return std::isfinite(base) && std::isfinite(pushed) && pushed < base ? -1.0 : 1.0;
}

// ΔdV/dt in mV/ms that the stimulus adds while on, with the parameters' values.
double stimulus_rate(const Model& m, std::uint32_t on) {
  std::vector<double> p;
  for (const auto& q : m.parameters) p.push_back(q.value);
  const ExprId dv = m.derivatives[*m.roles.voltage_state];
  p[on] = 0;
  const double off = evaluate(m, dv, 0.0, nullptr, &p);
  p[on] = 1;
  const double with = evaluate(m, dv, 0.0, nullptr, &p);
  const double to_ms = m.roles.time_to_ms > 0 ? m.roles.time_to_ms : 1.0;
  return (with - off) * m.roles.voltage_to_mV / to_ms;
}

}  // namespace

StimulusInfo prepare_pacing(Model& m) {
  if (!m.roles.voltage_state)
    throw InputError(SourceLoc{m.source_file, 0, 0},
                     "no membrane voltage found (no oxmeta membrane_voltage annotation and no "
                     "state named V, v, Vm, u, ...): name it with --voltage NAME");
  StimulusInfo info;
  const double to_ms = m.roles.time_to_ms > 0 ? m.roles.time_to_ms : 1.0;
  auto ms = [&](std::optional<std::uint32_t> i) -> std::optional<double> {
    if (!i) return std::nullopt;
    return m.parameters[*i].value * to_ms;
  };
  info.default_period_ms = ms(m.roles.stimulus_period);
  info.default_start_ms = ms(m.roles.stimulus_start);

  const std::uint32_t on =
      add_parameter(m, kStimOnParam, 0.0, "stimulus switch set by the Heartwave driver (0/1)");
  info.on_param = m.parameters[on].name;
  const ExprId on_e = m.pool.param(on);

  if (m.roles.stimulus_current) {
    auto& alg = m.algebraics[*m.roles.stimulus_current];
    info.kind = StimulusInfo::Kind::rewritten;
    info.current_name = alg.name;
    const auto pulse = probe_pulse(m, alg.expr);
    if (pulse) {
      info.default_amplitude = pulse->value;
      info.default_duration_ms = pulse->duration * to_ms;
      if (!info.default_start_ms) info.default_start_ms = pulse->start * to_ms;
    } else if (auto d = ms(m.roles.stimulus_duration)) {
      info.default_duration_ms = d;
    }
    ExprId amp = model::kNoExpr;
    if (auto ai = m.roles.stimulus_amplitude; ai && m.parameters[*ai].value != 0.0) {
      const double a = m.parameters[*ai].value;
      double k = pulse ? pulse->value / a : 1.0;
      if (std::fabs(k - std::round(k)) < 1e-9) k = std::round(k);
      if (!pulse) info.default_amplitude = a;
      info.amplitude_param = m.parameters[*ai].name;
      info.amplitude_scale = k;
      amp = m.pool.param(*ai);
      if (k == -1.0)
        amp = m.pool.neg(amp);
      else if (k != 1.0)
        amp = m.pool.mul(m.pool.constant(k), amp);
    } else {
      const std::uint32_t new_amp = add_parameter(
          m, kStimAmplitudeParam, info.default_amplitude.value_or(0.0),
          fmt::format("value of {} while the stimulus is on", alg.name));
      info.amplitude_param = m.parameters[new_amp].name;
      amp = m.pool.param(new_amp);
    }
    alg.expr = m.pool.mul(amp, on_e);
    info.stimulus_loc = alg.loc;
    const double rate = stimulus_rate(m, on);
    if (std::isfinite(rate) && std::fabs(rate) > kMaxStimulusRate) {
      const std::string what = fmt::format(
          "the model's stimulus {} is {:.4g} while on, which moves dV/dt by {:.3g} mV/ms, far beyond any cardiac "
          "stimulus (its expression likely mixes units: see the unit warnings on its line)",
          alg.name, info.default_amplitude.value_or(NAN), rate);
      if (auto ai = m.roles.stimulus_amplitude; ai && m.parameters[*ai].value != 0.0) {
        // Pace with the annotated amplitude itself as the current.
        alg.expr = m.pool.mul(m.pool.param(*ai), on_e);
        info.amplitude_scale = 1;
        info.default_amplitude = m.parameters[*ai].value;
        info.warning = fmt::format("{}; pacing with the annotated amplitude parameter {} = {:g} instead "
                                   "(--stim-amplitude sets another)",
                                   what, m.parameters[*ai].name, m.parameters[*ai].value);
      } else {
        info.unusable = true;
        info.warning = fmt::format("{}, and no parameter is annotated as the stimulus amplitude; give "
                                   "--stim-amplitude (in the stimulus current's units, e.g. 52 for pA/pF)",
                                   what);
      }
    }
    info.depolarising_sign = depolarising_sign(m, *m.find_parameter(info.amplitude_param), on);
    return info;
  }

  // No stimulus current: dV/dt += A · on.
  info.kind = StimulusInfo::Kind::additive;
  const std::uint32_t ai =
      add_parameter(m, kStimAmplitudeParam, 0.0,
                    "stimulus added to dV/dt while on (voltage units per time unit)");
  info.amplitude_param = m.parameters[ai].name;
  const auto v = *m.roles.voltage_state;
  m.derivatives[v] = m.pool.add(m.derivatives[v], m.pool.mul(m.pool.param(ai), on_e));
  return info;
}

}  // namespace hw::model
