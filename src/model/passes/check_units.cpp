#include "model/passes/check_units.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace hw::model {

namespace {

using MaybeUnits = std::optional<Units>;

struct Issue {
  bool dimension;  // else a pure scale mismatch
  std::string text;
};

class UnitChecker {
 public:
  explicit UnitChecker(const Model& m) : m_(m), units_(m.pool.size()), done_(m.pool.size()) {}

  MaybeUnits infer(ExprId id) {
    for (ExprId n : topological_nodes(m_.pool, std::span<const ExprId>(&id, 1))) {
      if (done_[n]) continue;
      units_[n] = node_units(n);
      done_[n] = true;
    }
    return units_[id];
  }

  // Issues in the nodes under `root` not reported before.
  std::vector<Issue> take_issues(ExprId root) {
    std::vector<Issue> out;
    for (ExprId n : topological_nodes(m_.pool, std::span<const ExprId>(&root, 1))) {
      auto it = issues_.find(n);
      if (it == issues_.end() || reported_.count(n)) continue;
      reported_.insert(n);
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
    return out;
  }

  static std::string show(const Units& u) {
    std::string s = u.dimension_string();
    if (u.factor != 1.0) s += " x" + std::to_string(u.factor);
    return s;
  }

  // Compares two sides; records an issue at `node` (or returns it when node is kNoExpr).
  std::optional<Issue> compare(const MaybeUnits& a, const MaybeUnits& b, const char* what) {
    if (!a || !b) return std::nullopt;
    if (!a->same_dimension(*b))
      return Issue{true, std::string(what) + " quantities of different dimensions (" + show(*a) +
                             " and " + show(*b) + ")"};
    if (std::abs(a->factor / b->factor - 1.0) > 1e-9)
      return Issue{false, std::string(what) + " quantities of the same dimension but different "
                                               "scales (" + show(*a) + " and " + show(*b) + ")"};
    return std::nullopt;
  }

 private:
  MaybeUnits unify(ExprId n, const std::vector<ExprId>& xs, const char* what) {
    MaybeUnits first;
    for (ExprId x : xs) {
      const MaybeUnits& u = units_[x];
      if (!u) continue;
      if (!first) {
        first = u;
        continue;
      }
      if (auto i = compare(first, u, what)) issues_[n].push_back(*i);
    }
    return first;
  }

  MaybeUnits node_units(ExprId n) {
    const Node& node = m_.pool.node(n);
    const auto& a = node.args;
    Units none;
    switch (node.op) {
      case Op::constant: return std::nullopt;
      case Op::variable: return m_.symbol(node.var_kind, node.index).units;
      case Op::add:
      case Op::sub:
      case Op::min:
      case Op::max:
      case Op::rem: return unify(n, {a[0], a[1]}, "adding");
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
      case Op::eq:
      case Op::ne: unify(n, {a[0], a[1]}, "comparing"); return none;
      case Op::mul:
      case Op::div: {
        const auto &x = units_[a[0]], &y = units_[a[1]];
        if (!x || !y) return std::nullopt;
        return node.op == Op::mul ? *x * *y : *x / *y;
      }
      case Op::neg:
      case Op::abs:
      case Op::floor:
      case Op::ceil: return units_[a[0]];
      case Op::sqrt:
        return units_[a[0]] ? MaybeUnits(units_[a[0]]->pow(0.5)) : std::nullopt;
      case Op::pow: {
        const auto& x = units_[a[0]];
        if (!x) return std::nullopt;
        if (x->dimensionless()) return *x;
        if (m_.pool.is_constant(a[1])) return x->pow(m_.pool.node(a[1]).value);
        return std::nullopt;
      }
      case Op::select: return unify(n, {a[1], a[2]}, "choosing between");
      case Op::piecewise: {
        std::vector<ExprId> values;
        for (std::size_t i = 1; i < a.size(); i += 2) values.push_back(a[i]);
        values.push_back(a.back());
        return unify(n, values, "choosing between");
      }
      default: return none;  // functions and logic are dimensionless
    }
  }

  const Model& m_;
  std::vector<MaybeUnits> units_;
  std::vector<bool> done_;
  std::map<ExprId, std::vector<Issue>> issues_;
  std::set<ExprId> reported_;
};

void report(DiagnosticSink& sink, const SourceLoc& loc, const std::string& where,
            const std::vector<Issue>& issues) {
  for (const auto& i : issues) {
    std::string msg = "units in " + where + ": " + i.text;
    if (i.dimension) sink.warning(loc, msg, "units.dimension");
    else sink.note(loc, msg, "units.scale");
  }
}

}  // namespace

void check_units(const Model& m, DiagnosticSink& sink) {
  UnitChecker c(m);
  for (const auto& a : m.algebraics) {
    if (a.expr == kNoExpr || a.expr >= m.pool.size()) continue;
    MaybeUnits u = c.infer(a.expr);
    std::vector<Issue> issues = c.take_issues(a.expr);
    if (auto i = c.compare(a.units, u, "assigning")) issues.push_back(*i);
    report(sink, a.loc, "the definition of " + a.name, issues);
  }
  for (std::size_t s = 0; s < m.states.size() && s < m.derivatives.size(); ++s) {
    ExprId d = m.derivatives[s];
    if (d == kNoExpr || d >= m.pool.size()) continue;
    const State& st = m.states[s];
    MaybeUnits u = c.infer(d);
    std::vector<Issue> issues = c.take_issues(d);
    if (st.units && m.time.units) {
      MaybeUnits want = *st.units / *m.time.units;
      if (auto i = c.compare(want, u, "assigning")) issues.push_back(*i);
    }
    report(sink, st.loc, "d" + st.name + "/d" + m.time.name, issues);
  }
}

}  // namespace hw::model
