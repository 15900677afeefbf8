#include "model/passes/specialise.hpp"

#include "core/error.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

Model specialise_parameters(const Model& analysed, const std::vector<std::optional<double>>& values) {
  if (values.size() != analysed.parameters.size())
    throw Error("specialise_parameters: one value (or none) per parameter expected");
  Model m = analysed;
  rewrite_model(m, [&](ExprId id, std::vector<ExprId>& args) {
    if (m.pool.is_variable(id, VarKind::param)) {
      const auto& v = values[m.pool.node(id).index];
      return v ? m.pool.constant(*v) : id;
    }
    return rebuild_with(m.pool, id, args);
  });
  for (std::size_t k = 0; k < values.size(); ++k)
    if (values[k]) m.parameters[k].value = *values[k];
  fold_constants(m);
  return m;
}

}  // namespace hw::model
