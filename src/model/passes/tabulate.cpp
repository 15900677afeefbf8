#include "model/passes/tabulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_set>

#include "model/ir/print.hpp"
#include "model/passes/eval.hpp"

namespace hw::model {

namespace {

// What one node is, seen through the algebraics it reads.
struct NodeInfo {
  bool v_only = false;  // no variable but V (constants allowed)
  bool reads_v = false;
  double cost = 0;      // special functions and divisions it computes (V-only nodes)
};

bool is_special(Op op) {
  switch (op) {
    case Op::exp: case Op::log: case Op::log10: case Op::sqrt: case Op::sin: case Op::cos:
    case Op::tan: case Op::asin: case Op::acos: case Op::atan: case Op::sinh: case Op::cosh:
    case Op::tanh: case Op::asinh: case Op::acosh: case Op::atanh: case Op::pow:
      return true;
    default:
      return false;
  }
}

// A lookup costs an index shared with the other tables, two loads and a multiply-add: a
// node is worth one when it computes at least one special function or two divisions.
constexpr double kSpecialCost = 2, kDivisionCost = 1, kMinCost = 2;

class Classifier {
 public:
  explicit Classifier(const Model& m) : m_(m), info_(m.pool.size()), done_(m.pool.size(), 0),
                                        alg_(m.algebraics.size()) {
    // Algebraics are in dependency order: each reads only earlier ones.
    for (std::size_t k = 0; k < m.algebraics.size(); ++k) alg_[k] = of(m.algebraics[k].expr);
  }

  const NodeInfo& of(ExprId root) {
    for (ExprId id : topological_nodes(m_.pool, std::span<const ExprId>(&root, 1))) {
      if (done_[id]) continue;
      done_[id] = 1;
      const Node& n = m_.pool.node(id);
      NodeInfo& r = info_[id];
      if (n.op == Op::constant) {
        r.v_only = true;
      } else if (n.op == Op::variable) {
        if (n.var_kind == VarKind::state && n.index == m_.roles.voltage_state) {
          r.v_only = r.reads_v = true;
        } else if (n.var_kind == VarKind::algebraic && n.index < alg_.size() &&
                   !m_.algebraics[n.index].wide) {
          r = alg_[n.index];
        }
      } else {
        r.v_only = true;
        for (ExprId a : n.args) {
          const NodeInfo& ai = info_[a];
          r.v_only = r.v_only && ai.v_only;
          r.reads_v = r.reads_v || ai.reads_v;
          r.cost += ai.cost;
        }
        if (is_special(n.op) &&
            !(n.op == Op::pow && m_.pool.is_constant(n.args[1]) &&
              std::trunc(m_.pool.node(n.args[1]).value) == m_.pool.node(n.args[1]).value))
          r.cost += kSpecialCost;
        if (n.op == Op::div && !m_.pool.is_constant(n.args[1])) r.cost += kDivisionCost;
      }
    }
    return info_[root];
  }
  bool worth(ExprId id) {
    const NodeInfo& r = of(id);
    return r.v_only && r.reads_v && r.cost >= kMinCost;
  }

