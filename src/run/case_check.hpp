// `heartwave run CASE --check`: everything a run would check, without running, and what a
// modeller wants to know before committing hours to it.
//
// Why a report of its own rather than "plan and stop": a check that passes must mean the
// run will start. So it goes through every stage a run goes through before its first step
// — the models loaded and every parameter, state and output field name resolved, the
// geometry built, the memory compared with the machine, the explicit dt limit, the regions,
// stimuli and initial conditions resolved to cells — collecting every problem rather than
// stopping at the first, and it adds what a user otherwise digs out by hand: the grid,
// tissue count, bounding box and labels of the geometry, the dt margin and an expected wall
// time from a short measured calibration (wall_time.hpp).
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tissue/case.hpp"

namespace hw::run {

struct CheckOptions {
  std::string backend = "auto";  // as `run --backend`
  int device = 0;
  int threads = 0;
  // Seconds of measured stepping per model for the wall-time estimate; 0: no estimate.
  double calibrate_seconds = 0.3;
};

struct CaseCheck {
  std::vector<std::string> lines;     // the report, in order
  std::vector<Diagnostic> problems;   // every error found (empty: the run would start)
  bool ok() const { return problems.empty(); }
};

CaseCheck check_case(const tissue::TissueCase& c, const CheckOptions& o = {});

}  // namespace hw::run
