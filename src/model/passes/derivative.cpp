#include "model/passes/derivative.hpp"

#include <cmath>
#include <unordered_map>

namespace hw::model {

namespace {

class Differentiator {
 public:
  Differentiator(Model& m, VarKind kind, std::uint32_t index)
      : m_(m), p_(m.pool), kind_(kind), index_(index) {
    zero_ = p_.constant(0.0);
    one_ = p_.constant(1.0);
  }

  ExprId d(ExprId root) {
    // Post-order over the expression so each node's derivative is computed once.
    for (ExprId id : topological_nodes(p_, std::span<const ExprId>(&root, 1)))
      if (!memo_.count(id)) memo_[id] = d_node(id);
    return memo_.at(root);
  }

 private:
  bool is0(ExprId a) const { return p_.is_constant(a, 0.0) || p_.is_constant(a, -0.0); }
  bool is1(ExprId a) const { return p_.is_constant(a, 1.0); }
  ExprId c(double v) { return p_.constant(v); }
  ExprId add(ExprId a, ExprId b) { return is0(a) ? b : is0(b) ? a : p_.add(a, b); }
  ExprId sub(ExprId a, ExprId b) { return is0(b) ? a : is0(a) ? neg(b) : p_.sub(a, b); }
  ExprId neg(ExprId a) {
    if (is0(a)) return zero_;
    if (p_.op(a) == Op::neg) return p_.args(a)[0];
    return p_.neg(a);
  }
  ExprId mul(ExprId a, ExprId b) {
    if (is0(a) || is0(b)) return zero_;  // symbolic zero: a derivative that is exactly 0
    if (is1(a)) return b;
    if (is1(b)) return a;
    return p_.mul(a, b);
  }
  ExprId div(ExprId a, ExprId b) { return is0(a) ? zero_ : is1(b) ? a : p_.div(a, b); }
  ExprId sq(ExprId a) { return p_.mul(a, a); }
  ExprId call(Op op, ExprId a) { return p_.call(op, a); }

  ExprId d_node(ExprId id) {
    const Node n = p_.node(id);  // copy: the pool grows below
    if (n.op == Op::constant) return zero_;
    if (n.op == Op::variable) {
      if (n.var_kind == kind_ && n.index == index_) return one_;
      if (n.var_kind == VarKind::algebraic) {
        auto it = alg_memo_.find(n.index);
        if (it != alg_memo_.end()) return it->second;
        ExprId r = d(m_.algebraics.at(n.index).expr);
        alg_memo_[n.index] = r;
        return r;
      }
      return zero_;
    }
    std::vector<ExprId> da;
    for (ExprId a : n.args) da.push_back(memo_.at(a));
    const ExprId a = n.args[0];
    const ExprId b = n.args.size() > 1 ? n.args[1] : kNoExpr;
    const ExprId fa = da[0];
    const ExprId fb = da.size() > 1 ? da[1] : kNoExpr;
    if (is_boolean(n.op)) return zero_;
    bool all_zero = true;
    for (ExprId x : da) all_zero = all_zero && is0(x);
    if (all_zero && n.op != Op::select && n.op != Op::piecewise) return zero_;
    switch (n.op) {
      case Op::add: return add(fa, fb);
      case Op::sub: return sub(fa, fb);
      case Op::mul: return add(mul(fa, b), mul(a, fb));
      case Op::div:
        if (is0(fb)) return div(fa, b);
        // (a/b)' = (a' − (a/b)·b') / b, which reuses the node a/b itself.
        return div(sub(fa, mul(id, fb)), b);
      case Op::neg: return neg(fa);
      case Op::pow:
        if (is0(fb)) {
          // Constant exponent: b·a^(b−1)·a'.
          ExprId bm1 = p_.is_constant(b) ? c(p_.node(b).value - 1.0) : p_.sub(b, one_);
          ExprId pw = p_.is_constant(bm1, 1.0) ? a : p_.pow(a, bm1);
          return mul(mul(b, pw), fa);
        }
        // a^b·(b'·ln a + b·a'/a)
        return mul(id, add(mul(fb, call(Op::log, a)), div(mul(b, fa), a)));
      case Op::exp: return mul(id, fa);
      case Op::log: return div(fa, a);
      case Op::log10: return div(fa, mul(a, c(std::log(10.0))));
      case Op::sqrt: return div(fa, mul(c(2.0), id));
      case Op::abs: return p_.select(p_.make(Op::lt, {a, zero_}), neg(fa), fa);
      case Op::floor:
      case Op::ceil: return zero_;
      case Op::sin: return mul(call(Op::cos, a), fa);
      case Op::cos: return neg(mul(call(Op::sin, a), fa));
      case Op::tan: return div(fa, sq(call(Op::cos, a)));
      case Op::asin: return div(fa, call(Op::sqrt, p_.sub(one_, sq(a))));
      case Op::acos: return neg(div(fa, call(Op::sqrt, p_.sub(one_, sq(a)))));
      case Op::atan: return div(fa, p_.add(one_, sq(a)));
      case Op::sinh: return mul(call(Op::cosh, a), fa);
      case Op::cosh: return mul(call(Op::sinh, a), fa);
      case Op::tanh: return mul(fa, p_.sub(one_, sq(id)));
      case Op::asinh: return div(fa, call(Op::sqrt, p_.add(sq(a), one_)));
      case Op::acosh: return div(fa, call(Op::sqrt, p_.sub(sq(a), one_)));
      case Op::atanh: return div(fa, p_.sub(one_, sq(a)));
      case Op::min: return fa == fb ? fa : p_.select(p_.make(Op::le, {a, b}), fa, fb);
      case Op::max: return fa == fb ? fa : p_.select(p_.make(Op::ge, {a, b}), fa, fb);
      case Op::rem: {
        if (is0(fb)) return fa;
        ExprId q = p_.div(a, b);
        ExprId trunc = p_.select(p_.make(Op::lt, {q, zero_}), call(Op::ceil, q),
                                 call(Op::floor, q));
        return sub(fa, mul(trunc, fb));
      }
      case Op::select: {
        ExprId t = da[1], f = da[2];
        if (t == f) return t;
        return p_.select(a, t, f);
      }
      case Op::piecewise: {
        std::vector<ExprId> args;
        bool same = true;
        for (std::size_t i = 0; i + 1 < n.args.size(); i += 2) {
          args.push_back(n.args[i]);
          args.push_back(da[i + 1]);
          same = same && da[i + 1] == da.back();
        }
        if (same) return da.back();
        args.push_back(da.back());
        return p_.make(Op::piecewise, args);
      }
      default: return zero_;
    }
  }

  Model& m_;
  ExprPool& p_;
  VarKind kind_;
  std::uint32_t index_;
  ExprId zero_ = kNoExpr, one_ = kNoExpr;
  std::unordered_map<ExprId, ExprId> memo_;
  std::unordered_map<std::uint32_t, ExprId> alg_memo_;
};

}  // namespace

ExprId differentiate(Model& m, ExprId e, VarKind kind, std::uint32_t index) {
  Differentiator diff(m, kind, index);
  return diff.d(e);
}

}  // namespace hw::model
