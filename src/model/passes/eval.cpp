#include "model/passes/eval.hpp"

#include <unordered_map>
#include <vector>

namespace hw::model {

namespace {

class PointEvaluator {
 public:
  PointEvaluator(const Model& m, double t, const double* y, const double* p, const double* alg)
      : m_(m), t_(t), y_(y), p_(p), alg_(alg), alg_state_(m.algebraics.size(), 0),
        alg_value_(m.algebraics.size(), 0.0) {}

  double value(ExprId root) {
    std::vector<double> args;
    for (ExprId id : topological_nodes(m_.pool, std::span<const ExprId>(&root, 1))) {
      if (memo_.count(id)) continue;
      const Node& n = m_.pool.node(id);
      double v;
      if (n.op == Op::constant) {
        v = n.value;
      } else if (n.op == Op::variable) {
        v = variable(n.var_kind, n.index);
      } else {
        args.clear();
        for (ExprId a : n.args) args.push_back(memo_.at(a));
        v = apply_op<double>(n.op, args.data(), args.size());
      }
      memo_.emplace(id, v);
    }
    return memo_.at(root);
  }

 private:
  double variable(VarKind kind, std::uint32_t i) {
    switch (kind) {
      case VarKind::time: return t_;
      case VarKind::state: return y_[i];
      case VarKind::param: return p_[i];
      case VarKind::algebraic: {
        if (alg_) return alg_[i];
        if (alg_state_[i] == 2) return alg_value_[i];
        if (alg_state_[i] == 1)
          throw Error("evaluate: algebraic '" + m_.algebraics[i].name + "' depends on itself");
        alg_state_[i] = 1;
        // Same point, so the definition shares memo_ with the caller's expression.
        alg_value_[i] = value(m_.algebraics[i].expr);
        alg_state_[i] = 2;
        return alg_value_[i];
      }
    }
    return 0.0;
  }

  const Model& m_;
  double t_;
  const double* y_;
  const double* p_;
  const double* alg_;
  std::vector<std::uint8_t> alg_state_;
  std::vector<double> alg_value_;
  std::unordered_map<ExprId, double> memo_;
};

}  // namespace

double evaluate_point(const Model& m, ExprId e, double t, const double* y, const double* p,
                      const double* alg) {
  PointEvaluator ev(m, t, y, p, alg);
  return ev.value(e);
}

}  // namespace hw::model

namespace hw::model {

Tape::Tape(const Model& m, ExprId root) : slot_of_(m.pool.size(), -1) {
  std::vector<std::uint8_t> busy(m.algebraics.size(), 0);
  result_ = add(m, root, busy);
  slot_of_.clear();
  slot_of_.shrink_to_fit();
}

std::uint32_t Tape::add(const Model& m, ExprId root, std::vector<std::uint8_t>& busy) {
  for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&root, 1))) {
    if (slot_of_[id] >= 0) continue;
    const Node& n = m.pool.node(id);
    if (n.op == Op::variable && n.var_kind == VarKind::algebraic) {
      if (busy.at(n.index))
        throw Error("Tape: algebraic '" + m.algebraics[n.index].name + "' depends on itself");
      busy[n.index] = 1;
      slot_of_[id] = add(m, m.algebraics[n.index].expr, busy);
      busy[n.index] = 0;
      continue;
    }
    Ins in{n.op, n.var_kind, n.index, n.value, static_cast<std::uint32_t>(arg_slots_.size()),
           static_cast<std::uint32_t>(n.args.size())};
    for (ExprId a : n.args) arg_slots_.push_back(static_cast<std::uint32_t>(slot_of_[a]));
    slot_of_[id] = static_cast<std::int64_t>(ins_.size());
    ins_.push_back(in);
  }
  return static_cast<std::uint32_t>(slot_of_[root]);
}

double Tape::operator()(double t, const double* y, const double* p) const {
  std::vector<double> v(ins_.size());
  double args[64];
  std::vector<double> big;
  for (std::size_t k = 0; k < ins_.size(); ++k) {
    const Ins& in = ins_[k];
    if (in.op == Op::constant) {
      v[k] = in.value;
    } else if (in.op == Op::variable) {
      v[k] = in.kind == VarKind::time ? t : in.kind == VarKind::state ? y[in.index] : p[in.index];
    } else {
      double* a = args;
      if (in.n_args > 64) {
        big.resize(in.n_args);
        a = big.data();
      }
      for (std::uint32_t j = 0; j < in.n_args; ++j) a[j] = v[arg_slots_[in.first_arg + j]];
      v[k] = apply_op<double>(in.op, a, in.n_args);
    }
  }
  return v[result_];
}

}  // namespace hw::model
