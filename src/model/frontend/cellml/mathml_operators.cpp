// The MathML operators of CellML lowered to the IR (cellml_internal.hpp: apply_operator).
#include <map>
#include <string>

#include "model/frontend/cellml/cellml_internal.hpp"

namespace hw::model::cellml {

namespace {

// op(op(x0, x1), x2) ... for an n-ary MathML operator.
ExprId fold(ExprPool& pool, Op op, const std::vector<ExprId>& xs) {
  ExprId r = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) r = pool.make(op, {r, xs[i]});
  return r;
}

ExprId recip(ExprPool& pool, ExprId x) { return pool.div(pool.constant(1.0), x); }

}  // namespace

ExprId apply_operator(ExprPool& pool, const MathNode& n, const std::vector<ExprId>& a,
                      const std::function<ExprId(const MathNode&)>& lower) {
  const std::string& op = n.name;
  static const std::map<std::string, Op> unary = {
      {"exp", Op::exp},       {"ln", Op::log},        {"abs", Op::abs},
      {"floor", Op::floor},   {"ceiling", Op::ceil},  {"sin", Op::sin},
      {"cos", Op::cos},       {"tan", Op::tan},       {"arcsin", Op::asin},
      {"arccos", Op::acos},   {"arctan", Op::atan},   {"sinh", Op::sinh},
      {"cosh", Op::cosh},     {"tanh", Op::tanh},     {"arcsinh", Op::asinh},
      {"arccosh", Op::acosh}, {"arctanh", Op::atanh}, {"not", Op::logical_not}};
  // Reciprocal functions: f(x) = 1/g(x); inverse reciprocal: f(x) = g(1/x).
  static const std::map<std::string, Op> reciprocal = {
      {"sec", Op::cos}, {"csc", Op::sin}, {"cot", Op::tan},
      {"sech", Op::cosh}, {"csch", Op::sinh}, {"coth", Op::tanh}};
  static const std::map<std::string, Op> inverse_reciprocal = {
      {"arcsec", Op::acos}, {"arccsc", Op::asin}, {"arccot", Op::atan},
      {"arcsech", Op::acosh}, {"arccsch", Op::asinh}, {"arccoth", Op::atanh}};
  static const std::map<std::string, Op> relations = {
      {"eq", Op::eq}, {"lt", Op::lt}, {"gt", Op::gt}, {"leq", Op::le}, {"geq", Op::ge}};
  if (auto it = unary.find(op); it != unary.end()) return pool.call(it->second, a[0]);
  if (auto it = reciprocal.find(op); it != reciprocal.end())
    return recip(pool, pool.call(it->second, a[0]));
  if (auto it = inverse_reciprocal.find(op); it != inverse_reciprocal.end())
    return pool.call(it->second, recip(pool, a[0]));
  if (auto it = relations.find(op); it != relations.end()) {
    // a < b < c means a < b and b < c.
    ExprId r = pool.make(it->second, {a[0], a[1]});
    for (std::size_t i = 2; i < a.size(); ++i)
      r = pool.make(Op::logical_and, {r, pool.make(it->second, {a[i - 1], a[i]})});
    return r;
  }
  if (op == "plus") return fold(pool, Op::add, a);
  if (op == "times") return fold(pool, Op::mul, a);
  if (op == "min") return fold(pool, Op::min, a);
  if (op == "max") return fold(pool, Op::max, a);
  if (op == "and") return fold(pool, Op::logical_and, a);
  if (op == "or") return fold(pool, Op::logical_or, a);
  if (op == "xor") return fold(pool, Op::logical_xor, a);
  if (op == "minus") return a.size() == 1 ? pool.neg(a[0]) : pool.sub(a[0], a[1]);
  if (op == "divide") return pool.div(a[0], a[1]);
  if (op == "power") return pool.pow(a[0], a[1]);
  if (op == "rem") return pool.make(Op::rem, {a[0], a[1]});
  if (op == "neq") return pool.make(Op::ne, {a[0], a[1]});
  if (op == "root") {
    if (!n.degree) return pool.call(Op::sqrt, a[0]);
    ExprId d = lower(*n.degree);
    if (pool.is_constant(d, 2.0)) return pool.call(Op::sqrt, a[0]);
    return pool.pow(a[0], recip(pool, d));
  }
  if (op == "log") {
    if (!n.logbase) return pool.call(Op::log10, a[0]);
    ExprId b = lower(*n.logbase);
    if (pool.is_constant(b, 10.0)) return pool.call(Op::log10, a[0]);
    return pool.div(pool.call(Op::log, a[0]), pool.call(Op::log, b));
  }
  return kNoExpr;
}

}  // namespace hw::model::cellml
