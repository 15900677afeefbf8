// Blocks: sets of states advanced together by an implicit update of their own Jacobian.
//
// Why: in the large ventricular models the stiffness that breaks fixed-step schemes sits in
// Markov chains (ion-channel states with fast transitions between them): each state's rate
// is linear in the chain's occupancies, with voltage-dependent coefficients, so the
// diagonal of the Jacobian underestimates how fast the chain relaxes, and a diagonal
// exponential (Rush-Larsen) update can still diverge. Seen as one small linear system
// dy_B/dt = A·y_B + b, a chain is advanced stably by an implicit update of that system
// (runtime/integrators.hpp, GRL1 and GRL2), which also keeps its total occupancy. The same
// holds for a concentration and the buffers that bind it (kon·Ca·(Bmax − B) − koff·B): not
// affine, but GRL2 linearises every block at the step's midpoint, which keeps second order.
//
// Guarantees: after find_linear_blocks(m), every block has 2 to kMaxBlockStates states, no
// state is in two blocks, the voltage state is in none, and for r, c in the block
// jacobian[r·n + c] = fold(∂f(states[r])/∂y(states[c])). m.analysis[i].block is the block
// of state i or −1. Affine blocks first: the candidates start as every state but the
// voltage; while some partial among them reads a candidate, the candidate most partials
// read is dropped (it becomes a coefficient, frozen over a step). The affine blocks are the
// strongly connected sets of what remains under "f_i reads y_j" (two-way coupling; larger
// sets than kMaxBlockStates are left to the diagonal update); their Jacobians read no
// state of the block. Then each dropped state d becomes a concentration block with the
// states that bind only it (s reads d, d reads s, s reads nothing but V, d and itself, and
// is in no affine block); only these blocks' Jacobians read their own states. Needs
// m.analysis and m.roles.voltage_state (without a voltage there are no concentration
// blocks).
#pragma once

#include "model/ir/model.hpp"

namespace hw::model {

inline constexpr int kMaxBlockStates = 20;

void find_linear_blocks(Model& m);

// "3 linear blocks (Markov chains): {C1 C2 O I} (conserves), ..." or "" when none.
std::string describe_blocks(const Model& m);

}  // namespace hw::model
