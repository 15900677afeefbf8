// Linear blocks: sets of states whose derivatives are affine in the set's own states.
//
// Why: in the large ventricular models the stiffness that breaks fixed-step schemes sits in
// Markov chains (ion-channel states with fast transitions between them): each state's rate
// is linear in the chain's occupancies, with voltage-dependent coefficients, so the
// diagonal of the Jacobian underestimates how fast the chain relaxes, and a diagonal
// exponential (Rush-Larsen) update can still diverge. Seen as one small linear system
// dy_B/dt = A·y_B + b, a chain is advanced stably by an implicit update of that system
// (cell/integrators.hpp, GRL1 and GRL2), which also keeps its total occupancy.
//
// Guarantees: after find_linear_blocks(m), every block has 2 to kMaxBlockStates states, no
// state is in two blocks, the voltage state is in none, and for r, c in the block
// jacobian[r·n + c] = fold(∂f(states[r])/∂y(states[c])) reads no state of the block (looking
// through algebraics). m.analysis[i].block is the block of state i or −1. The candidates
// start as every state but the voltage; while some partial among them reads a candidate,
// the candidate most partials read is dropped (it becomes a coefficient, frozen over a
// step). The blocks are the strongly connected sets of what remains under "f_i reads y_j"
// (two-way coupling; larger sets than kMaxBlockStates are left to the diagonal update). Needs
// m.analysis (analyse_states).
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

inline constexpr int kMaxBlockStates = 20;

void find_linear_blocks(Model& m);

// "3 linear blocks (Markov chains): {C1 C2 O I} (conserves), ..." or "" when none.
std::string describe_blocks(const Model& m);

}  // namespace hw::model
