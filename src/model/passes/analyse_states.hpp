// Per-state analysis: exact Jacobian diagonal and gate detection.
//
// Why: Rush-Larsen integrates gates (dy/dt = a − b·y, a and b independent of y) exactly,
// and semi-implicit Euler needs ∂f_i/∂y_i. Both come from the symbolic derivative, so
// they are exact (seed 000 used a finite difference with a bug, notes §7.3).
//
// Guarantees: m.analysis has one entry per state; jacobian_diag = fold(∂f_i/∂y_i);
// is_gate is true when f_i is linear in y_i with a non-zero slope, i.e. jacobian_diag
// is not identically zero and does not depend on y_i, looking through algebraics.
// (A state whose derivative ignores it has jacobian 0 and is not called a gate; the
// integrators treat it exactly either way.) The membrane voltage (roles.voltage_state) is
// never a gate even when its ODE happens to be linear in V (Hodgkin-Huxley): conventional
// Rush-Larsen advances it by forward Euler, and results must compare with other tools'.
#pragma once

#include <cstdint>

#include "model/ir/model.hpp"

namespace hw::model {

void analyse_states(Model& m);

// True when e reads the variable (kind, index), directly or through algebraics.
bool depends_on(const Model& m, ExprId e, VarKind kind, std::uint32_t index);

}  // namespace hw::model