 private:
  const Model& m_;
  std::vector<NodeInfo> info_;
  std::vector<std::uint8_t> done_;
  std::vector<NodeInfo> alg_;
};

// The median of |f| over the rows: the scale below which errors count as absolute. Not the
// largest: an exponential of V is 10^8 times larger at +100 mV than where cells live.
double typical_magnitude(const std::vector<double>& rows) {
  std::vector<double> a(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) a[i] = std::fabs(rows[i]);
  std::nth_element(a.begin(), a.begin() + a.size() / 2, a.end());
  return a[a.size() / 2];
}

struct Fit {
  bool ok = false;
  int level = -1;            // spacing coarsest / 2^level
  double error = 0;
  std::string why;           // when not ok
  std::vector<double> rows;  // the table at that spacing
};

// The coarsest spacing at which linear interpolation of f meets the tolerance.
Fit fit(const Model& m, ExprId e, double lo, double hi, double coarsest, const TableOptions& o) {
  const Tape f(m, e);
  std::vector<double> y(m.states.size(), 0.0), p(m.parameters.size(), 0.0);
  const auto at = [&](double v) {
    y[m.roles.voltage_state ? *m.roles.voltage_state : 0] = v;
    return f(0.0, y.data(), p.data());
  };
  Fit out;
  double last_error = INFINITY;
  for (int level = 0;; ++level) {
    const double h = coarsest / std::ldexp(1.0, level);
    const int rows = static_cast<int>(std::ceil((hi - lo) / h - 1e-9)) + 1;
    if (rows > o.max_rows) {
      out.why = "misses the tolerance at the finest spacing tried (error " + std::to_string(last_error) + ")";
      return out;
    }
    std::vector<double> table(rows);
    for (int i = 0; i < rows; ++i) {
      table[i] = at(lo + i * h);
      if (!std::isfinite(table[i]) || std::fabs(table[i]) > 1e30) {
        out.why = "not finite (or beyond float) at V = " + std::to_string(lo + i * h);
        return out;
      }
    }
    const double floor = o.floor * typical_magnitude(table);
    double error = 0;
    for (int i = 0; i + 1 < rows; ++i)
      for (double w : {0.25, 0.5, 0.75}) {
        const double exact = at(lo + (i + w) * h);
        if (!std::isfinite(exact)) {
          out.why = "not finite at V = " + std::to_string(lo + (i + w) * h);
          return out;
        }
        const double approx = table[i] + w * (table[i + 1] - table[i]);
        error = std::max(error, std::fabs(approx - exact) / std::max({std::fabs(exact), floor, 1e-300}));
      }
    if (error <= o.tolerance) {
      out.ok = true;
      out.level = level;
      out.error = error;
      out.rows = std::move(table);
      return out;
    }
    // A smooth function's error falls 4x a halving; a jump's does not fall at all.
    if (level >= 3 && error > 0.5 * last_error) {
      out.why = "has a jump or kink (error " + std::to_string(error) + " does not fall with the spacing)";
      return out;
    }
    last_error = error;
  }
}

std::string label_of(const Model& m, ExprId e) {
  const Node& n = m.pool.node(e);
  if (n.op == Op::variable && n.var_kind == VarKind::algebraic) return m.algebraics[n.index].name;
  std::string s = to_infix(m, e);
  if (s.size() > 72) s = s.substr(0, 69) + "...";
  return s;
}

}  // namespace

std::size_t Tabulation::entries() const {
  std::size_t n = 0;
  for (const TableGroup& g : groups) n += g.values.size();
  return n;
}

std::string Tabulation::report() const {
  char buf[256];
  std::string out;
  if (empty()) return "lookup tables: none (" + (not_tabulated.empty() ? "no function of V alone is worth one" : not_tabulated) + ")\n";
  std::snprintf(buf, sizeof buf,
                "lookup tables: %zu functions of V over [%g, %g] mV, %zu entries, linear interpolation, "
                "tolerance %g (relative; absolute below %g of each function's median)\n",
                functions.size(), options.v_min_mV, options.v_max_mV, entries(), options.tolerance, options.floor);
  out += buf;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::snprintf(buf, sizeof buf, "  table %zu: spacing %g mV, %d rows, %zu functions\n", g, groups[g].step * v2mV,
                  groups[g].rows, groups[g].functions.size());
    out += buf;
    for (std::uint32_t f : groups[g].functions) {
      std::snprintf(buf, sizeof buf, "    %-40s error %.2g\n", functions[f].label.c_str(), functions[f].max_error);
      out += buf;
    }
  }
  for (const std::string& s : left_exact) out += "  exact: " + s + "\n";
  return out;
}

