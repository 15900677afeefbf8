// S1-S2 restitution on one cell.
//
// Protocol: n_s1 stimuli every s1_bcl ms, then for each coupling interval CI one extra
// stimulus CI ms after the last S1. The state at the last S1's onset is computed once and
// shared by every CI (each CI then runs the last S1 beat and the S2 beat, BCL ms after
// the S2 at most), so the cost is n_s1·BCL + Σ(CI + BCL) ms of simulation.
#pragma once

#include <vector>

#include "cell/single_cell.hpp"

namespace hw::cell {

struct RestitutionOptions {
  double s1_bcl_ms = 1000;
  int n_s1 = 10;
  double duration_ms = 1;
  std::vector<double> coupling_ms;  // S1-S2 intervals
};

std::vector<RestitutionPoint> run_s1s2(const CellKernel& kernel, const CellSetup& setup,
                                       const RestitutionOptions& opt,
                                       const SolverOptions& solver);

}  // namespace hw::cell
