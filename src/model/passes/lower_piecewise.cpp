#include "model/passes/lower_piecewise.hpp"

#include "model/passes/util.hpp"

namespace hw::model {

void lower_piecewise(Model& m) {
  rewrite_model(m, [&](ExprId id, std::vector<ExprId>& args) {
    if (m.pool.op(id) != Op::piecewise) return rebuild_with(m.pool, id, args);
    ExprId acc = args.back();
    for (std::size_t i = args.size() - 1; i >= 2; i -= 2)
      acc = m.pool.select(args[i - 2], args[i - 1], acc);
    return acc;
  });
}

}  // namespace hw::model