Tabulation tabulate_voltage_functions(const Model& m, const TableOptions& opt) {
  Tabulation t;
  t.options = opt;
  if (!m.roles.voltage_state) {
    t.not_tabulated = "the model has no membrane voltage";
    return t;
  }
  t.voltage = *m.roles.voltage_state;
  const Symbol& v = m.states[t.voltage];
  if (!v.units || v.units->dimensionless()) {
    t.not_tabulated = "the voltage is dimensionless: no range in mV to tabulate over";
    return t;
  }
  t.v2mV = m.roles.voltage_to_mV;
  const double lo = opt.v_min_mV / t.v2mV, hi = opt.v_max_mV / t.v2mV, coarsest = opt.coarsest_mV / t.v2mV;

  // Every root a step computes, and the nodes under it.
  std::vector<ExprId> roots;
  for (const Algebraic& a : m.algebraics)
    if (!a.once_per_cell && !a.wide) roots.push_back(a.expr);
  const std::size_t first_step_root = roots.size();
  for (ExprId d : m.derivatives) roots.push_back(d);
  for (const StateAnalysis& s : m.analysis)
    if (s.jacobian_diag != kNoExpr) roots.push_back(s.jacobian_diag);
  for (const LinearBlock& b : m.blocks)
    for (ExprId e : b.jacobian) roots.push_back(e);
  for (ExprId g : m.thresholds) roots.push_back(g);

  Classifier info(m);
  // Candidates, in the order a step meets them: a V-only node read by a node that is not
  // V-only, or a V-only root of the step (a gate's Jacobian diagonal).
  std::vector<ExprId> candidates;
  std::unordered_set<ExprId> seen;
  const auto offer = [&](ExprId id) {
    if (info.worth(id) && seen.insert(id).second) candidates.push_back(id);
  };
  for (std::size_t r = 0; r < roots.size(); ++r) {
    if (r >= first_step_root) offer(roots[r]);
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&roots[r], 1))) {
      if (info.of(id).v_only) continue;
      for (ExprId a : m.pool.args(id)) offer(a);
    }
  }

  std::map<int, std::uint32_t> group_of_level;
  std::vector<std::vector<double>> columns;  // per function: its table
  std::unordered_set<ExprId> tried;
  // A candidate that cannot be tabulated hands its parts on: the algebraic's definition, or
  // the node's arguments.
  std::vector<ExprId> work(candidates.rbegin(), candidates.rend());
  while (!work.empty()) {
    const ExprId id = work.back();
    work.pop_back();
    if (!tried.insert(id).second || !info.worth(id)) continue;
    Fit f = fit(m, id, lo, hi, coarsest, opt);
    if (!f.ok) {
      t.left_exact.push_back(label_of(m, id) + ": " + f.why + "; its parts are tried instead");
      const Node& n = m.pool.node(id);
      if (n.op == Op::variable) {
        work.push_back(m.algebraics[n.index].expr);
      } else {
        for (auto a = n.args.rbegin(); a != n.args.rend(); ++a) work.push_back(*a);
      }
      continue;
    }
    auto [it, fresh] = group_of_level.try_emplace(f.level, static_cast<std::uint32_t>(t.groups.size()));
    if (fresh) {
      TableGroup g;
      g.lo = lo;
      g.step = coarsest / std::ldexp(1.0, f.level);
      g.rows = static_cast<int>(f.rows.size());
      t.groups.push_back(g);
    }
    TableGroup& g = t.groups[it->second];
    TabulatedFunction tf;
    tf.expr = id;
    tf.label = label_of(m, id);
    tf.group = static_cast<int>(it->second);
    tf.column = static_cast<int>(g.functions.size());
    tf.max_error = f.error;
    g.functions.push_back(static_cast<std::uint32_t>(t.functions.size()));
    t.functions.push_back(tf);
    columns.push_back(std::move(f.rows));
  }
  // Row-major: a cell's lookups in one group read two neighbouring rows.
  for (TableGroup& g : t.groups) {
    const std::size_t w = g.functions.size();
    g.values.assign(static_cast<std::size_t>(g.rows) * w, 0.0);
    for (std::size_t c = 0; c < w; ++c)
      for (int r = 0; r < g.rows; ++r) g.values[r * w + c] = columns[g.functions[c]][r];
  }
  return t;
}

}  // namespace hw::model
