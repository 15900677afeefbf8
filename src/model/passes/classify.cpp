#include "model/passes/classify.hpp"

#include <functional>

namespace hw::model {

void classify_algebraics(Model& m) {
  const std::size_t n = m.algebraics.size();
  // 0 unknown, 1 in progress, 2 varies (time/state), 3 once per cell.
  std::vector<std::uint8_t> state(n, 0);
  std::function<bool(std::uint32_t)> varies = [&](std::uint32_t i) -> bool {
    if (state[i] >= 2) return state[i] == 2;
    if (state[i] == 1) throw Error("classify_algebraics: algebraic loop through '" +
                                   m.algebraics[i].name + "' (run sort_algebraics first)");
    state[i] = 1;
    bool v = false;
    ExprId e = m.algebraics[i].expr;
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&e, 1))) {
      const Node& nd = m.pool.node(id);
      if (nd.op != Op::variable) continue;
      if (nd.var_kind == VarKind::time || nd.var_kind == VarKind::state) v = true;
      if (nd.var_kind == VarKind::algebraic && varies(nd.index)) v = true;
      if (v) break;
    }
    state[i] = v ? 2 : 3;
    return v;
  };
  for (std::uint32_t i = 0; i < n; ++i) m.algebraics[i].once_per_cell = !varies(i);
}

}  // namespace hw::model
