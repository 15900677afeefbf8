#include "model/passes/cse.hpp"

#include <string>
#include <unordered_map>

#include "model/passes/sort_algebraics.hpp"
#include "model/passes/util.hpp"

namespace hw::model {

namespace {

bool worth_sharing(const ExprPool& pool, ExprId id) {
  const Op op = pool.op(id);
  if (op == Op::constant || op == Op::variable || is_boolean(op)) return false;
  if (op == Op::neg && pool.args(pool.args(id)[0]).empty()) return false;
  return true;
}

}  // namespace

void eliminate_common_subexpressions(Model& m) {
  ExprPool& pool = m.pool;
  std::vector<ExprId> roots;
  for (const Algebraic& a : m.algebraics) roots.push_back(a.expr);
  for (ExprId d : m.derivatives) roots.push_back(d);

  // Uses: one per (distinct parent, argument slot) plus one per root.
  std::unordered_map<ExprId, int> uses;
  std::vector<ExprId> nodes = topological_nodes(pool, roots);
  for (ExprId id : nodes)
    for (ExprId a : pool.args(id)) ++uses[a];
  for (ExprId r : roots) ++uses[r];

  // A node that is the whole definition of an algebraic is shared through that algebraic.
  std::unordered_map<ExprId, std::uint32_t> owner;
  for (std::uint32_t i = 0; i < m.algebraics.size(); ++i)
    owner.emplace(m.algebraics[i].expr, i);

  const std::size_t first_new = m.algebraics.size();
  int counter = 0;
  std::unordered_map<ExprId, ExprId> rebuilt;  // shared node → its rewritten expression
  std::vector<ExprId> out = rewrite(pool, roots, [&](ExprId id, std::vector<ExprId>& args) {
    ExprId e = rebuild_with(pool, id, args);
    if (uses[id] < 2 || !worth_sharing(pool, id)) return e;
    rebuilt[id] = e;
    auto it = owner.find(id);
    if (it != owner.end()) return pool.algebraic(it->second);
    Algebraic t;
    do {
      t.name = "_cse_" + std::to_string(counter++);
    } while (m.find_algebraic(t.name) || m.find_state(t.name) || m.find_parameter(t.name));
    t.expr = e;
    t.synthetic = true;
    t.description = "common subexpression";
    const auto index = static_cast<std::uint32_t>(m.algebraics.size());
    m.algebraics.push_back(std::move(t));
    owner.emplace(id, index);
    return pool.algebraic(index);
  });

  std::size_t k = 0;
  for (std::uint32_t i = 0; i < first_new; ++i, ++k) {
    // An algebraic that owns its shared definition keeps the expression, not itself.
    auto it = rebuilt.find(roots[k]);
    m.algebraics[i].expr = (it != rebuilt.end() && owner.at(roots[k]) == i) ? it->second : out[k];
  }
  for (ExprId& d : m.derivatives) d = out[k++];
  // Jacobians (if already analysed) read the same algebraic values, so they stay valid.
  sort_algebraics(m);
}

}  // namespace hw::model
