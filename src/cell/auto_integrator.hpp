// `auto`: the cheapest fixed-step scheme and ODE sub-step count that holds a model at a dt.
//
// Why: tissue and the GPU step cell models with a fixed step, and no one scheme suits
// every model: Rush-Larsen (rl2) is the cheapest accurate scheme for models whose
// stiffness sits in gates, but the large models with Markov chains and fast calcium
// buffers diverge under it at tissue steps (|∂f/∂y|·dt of 1 to 10 in non-gate states),
// where GRL2 with implicit blocks holds. Rather than a rule on the Jacobian, the choice is
// measured: one paced beat with each candidate against CVODE (rtol 1e-8), the first that
// stays finite with APD90 within `apd_tolerance_ms` and V's RRMS within `rrms_tolerance`
// wins. Candidates go by cost: rl2, grl2, then both with 2, 4, 8 and 16 sub-steps.
// The choice is cached on disk by a hash of the analysed model, its parameters and
// stimulus, the dt and the precision, so a case pays for the probe once.
#pragma once

#include <string>
#include <vector>

#include "runtime/cell_kernel.hpp"
#include "cell/cell_setup.hpp"
#include "cell/pacing.hpp"
#include "model/ir/model.hpp"

namespace hw::cell {

struct AutoOptions {
  double dt_ms = 0.01;              // the step the caller will take (sub-steps divide it)
  bool single_precision = false;
  double bcl_ms = 1000;             // the probe: paced beats at this cycle length ...
  int beats = 2;                    // ... this many: the second starts from the first's end state
  double stim_duration_ms = 1;      // used when the model paces (stim_on >= 0)
  double apd_tolerance_ms = 0.5;
  double rrms_tolerance = 0.005;
  int max_substeps = 16;
  bool use_cache = true;
};

struct AutoChoice {
  Integrator method = Integrator::rl2;
  int substeps = 1;
  double apd90_error_ms = 0;  // |APD90 − CVODE's| of the probe beat (NaN: no APD)
  double rrms = 0;            // of V over the probe beat
  bool from_cache = false;
  std::string why;            // one line: what was chosen, measured how, what was rejected
};

// How stiff each state is along a paced beat: the most negative ∂f_i/∂y_i seen (model time
// units⁻¹), sampled every 0.1 ms of a CVODE beat; |J|·dt beyond 2 is past the explicit
// midpoint's stability limit for that state alone.
struct StateStiffness {
  int state = 0;
  double most_negative = 0;  // min over the beat of ∂f_i/∂y_i (≤ 0 unless never negative)
  double at_ms = 0;          // when
};
std::vector<StateStiffness> measure_stiffness(const CellKernel& kernel, const CellSetup& setup, double bcl_ms,
                                              double stim_duration_ms);

// Probes with `kernel` (any backend; the interpreter is fine) on `setup`'s model.
// Throws InputError when no candidate up to max_substeps holds the model at this dt.
AutoChoice choose_integrator(const model::Model& analysed, const CellKernel& kernel,
                             const CellSetup& setup, const AutoOptions& opt);

}  // namespace hw::cell
