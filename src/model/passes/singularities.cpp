#include "model/passes/singularities.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "model/passes/analyse_states.hpp"
#include "model/passes/eval.hpp"
#include "model/passes/fold_constants.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

constexpr double kRangeMv = 200.0;
constexpr double kGridMv = 0.5;
constexpr int kMaxAscent = 3;

std::string fmt_num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

class Repairer {
 public:
  Repairer(Model& m, DiagnosticSink& sink, double half_width)
      : m_(m), sink_(sink), half_width_(half_width) {
    y0_.resize(m.states.size());
    for (std::size_t i = 0; i < m.states.size(); ++i) y0_[i] = m.states[i].initial;
    for (const Parameter& p : m.parameters) p0_.push_back(p.value);
  }

  void run() {
    struct Root {
      ExprId expr;
      std::string where;
      SourceLoc loc;
    };
    std::vector<Root> roots;
    for (const Algebraic& a : m_.algebraics) roots.push_back({a.expr, a.name, a.loc});
    for (std::size_t i = 0; i < m_.derivatives.size(); ++i)
      roots.push_back({m_.derivatives[i], "d/dt " + m_.states[i].name, m_.states[i].loc});

    for (const Root& r : roots) {
      std::vector<ExprId> nodes = topological_nodes(m_.pool, std::span<const ExprId>(&r.expr, 1));
      std::unordered_map<ExprId, std::vector<ExprId>> parents;
      for (ExprId id : nodes) {
        auto args = m_.pool.args(id);
        for (std::size_t k = 0; k < args.size(); ++k) {
          const Op op = m_.pool.op(id);
          // Ascend only where the singular factor can cancel: products, negation, and a
          // quotient's numerator.
          if (op == Op::mul || op == Op::neg || (op == Op::div && k == 0))
            parents[args[k]].push_back(id);
        }
      }
      for (ExprId id : nodes) {
        if (m_.pool.op(id) != Op::div || seen_.count(id)) continue;
        seen_.insert({id, true});
        examine(id, parents, r.where, r.loc);
      }
    }
    if (replacement_.empty()) return;
    rewrite_model(m_, [&](ExprId id, std::vector<ExprId>& args) {
      auto it = replacement_.find(id);
      return it != replacement_.end() ? it->second : rebuild_with(m_.pool, id, args);
    });
  }

 private:
  std::vector<std::uint32_t> candidate_states(ExprId den) const {
    std::vector<std::uint32_t> out;
    if (m_.roles.voltage_state) {
      if (depends_on(m_, den, VarKind::state, *m_.roles.voltage_state))
        out.push_back(*m_.roles.voltage_state);
      return out;
    }
    for (std::uint32_t i = 0; i < m_.states.size(); ++i)
      if (depends_on(m_, den, VarKind::state, i)) out.push_back(i);
    return out;
  }

  double mv() const { return 1.0 / (m_.roles.voltage_to_mV > 0 ? m_.roles.voltage_to_mV : 1.0); }

  // f(x) with state x set to v, everything else at the base point.
  double at(const Tape& f, std::uint32_t x, double v) {
    y0_[x] = v;
    double r = f(0.0, y0_.data(), p0_.data());
    y0_[x] = m_.states[x].initial;
    return r;
  }

  std::vector<double> roots_of(const Tape& den, std::uint32_t x) {
    std::vector<double> out;
    const double lo = -kRangeMv * mv(), step = kGridMv * mv();
    const int n = static_cast<int>(2 * kRangeMv / kGridMv);
    double prev_v = lo, prev_f = at(den, x, lo);
    auto push = [&](double r) {
      if (out.empty() || std::fabs(out.back() - r) > step) out.push_back(r);
    };
    if (prev_f == 0.0) push(prev_v);
    for (int k = 1; k <= n; ++k) {
      const double v = lo + k * step, f = at(den, x, v);
      if (f == 0.0) {
        push(v);
      } else if (std::isfinite(f) && std::isfinite(prev_f) && prev_f != 0.0 &&
                 (f < 0) != (prev_f < 0)) {
        double a = prev_v, b = v, fa = prev_f;
        for (int it = 0; it < 200 && b - a > 1e-15 * std::max(1.0, std::fabs(a)); ++it) {
          const double c = 0.5 * (a + b), fc = at(den, x, c);
          if (fc == 0.0) { a = b = c; break; }
          if ((fc < 0) == (fa < 0)) { a = c; fa = fc; } else { b = c; }
        }
        const double r = 0.5 * (a + b);
        // A sign change through a pole leaves |den| large: not a root.
        const double scale = std::max(std::fabs(prev_f), std::fabs(f));
        if (std::fabs(at(den, x, r)) <= 1e-6 * scale) push(r);
      }
      prev_v = v;
      prev_f = f;
    }
    return out;
  }

  // Finite on both sides of v0 and not blowing up towards it: a removable singularity.
  bool removable(const Tape& f, std::uint32_t x, double v0, double w) {
    const double a1 = at(f, x, v0 - w), b1 = at(f, x, v0 + w);
    const double a2 = at(f, x, v0 - 10 * w), b2 = at(f, x, v0 + 10 * w);
    if (!std::isfinite(a1) || !std::isfinite(b1) || !std::isfinite(a2) || !std::isfinite(b2))
      return false;
    const double scale =
        std::max({std::fabs(a1), std::fabs(b1), std::fabs(a2), std::fabs(b2), 1e-300});
    const double tol = 1e-6 * scale;
    return std::fabs(b1 - a1) <= 0.5 * std::fabs(b2 - a2) + tol &&
           std::fabs(a1) <= 2 * std::fabs(a2) + tol && std::fabs(b1) <= 2 * std::fabs(b2) + tol;
  }

