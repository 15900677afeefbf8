#include "model/passes/widen_for_float.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/passes/eval.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

struct Output {
  ExprId expr;
  std::string what;  // "d/dt CI", for notes
};

// Evaluates every algebraic and every output at one point, each node in double or in float
// (values rounded to float after every operation, as a float kernel computes them).
class MixedEvaluator {
 public:
  explicit MixedEvaluator(const Model& m, const std::vector<Output>& outputs) : m_(m) {
    for (const Algebraic& a : m.algebraics) alg_nodes_.push_back(nodes_of(a.expr));
    for (const Output& o : outputs) out_nodes_.push_back(nodes_of(o.expr));
    for (auto& v : val_) v.assign(m.pool.size(), 0.0);
    for (auto& s : stamp_) s.assign(m.pool.size(), 0);
  }

  // wide[k]: algebraic k in double. all_double: every algebraic and output in double.
  // alg_in: when non-null, algebraic operands read these values (and algebraics are not
  // computed): one expression's own error, from exact operands.
  void run(const std::vector<double>& y, const std::vector<double>& p, const std::vector<char>& wide,
           bool all_double, std::vector<double>& alg, std::vector<double>& out) {
    y_ = &y;
    p_ = &p;
    ++gen_;
    alg.assign(m_.algebraics.size(), 0.0);
    alg_ = &alg;
    for (std::size_t k = 0; k < m_.algebraics.size(); ++k)
      alg[k] = value(alg_nodes_[k], all_double || wide[k]);
    out.resize(out_nodes_.size());
    for (std::size_t o = 0; o < out_nodes_.size(); ++o) out[o] = value(out_nodes_[o], all_double);
  }

  // Algebraic k computed in float from the operand values `alg` (the double reference).
  double local_float(std::size_t k, const std::vector<double>& y, const std::vector<double>& p,
                     std::vector<double>& alg) {
    y_ = &y;
    p_ = &p;
    alg_ = &alg;
    ++gen_;
    return value(alg_nodes_[k], false);
  }

 private:
  std::vector<ExprId> nodes_of(ExprId root) const {
    if (root == kNoExpr) return {};
    return topological_nodes(m_.pool, std::span<const ExprId>(&root, 1));
  }

  double value(const std::vector<ExprId>& nodes, bool dbl) {
    const int ctx = dbl ? 1 : 0;
    std::vector<double>& val = val_[ctx];
    std::vector<std::uint32_t>& stamp = stamp_[ctx];
    double a[64];
    for (ExprId id : nodes) {
      if (stamp[id] == gen_) continue;
      const Node& n = m_.pool.node(id);
      double v = 0.0;
      if (n.op == Op::constant) {
        v = n.value;
      } else if (n.op == Op::variable) {
        switch (n.var_kind) {
          case VarKind::time: v = 0.0; break;
          case VarKind::state: v = (*y_)[n.index]; break;
          case VarKind::param: v = (*p_)[n.index]; break;
          case VarKind::algebraic: v = (*alg_)[n.index]; break;
        }
      } else if (n.args.size() <= 64) {
        for (std::size_t j = 0; j < n.args.size(); ++j) a[j] = val[n.args[j]];
        if (dbl) {
          v = apply_op<double>(n.op, a, n.args.size());
        } else {
          float af[64];
          for (std::size_t j = 0; j < n.args.size(); ++j) af[j] = static_cast<float>(a[j]);
          v = apply_op<float>(n.op, af, n.args.size());
        }
      } else {
        v = std::nan("");  // no printed model has such an operation; treat it as unknown
      }
      val[id] = dbl ? v : static_cast<double>(static_cast<float>(v));
      stamp[id] = gen_;
    }
    return nodes.empty() ? 0.0 : val[nodes.back()];
  }

  const Model& m_;
  std::vector<std::vector<ExprId>> alg_nodes_, out_nodes_;
  std::vector<double> val_[2];
  std::vector<std::uint32_t> stamp_[2];
  std::uint32_t gen_ = 0;
  const std::vector<double>* y_ = nullptr;
  const std::vector<double>* p_ = nullptr;
  const std::vector<double>* alg_ = nullptr;
};

bool lost(double f, double d) {
  if (!std::isfinite(d)) return false;
  if (!std::isfinite(f)) return true;
  return d != 0.0 && std::fabs(f - d) > 0.5 * std::fabs(d);
}

class Widener {
 public:
  Widener(Model& m, DiagnosticSink& sink) : m_(m), sink_(sink) {
    for (std::size_t i = 0; i < m.states.size(); ++i)
      outputs_.push_back({m.derivatives[i], "d/dt " + m.states[i].name});
    for (std::size_t i = 0; i < m.states.size(); ++i)
      outputs_.push_back({m.analysis[i].jacobian_diag, "the Jacobian diagonal of " + m.states[i].name});
    for (const LinearBlock& b : m.blocks)
      for (std::size_t r = 0; r < b.states.size(); ++r)
        for (std::size_t c = 0; c < b.states.size(); ++c)
          outputs_.push_back({b.jacobian[r * b.states.size() + c],
                              "the linear-block entry d(d/dt " + m.states[b.states[r]].name + ")/d " +
                                  m.states[b.states[c]].name});
    const auto refs = [&](ExprId e) {
      return e == kNoExpr ? std::vector<std::uint32_t>{} : algebraic_refs(m.pool, e);
    };
    for (const Algebraic& a : m.algebraics) refs_.push_back(refs(a.expr));
    for (const Output& o : outputs_) out_refs_.push_back(refs(o.expr));
    sample_points();
  }

