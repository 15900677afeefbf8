#include "model/passes/thresholds.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <unordered_set>

#include "model/ir/print.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

// What a side of a relation reads: time, a state, a state other than the membrane voltage.
struct Reads {
  bool time = false;
  bool state = false;
  bool other_state = false;
};

Reads reads_of(ExprReads& reads, const Model& m, ExprId e) {
  const ExprReads::Set s = reads.of(e);
  Reads r;
  r.time = s.time;
  for (std::size_t k = 0; k < s.states.size(); ++k)
    if (s.states[k]) {
      r.state = true;
      if (!(m.roles.voltage_state && *m.roles.voltage_state == k)) r.other_state = true;
    }
  return r;
}

bool is_order_relation(Op op) { return op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge; }

// The order relations of a conjunction (a && b && ...), nested ands flattened.
void conjuncts(const ExprPool& pool, ExprId id, std::vector<ExprId>& out) {
  const Node& n = pool.node(id);
  if (n.op == Op::logical_and) {
    conjuncts(pool, n.args[0], out);
    conjuncts(pool, n.args[1], out);
  } else if (is_order_relation(n.op)) {
    out.push_back(id);
  }
}

// One side of a relation bounds a quantity: `x > a`, `a < x` (lower) or `x < b` (upper).
struct Bound {
  ExprId quantity = kNoExpr;
  bool lower = false;
  ExprId distance = kNoExpr;  // lhs − rhs of the relation
};

}  // namespace

void find_thresholds(Model& m) {
  m.thresholds.clear();
  // The every-step expressions the derivatives read, in the order the rhs computes them.
  std::vector<ExprId> roots;
  for (const Algebraic& a : m.algebraics)
    if (!a.once_per_cell) roots.push_back(a.expr);
  roots.insert(roots.end(), m.derivatives.begin(), m.derivatives.end());
  ExprReads reads(m);
  // The relation as a bound on a quantity that reads a state other than the voltage and not
  // time, by something that reads neither; nullopt otherwise.
  const auto bound = [&](ExprId rel) -> std::optional<Bound> {
    const Node& n = m.pool.node(rel);
    const Reads l = reads_of(reads, m, n.args[0]), r = reads_of(reads, m, n.args[1]);
    if (l.time || r.time) return std::nullopt;
    const bool left = l.other_state && !r.other_state && !r.state;
    const bool right = r.other_state && !l.other_state && !l.state;
    if (!left && !right) return std::nullopt;
    const bool greater = n.op == Op::gt || n.op == Op::ge;
    return Bound{left ? n.args[0] : n.args[1], greater == left, m.pool.sub(n.args[0], n.args[1])};
  };
  std::unordered_set<ExprId> seen;
  for (ExprId root : roots) {
    if (root == kNoExpr) continue;
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&root, 1))) {
      if (m.pool.op(id) != Op::logical_and || !seen.insert(id).second) continue;
      std::vector<ExprId> rels;
      conjuncts(m.pool, id, rels);
      std::vector<Bound> bounds;
      for (ExprId rel : rels)
        if (auto b = bound(rel)) bounds.push_back(*b);
      // A window: a lower and an upper bound on the same quantity.
      for (const Bound& a : bounds)
        for (const Bound& b : bounds) {
          if (a.quantity != b.quantity || !a.lower || b.lower) continue;
          for (ExprId g : {a.distance, b.distance})
            if (std::find(m.thresholds.begin(), m.thresholds.end(), g) == m.thresholds.end())
              m.thresholds.push_back(g);
        }
    }
  }
}

std::string describe_thresholds(const Model& m) {
  if (m.thresholds.empty()) return "";
  std::string s = std::to_string(m.thresholds.size()) + " state threshold" +
                  (m.thresholds.size() > 1 ? "s" : "") +
                  " (a step ends where one is crossed, and goes on from there):";
  for (ExprId g : m.thresholds) s += "\n  " + to_infix(m, g) + " = 0";
  return s;
}

}  // namespace hw::model
