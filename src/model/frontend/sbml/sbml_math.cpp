// libSBML math trees → IR expressions (sbml_internal.hpp).
//
// The operators map one to one onto the IR where the IR has them, and are lowered exactly
// as the CellML front end lowers the same MathML (n-ary sums fold left, `root` without a
// degree and `log` without a base are sqrt and log10, reciprocal trigonometry is 1/f), so
// a model printed by either XML printer reads back into the same tree. Function
// definitions are inlined at each call with their arguments substituted. What the IR
// cannot express (delay, rateOf, factorial, quotient, lambda outside a function
// definition, MathML beyond SBML's subset) is an InputError naming the element.
#ifdef HW_HAVE_LIBSBML

#include <cmath>
#include <limits>
#include <numbers>

#include "model/frontend/sbml/sbml_internal.hpp"

namespace hw::model::sbml {

namespace {

using libsbml::ASTNode;

constexpr int kMaxDepth = 400;  // nesting of expressions and function calls together

ExprId fold(ExprPool& pool, Op op, const std::vector<ExprId>& xs) {
  ExprId r = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) r = pool.make(op, {r, xs[i]});
  return r;
}

ExprId recip(ExprPool& pool, ExprId x) { return pool.div(pool.constant(1.0), x); }

std::string element_name(const ASTNode* n) {
  const char* s = n->getName();
  if (s && *s) return s;
  return "type " + std::to_string(static_cast<int>(n->getType()));
}

}  // namespace

ExprId MathLowering::lower(const ASTNode* n, const MathSite& site) {
  if (!n) fail_at(site, "missing <math>");
  return node(n, Scope{}, site, 0);
}

std::vector<ExprId> MathLowering::children(const ASTNode* n, const Scope& scope,
                                           const MathSite& site, int depth) {
  std::vector<ExprId> out;
  for (unsigned i = 0; i < n->getNumChildren(); ++i)
    out.push_back(node(n->getChild(i), scope, site, depth + 1));
  return out;
}

ExprId MathLowering::call(const ASTNode* n, const Scope& scope, const MathSite& site, int depth) {
  const std::string name = n->getName() ? n->getName() : "";
  const libsbml::FunctionDefinition* fd = sm_.getFunctionDefinition(name);
  if (!fd) fail_at(site, "call of unknown function '" + name + "'");
  const ASTNode* lambda = fd->getMath();
  const ASTNode* body = fd->getBody();
  if (!lambda || !lambda->isLambda() || !body)
    fail_at(site, "function definition '" + name + "' (line " + std::to_string(fd->getLine()) +
                      ") has no <lambda> body");
  const unsigned nargs = fd->getNumArguments();
  if (n->getNumChildren() != nargs)
    fail_at(site, "function '" + name + "' takes " + std::to_string(nargs) + " arguments, got " +
                      std::to_string(n->getNumChildren()));
  Scope inner;  // a function body sees its arguments only (SBML: no free variables)
  for (unsigned i = 0; i < nargs; ++i) {
    const ASTNode* bvar = fd->getArgument(i);
    if (!bvar || !bvar->getName())
      fail_at(site, "function definition '" + name + "' has an unnamed argument");
    inner[bvar->getName()] = node(n->getChild(i), scope, site, depth + 1);
  }
  MathSite in_body = site;
  in_body.what = site.what + ", through function '" + name + "' at line " + std::to_string(fd->getLine());
  return node(body, inner, in_body, depth + 1);
}