  void run() {
    MixedEvaluator ev(m_, outputs_);
    const std::size_t na = m_.algebraics.size();
    std::vector<char> wide(na, 0);
    ref_alg_.resize(points_.size());
    ref_out_.resize(points_.size());
    for (std::size_t q = 0; q < points_.size(); ++q)
      ev.run(points_[q], params_, wide, true, ref_alg_[q], ref_out_[q]);

    const auto bad_before = bad_outputs(ev, wide);
    if (bad_before.empty()) return;
    std::set<std::size_t> culprits;
    auto bad = bad_before;
    for (int round = 0; round < 4 && !bad.empty(); ++round) {
      bool grew = false;
      for (const auto& [q, o] : bad) {
        for (std::uint32_t k : cone(out_refs_[o])) {
          if (wide[k] || m_.algebraics[k].once_per_cell) continue;
          if (!lost(ev.local_float(k, points_[q], params_, ref_alg_[q]), ref_alg_[q][k])) continue;
          culprits.insert(k);
          for (std::uint32_t a : cone({k})) {
            if (m_.algebraics[a].once_per_cell || wide[a]) continue;
            wide[a] = 1;
            grew = true;
          }
        }
      }
      if (!grew) break;
      bad = bad_outputs(ev, wide);
    }
    if (outputs_of(bad).size() >= outputs_of(bad_before).size()) {
      note_nonfinite(bad_before);
      return;
    }
    for (std::size_t k = 0; k < na; ++k) m_.algebraics[k].wide = wide[k] != 0;
    for (std::size_t k : culprits) {
      const auto& [q, o] = first_fixed_by(k, bad_before);
      sink_.note(m_.algebraics[k].loc,
                 fmt::format("'{}' is computed in double in float kernels: in float it loses every "
                             "digit{}, and {} is then not finite",
                             m_.algebraics[k].name, where(q), outputs_[o].what),
                 "float.widened");
    }
    note_nonfinite(bad);
  }

 private:
  using Bad = std::set<std::pair<std::size_t, std::size_t>>;  // (point, output)

  void sample_points() {
    std::vector<double> y0;
    for (const State& s : m_.states) y0.push_back(static_cast<float>(s.initial));
    for (const Parameter& p : m_.parameters) params_.push_back(static_cast<float>(p.value));
    points_.push_back(y0);
    voltage_.push_back(NAN);
    if (!m_.roles.voltage_state) return;
    const double to_model = 1.0 / (m_.roles.voltage_to_mV > 0 ? m_.roles.voltage_to_mV : 1.0);
    for (int mv = -100; mv <= 60; mv += 10) {
      std::vector<double> y = y0;
      y[*m_.roles.voltage_state] = static_cast<float>(mv * to_model);
      points_.push_back(y);
      voltage_.push_back(mv);
    }
  }

  Bad bad_outputs(MixedEvaluator& ev, const std::vector<char>& wide) {
    Bad bad;
    std::vector<double> alg, out;
    for (std::size_t q = 0; q < points_.size(); ++q) {
      ev.run(points_[q], params_, wide, false, alg, out);
      for (std::size_t o = 0; o < out.size(); ++o)
        if (std::isfinite(ref_out_[q][o]) && !std::isfinite(out[o])) bad.insert({q, o});
    }
    return bad;
  }

  static std::set<std::size_t> outputs_of(const Bad& bad) {
    std::set<std::size_t> s;
    for (const auto& [q, o] : bad) s.insert(o);
    return s;
  }

  // The algebraics `roots` read, directly or through others, with the roots themselves.
  std::vector<std::uint32_t> cone(const std::vector<std::uint32_t>& roots) const {
    std::vector<char> seen(m_.algebraics.size(), 0);
    std::vector<std::uint32_t> stack(roots), out;
    while (!stack.empty()) {
      const std::uint32_t k = stack.back();
      stack.pop_back();
      if (seen[k]) continue;
      seen[k] = 1;
      out.push_back(k);
      for (std::uint32_t r : refs_[k]) stack.push_back(r);
    }
    return out;
  }

  std::pair<std::size_t, std::size_t> first_fixed_by(std::size_t k, const Bad& bad) const {
    for (const auto& [q, o] : bad)
      for (std::uint32_t a : cone(out_refs_[o]))
        if (a == k) return {q, o};
    return *bad.begin();
  }

  std::string where(std::size_t q) const {
    if (std::isnan(voltage_[q])) return " at the initial state";
    return fmt::format(" at {} = {} mV", m_.states[*m_.roles.voltage_state].name, voltage_[q]);
  }

  // Derivatives and block entries only: a Jacobian diagonal that is not finite is taken
  // explicitly by the integrators (finite_diagonal), so it costs accuracy, not the run.
  void note_nonfinite(const Bad& bad) {
    std::set<std::size_t> said;
    for (const auto& [q, o] : bad) {
      if (o >= m_.states.size() && o < 2 * m_.states.size()) continue;
      if (!said.insert(o).second) continue;
      sink_.note(SourceLoc{}, fmt::format("{} is not finite in float{} (finite in double): run this "
                                          "model in double where it goes there",
                                          outputs_[o].what, where(q)),
                 "float.nonfinite");
    }
  }

  Model& m_;
  DiagnosticSink& sink_;
  std::vector<Output> outputs_;
  std::vector<std::vector<std::uint32_t>> refs_, out_refs_;
  std::vector<std::vector<double>> points_;
  std::vector<double> params_, voltage_;
  std::vector<std::vector<double>> ref_alg_, ref_out_;
};

}  // namespace

void widen_for_float(Model& m, DiagnosticSink& sink) {
  for (Algebraic& a : m.algebraics) a.wide = false;
  if (m.states.empty() || m.analysis.size() != m.states.size()) return;
  Widener(m, sink).run();
}

}  // namespace hw::model
