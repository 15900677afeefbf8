#include "model/passes/analyse_states.hpp"


#include "model/passes/derivative.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/linear_blocks.hpp"
#include "model/passes/thresholds.hpp"

namespace hw::model {

bool depends_on(const Model& m, ExprId e, VarKind kind, std::uint32_t index) {
  if (e == kNoExpr) return false;
  std::vector<std::uint8_t> seen(m.algebraics.size(), 0);
  std::vector<ExprId> work{e};
  while (!work.empty()) {
    ExprId root = work.back();
    work.pop_back();
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&root, 1))) {
      const Node& n = m.pool.node(id);
      if (n.op != Op::variable) continue;
      if (n.var_kind == kind && n.index == index) return true;
      if (n.var_kind == VarKind::algebraic && !seen.at(n.index)) {
        seen[n.index] = 1;
        work.push_back(m.algebraics[n.index].expr);
      }
    }
  }
  return false;
}

void analyse_states(Model& m) {
  m.analysis.assign(m.states.size(), StateAnalysis{});
  for (std::uint32_t i = 0; i < m.states.size(); ++i) {
    ExprId j = fold_expr(m.pool, differentiate(m, m.derivatives.at(i), VarKind::state, i));
    m.analysis[i].jacobian_diag = j;
    const bool zero = m.pool.is_constant(j, 0.0) || m.pool.is_constant(j, -0.0);
    const bool voltage = m.roles.voltage_state && *m.roles.voltage_state == i;
    m.analysis[i].is_gate = !voltage && !zero && !depends_on(m, j, VarKind::state, i);
  }
  find_linear_blocks(m);
  find_thresholds(m);
}

}  // namespace hw::model
