#include "model/passes/pipeline.hpp"

#include "model/passes/analyse_states.hpp"
#include "model/passes/classify.hpp"
#include "model/passes/cse.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/lower_piecewise.hpp"
#include "model/passes/singularities.hpp"
#include "model/passes/sort_algebraics.hpp"
#include "model/passes/widen_for_float.hpp"

namespace hw::model {

const std::vector<std::string>& pipeline_pass_names() {
  static const std::vector<std::string> names = {
      "sort", "fold", "repair", "lower_piecewise", "fold", "cse", "sort", "classify",
      "analyse_states", "widen"};
  return names;
}

void run_pipeline(Model& m, const PipelineOptions& opt, DiagnosticSink& sink) {
  auto done = [&](const char* name) {
    if (opt.after_each) opt.after_each(name, m);
  };
  sort_algebraics(m);
  done("sort");
  if (opt.fold) {
    fold_constants(m);
    done("fold");
  }
  if (opt.repair) {
    repair_singularities(m, sink, opt.repair_half_width);
    done("repair");
  }
  lower_piecewise(m);
  done("lower_piecewise");
  if (opt.fold) {
    fold_constants(m);
    done("fold");
  }
  if (opt.cse) {
    eliminate_common_subexpressions(m);
    done("cse");
  }
  sort_algebraics(m);
  done("sort");
  classify_algebraics(m);
  done("classify");
  analyse_states(m);
  done("analyse_states");
  widen_for_float(m, sink);
  done("widen");
}

}  // namespace hw::model