  // Length scale |f'/f''| of f at v0 (0 when f is locally linear or not finite).
  double scale_of(const Tape& f, std::uint32_t x, double v0) {
    const double h = 0.5 * mv();
    const double fm = at(f, x, v0 - h), f0 = at(f, x, v0), fp = at(f, x, v0 + h);
    const double d1 = (fp - fm) / (2 * h), d2 = (fp - 2 * f0 + fm) / (h * h);
    const double len = std::fabs(d1 / d2);
    return std::isfinite(len) ? len : 0.0;
  }

  // The numerator matters when the denominator is linear ((e^{k(V-V0)}-1)/(V-V0)).
  double window(const Tape& den, const Tape& num, std::uint32_t x, double v0) {
    if (half_width_ > 0) return half_width_;
    double len = 100.0 * mv();
    for (double l : {scale_of(den, x, v0), scale_of(num, x, v0)})
      if (l > 0) len = std::min(len, l);
    len = std::clamp(len, 0.1 * mv(), 100.0 * mv());
    return 1e-3 * len;
  }

  // e with state x replaced by the constant v, inlining algebraics that depend on x.
  ExprId substitute(ExprId e, std::uint32_t x, double v) {
    std::unordered_map<std::uint32_t, ExprId> alg;
    std::function<ExprId(ExprId)> sub = [&](ExprId root) {
      return rewrite(m_.pool, std::span<const ExprId>(&root, 1),
                     [&](ExprId id, std::vector<ExprId>& args) -> ExprId {
                       const Node& n = m_.pool.node(id);
                       if (n.op == Op::variable && n.var_kind == VarKind::state && n.index == x)
                         return m_.pool.constant(v);
                       if (n.op == Op::variable && n.var_kind == VarKind::algebraic &&
                           depends_on(m_, id, VarKind::state, x)) {
                         const std::uint32_t j = n.index;
                         auto it = alg.find(j);
                         if (it != alg.end()) return it->second;
                         ExprId r = sub(m_.algebraics[j].expr);
                         alg[j] = r;
                         return r;
                       }
                       return rebuild_with(m_.pool, id, args);
                     })[0];
    };
    return fold_expr(m_.pool, sub(e));
  }

  void examine(ExprId div, const std::unordered_map<ExprId, std::vector<ExprId>>& parents,
               const std::string& where, const SourceLoc& loc) {
    const ExprId den = m_.pool.args(div)[1];
    for (std::uint32_t x : candidate_states(den)) {
      Tape den_tape(m_, den), num_tape(m_, m_.pool.args(div)[0]);
      for (double v0 : roots_of(den_tape, x)) {
        const double w = window(den_tape, num_tape, x, v0);
        // Breadth-first up through products until the blow-up cancels.
        std::vector<ExprId> level{div};
        ExprId found = kNoExpr;
        for (int depth = 0; depth <= kMaxAscent && found == kNoExpr && !level.empty(); ++depth) {
          std::vector<ExprId> next;
          for (ExprId n : level) {
            if (replacement_.count(n)) { found = n; break; }
            Tape t(m_, n);
            if (removable(t, x, v0, w)) { found = n; break; }
            auto it = parents.find(n);
            if (it != parents.end()) next.insert(next.end(), it->second.begin(), it->second.end());
          }
          level = std::move(next);
        }
        const std::string& xname = m_.states[x].name;
        if (found == kNoExpr) {
          sink_.warning(loc, "in " + where + ": a denominator vanishes at " + xname + " = " +
                                 fmt_num(v0) + " and the expression is not finite there",
                        "singularity.unrepaired");
          continue;
        }
        if (replacement_.count(found)) continue;
        replace(found, x, v0, w);
        m_.repairs.push_back({where, xname, v0, w, "linear interpolation"});
        sink_.note(loc, "removable singularity in " + where + " at " + xname + " = " +
                            fmt_num(v0) + " repaired by linear interpolation over ±" +
                            fmt_num(w));
      }
    }
  }

  void replace(ExprId n, std::uint32_t x, double v0, double w) {
    ExprPool& p = m_.pool;
    const ExprId lo = substitute(n, x, v0 - w), hi = substitute(n, x, v0 + w);
    const ExprId xv = p.state(x);
    const ExprId slope = fold_expr(p, p.div(p.sub(hi, lo), p.constant(2 * w)));
    const ExprId lerp = p.add(lo, p.mul(p.sub(xv, p.constant(v0 - w)), slope));
    const ExprId cond = p.make(Op::lt, {p.call(Op::abs, p.sub(xv, p.constant(v0))), p.constant(w)});
    replacement_[n] = p.select(cond, lerp, n);
  }

  Model& m_;
  DiagnosticSink& sink_;
  double half_width_;
  std::vector<double> y0_, p0_;
  std::unordered_map<ExprId, bool> seen_;
  std::unordered_map<ExprId, ExprId> replacement_;
};

}  // namespace

void repair_singularities(Model& m, DiagnosticSink& sink, double half_width) {
  Repairer(m, sink, half_width).run();
}

void repair_singularities(Model& m, DiagnosticSink& sink) { repair_singularities(m, sink, 0.0); }

}  // namespace hw::model
