// S1-S2 restitution on one cell.
//
// Protocol: n_s1 stimuli every s1_bcl ms, then for each coupling interval CI one extra
// stimulus CI ms after the last S1. The state at the last S1's onset is computed once and
// shared by every CI (each CI then runs the last S1 beat and the S2 beat, BCL ms after
// the S2 at most), so the cost is n_s1·BCL + Σ(CI + BCL) ms of simulation.
//
// APD90(S1) is measured once, on the last S1 beat run alone over its whole BCL: measured in
// each CI's run it would end at S2, and an S2 before repolarisation would leave it NaN
// (the rows then had no DI). DI = CI − APD90(S1), negative for an S2 inside the S1 action
// potential. S2 captured: its upstroke rose at least 80 % of the S1's amplitude (V_peak −
// V at onset) and it repolarised to 90 % within BCL; else APD90(S2) is NaN, not the width
// of a graded response measured from a raised V (tens of ms, which read as real APDs).
// Why 80 %: near refractoriness the response grows with the interval without a threshold
// (LR91 at BCL 1000 ms: 38 % of the S1's amplitude at DI 1 ms, 60 % at 9, 81 % at 17); the
// bar is a convention, and a response of four fifths of a full upstroke is an action
// potential by any reading.
#pragma once

#include <vector>

#include "cell/single_cell.hpp"

namespace hw::cell {

struct RestitutionOptions {
  double s1_bcl_ms = 1000;
  int n_s1 = 10;
  double duration_ms = 1;
  double start_ms = 0;              // the first S1's onset (rest before it)
  std::vector<double> coupling_ms;  // S1-S2 intervals
  StopCheck stop;                   // polled between intervals: true returns the rows done
};

// end_state: when given, receives the state at the end of the S1 beats (the n_s1-th beat's
// whole BCL), e.g. to save and start the next protocol from.
std::vector<RestitutionPoint> run_s1s2(const CellKernel& kernel, const CellSetup& setup,
                                       const RestitutionOptions& opt,
                                       const SolverOptions& solver, std::vector<double>* end_state = nullptr);

// The dynamic (steady-state) protocol: `beats` beats at each BCL in the order given (the
// longest first), each BCL continuing from the state the one before left; per BCL the last
// beat's APD90 and DI = BCL − APD90. captured: the last two beats each rose at least 80 % of
// the first BCL's last upstroke and repolarised to 90 % (a 1:1 response); else (2:1 block,
// failed beats) APD90 is NaN, as for an S2 that does not capture.
struct DynamicOptions {
  std::vector<double> bcl_ms;
  int beats = 50;
  double duration_ms = 1;
  double start_ms = 0;  // the first BCL's first onset (rest before it)
  StopCheck stop;  // polled between cycle lengths: true returns the rows done
};

struct DynamicPoint {
  double bcl_ms = 0, di_ms = 0, apd90 = 0;
  bool captured = false;
};

// end_state: when given, receives the state at the end of the last cycle length's beats.
std::vector<DynamicPoint> run_dynamic(const CellKernel& kernel, const CellSetup& setup, const DynamicOptions& opt,
                                      const SolverOptions& solver, std::vector<double>* end_state = nullptr);

}  // namespace hw::cell
