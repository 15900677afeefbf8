#include "model/passes/util.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

namespace hw::model {

void rewrite_model(Model& m, const std::function<ExprId(ExprId, std::vector<ExprId>&)>& rebuild) {
  std::vector<ExprId> roots;
  for (const Algebraic& a : m.algebraics) roots.push_back(a.expr);
  for (ExprId d : m.derivatives) roots.push_back(d);
  for (const StateAnalysis& s : m.analysis) roots.push_back(s.jacobian_diag);
  for (const LinearBlock& b : m.blocks) roots.insert(roots.end(), b.jacobian.begin(), b.jacobian.end());
  roots.insert(roots.end(), m.thresholds.begin(), m.thresholds.end());
  std::vector<ExprId> out = rewrite(m.pool, roots, rebuild);
  std::size_t k = 0;
  for (Algebraic& a : m.algebraics) a.expr = out[k++];
  for (ExprId& d : m.derivatives) d = out[k++];
  for (StateAnalysis& s : m.analysis) s.jacobian_diag = out[k++];
  for (LinearBlock& b : m.blocks)
    for (ExprId& e : b.jacobian) e = out[k++];
  for (ExprId& g : m.thresholds) g = out[k++];
}

bool ExprReads::Set::any_state() const {
  return std::any_of(states.begin(), states.end(), [](std::uint8_t r) { return r != 0; });
}

ExprReads::ExprReads(const Model& m) : m_(m), alg_(m.algebraics.size()), done_(m.algebraics.size(), 0) {}

ExprReads::Set ExprReads::of(ExprId e) {
  Set out;
  out.states.assign(m_.states.size(), 0);
  add(e, out);
  return out;
}

void ExprReads::add(ExprId e, Set& out) {
  if (e == kNoExpr) return;
  for (ExprId id : topological_nodes(m_.pool, std::span<const ExprId>(&e, 1))) {
    const Node& n = m_.pool.node(id);
    if (n.op != Op::variable) continue;
    if (n.var_kind == VarKind::time) out.time = true;
    if (n.var_kind == VarKind::state) out.states[n.index] = 1;
    if (n.var_kind == VarKind::algebraic) {
      const Set& a = algebraic(n.index);
      for (std::size_t k = 0; k < out.states.size(); ++k) out.states[k] |= a.states[k];
      out.time |= a.time;
    }
  }
}

const ExprReads::Set& ExprReads::algebraic(std::uint32_t k) {
  if (!done_[k]) {
    done_[k] = 1;  // a cycle (rejected earlier by sort) cannot recurse forever
    alg_[k].states.assign(m_.states.size(), 0);
    Set r;
    r.states.assign(m_.states.size(), 0);
    add(m_.algebraics[k].expr, r);
    alg_[k] = std::move(r);
  }
  return alg_[k];
}

std::vector<std::uint32_t> algebraic_refs(const ExprPool& pool, ExprId e) {
  std::vector<std::uint32_t> refs;
  if (e == kNoExpr) return refs;
  for (ExprId id : topological_nodes(pool, std::span<const ExprId>(&e, 1)))
    if (pool.is_variable(id, VarKind::algebraic)) refs.push_back(pool.node(id).index);
  std::sort(refs.begin(), refs.end());
  refs.erase(std::unique(refs.begin(), refs.end()), refs.end());
  return refs;
}

void renumber_algebraics(Model& m, const std::vector<std::uint32_t>& order) {
  const std::size_t n = m.algebraics.size();
  if (order.size() != n) throw std::logic_error("renumber_algebraics: not a permutation");
  std::vector<std::uint32_t> new_index(n, UINT32_MAX);
  for (std::uint32_t k = 0; k < n; ++k) {
    if (order[k] >= n || new_index[order[k]] != UINT32_MAX)
      throw std::logic_error("renumber_algebraics: not a permutation");
    new_index[order[k]] = k;
  }
  rewrite_model(m, [&](ExprId id, std::vector<ExprId>& args) {
    if (m.pool.is_variable(id, VarKind::algebraic))
      return m.pool.algebraic(new_index[m.pool.node(id).index]);
    return rebuild_with(m.pool, id, args);
  });
  std::vector<Algebraic> sorted;
  sorted.reserve(n);
  for (std::uint32_t old : order) sorted.push_back(std::move(m.algebraics[old]));
  m.algebraics = std::move(sorted);
  if (m.roles.stimulus_current) m.roles.stimulus_current = new_index[*m.roles.stimulus_current];
}

}  // namespace hw::model
