// The pacing rewrite: how Heartwave takes over a model's own stimulus (cell/pacing.hpp
// drives it: trains, step schedules, S1-S2).
//
// Why: CellML models carry their own stimulus protocol (start, period, duration, amplitude
// as a piecewise in time). Comparing with Myokit and Chaste, and running any BCL or an
// S1-S2 train, needs one protocol owned by Heartwave. So, before the passes run,
// prepare_pacing() rewrites the model (see docs/single-cell.md):
//
//   * the stimulus-current algebraic (roles.stimulus_current) becomes
//         i_stim = scale · A · _hw_stim_on
//     where A is the model's own amplitude parameter when it has one (scale = ±1 makes
//     the result equal the model's stimulus while on, whatever its sign convention), else
//     a new parameter _hw_stim_amplitude holding the value the model's stimulus has while
//     on;
//   * a model without a stimulus current (Noble 1962, FitzHugh-Nagumo, ...) gets an
//     additive term on its voltage equation:  dV/dt += _hw_stim_amplitude · _hw_stim_on
//     (in the model's voltage units per time unit; positive depolarises). Its amplitude
//     has no default: the user gives --stim-amplitude (and --stim-duration).
//
// _hw_stim_on is a parameter the driver sets to 1 or 0 before each step: the stimulus is
// on for step n (from t_n = n·dt to t_n + dt) iff  on_k <= n < on_k + w  for some onset k,
// with on_k = round(onset_k/dt) and w = max(1, round(duration/dt)). So stimulus edges
// fall on step boundaries and every integrator, float or double, sees the same pulses.
// CVODE stops and restarts exactly at those same edges.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {


inline constexpr const char* kStimOnParam = "_hw_stim_on";
inline constexpr const char* kStimAmplitudeParam = "_hw_stim_amplitude";

// What prepare_pacing did and the defaults it found in the model.
struct StimulusInfo {
  enum class Kind { none, rewritten, additive };
  Kind kind = Kind::none;  // none: the model keeps its own stimulus (no pacing control)
  std::string on_param;         // parameter the driver sets to 0/1
  std::string amplitude_param;  // parameter holding the amplitude A
  double amplitude_scale = 1;   // stimulus while on = scale · A
  std::string current_name;     // the rewritten algebraic ("" when additive)
  // The model's own protocol, when found (amplitude = stimulus value while on, signed).
  std::optional<double> default_amplitude;
  std::optional<double> default_duration_ms;
  std::optional<double> default_period_ms;
  std::optional<double> default_start_ms;
  // The sign of the amplitude parameter that raises dV/dt (found by evaluating dV/dt): a
  // pacing amplitude given as a magnitude gets this sign, so a model whose own stimulus is
  // zero (or written with either sign convention) is still depolarised.
  double depolarising_sign = 1;
  // The model's own stimulus expression is unusable as it stands: while on it moves dV/dt
  // by more than kMaxStimulusRate (the CellML file mixes units, e.g. A/F divided by a
  // capacitance in farad). With an annotated amplitude parameter the pacing uses that
  // parameter's value as the stimulus current (as Chaste does) and `warning` says so;
  // without one `unusable` is set: the runner must then be given --stim-amplitude.
  std::string warning;
  bool unusable = false;
  SourceLoc stimulus_loc;  // where the stimulus current is defined
};

// |ΔdV/dt| in mV/ms beyond which a stimulus cannot be a cardiac one (100× the fastest
// upstroke).
inline constexpr double kMaxStimulusRate = 4e4;

// Rewrites the model (before the passes) so the driver controls the stimulus. Needs
// roles from detect_roles(); throws InputError when the model has no voltage role.
StimulusInfo prepare_pacing(Model& m);

// Evaluates an expression of the model at time t (model units) with the given state and
// parameter values (defaults: initial values and parameter values); algebraics are
// evaluated from their definitions. For probing protocols and tests, not for speed.
double evaluate(const Model& m, ExprId e, double t,
                const std::vector<double>* states = nullptr,
                const std::vector<double>* params = nullptr);

}  // namespace hw::model
