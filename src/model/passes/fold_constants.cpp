#include "model/passes/fold_constants.hpp"

#include <optional>

#include "model/passes/eval.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

// One node with already-folded arguments; returns the folded replacement.
ExprId fold_node(ExprPool& pool, ExprId id, std::vector<ExprId>& args) {
  if (args.empty()) return id;  // leaf
  const Op op = pool.op(id);
  bool all_constant = true;
  for (ExprId a : args) all_constant = all_constant && pool.is_constant(a);
  if (all_constant) {
    std::vector<double> v;
    for (ExprId a : args) v.push_back(pool.node(a).value);
    return pool.constant(apply_op<double>(op, v.data(), v.size()));
  }
  auto is = [&](ExprId a, double v) { return pool.is_constant(a, v); };
  auto truth = [&](ExprId a) -> std::optional<bool> {
    if (!pool.is_constant(a)) return std::nullopt;
    return pool.node(a).value != 0.0;
  };
  const ExprId a = args[0];
  const ExprId b = args.size() > 1 ? args[1] : kNoExpr;
  switch (op) {
    case Op::add:
      if (is(b, 0.0) || is(b, -0.0)) return a;
      if (is(a, 0.0) || is(a, -0.0)) return b;
      if (pool.op(b) == Op::neg) return pool.sub(a, pool.args(b)[0]);
      break;
    case Op::sub:
      if (is(b, 0.0) || is(b, -0.0)) return a;
      if (pool.op(b) == Op::neg) return pool.add(a, pool.args(b)[0]);
      break;
    case Op::mul:
      if (is(b, 1.0)) return a;
      if (is(a, 1.0)) return b;
      break;
    case Op::div:
      if (is(b, 1.0)) return a;
      break;
    case Op::neg:
      if (pool.op(a) == Op::neg) return pool.args(a)[0];
      break;
    case Op::pow:
      if (is(b, 1.0)) return a;
      if (is(b, 0.0) || is(b, -0.0)) return pool.constant(1.0);
      break;
    case Op::logical_and:
      if (truth(a) == false || truth(b) == false) return pool.constant(0.0);
      break;
    case Op::logical_or:
      if (truth(a) == true || truth(b) == true) return pool.constant(1.0);
      break;
    case Op::select:
      if (auto c = truth(a)) return *c ? args[1] : args[2];
      if (args[1] == args[2]) return args[1];
      break;
    case Op::piecewise: {
      std::vector<ExprId> kept;
      for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        auto c = truth(args[i]);
        if (c == false) continue;
        if (c == true) {
          if (kept.empty()) return args[i + 1];
          kept.push_back(args[i + 1]);  // becomes the "otherwise" of what is left
          return pool.make(Op::piecewise, kept);
        }
        kept.push_back(args[i]);
        kept.push_back(args[i + 1]);
      }
      if (kept.empty()) return args.back();
      kept.push_back(args.back());
      return pool.make(Op::piecewise, kept);
    }
    default:
      break;
  }
  return rebuild_with(pool, id, args);
}

}  // namespace

ExprId fold_expr(ExprPool& pool, ExprId e) {
  ExprId root = e;
  auto fold = [&](ExprId id, std::vector<ExprId>& args) { return fold_node(pool, id, args); };
  return rewrite(pool, std::span<const ExprId>(&root, 1), fold)[0];
}

void fold_constants(Model& m) {
  // Algebraics that fold to constants are substituted into their users; repeat until no
  // new one appears (once when the algebraics are already in dependency order).
  std::vector<std::optional<double>> value(m.algebraics.size());
  for (bool changed = true; changed;) {
    changed = false;
    rewrite_model(m, [&](ExprId id, std::vector<ExprId>& args) {
      if (m.pool.is_variable(id, VarKind::algebraic)) {
        const auto& v = value[m.pool.node(id).index];
        return v ? m.pool.constant(*v) : id;
      }
      return fold_node(m.pool, id, args);
    });
    for (std::size_t i = 0; i < m.algebraics.size(); ++i) {
      if (!value[i] && m.pool.is_constant(m.algebraics[i].expr)) {
        value[i] = m.pool.node(m.algebraics[i].expr).value;
        changed = true;
      }
    }
  }
}

}  // namespace hw::model
