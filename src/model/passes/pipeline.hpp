// The pass driver: the explicit, ordered list of passes that turns a front end's Model
// into the analysed Model every backend prints (STYLE.md §6, pystencils-style).
//
// Order and why:
//   sort               — later passes and evaluation need dependency order
//   fold               — literal arithmetic out of the way before the numeric passes
//   repair             — removable singularities, while piecewise guards are still visible
//   lower_piecewise    — printers only know select
//   fold               — constant conditions, folded repair endpoints
//   cse                — shared subexpressions become temporaries
//   sort               — (cse keeps order; kept as a cheap guarantee)
//   classify           — once-per-cell algebraics
//   analyse_states     — exact Jacobian diagonal and gates
//   widen              — values a float kernel must compute in double (needs the Jacobian)
// The unit check (check_units) is wired in by the lead, before everything else.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/ir/model.hpp"

namespace hw::model {

struct PipelineOptions {
  bool fold = true;
  bool cse = true;
  bool repair = true;
  double repair_half_width = 0;  // 0 = automatic (see singularities.hpp)
  // Called after each pass with its name (one of pipeline_pass_names()), e.g. to print the
  // IR for `heartwave model inspect --dump-ir=PASS`.
  std::function<void(const std::string& pass, const Model&)> after_each;
};

void run_pipeline(Model& m, const PipelineOptions& opt, DiagnosticSink& sink);

// The names after_each reports, in order (a name may occur twice: "sort", "fold").
const std::vector<std::string>& pipeline_pass_names();

}  // namespace hw::model