ExprId MathLowering::node(const ASTNode* n, const Scope& scope, const MathSite& site, int depth) {
  if (!n) fail_at(site, "incomplete math expression");
  if (depth > kMaxDepth) fail_at(site, "math nested too deeply (or a function calls itself)");
  ExprPool& pool = m_.pool;
  const auto need = [&](unsigned lo, unsigned hi) {
    const unsigned k = n->getNumChildren();
    if (k < lo || k > hi)
      fail_at(site, "<" + element_name(n) + "> takes " +
                        (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                        " operands, got " + std::to_string(k));
  };
  const auto unary = [&](Op op) {
    need(1, 1);
    return pool.call(op, node(n->getChild(0), scope, site, depth + 1));
  };
  const auto nary = [&](Op op, double empty) {
    auto a = children(n, scope, site, depth);
    return a.empty() ? pool.constant(empty) : fold(pool, op, a);
  };
  const auto relation = [&](Op op) {
    need(2, std::numeric_limits<unsigned>::max());
    auto a = children(n, scope, site, depth);
    ExprId r = pool.make(op, {a[0], a[1]});
    for (std::size_t i = 2; i < a.size(); ++i)
      r = pool.make(Op::logical_and, {r, pool.make(op, {a[i - 1], a[i]})});
    return r;
  };
  switch (n->getType()) {
    case AST_INTEGER: return pool.constant(static_cast<double>(n->getInteger()));
    case AST_REAL:
    case AST_REAL_E:
    case AST_RATIONAL: {
      const double v = n->getReal();
      if (!std::isfinite(v) && !std::isnan(v) && n->getType() != AST_REAL)
        fail_at(site, "number out of range");
      return pool.constant(v);
    }
    case AST_NAME: {
      const std::string id = n->getName() ? n->getName() : "";
      if (auto it = scope.find(id); it != scope.end()) return it->second;
      return resolve_(id, site);
    }
    case AST_NAME_TIME:
      if (m_.time.name.empty() && n->getName()) m_.time.name = n->getName();
      return pool.time();
    case AST_NAME_AVOGADRO: return pool.constant(6.02214179e23);
    case AST_CONSTANT_E: return pool.constant(std::numbers::e);
    case AST_CONSTANT_PI: return pool.constant(std::numbers::pi);
    case AST_CONSTANT_TRUE: return pool.constant(1.0);
    case AST_CONSTANT_FALSE: return pool.constant(0.0);
    case AST_PLUS: return nary(Op::add, 0.0);
    case AST_TIMES: return nary(Op::mul, 1.0);
    case AST_MINUS: {
      need(1, 2);
      auto a = children(n, scope, site, depth);
      return a.size() == 1 ? pool.neg(a[0]) : pool.sub(a[0], a[1]);
    }
    case AST_DIVIDE: {
      need(2, 2);
      auto a = children(n, scope, site, depth);
      return pool.div(a[0], a[1]);
    }
    case AST_POWER:
    case AST_FUNCTION_POWER: {
      need(2, 2);
      auto a = children(n, scope, site, depth);
      return pool.pow(a[0], a[1]);
    }
    case AST_FUNCTION_ROOT: {
      need(1, 2);
      auto a = children(n, scope, site, depth);
      if (a.size() == 1 || pool.is_constant(a[0], 2.0)) return pool.call(Op::sqrt, a.back());
      return pool.pow(a[1], recip(pool, a[0]));
    }
    case AST_FUNCTION_LOG: {
      need(1, 2);
      auto a = children(n, scope, site, depth);
      if (a.size() == 1 || pool.is_constant(a[0], 10.0)) return pool.call(Op::log10, a.back());
      return pool.div(pool.call(Op::log, a[1]), pool.call(Op::log, a[0]));
    }
    case AST_FUNCTION_LN: return unary(Op::log);
    case AST_FUNCTION_EXP: return unary(Op::exp);
    case AST_FUNCTION_ABS: return unary(Op::abs);
    case AST_FUNCTION_FLOOR: return unary(Op::floor);
    case AST_FUNCTION_CEILING: return unary(Op::ceil);
    case AST_FUNCTION_SIN: return unary(Op::sin);
    case AST_FUNCTION_COS: return unary(Op::cos);
    case AST_FUNCTION_TAN: return unary(Op::tan);
    case AST_FUNCTION_ARCSIN: return unary(Op::asin);
    case AST_FUNCTION_ARCCOS: return unary(Op::acos);
    case AST_FUNCTION_ARCTAN: return unary(Op::atan);
    case AST_FUNCTION_SINH: return unary(Op::sinh);
    case AST_FUNCTION_COSH: return unary(Op::cosh);
    case AST_FUNCTION_TANH: return unary(Op::tanh);
    case AST_FUNCTION_ARCSINH: return unary(Op::asinh);
    case AST_FUNCTION_ARCCOSH: return unary(Op::acosh);
    case AST_FUNCTION_ARCTANH: return unary(Op::atanh);
    case AST_FUNCTION_SEC: return recip(pool, unary(Op::cos));
    case AST_FUNCTION_CSC: return recip(pool, unary(Op::sin));
    case AST_FUNCTION_COT: return recip(pool, unary(Op::tan));
    case AST_FUNCTION_SECH: return recip(pool, unary(Op::cosh));
    case AST_FUNCTION_CSCH: return recip(pool, unary(Op::sinh));
    case AST_FUNCTION_COTH: return recip(pool, unary(Op::tanh));
    case AST_FUNCTION_ARCSEC:
    case AST_FUNCTION_ARCCSC:
    case AST_FUNCTION_ARCCOT:
    case AST_FUNCTION_ARCSECH:
    case AST_FUNCTION_ARCCSCH:
    case AST_FUNCTION_ARCCOTH: {
      need(1, 1);
      const ExprId x = recip(pool, node(n->getChild(0), scope, site, depth + 1));
      switch (n->getType()) {
        case AST_FUNCTION_ARCSEC: return pool.call(Op::acos, x);
        case AST_FUNCTION_ARCCSC: return pool.call(Op::asin, x);
        case AST_FUNCTION_ARCCOT: return pool.call(Op::atan, x);
        case AST_FUNCTION_ARCSECH: return pool.call(Op::acosh, x);
        case AST_FUNCTION_ARCCSCH: return pool.call(Op::asinh, x);
        default: return pool.call(Op::atanh, x);
      }
    }
    case AST_FUNCTION_MAX: need(1, std::numeric_limits<unsigned>::max()); return nary(Op::max, 0.0);
    case AST_FUNCTION_MIN: need(1, std::numeric_limits<unsigned>::max()); return nary(Op::min, 0.0);
    case AST_FUNCTION_REM: {
      need(2, 2);
      auto a = children(n, scope, site, depth);
      return pool.make(Op::rem, {a[0], a[1]});
    }
    case AST_LOGICAL_AND: return nary(Op::logical_and, 1.0);
    case AST_LOGICAL_OR: return nary(Op::logical_or, 0.0);
    case AST_LOGICAL_XOR: return nary(Op::logical_xor, 0.0);
    case AST_LOGICAL_NOT: return unary(Op::logical_not);
    case AST_LOGICAL_IMPLIES: {
      need(2, 2);
      auto a = children(n, scope, site, depth);
      return pool.make(Op::logical_or, {pool.make(Op::logical_not, {a[0]}), a[1]});
    }
    case AST_RELATIONAL_EQ: return relation(Op::eq);
    case AST_RELATIONAL_LT: return relation(Op::lt);
    case AST_RELATIONAL_GT: return relation(Op::gt);
    case AST_RELATIONAL_LEQ: return relation(Op::le);
    case AST_RELATIONAL_GEQ: return relation(Op::ge);
    case AST_RELATIONAL_NEQ: {
      need(2, 2);
      auto a = children(n, scope, site, depth);
      return pool.make(Op::ne, {a[0], a[1]});
    }
    case AST_FUNCTION_PIECEWISE: {
      // libSBML's order: value1, condition1, value2, condition2, ..., [otherwise].
      const unsigned k = n->getNumChildren();
      if (k == 0) fail_at(site, "empty <piecewise>");
      auto a = children(n, scope, site, depth);
      std::vector<ExprId> args;
      for (unsigned i = 0; i + 1 < k; i += 2) {
        args.push_back(a[i + 1]);
        args.push_back(a[i]);
      }
      args.push_back(k % 2 ? a.back() : pool.constant(std::numeric_limits<double>::quiet_NaN()));
      return pool.make(Op::piecewise, std::move(args));
    }
    case AST_FUNCTION: return call(n, scope, site, depth);
    case AST_FUNCTION_DELAY:
      fail_at(site, "SBML <csymbol> delay is not supported: Heartwave integrates ODEs, not delay "
                    "equations");
    case AST_FUNCTION_RATE_OF:
      fail_at(site, "SBML <csymbol> rateOf is not supported: write the derivative's expression instead");
    case AST_FUNCTION_FACTORIAL: fail_at(site, "MathML <factorial/> is not supported");
    case AST_FUNCTION_QUOTIENT: fail_at(site, "MathML <quotient/> is not supported");
    case AST_LAMBDA: fail_at(site, "<lambda> is only allowed in a <functionDefinition>");
    default: break;
  }
  fail_at(site, "unsupported MathML element <" + element_name(n) + ">");
}

}  // namespace hw::model::sbml

#endif  // HW_HAVE_LIBSBML
