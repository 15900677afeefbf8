// Thresholds: the switches on a model's state that a fixed step must not step over.
//
// Why: some models switch a rate on while a state sits inside a narrow window. Faber-Rudy
// 2000 triggers its calcium release from `APtrack2`, which grows while
// 0.18 < APtrack < 0.2; APtrack rises through that window on the upstroke in 0.25 µs,
// a fortieth of a 0.01 ms step. A fixed step evaluates the condition at its start and
// midpoint only, finds APtrack outside the window both times and never sees the switch;
// CVODE at tight tolerances lands inside it, and the release starts 8 ms earlier. So every
// comparison that can switch inside a step is given to the integrators as a distance
// g = lhs − rhs, and step_cell (runtime/integrators.hpp) ends a step where some g changes
// sign, then goes on from there.
//
// Which comparisons: windows, a lower and an upper bound on the same quantity in one
// conjunction (`a < x && x < b`), where the quantity reads a state other than the membrane
// voltage and not time, and the bounds read neither (constants, parameters). A single
// threshold crossed inside a step is seen by the next evaluation of the rates, a fraction
// of a step late, like any other change of rate; a window crossed inside a step is never
// seen. Conditions on the voltage are left out: the branches of voltage-dependent rate
// formulas are fitted to join, and in tissue the voltage moves by diffusion between cell
// steps anyway. Conditions on time are the stimulus, which the drivers pace themselves.
// Clamps such as O'Hara-Rudy's τ_rel ≥ 0.001 ms are single thresholds, continuous too,
// and cost nothing: a model without windows prints kThresholds = 0 and unchanged code.
//
// Guarantees: after find_thresholds(m), m.thresholds holds the distance of each bound of
// each window once (x − a, x − b), in the order first met over the algebraics and
// derivatives.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

void find_thresholds(Model& m);

// "2 state thresholds located within a step: APtrack - 0.2, ..." or "" when none.
std::string describe_thresholds(const Model& m);

}  // namespace hw::model
